//! The one settings value every command works from: the config file and the environment,
//! merged and validated (by [`super::resolve`]) before any work starts. Command-line flags are
//! not part of it: each command reads its own flags.

use std::path::PathBuf;
use std::time::Duration;

use super::config_file::{ConfigFileError, SearchProviderKind, StructuredOutput};
use super::secret::{ApiKey, url_password};

/// Which agent an LLM call serves; each may have its own endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    Planning,
    Search,
    Summary,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Planning => "planning",
            Role::Search => "search",
            Role::Summary => "summary",
        }
    }
}

/// One role's OpenAI-compatible chat-completions endpoint and how it is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmEndpoint {
    /// Without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// `maxTokens` of the role (or the top level); `None` keeps each call's own default.
    pub max_tokens: Option<u32>,
    /// `temperature` of the role (or the top level); planning defaults to 0.
    pub temperature: Option<f32>,
}

/// The retry policy of every HTTP call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    pub max_retries: usize,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    pub max_retry_after: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_retries: 3,
            base_delay: Duration::from_millis(2000),
            max_delay: Duration::from_millis(8000),
            max_retry_after: Duration::from_millis(120_000),
        }
    }
}

/// The search provider and how to reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchSettings {
    pub provider: SearchProviderKind,
    pub base_url: Option<String>,
    pub api_key: Option<ApiKey>,
    pub max_results: u32,
}

/// Everything a command needs, resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    pub config_path: PathBuf,
    pub planning: LlmEndpoint,
    pub search_llm: LlmEndpoint,
    pub summary: LlmEndpoint,
    pub structured_output: StructuredOutput,
    pub llm_timeout: Duration,
    pub search_timeout: Duration,
    pub retry: RetrySettings,
    pub search: SearchSettings,
    pub repair_attempts: u32,
    pub prompts_dir: Option<PathBuf>,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "no configuration: `{0}` does not exist: copy agent.config.example.json to agent.config.json and fill it in, or pass --config / set AGENT_CONFIG"
    )]
    Missing(PathBuf),
    #[error(transparent)]
    File(#[from] ConfigFileError),
    #[error("config `{path}` has no `{key}`: {hint}")]
    Required {
        path: String,
        key: String,
        hint: String,
    },
    #[error("config `{path}`: `{key}` is `{value}`: {hint}")]
    Invalid {
        path: String,
        key: String,
        value: String,
        hint: String,
    },
}

impl Settings {
    /// The endpoint of one role.
    pub fn endpoint(&self, role: Role) -> &LlmEndpoint {
        match role {
            Role::Planning => &self.planning,
            Role::Search => &self.search_llm,
            Role::Summary => &self.summary,
        }
    }

    /// Every secret in the settings, for redaction: the keys, and the passwords of the URLs
    /// (as written and percent-decoded), since servers echo both in error bodies.
    pub fn secrets(&self) -> Vec<ApiKey> {
        let urls = [
            Some(&self.planning.base_url),
            Some(&self.search_llm.base_url),
            Some(&self.summary.base_url),
            self.search.base_url.as_ref(),
        ];
        let passwords = urls
            .into_iter()
            .flatten()
            .filter_map(|url| url_password(url))
            .flat_map(|p| {
                let decoded = percent_encoding::percent_decode_str(p).decode_utf8_lossy();
                [ApiKey::new(p), ApiKey::new(decoded)]
            })
            .flatten();
        [
            &self.planning.api_key,
            &self.search_llm.api_key,
            &self.summary.api_key,
            &self.search.api_key,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .chain(passwords)
        .collect()
    }
}
