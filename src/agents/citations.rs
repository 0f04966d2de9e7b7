//! Citations in the final report: `[n]` markers that point into the numbered source list.
//!
//! A marker whose number has no source is removed, never kept or invented; grouped markers
//! like `[1, 7]` keep only their valid numbers. Bracketed text that is not a list of numbers
//! (a Markdown link, `[sic]`) is left alone. A sources list the model wrote itself at the end
//! of the report is removed ([`strip_sources_section`]): the report appends the real one.

use std::sync::LazyLock;

use regex::Regex;

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(r"\[(\d{1,4}(?:\s*[,，]\s*\d{1,4})*)\](\()?").expect("valid regex")
});

static SOURCES_HEADING: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(
        r"(?i)^ {0,3}(?:(#{1,6})[ \t]+)?[*_]{0,2}[ \t]*(sources|references|bibliography|works cited|citations|参考文献|参考资料|来源|引用)\b[*_]{0,2}[ \t]*(.*)$",
    )
    .expect("valid regex")
});

/// Whether `line` opens a sources section, and its heading level: a heading of any level that
/// starts with a sources word (`## Sources`, `### References cited`), or a line of that word
/// with a colon (`Sources:`, `**References:**`, `Sources: [1] ...`) or alone
/// (`**Bibliography**`), which counts as below every heading level.
fn opens_sources(line: &str) -> Option<usize> {
    let caps = SOURCES_HEADING.captures(line)?;
    let rest = caps.get(3).map_or("", |m| m.as_str()).trim();
    let rest = rest.trim_start_matches(['*', '_']).trim();
    match caps.get(1) {
        Some(hashes) => Some(hashes.as_str().len()),
        None if rest.is_empty() || rest.starts_with([':', '：']) => Some(7),
        None => None,
    }
}

/// The level of a Markdown heading line (`## x` is 2).
fn heading_level(line: &str) -> Option<usize> {
    let trimmed = line.trim_start();
    let level = trimmed.chars().take_while(|&c| c == '#').count();
    let after = &trimmed[level..];
    ((1..=6).contains(&level) && (after.is_empty() || after.starts_with([' ', '\t'])))
        .then_some(level)
}

/// `report` without a sources section the model wrote at its end: from the line that opens
/// one (see [`opens_sources`]) to the end, provided no heading of the same or a higher level
/// follows it. The report adds its own list, built from what the searches returned, so one
/// written by the model would double it or cite what no search found.
pub fn strip_sources_section(report: &str) -> String {
    // Where the trailing sources section starts, and its level.
    let mut cut: Option<(usize, usize)> = None;
    let mut offset = 0;
    let mut fenced = false;
    for line in report.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fenced = !fenced;
        } else if !fenced {
            match (opens_sources(line.trim_end()), heading_level(line), cut) {
                (Some(level), _, None) => cut = Some((offset, level)),
                (None, Some(level), Some((_, open))) if level <= open => cut = None,
                _ => {}
            }
        }
        offset += line.len();
    }
    match cut {
        Some((at, _)) => report[..at].trim_end().to_string(),
        None => report.to_string(),
    }
}

/// A URL where a citation may stand: a Markdown link (`[text](url)`, its text in group 1), a
/// URL in brackets (`(url)`, `<url>`) or a bare one.
static CITED_URL: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(
        r#"\[([^\]\n]{0,300})\]\(\s*<?(https?://[^\s<>()]+)>?\s*\)|\(\s*<?(https?://[^\s<>()]+)>?\s*\)|<(https?://[^\s<>]+)>|(https?://[^\s<>()\[\]"']+)"#,
    )
    .expect("valid regex")
});

/// `report` with each numbered source's own URL, written where its marker belongs, read as
/// that marker: `[text](url)` becomes `text [n]`, `(url)`, `<url>` and a bare `url` become
/// `[n]` (a link whose text is the URL or a number, `[n]` alone). `urls[n - 1]` is source
/// `n`'s; a trailing `/` is not a difference. A URL of no source is left as written.
pub fn urls_as_markers(report: &str, urls: &[&str]) -> String {
    let key = |url: &str| url.trim_end_matches('/').to_string();
    let number: std::collections::HashMap<String, usize> = urls
        .iter()
        .enumerate()
        .rev()
        .map(|(i, url)| (key(url), i + 1))
        .collect();
    CITED_URL
        .replace_all(report, |caps: &regex::Captures<'_>| {
            let whole = caps.get(0).map_or("", |m| m.as_str());
            let url = (2..=5).find_map(|g| caps.get(g)).map_or("", |m| m.as_str());
            // A sentence's full stop after a bare URL is not part of it.
            let bare = url.trim_end_matches(['.', ',', ';', ':', '!', '?']);
            let Some(n) = number.get(&key(bare)) else {
                return whole.to_string();
            };
            let text = caps.get(1).map_or("", |m| m.as_str()).trim();
            let tail = &url[bare.len()..];
            match text.is_empty() || text.parse::<usize>().is_ok() || key(text) == key(bare) {
                true => format!("[{n}]{tail}"),
                false => format!("{text} [{n}]"),
            }
        })
        .into_owned()
}

