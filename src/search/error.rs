//! What can go wrong when setting up a search provider ([`SearchConfigError`]) and when one
//! search fails ([`SearchError`]).
//!
//! Messages never carry an API key: HTTP errors hold URLs without their query and redacted
//! bodies, and malformed-answer messages are redacted by the client before they get here.

use crate::http::HttpError;

/// The configured search provider cannot be used; each message names the config key to fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SearchConfigError {
    #[error(
        "config `{path}`: search provider `{provider}` needs `search.baseURL`: set it to the address of your instance, e.g. `http://localhost:8080`"
    )]
    MissingBaseUrl {
        path: String,
        provider: &'static str,
    },
    #[error(
        "config `{path}`: search provider `{provider}` needs an API key: set `search.apiKey` or export `{env}`"
    )]
    MissingKey {
        path: String,
        provider: &'static str,
        env: &'static str,
    },
    #[error(
        "config `{path}`: search provider `{provider}` is not available in this build: use searxng, tavily, brave or none"
    )]
    Unavailable {
        path: String,
        provider: &'static str,
    },
}

/// One search that failed, after retries.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SearchError {
    #[error(transparent)]
    Http(#[from] HttpError),
    /// A 2xx answer whose body is not the provider's result JSON (never retried).
    #[error(
        "{provider} search answered with a body that is not its result JSON ({message}): check that `search.baseURL` points at the {provider} API"
    )]
    Malformed {
        provider: &'static str,
        message: String,
    },
}

impl SearchError {
    /// Whether the search API was never reached (connection refused, DNS, timeout).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, SearchError::Http(e) if e.is_unreachable())
    }
}
