//! The one settings value every command works from: config file, environment and flags merged
//! and validated before any work starts.
//!
//! Precedence: a non-empty value in the config file wins; the environment fills what the file
//! leaves out (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`, and the search provider's
//! key: `TAVILY_API_KEY`, `BRAVE_API_KEY`, `SEARXNG_API_KEY`); per-role `roles.*` entries
//! override the top-level endpoint for that role.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::config_file::{
    ConfigFile, ConfigFileError, RoleConfig, SearchProviderKind, StructuredOutput,
};
use super::secret::ApiKey;

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

/// One OpenAI-compatible chat-completions endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LlmEndpoint {
    /// Without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    pub model: String,
    pub api_key: Option<ApiKey>,
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
    /// Reads the config file (`--config`, else `AGENT_CONFIG`, else `./agent.config.json`) and
    /// the process environment.
    pub fn load(config: Option<&Path>) -> Result<Settings, SettingsError> {
        let path = config
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("agent.config.json"));
        if !path.exists() {
            return Err(SettingsError::Missing(path));
        }
        let file = ConfigFile::read(&path)?;
        Settings::resolve(&path, file, &|k| std::env::var(k).ok())
    }

    /// Merges a parsed config file with an environment lookup and validates the result.
    pub fn resolve(
        path: &Path,
        file: ConfigFile,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        let shown = path.display().to_string();
        let env = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        let pick = |v: &Option<String>| v.clone().filter(|s| !s.trim().is_empty());

        let base_url = pick(&file.base_url).or_else(|| env("OPENAI_BASE_URL"));
        let model = pick(&file.model).or_else(|| env("OPENAI_MODEL"));
        let api_key = pick(&file.api_key).or_else(|| env("OPENAI_API_KEY"));

        let endpoint =
            |role: Role, over: &Option<RoleConfig>| -> Result<LlmEndpoint, SettingsError> {
                let over = over.clone().unwrap_or_default();
                let prefix = format!("roles.{}.", role.as_str());
                let base_url = pick(&over.base_url).or_else(|| base_url.clone());
                let model = pick(&over.model).or_else(|| model.clone());
                let key = pick(&over.api_key).or_else(|| api_key.clone());
                let base_url = base_url.ok_or_else(|| SettingsError::Required {
                    path: shown.clone(),
                    key: "baseURL".into(),
                    hint: format!("set it (or `{prefix}baseURL`) or export `OPENAI_BASE_URL`"),
                })?;
                let base_url = check_url(&shown, "baseURL", &base_url)?;
                let model = model.ok_or_else(|| SettingsError::Required {
                    path: shown.clone(),
                    key: "model".into(),
                    hint: format!("set it (or `{prefix}model`) or export `OPENAI_MODEL`"),
                })?;
                Ok(LlmEndpoint {
                    base_url,
                    model,
                    api_key: key.and_then(ApiKey::new),
                })
            };

        let retry = {
            let d = RetrySettings::default();
            let ms = |v: Option<u64>, dflt: Duration| v.map(Duration::from_millis).unwrap_or(dflt);
            let r = RetrySettings {
                max_retries: file.retry.max_retries.unwrap_or(d.max_retries),
                base_delay: ms(file.retry.base_delay_ms, d.base_delay),
                max_delay: ms(file.retry.max_delay_ms, d.max_delay),
                max_retry_after: ms(file.retry.max_retry_after_ms, d.max_retry_after),
            };
            if r.max_retries > 20 {
                return Err(invalid(
                    &shown,
                    "retry.maxRetries",
                    r.max_retries,
                    "use 0 to 20",
                ));
            }
            if r.max_delay < r.base_delay {
                return Err(invalid(
                    &shown,
                    "retry.maxDelayMs",
                    r.max_delay.as_millis(),
                    "must not be below `retry.baseDelayMs`",
                ));
            }
            r
        };

        let timeout = |v: Option<u64>, key: &str, dflt: u64| match v {
            Some(0) => Err(invalid(
                &shown,
                key,
                0,
                "use a positive number of milliseconds",
            )),
            v => Ok(Duration::from_millis(v.unwrap_or(dflt))),
        };

        let search = {
            let s = &file.search;
            let provider = s.provider.unwrap_or(SearchProviderKind::None);
            let key_env = match provider {
                SearchProviderKind::Tavily => Some("TAVILY_API_KEY"),
                SearchProviderKind::Brave => Some("BRAVE_API_KEY"),
                SearchProviderKind::Searxng => Some("SEARXNG_API_KEY"),
                SearchProviderKind::Local | SearchProviderKind::None => None,
            };
            let api_key = pick(&s.api_key)
                .or_else(|| key_env.and_then(env))
                .and_then(ApiKey::new);
            let base_url = match pick(&s.base_url) {
                Some(url) => Some(check_url(&shown, "search.baseURL", &url)?),
                None => None,
            };
            let max_results = s.max_results.unwrap_or(5);
            if !(1..=20).contains(&max_results) {
                return Err(invalid(
                    &shown,
                    "search.maxResults",
                    max_results,
                    "use 1 to 20",
                ));
            }
            SearchSettings {
                provider,
                base_url,
                api_key,
                max_results,
            }
        };

        let repair_attempts = file.planner.repair_attempts.unwrap_or(1);
        if repair_attempts > 5 {
            return Err(invalid(
                &shown,
                "planner.repairAttempts",
                repair_attempts,
                "use 0 to 5",
            ));
        }
        let prompts_dir = pick(&file.prompts_dir)
            .or_else(|| env("RESEARCHFLOW_PROMPTS_DIR"))
            .map(|dir| {
                let dir = PathBuf::from(dir);
                // A relative folder in the config file is relative to the config file.
                match (dir.is_relative(), path.parent()) {
                    (true, Some(parent)) if file.prompts_dir.is_some() => parent.join(dir),
                    _ => dir,
                }
            });

        Ok(Settings {
            config_path: path.to_path_buf(),
            planning: endpoint(Role::Planning, &file.roles.planning)?,
            search_llm: endpoint(Role::Search, &file.roles.search)?,
            summary: endpoint(Role::Summary, &file.roles.summary)?,
            structured_output: file
                .structured_output
                .unwrap_or(StructuredOutput::JsonSchema),
            llm_timeout: timeout(file.timeouts.llm_ms, "timeouts.llmMs", 120_000)?,
            search_timeout: timeout(file.timeouts.search_ms, "timeouts.searchMs", 30_000)?,
            retry,
            search,
            repair_attempts,
            prompts_dir,
        })
    }

    /// The endpoint of one role.
    pub fn endpoint(&self, role: Role) -> &LlmEndpoint {
        match role {
            Role::Planning => &self.planning,
            Role::Search => &self.search_llm,
            Role::Summary => &self.summary,
        }
    }

    /// Every secret in the settings, for redaction.
    pub fn secrets(&self) -> Vec<ApiKey> {
        [
            &self.planning.api_key,
            &self.search_llm.api_key,
            &self.summary.api_key,
            &self.search.api_key,
        ]
        .into_iter()
        .flatten()
        .cloned()
        .collect()
    }
}

