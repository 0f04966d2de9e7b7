//! The two rules every piece of a view follows, in one place: text from a plan, a report, an
//! event log or a search result is text ([`esc`]: control characters removed, `&<>"'`
//! escaped, so it can stand in an element or a quoted attribute alike), and a link goes only to
//! a web address or a document of the run's corpus ([`Links::href`]). Nothing else in
//! `view/` writes text or a URL into the page without passing through here.

use std::path::{Component, Path};

use crate::search::hit::is_web_url;
use crate::search::local::url::{file_url, path_from_url};
use crate::text::strip_controls;

/// `text` safe in HTML content and in a double- or single-quoted attribute: control characters
/// removed (newlines and tabs kept), `&`, `<`, `>`, `"` and `'` escaped.
pub fn esc(text: &str) -> String {
    let clean = strip_controls(text);
    let mut out = String::with_capacity(clean.len() + 16);
    for c in clean.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The state a run is shown with: its status, or `not_answered` when it ended with a report
/// (`completed` or `partial`) that says its sources do not answer: a run can end well and
/// answer nothing, and must not look like an answer.
pub fn run_state(status: &str, answered: Option<bool>) -> &str {
    match answered {
        Some(false) if matches!(status, "completed" | "partial") => NOT_ANSWERED,
        _ => status,
    }
}

/// The state of a run whose report answers nothing ([`run_state`]).
pub const NOT_ANSWERED: &str = "not_answered";

/// A run's state as a badge: `<span class="badge run-STATE">state</span>` (`_` shown as a
/// space), with `attrs` (e.g. an id) inside the tag.
pub fn state_badge(state: &str, attrs: &str) -> String {
    format!(
        r#"<span class="badge run-{}"{attrs}>{}</span>"#,
        esc(state),
        esc(&state.replace('_', " "))
    )
}

/// At most `max` characters of `text`, and whether it was cut.
pub fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((at, _)) => (&text[..at], true),
        None => (text, false),
    }
}

/// Which URLs may be links: web addresses, and `file:` URLs of documents inside the run's
/// corpus (when the view knows it). Any other URL (`javascript:`, `data:`, a `file:` outside
/// the corpus) is shown as text.
#[derive(Debug, Clone, Default)]
pub struct Links {
    /// `file:///abs/corpus/`, ending in `/`.
    corpus: Option<String>,
}

impl Links {
    /// Links to the web only.
    pub fn web() -> Links {
        Links { corpus: None }
    }

    /// Links to the web and into the corpus whose `file://` URL is `corpus_url`.
    pub fn with_corpus(corpus_url: Option<String>) -> Links {
        Links {
            corpus: corpus_url.map(|c| format!("{}/", c.trim_end_matches('/'))),
        }
    }

    /// Links to the web and into the corpus folder `dir` (already made absolute).
    pub fn into_folder(dir: Option<&Path>) -> Links {
        Links::with_corpus(dir.map(|d| file_url(&d.to_string_lossy())))
    }

    /// These links, or, when they know no corpus, links into `recorded` (the corpus a plan
    /// records its run searched) when that is an existing folder: a view made later links
    /// what the run's own view did.
    pub fn or_recorded(self, recorded: Option<&str>) -> Links {
        if self.corpus.is_some() {
            return self;
        }
        let dir = recorded
            .map(Path::new)
            .filter(|p| p.is_absolute())
            .and_then(|p| std::fs::canonicalize(p).ok())
            .filter(|p| p.is_dir());
        match dir {
            Some(dir) => Links::into_folder(Some(&dir)),
            None => self,
        }
    }

    /// The URL as a link target, or `None` when it may not be one. The caller still escapes it
    /// with [`esc`] into the attribute.
    pub fn href(&self, url: &str) -> Option<String> {
        let url = url.trim();
        if is_web_url(url) {
            return Some(url.to_string());
        }
        let corpus = self.corpus.as_deref()?;
        let inside = url.len() > corpus.len()
            && url.is_char_boundary(corpus.len())
            && url[..corpus.len()].eq_ignore_ascii_case(corpus)
            && !url.chars().any(|c| c.is_whitespace() || c.is_control())
            && path_from_url(url).is_some_and(|p| {
                p.components()
                    .all(|c| !matches!(c, Component::ParentDir | Component::CurDir))
            });
        inside.then(|| url.to_string())
    }

    /// `label` as a link to `url` when it may be one, else as text followed by the URL as
    /// text.
    pub fn anchor(&self, url: &str, label: &str) -> String {
        match self.href(url) {
            Some(href) => format!(
                r#"<a href="{}" rel="noopener noreferrer">{}</a>"#,
                esc(&href),
                esc(label)
            ),
            None if label.trim().is_empty() || label.trim() == url.trim() => {
                format!(r#"<span class="nolink">{}</span>"#, esc(url))
            }
            None => format!(r#"{} <span class="nolink">{}</span>"#, esc(label), esc(url)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_markup_character_is_escaped_and_controls_go() {
        assert_eq!(
            esc("<img src=x onerror=\"alert('1')\">&\u{1b}[31m"),
            "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;"
        );
        assert_eq!(esc("two\nlines\ttab"), "two\nlines\ttab");
    }

    #[test]
    fn only_web_urls_and_documents_of_the_corpus_are_links() {
        let links = Links::with_corpus(Some("file:///data/corpus".into()));
        assert_eq!(
            links.href(" https://example.org/a?b=1 ").as_deref(),
            Some("https://example.org/a?b=1")
        );
        assert!(links.href("file:///data/corpus/doc%20one.md").is_some());
        for bad in [
            "javascript:alert(1)",
            "JavaScript:alert(1)",
            "data:text/html,<script>alert(1)</script>",
            "file:///etc/passwd",
            "file:///data/corpus-other/x.md",
            "file:///data/corpus/../../etc/passwd",
            "file:///data/corpus/",
            "vbscript:msgbox",
            "//evil.example/x",
            "https://exa mple.org",
        ] {
            assert_eq!(links.href(bad), None, "{bad}");
        }
        assert_eq!(Links::web().href("file:///data/corpus/a.md"), None);
    }

    #[test]
    fn a_recorded_corpus_links_only_when_none_is_given_and_it_is_a_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let corpus = dir.path().canonicalize().expect("real");
        let doc = file_url(&corpus.join("a.md").to_string_lossy());
        let recorded = corpus.to_string_lossy().into_owned();
        assert!(
            Links::web()
                .or_recorded(Some(&recorded))
                .href(&doc)
                .is_some()
        );
        let given = Links::with_corpus(Some("file:///elsewhere".into()));
        assert!(given.or_recorded(Some(&recorded)).href(&doc).is_none());
        for bad in ["relative/dir", "/no/such/folder"] {
            assert!(Links::web().or_recorded(Some(bad)).href(&doc).is_none());
        }
        let file = corpus.join("a.md");
        std::fs::write(&file, "x").expect("file");
        let not_a_folder = file.to_string_lossy().into_owned();
        assert!(
            Links::web()
                .or_recorded(Some(&not_a_folder))
                .href(&doc)
                .is_none()
        );
    }

    #[test]
    fn a_refused_url_is_shown_as_text() {
        let html = Links::web().anchor("javascript:alert(1)", "<b>click</b>");
        assert!(!html.contains("<a "), "{html}");
        assert!(html.contains("&lt;b&gt;click") && html.contains("javascript:alert(1)"));
        let html = Links::web().anchor("https://x.test/\"onmouseover=\"y", "t");
        assert_eq!(html.matches('"').count(), 4, "{html}");
    }
}
