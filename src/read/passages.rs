//! Pages' text cut into passages, and the best passages for a task's queries within a budget:
//! what the search sub-agent quotes to its model from the pages it read.
//!
//! A passage is a chunk of the text ([`crate::search::local::chunks`]: paragraphs joined up to
//! about 700 characters, never over 1,200). Passages are ranked with BM25 (k1 = 1.2, b = 0.75) over the passages of all
//! the pages given, in memory, with the local index's own analyzer (lower case, English stems,
//! CJK bigrams), so `batteries` matches `battery` as it does in a local search. English
//! stopwords are left out of the queries: a page matching only `the` has not matched.
//!
//! Pure text work: no network, no index on disk. Ties go to the earlier page, then the earlier
//! passage, so the same pages give the same passages.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::search::local::chunks::cut;
use crate::text::analyzer::STOPWORDS;
use crate::text::analyzer::{analyzer, terms};

/// BM25's term-frequency saturation.
const K1: f32 = 1.2;
/// BM25's length normalisation.
const B: f32 = 0.75;

/// One page's text, as the ranking sees it.
pub struct PageForRanking<'a> {
    /// The source number, 1-based, as the model sees it.
    pub source: usize,
    pub text: &'a str,
}

/// A passage chosen from a page, with its BM25 score.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passage {
    pub source: usize,
    pub text: String,
    pub score: f32,
}

/// One passage and how it ranks: its page (index in the input), its place in the page, its
/// score.
struct Candidate {
    page: usize,
    at: usize,
    text: String,
    chars: usize,
    score: f32,
}

/// The best passages of all pages for the query texts (the task's search queries and its
/// question), within `budget_chars` in all and at most `per_page` from one page. Every page
/// with a passage scoring above 0 gets its best one before any page gets a second; passages
/// scoring 0 are never chosen, so a page that matches nothing gives nothing (the caller falls
/// back to its snippet). Returned grouped by source in source order, each page's passages in
/// reading order.
pub fn select(
    pages: &[PageForRanking],
    queries: &[&str],
    budget_chars: usize,
    per_page: usize,
) -> Vec<Passage> {
    let mut candidates = scored(pages, queries);
    // Each page's passages best first (the earlier on a tie).
    let mut by_page: Vec<Vec<usize>> = vec![Vec::new(); pages.len()];
    for (i, c) in candidates.iter().enumerate() {
        if c.score > 0.0 {
            by_page[c.page].push(i);
        }
    }
    for ranked in &mut by_page {
        ranked.sort_by(|&a, &b| candidates[b].score.total_cmp(&candidates[a].score));
    }
    let mut chosen = Vec::new();
    let mut left = budget_chars;
    for round in 0..per_page {
        // This round's offers, best first; a tie goes to the earlier page.
        let mut offers: Vec<usize> = by_page
            .iter()
            .filter_map(|r| r.get(round))
            .copied()
            .collect();
        if offers.is_empty() {
            break;
        }
        offers.sort_by(|&a, &b| {
            let (a, b) = (&candidates[a], &candidates[b]);
            b.score.total_cmp(&a.score).then(a.page.cmp(&b.page))
        });
        for i in offers {
            if candidates[i].chars <= left {
                left -= candidates[i].chars;
                chosen.push(i);
            }
        }
    }
    chosen.sort_by_key(|&i| {
        let c = &candidates[i];
        (pages[c.page].source, c.page, c.at)
    });
    chosen
        .into_iter()
        .map(|i| Passage {
            source: pages[candidates[i].page].source,
            text: std::mem::take(&mut candidates[i].text),
            score: candidates[i].score,
        })
        .collect()
}