fn invalid(path: &str, key: &str, value: impl ToString, hint: &str) -> SettingsError {
    SettingsError::Invalid {
        path: path.to_string(),
        key: key.to_string(),
        value: value.to_string(),
        hint: hint.to_string(),
    }
}

fn check_url(path: &str, key: &str, raw: &str) -> Result<String, SettingsError> {
    let trimmed = raw.trim().trim_end_matches('/');
    match reqwest::Url::parse(trimmed) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => {
            Ok(trimmed.to_string())
        }
        _ => Err(invalid(
            path,
            key,
            raw,
            "use an http(s) URL such as `https://api.openai.com/v1`",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolve(json: &str, env: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        let file = ConfigFile::parse("c.json", json).expect("parses");
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::resolve(Path::new("c.json"), file, &move |k| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn env_fills_what_the_file_leaves_out() {
        let s = resolve(
            r#"{"model": "m"}"#,
            &[
                ("OPENAI_BASE_URL", "http://x/v1/"),
                ("OPENAI_API_KEY", "sk-1"),
            ],
        )
        .expect("valid");
        assert_eq!(s.planning.base_url, "http://x/v1");
        assert_eq!(
            s.planning.api_key.as_ref().map(ApiKey::expose),
            Some("sk-1")
        );
        assert_eq!(s.retry, RetrySettings::default());
        assert_eq!(s.structured_output, StructuredOutput::JsonSchema);
    }

    #[test]
    fn roles_override_the_top_level_endpoint() {
        let s = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m", "apiKey": "k",
                "roles": {"summary": {"model": "big", "baseURL": "http://b/v1"}}}"#,
            &[],
        )
        .expect("valid");
        assert_eq!(s.planning.model, "m");
        assert_eq!(s.summary.model, "big");
        assert_eq!(s.summary.base_url, "http://b/v1");
        assert_eq!(s.summary.api_key.as_ref().map(ApiKey::expose), Some("k"));
    }

    #[test]
    fn missing_and_invalid_values_name_the_key() {
        let err = resolve(r#"{"model": "m"}"#, &[]).expect_err("no url");
        assert!(
            err.to_string().contains("`baseURL`") && err.to_string().contains("OPENAI_BASE_URL")
        );
        let err = resolve(r#"{"baseURL": "ftp://x", "model": "m"}"#, &[]).expect_err("bad url");
        assert!(err.to_string().contains("`baseURL` is `ftp://x`"), "{err}");
        let err = resolve(
            r#"{"baseURL": "http://x", "model": "m", "retry": {"baseDelayMs": 10, "maxDelayMs": 5}}"#,
            &[],
        )
        .expect_err("bad retry");
        assert!(err.to_string().contains("retry.maxDelayMs"), "{err}");
        let err = resolve(
            r#"{"baseURL": "http://x", "model": "m", "timeouts": {"llmMs": 0}}"#,
            &[],
        )
        .expect_err("zero timeout");
        assert!(err.to_string().contains("timeouts.llmMs"), "{err}");
    }

    #[test]
    fn search_key_comes_from_the_provider_variable() {
        let s = resolve(
            r#"{"baseURL": "http://x", "model": "m", "search": {"provider": "tavily"}}"#,
            &[("TAVILY_API_KEY", "tv-1"), ("BRAVE_API_KEY", "br-1")],
        )
        .expect("valid");
        assert_eq!(s.search.api_key.as_ref().map(ApiKey::expose), Some("tv-1"));
        assert_eq!(s.secrets().len(), 1);
    }
}
