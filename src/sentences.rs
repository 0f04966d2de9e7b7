//! Text into sentences and sentences into terms: no model, only the words. The offline
//! engine quotes sentences; the claim check reads a report sentence by sentence. A sentence is always an exact slice of the text it comes from, so a quoted sentence
//! can be found again in its document.

use std::ops::Range;

/// Words that say nothing about a topic (English), left out of the terms.
pub const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "after",
    "all",
    "also",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "did",
    "do",
    "does",
    "doing",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "has",
    "have",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "him",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "it",
    "its",
    "itself",
    "just",
    "many",
    "may",
    "me",
    "more",
    "most",
    "much",
    "must",
    "my",
    "no",
    "nor",
    "not",
    "now",
    "of",
    "off",
    "on",
    "once",
    "one",
    "only",
    "or",
    "other",
    "our",
    "out",
    "over",
    "own",
    "same",
    "she",
    "should",
    "so",
    "some",
    "such",
    "than",
    "that",
    "the",
    "their",
    "them",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "very",
    "was",
    "we",
    "were",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "you",
    "your",
    "compare",
    "compared",
    "comparison",
    "versus",
    "vs",
];

/// Abbreviations whose final period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "fig", "no", "approx", "ca", "inc",
    "ltd", "co", "st", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "u.s", "u.k",
];

/// The sentences of `text`, in order, each an exact, trimmed slice of it. Lines end a
/// sentence (a line of indexed text is a paragraph, a heading, a list item or a table row); so
/// does `.`, `!` or `?` followed by white space, unless it closes an abbreviation or an
/// initial.
pub fn split_sentences(text: &str) -> Vec<&str> {
    let mut start = 0;
    let mut out = Vec::new();
    for line in text.split('\n') {
        let range = start..start + line.len();
        start = range.end + 1;
        out.extend(sentence_ranges(text, range).into_iter().map(|r| &text[r]));
    }
    out
}

/// The byte ranges (in `text`) of the sentences of its line at `line`, trimmed.
pub fn sentence_ranges(text: &str, line: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let offset = line.start;
    let line = &text[line];
    let mut start = 0;
    let bytes = line.as_bytes();
    for (i, c) in line.char_indices() {
        if !matches!(c, '.' | '!' | '?') {
            continue;
        }
        let next = i + c.len_utf8();
        let at_end = next >= line.len();
        let then_space = !at_end && bytes[next].is_ascii_whitespace();
        if !(at_end || then_space) || (c == '.' && closes_abbreviation(&line[start..i])) {
            continue;
        }
        push(&mut out, line, start..next, offset);
        start = next;
    }
    push(&mut out, line, start..line.len(), offset);
    out
}

fn push(out: &mut Vec<Range<usize>>, line: &str, piece: Range<usize>, offset: usize) {
    let slice = &line[piece.clone()];
    let trimmed = slice.trim();
    if !trimmed.is_empty() {
        let start = offset + piece.start + (slice.len() - slice.trim_start().len());
        out.push(start..start + trimmed.len());
    }
}

/// Whether the text before a period ends in an abbreviation or a one-letter initial.
fn closes_abbreviation(before: &str) -> bool {
    let word = before
        .rsplit(|c: char| c.is_whitespace() || c == '(')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    let word = word.trim_start_matches(|c: char| !c.is_alphanumeric());
    (word.chars().count() == 1 && word.chars().all(char::is_alphabetic))
        || ABBREVIATIONS.contains(&word)
}

/// The content words of `text`: lower case, letters and digits, stopwords and one-letter words
/// left out, and English plurals made singular (`batteries` is `battery`, `cells` is `cell`).
pub fn terms(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .filter(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

fn stem(word: &str) -> String {
    let n = word.len();
    if n > 4 && word.ends_with("ies") {
        format!("{}y", &word[..n - 3])
    } else if n > 4
        && ["ches", "shes", "xes", "sses"]
            .iter()
            .any(|e| word.ends_with(e))
    {
        word[..n - 2].to_string()
    } else if n > 3 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e))
    {
        word[..n - 1].to_string()
    } else {
        word.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_are_exact_slices_and_abbreviations_do_not_split() {
        let text = "Solid cells store 400 Wh/kg, e.g. in pouch form. Dr. Lee agrees!\n\
                    # A heading\n- a list item\n\nIs 3.5 V enough? Yes. U.S. plants follow.";
        let got = split_sentences(text);
        assert_eq!(
            got,
            vec![
                "Solid cells store 400 Wh/kg, e.g. in pouch form.",
                "Dr. Lee agrees!",
                "# A heading",
                "- a list item",
                "Is 3.5 V enough?",
                "Yes.",
                "U.S. plants follow.",
            ]
        );
        for s in got {
            assert!(text.contains(s));
        }
    }

    #[test]
    fn terms_drop_stopwords_and_plural_s() {
        assert_eq!(
            terms("How do the Solid-state batteries compare with cells?"),
            vec!["solid", "state", "battery", "cell"]
        );
        assert!(terms("the of and").is_empty());
        assert_eq!(
            terms("battery boxes lithium-ion"),
            vec!["battery", "box", "lithium", "ion"]
        );
    }
}
