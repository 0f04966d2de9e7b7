//! Text into sentences, one splitter for every reader of sentences: the offline engine quotes
//! them, the claim check reads a report sentence by sentence, the index cuts documents into
//! chunks of them, and the passages of a search hit are sentences around its terms. A sentence
//! is always an exact slice of the text it comes from, so a quoted sentence can be found again
//! in its document. Words and terms are [`crate::text::analyzer`]'s.

use std::ops::Range;

/// Abbreviations whose final period does not end a sentence.
const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "fig", "no", "approx", "ca", "inc",
    "ltd", "co", "st", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct",
    "nov", "dec", "u.s", "u.k",
];

/// The sentences of `text`, in order, each an exact, trimmed slice of it ([`ranges`]).
pub fn split_sentences(text: &str) -> Vec<&str> {
    ranges(text).into_iter().map(|r| &text[r]).collect()
}

/// The byte ranges of the sentences of `text`, in order, trimmed. Lines end a sentence (a line
/// of indexed text is a paragraph, a heading, a list item or a table row); so does `.`, `!` or
/// `?` followed by white space, unless it closes an abbreviation or an initial, and `。`, `！`
/// or `？` (Chinese and Japanese put no space after them).
pub fn ranges(text: &str) -> Vec<Range<usize>> {
    let mut start = 0;
    let mut out = Vec::new();
    for line in text.split('\n') {
        let range = start..start + line.len();
        start = range.end + 1;
        out.extend(sentence_ranges(text, range));
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
        let next = i + c.len_utf8();
        let ends = match c {
            '。' | '！' | '？' => true,
            '.' | '!' | '?' => {
                let at_end = next >= line.len();
                let then_space = !at_end && bytes[next].is_ascii_whitespace();
                (at_end || then_space) && !(c == '.' && closes_abbreviation(&line[start..i]))
            }
            _ => false,
        };
        if !ends {
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
    fn a_chinese_full_stop_ends_a_sentence_without_a_space() {
        let text = "固态电池更安全。它们的能量密度更高！Solid cells are safer.";
        assert_eq!(
            split_sentences(text),
            vec![
                "固态电池更安全。",
                "它们的能量密度更高！",
                "Solid cells are safer."
            ]
        );
    }
}
