//! The key two sources are compared by.
//!
//! - A web page by its URL ([`url_key`]): found again, it is the same source even when one run
//!   wrote `https://x/a/` and the other `https://x/a#intro`; anything else (scheme, host case,
//!   query) is kept as written, since no rule here can tell two pages apart reliably.
//! - A document of a local corpus by its place in the corpus ([`InCorpus`]: its path inside
//!   the corpus and the hash of its text), not by its `file://` URL, whose absolute path
//!   changes when the corpus is copied, moved or mounted elsewhere ([`Keying::Place`]). As a
//!   source it is new when its text changed; as what a finding cites, it is the same document
//!   (a finding that quotes the same words is not news). Plans written before sources
//!   recorded their place are compared by URL, as they always were ([`Keying::Url`]).

use crate::plan::{PlanFile, Source};

/// `url` trimmed, without its `#fragment` and then without one trailing `/`.
pub fn url_key(url: &str) -> &str {
    let url = url.trim();
    let url = url.split_once('#').map_or(url, |(before, _)| before);
    url.strip_suffix('/').unwrap_or(url)
}

/// How the sources of two plans are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keying {
    /// Every source by its URL.
    Url,
    /// A local document by its place in its corpus, any other source by its URL.
    Place,
}

impl Keying {
    /// [`Keying::Place`] when every local document of both plans records its place; else
    /// [`Keying::Url`] (a plan written before they did), so old plans compare as they did.
    pub fn of(old: &PlanFile, new: &PlanFile) -> Keying {
        let placed = |plan: &PlanFile| {
            plan.nodes
                .iter()
                .flat_map(|n| &n.sources)
                .all(|s| s.in_corpus.is_some() || !is_local(&s.url))
        };
        if placed(old) && placed(new) {
            Keying::Place
        } else {
            Keying::Url
        }
    }

    /// What tells `source` apart as a source: a local document's place and the hash of its
    /// text, else the URL key (empty: no URL, nothing to compare).
    pub fn source_key(self, source: &Source) -> String {
        match (self, &source.in_corpus) {
            (Keying::Place, Some(at)) => format!("corpus:{}#{}", at.path, at.sha256),
            _ => url_key(&source.url).to_string(),
        }
    }

    /// What tells `source` apart as a finding cites it: a local document's place, else the
    /// URL key.
    pub fn citation_key(self, source: &Source) -> String {
        match (self, &source.in_corpus) {
            (Keying::Place, Some(at)) => format!("corpus:{}", at.path),
            _ => url_key(&source.url).to_string(),
        }
    }
}

/// A `file:` URL: a document of a local corpus.
fn is_local(url: &str) -> bool {
    url.trim()
        .get(..5)
        .is_some_and(|s| s.eq_ignore_ascii_case("file:"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::in_corpus::InCorpus;
    use crate::plan::testing::{plan, search};

    #[test]
    fn white_space_fragment_and_trailing_slash_do_not_make_another_source() {
        assert_eq!(url_key("https://a.example/x"), "https://a.example/x");
        assert_eq!(url_key("  https://a.example/x/\n"), "https://a.example/x");
        assert_eq!(url_key("https://a.example/x#intro"), "https://a.example/x");
        assert_eq!(url_key("https://a.example/x/#top"), "https://a.example/x");
        assert_eq!(url_key("https://a.example/"), "https://a.example");
    }

    #[test]
    fn the_query_and_the_path_still_tell_pages_apart() {
        assert_ne!(
            url_key("https://a.example/x?p=1"),
            url_key("https://a.example/x?p=2")
        );
        assert_ne!(
            url_key("https://a.example/x"),
            url_key("https://a.example/y")
        );
        assert_eq!(url_key("#only-a-fragment"), "");
    }

    fn local(url: &str, place: Option<(&str, &str)>) -> Source {
        let in_corpus = place.map(|(path, sha256)| InCorpus {
            path: path.into(),
            sha256: sha256.into(),
        });
        Source {
            in_corpus,
            ..Source::new(url, "")
        }
    }

    fn plan_with(sources: Vec<Source>) -> PlanFile {
        plan("Q?", [search("b", "T").with_sources(sources)])
    }

    #[test]
    fn a_local_document_is_its_place_wherever_its_corpus_lies() {
        let a = local("file:///a/corpus/doc.md", Some(("doc.md", "f00d")));
        let b = local("file:///b/moved/doc.md", Some(("doc.md", "f00d")));
        let revised = local("file:///b/moved/doc.md", Some(("doc.md", "beef")));
        let k = Keying::Place;
        assert_eq!(k.source_key(&a), k.source_key(&b));
        assert_ne!(k.source_key(&a), k.source_key(&revised), "its text changed");
        assert_eq!(k.citation_key(&a), k.citation_key(&revised));
        assert_ne!(Keying::Url.source_key(&a), Keying::Url.source_key(&b));
        let web = local("https://x.example/a/", None);
        assert_eq!(k.source_key(&web), "https://x.example/a");
    }

    /// A plan written before sources recorded their place has local documents without one:
    /// both plans are then compared by URL, as before.
    #[test]
    fn plans_compare_by_place_only_when_every_local_document_has_one() {
        let placed = plan_with(vec![
            local("file:///a/doc.md", Some(("doc.md", "f00d"))),
            local("https://x.example", None),
        ]);
        let old = plan_with(vec![local("file:///a/doc.md", None)]);
        assert_eq!(Keying::of(&placed, &placed), Keying::Place);
        assert_eq!(Keying::of(&old, &placed), Keying::Url);
        assert_eq!(Keying::of(&placed, &old), Keying::Url);
        let web = plan_with(vec![local("https://x.example", None)]);
        assert_eq!(Keying::of(&web, &placed), Keying::Place);
    }
}
