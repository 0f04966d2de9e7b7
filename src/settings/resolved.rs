//! The one settings value every command works from: the config file and the environment,
//! merged and validated (by [`super::resolve`]) before any work starts. Command-line flags are
//! not part of it: each command reads its own flags.

use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use super::base_url::BaseUrl;
use super::config_file::{ConfigFileError, EngineKind, StructuredOutput};
use super::mcp_search::{KeyProblem, McpSearchSettings, McpServer};
use super::role::Role;
use super::search_provider::SearchProviderKind;
use super::secret::ApiKey;
use crate::cli::Budget;
use crate::web_providers::{KeySentAs, WebProvider};

/// One role's OpenAI-compatible chat-completions endpoint and how it is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmEndpoint {
    /// Without a trailing slash, e.g. `https://api.openai.com/v1`.
    pub base_url: BaseUrl,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// `maxTokens` of the role (or the top level); `None` keeps each call's own default.
    pub max_tokens: Option<u32>,
    /// `temperature` of the role (or the top level), else the role's default (planning: 0).
    pub temperature: Option<f32>,
    /// `stream` of the role (or the top level), default `true`: answers are asked for as
    /// server-sent events.
    pub stream: bool,
    /// `limits` of the role (or the top level), key by key; roles on one endpoint (base URL
    /// and model) share one budget, the lower of their limits.
    pub limits: RateLimits,
}

/// The rate budget of one endpoint (`limits`); `None` for no limit of that kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RateLimits {
    pub requests_per_minute: Option<NonZeroU32>,
    pub tokens_per_minute: Option<NonZeroU32>,
}

impl RateLimits {
    /// The lower of two budgets, key by key (a limit is lower than none): what roles sharing
    /// an endpoint get.
    pub fn tighter(self, other: RateLimits) -> RateLimits {
        let min = |a: Option<NonZeroU32>, b: Option<NonZeroU32>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        RateLimits {
            requests_per_minute: min(self.requests_per_minute, other.requests_per_minute),
            tokens_per_minute: min(self.tokens_per_minute, other.tokens_per_minute),
        }
    }
}

/// The retry policy of every HTTP call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetrySettings {
    pub max_retries: usize,
    pub base_delay: Duration,
    pub max_delay: Duration,
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    pub max_retry_after: Duration,
    /// How long a call may keep retrying rate limits (429) at its endpoint's gate without
    /// counting them against `max_retries`; after that a 429 is an ordinary retry.
    pub max_rate_limit_wait: Duration,
}

impl Default for RetrySettings {
    fn default() -> Self {
        RetrySettings {
            max_retries: 3,
            base_delay: Duration::from_millis(2000),
            max_delay: Duration::from_millis(8000),
            max_retry_after: Duration::from_millis(120_000),
            max_rate_limit_wait: Duration::from_millis(600_000),
        }
    }
}

/// The search providers and how to reach them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchSettings {
    /// Empty for no search; several are merged (reciprocal rank fusion).
    pub providers: Vec<SearchProviderKind>,
    /// The web provider's address (at most one web provider is configured).
    pub base_url: Option<BaseUrl>,
    pub api_key: Option<ApiKey>,
    pub max_results: u32,
    /// The folder `local` searches.
    pub corpus: Option<PathBuf>,
    /// Where the local index lives; `None` for the user's cache folder.
    pub index_dir: Option<PathBuf>,
    /// The MCP server and tool of provider `mcp`; `Some` exactly when `mcp` is a provider.
    pub mcp: Option<McpSearchSettings>,
    /// How the pages behind web results are read (`search.read`).
    pub read: super::ReadSettings,
    /// The sentence-embedding model's folder (`search.embeddings.model`): with it, the local
    /// index ranks by meaning as well as by words.
    pub embeddings_model: Option<PathBuf>,
}

impl SearchSettings {
    /// The one web provider, if any.
    pub fn web_provider(&self) -> Option<&'static dyn WebProvider> {
        self.providers.iter().find_map(|p| match p {
            SearchProviderKind::Web(provider) => Some(*provider),
            SearchProviderKind::Local | SearchProviderKind::None | SearchProviderKind::Mcp => None,
        })
    }

    /// Searches a local corpus: adds `local` (first) to the providers.
    pub fn use_corpus(&mut self, corpus: PathBuf) {
        self.corpus = Some(corpus);
        if !self.providers.contains(&SearchProviderKind::Local) {
            self.providers.insert(0, SearchProviderKind::Local);
        }
    }
}

/// The model endpoints of the roles, one per role.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRoles([LlmEndpoint; Role::COUNT]);

impl LlmRoles {
    /// The roles' endpoints, in declaration order.
    pub fn new(endpoints: [LlmEndpoint; Role::COUNT]) -> LlmRoles {
        LlmRoles(endpoints)
    }

    pub fn get(&self, role: Role) -> &LlmEndpoint {
        &self.0[role as usize]
    }

    /// Every role's endpoint, in declaration order.
    pub fn all(&self) -> [&LlmEndpoint; Role::COUNT] {
        std::array::from_fn(|at| &self.0[at])
    }

    /// Every role's endpoint, to change, in declaration order.
    pub fn all_mut(&mut self) -> impl Iterator<Item = &mut LlmEndpoint> {
        self.0.iter_mut()
    }
}

