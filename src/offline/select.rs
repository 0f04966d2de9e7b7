//! Choosing the sentences of an extractive summary: relevance to the query (the task and the
//! question), then maximal marginal relevance, so that each next sentence adds something the
//! chosen ones do not already say; near-duplicates never both make it. Deterministic: ties go
//! to the earlier candidate. Term sets are ordered (`BTreeSet`), so a sentence's weights are
//! always added in the same order: a sum in hash order differs in its last bits from one set
//! to the next, and two equal sentences would win in turn from run to run.

use std::collections::{BTreeSet, HashMap};
use std::ops::Range;

use crate::text::analyzer::content_terms;

/// A sentence (or a leaning sentence with what it follows from, [`super::units`]) that may be
/// chosen, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub text: String,
    /// The document (source) it was taken from.
    pub source: usize,
    /// Where in the source's text: two candidates that overlap are never both chosen.
    pub at: Range<usize>,
    /// A sentence that leans on one it is quoted without: it ranks lower.
    pub orphan: bool,
    /// How near its passage is to the question in meaning (cosine similarity of their
    /// embeddings, `search.embeddings.model`); 0 without a model.
    pub meaning: f32,
    /// The heading of the section of its document it stands in, if any.
    pub section: Option<String>,
    /// The heading of the release it stands under, if any: the last heading at or before it
    /// that writes a release (`# 1.1.0`, `## [0.2.11] - 2023-11-08`), in a document that
    /// heads several, as a changelog heads each release's changes.
    pub release: Option<String>,
    /// The term of the definition it stands in, if any ([`super::units::Unit::term`]).
    pub term: Option<String>,
    /// It is a record's field (`Installed-Size: 1226`), its term the field's key.
    pub field: bool,
}

/// Sources of tests: `n` documents, `file:///c/d<k>.md` titled `D<k>`.
#[cfg(test)]
pub fn test_sources(n: usize) -> Vec<crate::plan::Source> {
    (0..n)
        .map(|k| crate::plan::Source::new(format!("file:///c/d{k}.md"), format!("D{k}")))
        .collect()
}

/// Candidates of tests, one per sentence, each at its own place: (source, section, text).
#[cfg(test)]
pub fn test_candidates(docs: &[(usize, Option<&str>, &str)]) -> Vec<Candidate> {
    let mut at = 0;
    docs.iter()
        .map(|&(source, section, text)| {
            at += text.len() + 1;
            Candidate {
                text: text.into(),
                source,
                at: at - text.len() - 1..at - 1,
                orphan: false,
                meaning: 0.0,
                section: section.map(str::to_string),
                release: None,
                term: None,
                field: false,
            }
        })
        .collect()
}

/// How much relevance weighs against novelty.
const LAMBDA: f64 = 0.7;
/// Two sentences sharing this much of their terms say the same thing.
pub const NEAR_DUPLICATE: f64 = 0.6;
/// What an orphan's relevance counts for: it is quoted only when little else answers.
const ORPHAN_WEIGHT: f64 = 0.5;

/// Whether a sentence is worth quoting: long enough to say something, short enough to read,
/// not a heading, a list marker or a table row (a command-line option opening it, as a
/// reference's option with its definition does, is not a list marker).
pub fn quotable(sentence: &str) -> bool {
    let first = sentence.chars().next().unwrap_or(' ');
    let option = is_option(sentence);
    sentence.split_whitespace().count() >= 6
        && quotable_length(sentence)
        && (option || !matches!(first, '#' | '|' | '-' | '*' | '>' | '`'))
        && sentence.ends_with(['.', '!', '?', '"', ')'])
}

/// Whether `text` opens with a command-line option (`--leak-check=<no|yes>`, `-v`), as a
/// reference's list of options names each (`--depth=<number> [default: 30]`), not with a
/// list's marker (`- item`).
pub fn is_option(text: &str) -> bool {
    let rest = text.strip_prefix("--").or_else(|| text.strip_prefix('-'));
    rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_alphabetic()))
}