/// Every passage of every page with its BM25 score for the union of the queries' terms.
fn scored(pages: &[PageForRanking], queries: &[&str]) -> Vec<Candidate> {
    let mut analyzer = analyzer();
    let mut query_terms: HashMap<String, usize> = HashMap::new();
    for query in queries {
        for token in terms(&mut analyzer, query) {
            let word = query[token.offset_from..token.offset_to].to_lowercase();
            if !STOPWORDS.contains(&word.as_str()) {
                let next = query_terms.len();
                query_terms.entry(token.text).or_insert(next);
            }
        }
    }
    let mut candidates = Vec::new();
    // Per passage: its length in terms and how often each query term occurs in it.
    let mut counts: Vec<(usize, Vec<u32>)> = Vec::new();
    for (page, p) in pages.iter().enumerate() {
        for (at, text) in cut(p.text).into_iter().enumerate() {
            let mut tf = vec![0u32; query_terms.len()];
            let mut len = 0;
            for token in terms(&mut analyzer, &text) {
                len += 1;
                if let Some(&t) = query_terms.get(&token.text) {
                    tf[t] += 1;
                }
            }
            counts.push((len, tf));
            let chars = text.chars().count();
            candidates.push(Candidate {
                page,
                at,
                text,
                chars,
                score: 0.0,
            });
        }
    }
    let n = counts.len() as f32;
    let avg_len = counts.iter().map(|(len, _)| *len as f32).sum::<f32>() / n.max(1.0);
    let idf: Vec<f32> = (0..query_terms.len())
        .map(|t| {
            let df = counts.iter().filter(|(_, tf)| tf[t] > 0).count() as f32;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    for (candidate, (len, tf)) in candidates.iter_mut().zip(&counts) {
        let norm = K1 * (1.0 - B + B * *len as f32 / avg_len.max(1.0));
        candidate.score = tf
            .iter()
            .zip(&idf)
            .filter(|(f, _)| **f > 0)
            .map(|(&f, idf)| idf * f as f32 * (K1 + 1.0) / (f as f32 + norm))
            .sum();
    }
    candidates
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::search::local::chunks::tests::filler;

    fn page(source: usize, text: &str) -> PageForRanking<'_> {
        PageForRanking { source, text }
    }

    /// The passage with the answer's words outranks the page's introduction, which shares
    /// only the topic's name.
    #[test]
    fn the_passage_with_the_answer_words_outranks_the_intro() {
        let intro = format!(
            "Sodium-ion batteries are a sodium-based alternative to lithium-ion. {}",
            filler("energy storage", 580)
        );
        let answer = "Sodium-ion cells last about 4000 charge cycles before their capacity \
                      falls to 80 percent.";
        let text = format!(
            "{intro}\n{}\n{answer}\n{}",
            filler("storage", 680),
            filler("x", 650)
        );
        let chosen = select(
            &[page(1, &text)],
            &[
                "sodium-ion cycle life",
                "How many charge cycles do sodium-ion cells last?",
            ],
            10_000,
            1,
        );
        assert_eq!(chosen.len(), 1, "{chosen:?}");
        assert!(chosen[0].text.contains(answer), "{:?}", chosen[0].text);
        let both = select(&[page(1, &text)], &["sodium-ion cycle life"], 10_000, 2);
        assert!(
            both[0].text.starts_with("Sodium-ion batteries"),
            "the intro matches too"
        );
        assert!(both[1].score > both[0].score, "{both:?}");
    }

    #[test]
    fn per_page_and_budget_limit_what_is_chosen_best_pages_first() {
        let para = |n: usize| format!("Battery fact number {n} holds. {}", filler("x", 660));
        let text: String = (0..5).map(para).collect::<Vec<_>>().join("\n");
        let pages = [page(1, &text), page(2, &text), page(3, &text)];
        let chosen = select(&pages, &["battery"], 100_000, 2);
        let sources: Vec<usize> = chosen.iter().map(|p| p.source).collect();
        assert_eq!(sources, [1, 1, 2, 2, 3, 3]);
        // A budget of about two passages: each page's best comes before any second.
        let one = chosen[0].text.chars().count();
        let chosen = select(&pages, &["battery"], 2 * one + 10, 3);
        assert_eq!(chosen.iter().map(|p| p.source).collect::<Vec<_>>(), [1, 2]);
        let total: usize = chosen.iter().map(|p| p.text.chars().count()).sum();
        assert!(total <= 2 * one + 10);
        assert!(
            select(&pages, &["battery"], 10, 3).is_empty(),
            "nothing fits"
        );
        assert!(select(&pages, &["battery"], 100_000, 0).is_empty());
    }

    #[test]
    fn a_page_ranks_its_best_passage_first_and_returns_reading_order() {
        let text = format!(
            "Lithium mention here. {}\nLithium lithium lithium iron phosphate. {}\nnothing",
            filler("a", 700),
            filler("b", 700)
        );
        let chosen = select(&[page(4, &text)], &["lithium phosphate"], 100_000, 2);
        assert_eq!(chosen.len(), 2, "{chosen:?}");
        assert!(
            chosen[0].text.starts_with("Lithium mention"),
            "reading order"
        );
        assert!(chosen[1].score > chosen[0].score);
        let one = select(&[page(4, &text)], &["lithium phosphate"], 100_000, 1);
        assert!(one[0].text.contains("iron phosphate"), "the best first");
    }

    #[test]
    fn terms_are_stemmed_so_plurals_match() {
        let pages = [
            page(1, "The battery lasted for ten years in the field."),
            page(2, "Charging stations were installed along the highway."),
        ];
        let chosen = select(&pages, &["batteries"], 10_000, 3);
        assert_eq!(chosen.len(), 1);
        assert_eq!(chosen[0].source, 1);
    }

    #[test]
    fn a_page_with_no_match_gives_nothing_and_stopwords_are_no_match() {
        let pages = [page(1, "The cat sat on the mat, which was what it did.")];
        assert!(select(&pages, &["What is the price of vanadium?"], 10_000, 3).is_empty());
        assert!(select(&pages, &[], 10_000, 3).is_empty());
        assert!(select(&[], &["vanadium"], 10_000, 3).is_empty());
    }

    #[test]
    fn the_same_pages_give_the_same_passages_ties_to_the_earlier() {
        let text = "Vanadium flow batteries.\n".repeat(200);
        let pages = [page(2, &text), page(1, &text), page(3, &text)];
        let first = select(&pages, &["vanadium"], 2_000, 1);
        // Tied scores: the budget goes to the earlier pages, returned in source order.
        let sources: Vec<usize> = first.iter().map(|p| p.source).collect();
        assert_eq!(sources, [1, 2], "{first:?}");
        for _ in 0..3 {
            assert_eq!(select(&pages, &["vanadium"], 2_000, 1), first);
        }
    }

    /// Five pages of 200 KB each: the ranking reads about 1 MB of text (it must stay a matter
    /// of milliseconds in a release build; here only the result is checked).
    #[test]
    fn a_megabyte_of_text_is_ranked() {
        let pages_text: Vec<String> = (0..5)
            .map(|p| {
                let mut text = String::new();
                let mut i = 0;
                while text.len() < 200_000 {
                    text.push_str(&format!(
                        "Paragraph {i} of page {p} about grid storage costs.\n"
                    ));
                    i += 1;
                }
                if p == 3 {
                    text.push_str("The electrolyte of a zinc-bromine cell costs little.\n");
                }
                text
            })
            .collect();
        let pages: Vec<PageForRanking> = pages_text
            .iter()
            .enumerate()
            .map(|(i, text)| page(i + 1, text))
            .collect();
        let chosen = select(&pages, &["zinc bromine electrolyte"], 4_000, 2);
        assert_eq!(chosen.len(), 1, "{chosen:?}");
        assert_eq!(chosen[0].source, 4);
        assert!(chosen[0].text.contains("zinc-bromine"));
    }
}
