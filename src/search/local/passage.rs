//! The passage shown with a search result: the sentence with the most distinct query terms,
//! widened with its neighbours to about [`MIN_CHARS`]-[`MAX_CHARS`] characters of plain text
//! (white space collapsed). A single sentence longer than that is cut around its first match,
//! with `…` where text was left out.
//!
//! Terms are compared after the index's own analyzer (lower case, stems, CJK bigrams), so the
//! passage agrees with what BM25 matched. Pure text work: no index, no files.

use std::ops::Range;

use tantivy::tokenizer::TextAnalyzer;

use crate::text::analyzer;
use crate::text::collapsed;

/// A passage is widened until it has at least this many characters...
pub const MIN_CHARS: usize = 200;
/// ...and never past this many (plus the `…` marks of a cut).
pub const MAX_CHARS: usize = 600;

/// How well one sentence matches.
#[derive(Debug, Clone, Copy, Default)]
struct Score {
    /// Distinct query terms, as a bit set (the first 64 terms).
    terms: u64,
    hits: usize,
    /// Byte offset of the first match.
    first: Option<usize>,
}

impl Score {
    fn key(&self) -> (u32, usize) {
        (self.terms.count_ones(), self.hits)
    }
}

/// The best passage of `text` for the analysed query `terms` (the beginning of the text when
/// nothing matches, e.g. when only the title did).
pub fn best(text: &str, terms: &[String], analyzer: &mut TextAnalyzer) -> String {
    let sentences = crate::text::sentences::ranges(text);
    if sentences.is_empty() {
        return String::new();
    }
    let mut scores = vec![Score::default(); sentences.len()];
    for token in analyzer::terms(analyzer, text) {
        let Some(term) = terms.iter().position(|t| *t == token.text) else {
            continue;
        };
        let at = sentences.partition_point(|s| s.end <= token.offset_from);
        if let Some(score) = scores.get_mut(at) {
            score.terms |= 1 << (term % 64);
            score.hits += 1;
            score.first.get_or_insert(token.offset_from);
        }
    }
    // The first sentence with the best score (max_by_key would take the last).
    let mut best = 0;
    for (i, score) in scores.iter().enumerate() {
        if score.key() > scores[best].key() {
            best = i;
        }
    }
    let (lo, hi) = widen(text, &sentences, &scores, best);
    let window = sentences[lo].start..sentences[hi].end;
    if chars(text, &window) <= MAX_CHARS {
        return collapsed(&text[window]);
    }
    let focus = scores[lo..=hi]
        .iter()
        .find_map(|s| s.first)
        .unwrap_or(window.start);
    clip(text, window, focus)
}

/// Widens sentence `best` with neighbours (the better-matching side first, ties forward)
/// while the passage is under [`MIN_CHARS`] and stays within [`MAX_CHARS`].
fn widen(text: &str, sentences: &[Range<usize>], scores: &[Score], best: usize) -> (usize, usize) {
    let text_len = |lo: usize, hi: usize| chars(text, &(sentences[lo].start..sentences[hi].end));
    let (mut lo, mut hi) = (best, best);
    while text_len(lo, hi) < MIN_CHARS {
        let next = (hi + 1 < sentences.len()).then_some((lo, hi + 1));
        let prev = lo.checked_sub(1).map(|p| (p, hi));
        let fits = |c: &(usize, usize)| text_len(c.0, c.1) <= MAX_CHARS;
        let pick = match (next.filter(fits), prev.filter(fits)) {
            (Some(n), Some(p)) if scores[p.0].key() > scores[n.1].key() => p,
            (Some(n), _) => n,
            (None, Some(p)) => p,
            (None, None) => break,
        };
        (lo, hi) = pick;
    }
    (lo, hi)
}

fn chars(text: &str, range: &Range<usize>) -> usize {
    text[range.clone()].chars().count()
}

/// At most [`MAX_CHARS`] characters of `window`, starting about a third of that before
/// `focus`, cut between words where possible.
fn clip(text: &str, window: Range<usize>, focus: usize) -> String {
    let before = &text[window.start..focus];
    let mut start = before
        .char_indices()
        .rev()
        .nth(MAX_CHARS / 3)
        .map_or(window.start, |(i, _)| window.start + i);
    if start > window.start
        && let Some(space) = text[start..focus].find(char::is_whitespace)
    {
        start += space;
    }
    let mut end = text[start..window.end]
        .char_indices()
        .nth(MAX_CHARS)
        .map_or(window.end, |(i, _)| start + i);
    if end < window.end
        && let Some(space) = text[focus..end].rfind(char::is_whitespace)
    {
        end = focus + space;
    }
    let mut out = String::new();
    if start > window.start {
        out.push('…');
    }
    out.push_str(&collapsed(&text[start..end]));
    if end < window.end {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passage(text: &str, query: &str) -> String {
        let mut analyzer = analyzer::analyzer();
        let terms: Vec<String> = analyzer::terms(&mut analyzer, query)
            .into_iter()
            .map(|t| t.text)
            .collect();
        best(text, &terms, &mut analyzer)
    }

    fn filler(n: usize) -> String {
        (0..n)
            .map(|i| format!("Filler sentence number {i} says nothing of note."))
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn picks_the_sentence_with_most_query_terms_and_widens_it() {
        let text = format!(
            "{} Sodium batteries are cheap. Solid-state batteries promise higher energy density than lithium-ion cells. {}",
            filler(20),
            filler(20)
        );
        let p = passage(&text, "solid state battery energy density");
        assert!(
            p.contains("Solid-state batteries promise higher energy density"),
            "{p}"
        );
        let n = p.chars().count();
        assert!((MIN_CHARS..=MAX_CHARS).contains(&n), "{n}: {p}");
        assert!(!p.contains('\n') && !p.contains("  "), "{p}");
    }

    #[test]
    fn a_long_sentence_is_cut_around_its_match() {
        let text = format!(
            "{} electrolyte {}",
            "word ".repeat(400),
            "word ".repeat(400)
        );
        let p = passage(&text, "electrolytes");
        assert!(p.contains("electrolyte"), "{p}");
        assert!(p.starts_with('…') && p.ends_with('…'), "{p}");
        assert!(p.chars().count() <= MAX_CHARS + 2, "{}", p.chars().count());
    }

    #[test]
    fn no_match_gives_the_beginning_and_short_texts_stay_whole() {
        let text = format!("Opening line here.\n{}", filler(30));
        assert!(passage(&text, "zebra").starts_with("Opening line here. Filler"));
        assert_eq!(passage("Just this.", "this"), "Just this.");
        assert_eq!(passage("   \n ", "this"), "");
    }

    #[test]
    fn chinese_text_is_matched_by_bigrams() {
        let text = format!("{}\n固态电池的能量密度更高。钠离子电池更便宜。", filler(10));
        let p = passage(&text, "固态电池");
        assert!(p.contains("固态电池的能量密度更高。"), "{p}");
    }
}
