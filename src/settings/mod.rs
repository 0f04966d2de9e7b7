//! Configuration: the config file, secrets, the resolution of both into one settings value.

pub mod base_url;
pub mod config_file;
pub mod resolve;
pub mod resolved;
pub mod run;
pub mod secret;

pub use base_url::BaseUrl;
pub use config_file::{ConfigFile, EngineKind, SearchProviderKind, StructuredOutput};
pub use resolved::{
    Budget, LlmEndpoint, LlmRoles, RateLimits, RetrySettings, Role, RunOptions, SearchSettings,
    Settings, SettingsError,
};
pub use run::RunSettings;
pub use secret::ApiKey;
