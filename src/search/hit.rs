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

impl SearchHit {
    /// A hit from a provider's optional fields; `None` without a usable URL.
    pub fn from_parts(
        title: Option<String>,
        url: Option<String>,
        snippet: Option<String>,
    ) -> Option<SearchHit> {
        let url = url.filter(|u| !u.trim().is_empty())?;
        Some(SearchHit {
            title: title.unwrap_or_default(),
            url,
            snippet: snippet.unwrap_or_default(),
        })
    }
}
