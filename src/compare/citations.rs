//! A summary's citation numbers read as the sources they name: `[3]` of a node whose third
//! source is `https://x/a` reads `[https://x/a]` (a local document: its place in its corpus,
//! [`Keying::citation_key`]). Two runs that cite the same sources under other numbers (the
//! sources were found in another order, or in a corpus mounted elsewhere) then say the same
//! thing, and `diff` does not report a renumbering as a changed finding. Pure text work.

use super::url::Keying;
use crate::plan::Source;

/// A citation is at most this long (`[1, 2, 3, ...]`): a longer bracket is text.
const MAX_CITATION_CHARS: usize = 64;

/// `summary` with each citation `[n]` or `[n, m, ...]` (numbers 1-based into `sources`)
/// written with the sources' keys (by `keying`) instead of the numbers. A bracket whose
/// numbers do not all name a source is left as it is, so a number changed to one without a
/// source is still a change.
pub fn cited_by_key(summary: &str, sources: &[Source], keying: Keying) -> String {
    let mut out = String::with_capacity(summary.len());
    let mut rest = summary;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let named = after
            .find(']')
            .filter(|&close| close <= MAX_CITATION_CHARS)
            .and_then(|close| Some((close, keys(&after[..close], sources, keying)?)));
        match named {
            Some((close, keys)) => {
                out.push('[');
                out.push_str(&keys.join(", "));
                out.push(']');
                rest = &after[close + 1..];
            }
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// The keys of the sources the comma-separated numbers of `inner` name, or `None` when it is
/// not a list of numbers that all name a source.
fn keys(inner: &str, sources: &[Source], keying: Keying) -> Option<Vec<String>> {
    inner
        .split(',')
        .map(|n| {
            let n: usize = n.trim().parse().ok()?;
            let source = sources.get(n.checked_sub(1)?)?;
            Some(keying.citation_key(source))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cited_by_url(summary: &str, sources: &[Source]) -> String {
        cited_by_key(summary, sources, Keying::Url)
    }

    fn sources(urls: &[&str]) -> Vec<Source> {
        urls.iter().map(|u| Source::new(*u, "")).collect()
    }

    #[test]
    fn numbers_become_the_urls_they_name() {
        let s = sources(&["https://x/a/", "https://x/b", "https://x/c#top"]);
        assert_eq!(
            cited_by_url("A holds [1]. B and C [2, 3]. [3][1]", &s),
            "A holds [https://x/a]. B and C [https://x/b, https://x/c]. [https://x/c][https://x/a]"
        );
    }

    #[test]
    fn a_renumbering_reads_the_same_and_another_source_does_not() {
        let old = sources(&["https://x/a", "https://x/b"]);
        let new = sources(&["https://x/b", "https://x/a"]);
        assert_eq!(
            cited_by_url("A [1]. B [2].", &old),
            cited_by_url("A [2]. B [1].", &new)
        );
        assert_ne!(cited_by_url("A [1].", &old), cited_by_url("A [1].", &new));
    }

    #[test]
    fn brackets_that_name_no_source_stay_as_they_are() {
        let s = sources(&["https://x/a"]);
        for text in [
            "[0] and [2] and [1, 2]",
            "[a] [] [ ] [1",
            "a [link](https://x) here",
            "unclosed [",
            "nested [[1]]",
        ] {
            let got = cited_by_url(text, &s);
            let expected = text.replace("[[1]]", "[[https://x/a]]");
            assert_eq!(got, expected, "{text}");
        }
        let long = format!("[{}1]", " ".repeat(MAX_CITATION_CHARS));
        assert_eq!(cited_by_url(&long, &s), long);
        assert_eq!(cited_by_url("€ [1] ü", &s), "€ [https://x/a] ü");
    }
}