/// Whether `text` is short enough to read as one quote.
pub fn quotable_length(text: &str) -> bool {
    text.split_whitespace().count() <= 80 && text.chars().count() <= 600
}

/// The indices of at most `k` candidates, best first: relevant to `query`, each adding
/// something new, at most `per_source` from one source.
pub fn select(candidates: &[Candidate], query: &str, k: usize, per_source: usize) -> Vec<usize> {
    let query: BTreeSet<String> = content_terms(query).into_iter().collect();
    let sets: Vec<BTreeSet<String>> = candidates
        .iter()
        .map(|c| content_terms(&c.text).into_iter().collect())
        .collect();
    let idf = inverse_document_frequency(&sets);
    let relevance: Vec<f64> = sets
        .iter()
        .zip(candidates)
        .map(|(set, c)| {
            let hit: f64 = set.intersection(&query).map(|t| idf[t]).sum();
            // A sentence with a figure usually states a fact rather than frames one.
            let facts = if c.text.chars().any(|ch| ch.is_ascii_digit()) {
                1.25
            } else {
                1.0
            };
            let orphan = if c.orphan { ORPHAN_WEIGHT } else { 1.0 };
            orphan * facts * hit / (set.len().max(1) as f64).sqrt()
        })
        .collect();
    let top = relevance.iter().copied().fold(0.0, f64::max);
    let mut chosen: Vec<usize> = Vec::new();
    let mut per: HashMap<usize, usize> = HashMap::new();
    while chosen.len() < k {
        let mut best: Option<(usize, f64)> = None;
        for (i, set) in sets.iter().enumerate() {
            let taken = per.get(&candidates[i].source).copied().unwrap_or(0);
            let overlaps = |j: &usize| {
                let (a, b) = (&candidates[i], &candidates[*j]);
                a.source == b.source && a.at.start < b.at.end && b.at.start < a.at.end
            };
            if relevance[i] <= 0.0 || taken >= per_source || chosen.iter().any(overlaps) {
                continue;
            }
            let overlap = chosen
                .iter()
                .map(|&j| jaccard(set, &sets[j]))
                .fold(0.0, f64::max);
            if overlap >= NEAR_DUPLICATE {
                continue;
            }
            let score = LAMBDA * relevance[i] / top - (1.0 - LAMBDA) * overlap;
            if best.is_none_or(|(_, b)| score > b) {
                best = Some((i, score));
            }
        }
        let Some((i, _)) = best else { break };
        chosen.push(i);
        *per.entry(candidates[i].source).or_default() += 1;
    }
    chosen
}

fn inverse_document_frequency(sets: &[BTreeSet<String>]) -> HashMap<String, f64> {
    let mut df: HashMap<String, usize> = HashMap::new();
    for set in sets {
        for t in set {
            *df.entry(t.clone()).or_default() += 1;
        }
    }
    let n = sets.len().max(1) as f64;
    df.into_iter()
        .map(|(t, d)| (t, (1.0 + n / d as f64).ln()))
        .collect()
}