/// Everything a command needs, resolved.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The config file read, or the default path when there was none.
    pub config_path: PathBuf,
    /// `None` when no model is configured anywhere (file, environment); only the offline
    /// engine runs then.
    pub llm: Option<LlmRoles>,
    pub engine: EngineKind,
    pub structured_output: StructuredOutput,
    pub llm_timeout: Duration,
    /// `timeouts.idleMs`: the longest a streamed answer may stay silent.
    pub llm_idle: Duration,
    pub search_timeout: Duration,
    pub retry: RetrySettings,
    pub search: SearchSettings,
    pub repair_attempts: u32,
    pub prompts_dir: Option<PathBuf>,
    /// The config's `budget` keys (of the flags' types, so the flags' bounds).
    pub budget: Budget,
    /// Whether a workflow's report is reviewed (`review.enabled`, default true).
    pub review: bool,
    /// The share of a cited claim's content words its sources must hold to support it
    /// (`claims.threshold`).
    pub claims_threshold: f64,
    /// Whether `roles.verifier` is configured: then it judges the claims the content-word
    /// check leaves unsupported.
    pub verifier: bool,
    /// Whether a workflow writes its HTML view beside its report, and a batch its index
    /// (`--no-html` turns both off).
    pub html: bool,
    /// The SMTP server `watch --notify mailto:` sends through (`notify.smtp`).
    pub smtp: Option<super::notify::SmtpConfig>,
    /// The bounds of the process that parses untrusted documents (`documents`).
    pub documents: super::documents::DocumentSettings,
}

/// `claims.threshold` when the config does not say: half a claim's content words.
pub const DEFAULT_CLAIM_THRESHOLD: f64 = 0.5;

/// How one workflow run is bounded: its planning rounds, the tasks running at once, and what
/// it may spend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOptions {
    /// Planning rounds of one invocation.
    pub max_rounds: u32,
    /// Tasks running at once.
    pub concurrency: usize,
    pub budget: Budget,
}

#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    #[error(
        "no configuration: `{0}` does not exist: copy agent.config.example.json to agent.config.json and fill it in, or pass --config / set RESEARCHFLOW_CONFIG"
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
    #[error(
        "no model is configured ({where_}): copy agent.config.example.json to agent.config.json and set `baseURL` and `model` (or export OPENAI_BASE_URL and OPENAI_MODEL), or research your own documents without a model: `researchflow workflow --offline --corpus DIR --query \"...\"`"
    )]
    NoLlm { where_: String },
    #[error(
        "offline research needs a folder of documents: pass `--corpus DIR` or set `search.corpus`"
    )]
    OfflineWithoutCorpus,
    #[error("config `{path}`: `{key}` is `{value}`: {hint}")]
    Invalid {
        path: String,
        key: String,
        value: String,
        hint: String,
    },
}

impl Settings {
    /// The endpoint of one role, when a model is configured.
    pub fn endpoint(&self, role: Role) -> Option<&LlmEndpoint> {
        self.llm.as_ref().map(|llm| llm.get(role))
    }

    /// The model endpoints, or the error that says how to configure one (or go offline).
    /// Whether a run asks `role` anything: the review's roles only while the review is on,
    /// the verifier only when `roles.verifier` is configured, every other role always.
    pub fn asks(&self, role: Role) -> bool {
        match role {
            Role::Verifier => self.verifier,
            _ => self.review || !role.spec().review_stage,
        }
    }

    pub fn require_llm(&self) -> Result<&LlmRoles, SettingsError> {
        self.llm.as_ref().ok_or_else(|| SettingsError::NoLlm {
            where_: if self.config_path.exists() {
                format!(
                    "not in `{}` nor in the environment",
                    self.config_path.display()
                )
            } else {
                format!("there is no `{}`", self.config_path.display())
            },
        })
    }

    /// The base URLs whose user and password are not sent because a key is sent as the
    /// bearer token instead (the rule of `http::auth`), each once.
    pub fn unsent_user_parts(&self) -> Vec<&BaseUrl> {
        let llm = self.llm.iter().flat_map(LlmRoles::all);
        let llm = llm.filter(|e| e.api_key.is_some()).map(|e| &e.base_url);
        let bearer = self
            .search
            .web_provider()
            .is_some_and(|p| p.spec().key_sent_as == KeySentAs::Bearer)
            && self.search.api_key.is_some();
        let search = self.search.base_url.iter().filter(|_| bearer);
        let mut urls: Vec<&BaseUrl> = Vec::new();
        for url in llm.chain(search).filter(|url| url.user().is_some()) {
            if !urls.contains(&url) {
                urls.push(url);
            }
        }
        urls
    }

    /// Every secret in the settings, for redaction: the keys, and the passwords of the URLs
    /// (as written and percent-decoded), since servers echo both in error bodies.
    pub fn secrets(&self) -> Vec<ApiKey> {
        let llm: Vec<&LlmEndpoint> = self.llm.iter().flat_map(LlmRoles::all).collect();
        let mcp_url = self.search.mcp.as_ref().and_then(|m| match &m.server {
            McpServer::Url(url) => Some(url),
            McpServer::Command(_) => None,
        });
        let passwords = llm
            .iter()
            .map(|e| &e.base_url)
            .chain(self.search.base_url.as_ref())
            .chain(mcp_url)
            .flat_map(BaseUrl::secrets);
        llm.iter()
            .map(|e| &e.api_key)
            .chain([&self.search.api_key])
            .flatten()
            .chain(passwords)
            .cloned()
            .collect()
    }
}

/// A problem with provider `mcp`'s keys as the error of a config file (here, since this file
/// imports `mcp_search.rs` and not the other way).
impl KeyProblem {
    /// The problem as the error of the config file shown as `path`.
    pub fn error(self, path: &str) -> SettingsError {
        let (path, key) = (path.to_string(), self.key.to_string());
        match self.value {
            Some(value) => SettingsError::Invalid {
                path,
                key,
                value,
                hint: self.hint,
            },
            None => SettingsError::Required {
                path,
                key,
                hint: self.hint,
            },
        }
    }
}