/// The report with invalid citation numbers removed, and the numbers it still cites, in order
/// of first appearance.
pub fn clean(report: &str, source_count: usize) -> (String, Vec<usize>) {
    let mut cited = Vec::new();
    let text = MARKER.replace_all(report, |caps: &regex::Captures<'_>| {
        let whole = caps.get(0).map_or("", |m| m.as_str());
        if caps.get(2).is_some() {
            // `[1](http://...)` is a Markdown link, not a citation.
            return whole.to_string();
        }
        let numbers = caps.get(1).map_or("", |m| m.as_str());
        let valid: Vec<usize> = numbers
            .split([',', '，'])
            .filter_map(|n| n.trim().parse::<usize>().ok())
            .filter(|n| (1..=source_count).contains(n))
            .collect();
        for n in &valid {
            if !cited.contains(n) {
                cited.push(*n);
            }
        }
        valid.iter().map(|n| format!("[{n}]")).collect::<String>()
    });
    // Removing a marker can leave a space before punctuation: "fact [9]." -> "fact ."
    let text = text.replace(" .", ".").replace(" ,", ",");
    (text, cited)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_numbers_are_removed() {
        let (text, cited) = clean("A [1]. B [9]. C [2, 9][3]. D [0].", 3);
        assert_eq!(text, "A [1]. B. C [2][3]. D.");
        assert_eq!(cited, vec![1, 2, 3]);
    }

    #[test]
    fn a_sources_section_written_by_the_model_is_removed() {
        let body = "# Title\n\nText [1].\n\n## Details\nMore.\n";
        for tail in [
            "## Sources\n- [1] https://x.test\n",
            "### REFERENCES\n\n1. Foo\n2. Bar\n",
            "# Bibliography:\n[1] x\n",
            "Sources:\n1. x\n",
            "**Sources:** [1] x, [2] y\n",
            "**References**\n- a\n",
            "Sources: [1] https://x.test\n",
            "## Sources consulted\n- [1] x\n\n### Notes\n- n\n",
            "## 参考文献\n1. x\n",
        ] {
            let report = format!("{body}\n{tail}");
            assert_eq!(strip_sources_section(&report), body.trim_end(), "{tail:?}");
        }
    }

    #[test]
    fn text_that_only_mentions_sources_is_kept() {
        for report in [
            "Intro.\n\n## Sources of error\nText.\n\n## Conclusion\nEnd.",
            "Sources say the cell lasts longer.\n\nMore text.",
            "The references are clear.",
            "```\n## Sources\n```\nAfter the code.",
            "Sourcesless words.",
        ] {
            assert_eq!(strip_sources_section(report), report, "{report:?}");
        }
    }

    #[test]
    fn a_sources_own_url_is_read_as_its_marker() {
        let urls = ["http://site.test/a.md", "http://site.test/b/"];
        let cases = [
            (
                "Under 80 characters (http://site.test/a.md).",
                "Under 80 characters [1].",
            ),
            ("It says so: http://site.test/b.", "It says so: [2]."),
            ("See <http://site.test/a.md>, then", "See [1], then"),
            (
                "The [policy](http://site.test/b) says it.",
                "The policy [2] says it.",
            ),
            ("Cited [1](http://site.test/b/).", "Cited [2]."),
            (
                "[http://site.test/a.md](http://site.test/a.md) holds it.",
                "[1] holds it.",
            ),
            // Not a source's URL: left as written, as is a longer path.
            (
                "Elsewhere (http://other.test/a.md) and http://site.test/a.md/x.",
                "Elsewhere (http://other.test/a.md) and http://site.test/a.md/x.",
            ),
        ];
        for (written, read) in cases {
            assert_eq!(urls_as_markers(written, &urls), read, "{written:?}");
        }
    }

    #[test]
    fn links_and_words_are_left_alone() {
        let (text, cited) = clean("See [1](https://x) and [sic] and [a].", 0);
        assert_eq!(text, "See [1](https://x) and [sic] and [a].");
        assert!(cited.is_empty());
    }
}
