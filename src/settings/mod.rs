//! Configuration: the config file, secrets, the resolution of both into one settings value.

pub mod base_url;
pub mod config_file;
pub mod config_schema;
pub mod documents;
pub mod mcp_search;
pub mod notify;
pub mod read;
pub mod resolve;
pub mod resolved;
pub mod role;
pub mod run;
pub mod search_provider;
pub mod secret;

/// What a run may spend: declared with its flags (`cli/bounds.rs`), resolved here.
pub use crate::cli::Budget;
pub use base_url::BaseUrl;
pub use config_file::{ConfigFile, EngineKind, StructuredOutput};
pub use mcp_search::{McpSearchSettings, McpServer};
pub use notify::{NotifyConfig, SmtpConfig, SmtpSecurity};
pub use read::ReadSettings;
pub use resolved::{
    DEFAULT_CLAIM_THRESHOLD, LlmEndpoint, LlmRoles, RateLimits, RetrySettings, RunOptions,
    SearchSettings, Settings, SettingsError,
};
pub use role::{Prompt, PromptSpec, Role, RoleSpec};
pub use run::RunSettings;
pub use search_provider::SearchProviderKind;
pub use secret::ApiKey;
