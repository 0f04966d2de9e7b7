//! Configuration: the config file, secrets, and the resolved settings value.

pub mod config_file;
pub mod resolved;
pub mod secret;

pub use config_file::{ConfigFile, SearchProviderKind, StructuredOutput};
pub use resolved::{LlmEndpoint, RetrySettings, Role, SearchSettings, Settings, SettingsError};
pub use secret::ApiKey;
