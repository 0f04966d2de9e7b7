//! One search result, the same shape whichever provider found it. It carries only what the
//! search sub-agent keeps; provider-specific fields (scores, engines) stay in the provider files.
//!
//! A web provider's answer is untrusted text: [`SearchHit::from_parts`], where the web providers
//! build their hits, keeps a hit only with an `http(s)` URL (a `javascript:`, `data:` or `file:`
//! link from a web search is never a source) and cleans its text: no control characters, and a
//! title on one line of at most [`TITLE_MAX_CHARS`] characters, so it cannot forge a line of a
//! sources list. Snippets keep their length here; the search sub-agent caps and records them.

use serde::{Deserialize, Serialize};

use crate::in_corpus::InCorpus;
use crate::text::{one_line, strip_controls};

/// The longest title kept, in characters.
pub const TITLE_MAX_CHARS: usize = 300;

/// The longest URL kept, in characters: real pages stay far below; longer is a payload.
pub const URL_MAX_CHARS: usize = 2048;

/// One result of a web search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    /// A short plain-text excerpt; may be empty.
    pub snippet: String,
    /// A document of the local corpus: where it lies in the corpus and the hash of its text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_corpus: Option<InCorpus>,
}

impl SearchHit {
    /// A web provider's hit from its optional fields; `None` without an `http(s)` URL.
    pub fn from_parts(
        title: Option<String>,
        url: Option<String>,
        snippet: Option<String>,
    ) -> Option<SearchHit> {
        let url = url
            .map(|u| u.trim().to_string())
            .filter(|u| is_web_url(u))?;
        Some(SearchHit {
            title: one_line(&title.unwrap_or_default(), TITLE_MAX_CHARS),
            url,
            snippet: strip_controls(&snippet.unwrap_or_default()),
            in_corpus: None,
        })
    }
}

/// Whether `url` is an absolute `http` or `https` URL with a host, without white space or
/// control characters, and not over [`URL_MAX_CHARS`].
pub fn is_web_url(url: &str) -> bool {
    if url.chars().count() > URL_MAX_CHARS
        || url.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        return false;
    }
    // The URL parser drops tabs and line breaks silently; they were refused above.
    reqwest::Url::parse(url).is_ok_and(|u| {
        matches!(u.scheme(), "http" | "https") && u.host_str().is_some_and(|h| !h.is_empty())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(title: &str, url: &str) -> Option<SearchHit> {
        SearchHit::from_parts(Some(title.into()), Some(url.into()), Some("s".into()))
    }

    #[test]
    fn only_web_links_are_kept() {
        assert!(hit("t", "https://example.test/a?b=c").is_some());
        assert!(hit("t", " http://example.test ").is_some());
        for url in [
            "javascript:alert(1)",
            "JavaScript://example.test/%0aalert(1)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd",
            "ftp://example.test/x",
            "/relative/path",
            "http://",
            "https://exa mple.test/",
            "https://example.test/\nnext",
            "",
        ] {
            assert_eq!(hit("t", url), None, "{url:?}");
        }
        assert_eq!(
            hit("t", &format!("https://x.test/{}", "a".repeat(3000))),
            None
        );
        assert_eq!(SearchHit::from_parts(Some("t".into()), None, None), None);
    }

    #[test]
    fn a_title_with_a_newline_cannot_forge_a_line() {
        let h = hit(
            "Real title\n- [9] [Forged](javascript:alert(1))\u{1b}]0;pwned\u{7}",
            "https://example.test/",
        )
        .expect("kept");
        assert_eq!(h.title, "Real title - [9] [Forged](javascript:alert(1))");
        let long = hit(&"word ".repeat(200), "https://example.test/").expect("kept");
        assert_eq!(long.title.chars().count(), TITLE_MAX_CHARS);
        assert!(long.title.ends_with('…'));
    }

    #[test]
    fn snippets_lose_control_characters_and_keep_lines() {
        let h = SearchHit::from_parts(
            None,
            Some("https://example.test/".into()),
            Some("line one\n\u{1b}[2Jline\0 two".into()),
        )
        .expect("kept");
        assert_eq!(h.snippet, "line one\nline two");
        assert_eq!(h.title, "");
    }
}
