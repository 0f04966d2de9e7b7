//! Citations in the final report: `[n]` markers that point into the numbered source list.
//!
//! A marker whose number has no source is removed, never kept or invented; grouped markers
//! like `[1, 7]` keep only their valid numbers. Bracketed text that is not a list of numbers
//! (a Markdown link, `[sic]`) is left alone.

use std::sync::LazyLock;

use regex::Regex;

static MARKER: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(r"\[(\d{1,4}(?:\s*[,，]\s*\d{1,4})*)\](\()?").expect("valid regex")
});

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
    fn links_and_words_are_left_alone() {
        let (text, cited) = clean("See [1](https://x) and [sic] and [a].", 0);
        assert_eq!(text, "See [1](https://x) and [sic] and [a].");
        assert!(cited.is_empty());
    }
}
