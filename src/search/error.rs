//! What can go wrong when setting up a search provider ([`SearchConfigError`]) and when one
//! search fails ([`SearchError`]).
//!
//! Messages never carry an API key: HTTP errors hold URLs without their query and redacted
//! bodies, and malformed-answer messages are redacted by the client before they get here.

use super::local::LocalSearchError;
use crate::http::{HttpError, Unusable};

/// The configured search provider cannot be used; each message names the config key to fix.
#[derive(Debug, thiserror::Error)]
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
        "search provider `local` needs a corpus: set `search.corpus` in `{path}` or pass `--corpus DIR`"
    )]
    NoCorpus { path: String },
    #[error("config `{path}`: {source}")]
    Embeddings {
        path: String,
        #[source]
        source: crate::embed::EmbedError,
    },
    #[error(transparent)]
    Local(#[from] LocalSearchError),
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
    /// An MCP search tool failed, or answered nothing that reads as results: the message
    /// names the server and the tool.
    #[error("{message}")]
    Tool { message: String },
    /// The local index failed while searching (a disk error; query text never fails).
    #[error("local search failed: {0}")]
    Local(String),
    /// The provider cannot be used as configured (unreachable, key refused, quota): the
    /// message names it and what to fix.
    #[error("{message}")]
    Unusable { why: Unusable, message: String },
}

impl SearchError {
    /// Whether the provider cannot be used as configured: the run must stop, not go on.
    pub fn is_unusable(&self) -> bool {
        matches!(self, SearchError::Unusable { .. })
    }
}
