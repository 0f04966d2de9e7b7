//! One search result, the same shape whichever provider found it. It carries only what the
//! search sub-agent keeps; provider-specific fields (scores, engines) stay in the provider files.

use serde::Serialize;

/// One result of a web search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    /// A short plain-text excerpt; may be empty.
    pub snippet: String,
}