/// The share of their union two term sets share.
pub fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    if union == 0 {
        0.0
    } else {
        a.intersection(b).count() as f64 / union as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A candidate of its own place: no two overlap.
    fn c(text: &str, source: usize) -> Candidate {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let at = NEXT.fetch_add(1000, std::sync::atomic::Ordering::Relaxed);
        Candidate {
            text: text.into(),
            source,
            at: at..at + text.len(),
            orphan: false,
            meaning: 0.0,
            section: None,
            release: None,
            term: None,
            field: false,
        }
    }

    #[test]
    fn relevant_first_near_duplicates_once_sources_capped() {
        let cands = vec![
            c(
                "Solid electrolytes suppress dendrites in lithium metal cells.",
                0,
            ),
            c(
                "Solid electrolytes suppress dendrites in lithium metal cells today.",
                1,
            ),
            c("The weather in spring is mild and pleasant for walking.", 2),
            c(
                "Dendrites grow when lithium plates unevenly during fast charging.",
                1,
            ),
            c(
                "Ceramic electrolytes resist dendrites better than polymer ones do.",
                0,
            ),
        ];
        let picked = select(&cands, "How do solid electrolytes stop dendrites?", 5, 2);
        assert_eq!(picked[0], 0, "{picked:?}");
        assert!(
            !picked.contains(&1),
            "a near-duplicate of the first: {picked:?}"
        );
        assert!(!picked.contains(&2), "irrelevant: {picked:?}");
        assert!(picked.contains(&3) && picked.contains(&4));
        assert_eq!(
            select(&cands, "How do solid electrolytes stop dendrites?", 5, 1).len(),
            2
        );
        assert_eq!(select(&cands, "x", 5, 2), Vec::<usize>::new());
    }

    /// The same sentence in two documents scores the same in every run, so the earlier
    /// source always wins the tie: a sum over a `HashSet` once added the terms' weights in an
    /// order that changed with every set, and the winner changed from run to run.
    #[test]
    fn ties_always_go_to_the_earlier_candidate() {
        let text = "Solid electrolytes suppress lithium dendrites, raise energy density, cut \
                    fire risk, and allow thinner separators in pouch cells at scale.";
        let filler = [
            "Dendrites pierce separators in cells that charge fast.",
            "Energy density rises with lithium metal anodes in pouch cells.",
            "Fire risk falls when the liquid electrolyte is gone.",
        ];
        // More query terms than the sentence has, so the sum runs over the sentence's terms.
        let query = "solid electrolytes suppress lithium dendrites raise energy density cut fire \
                     risk allow separators pouch cells scale thinner grid storage sodium cost";
        for _ in 0..200 {
            let mut cands: Vec<Candidate> = filler.iter().map(|t| c(t, 0)).collect();
            cands.push(c(text, 1));
            cands.push(c(text, 2));
            let picked = select(&cands, query, 1, 1);
            assert_eq!(picked, [3], "the earlier of two equal sentences");
        }
    }

    /// A sentence and the whole it is part of overlap: never both; an orphan ranks below a
    /// sentence that matches as well.
    #[test]
    fn overlapping_candidates_are_chosen_once_and_orphans_rank_lower() {
        let first = "Solid electrolytes replace the liquid in lithium cells.";
        // Different enough from `first` not to be its near-duplicate.
        let both = "Solid electrolytes replace the liquid in lithium cells. They stop dendrites, \
                    pores, cracks and short circuits forming at the anode.";
        let at = |text: &str, start: usize, orphan: bool| Candidate {
            meaning: 0.0,
            section: None,
            release: None,
            term: None,
            field: false,
            text: text.into(),
            source: 0,
            at: start..start + text.len(),
            orphan,
        };
        let cands = vec![
            at(first, 0, false),
            at(both, 0, false),
            at(
                "They stop dendrites in lithium cells and in sodium cells.",
                500,
                true,
            ),
            at(
                "Ceramics stop dendrites in lithium cells and in sodium cells.",
                600,
                false,
            ),
        ];
        let picked = select(&cands, "solid electrolytes dendrites lithium cells", 4, 4);
        assert!(!(picked.contains(&0) && picked.contains(&1)), "{picked:?}");
        let orphan = picked.iter().position(|&i| i == 2);
        let sound = picked.iter().position(|&i| i == 3);
        assert!(
            sound.is_some() && orphan.is_none_or(|o| Some(o) > sound),
            "{picked:?}"
        );
    }

    #[test]
    fn only_real_sentences_are_quotable() {
        assert!(quotable(
            "Solid-state cells reach 400 Wh/kg in laboratory tests."
        ));
        assert!(!quotable("# Energy density"));
        assert!(!quotable("Short one."));
        assert!(!quotable(
            "- a list item that goes on for quite a few words here."
        ));
        // An option with its definition is a sentence, not a list item.
        assert!(quotable(
            "--num-callers=<number> [default: 12] Specifies the most entries in traces."
        ));
    }
}
