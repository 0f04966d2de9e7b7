//! A broad comparison ("How do solid-state batteries compare with lithium-ion?", "LFP vs
//! NMC", "What is the difference between A and B?"), answered aspect by aspect.
//!
//! A question that names two things and asks nothing more of them ([`broad_comparison`]) is
//! not answered by the sentence that repeats it best ("the clearest way to compare A with B
//! is ..."): the documents compare them property by property, each in its own section, and
//! the answer does the same ([`aspects`]). An aspect is a section of a document (its heading
//! is the aspect's label) with a sentence that states a figure for both sides, or a sentence
//! with a figure for each side, or, after those, a sentence that names both, or one for each.
//! The document that compares on the most figures comes first; at most [`MOST_ASPECTS`], none
//! repeating a figure or a sentence another already gave. With fewer than two aspects with
//! figures, the question is answered as any other.

use std::collections::BTreeSet;

use crate::text::analyzer::content_terms;

use super::question::new_figure;
use super::select::Candidate;

/// The most aspects of an answer.
pub const MOST_ASPECTS: usize = 4;
/// The share of the shorter sentence's terms the other must hold to say the same.
const RESTATES: f64 = 0.8;

/// Words that ask for a comparison, and the question's own words around the two sides.
const COMPARING: &str = "how do does did what which is are was were compare compared \
                         comparison comparing differ differs difference differences different \
                         between versus vs against";

/// What joins the two sides of a comparison.
const CONNECTORS: &[&str] = &[
    " compared with ",
    " compared to ",
    " compare with ",
    " compare to ",
    " compare against ",
    " stack up against ",
    " differ from ",
    " different from ",
    " versus ",
    " vs. ",
    " vs ",
];

/// The two things a broad comparison compares, each known by the terms of the first word that
/// names it that the other does not share (`solid-state` of "solid-state batteries").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sides {
    first: BTreeSet<String>,
    second: BTreeSet<String>,
}

impl Sides {
    /// Which sides `terms` (a sentence's) names.
    fn named(&self, terms: &BTreeSet<String>) -> (bool, bool) {
        (self.first.is_subset(terms), self.second.is_subset(terms))
    }
}

/// The sides `question` compares, when it asks only how two things compare: with a word of
/// its own besides them (an aspect, "in energy density", "how much heavier") it asks
/// something narrower, answered as any question.
pub fn broad_comparison(question: &str) -> Option<Sides> {
    let asked = question
        .trim()
        .trim_end_matches(['?', '.', '!'])
        .to_lowercase();
    let (first, second) = split_sides(&asked)?;
    let filler = content_terms(COMPARING);
    let (a, b) = (content_terms(first), content_terms(second));
    let extra = content_terms(&asked)
        .into_iter()
        .any(|t| !a.contains(&t) && !b.contains(&t) && !filler.contains(&t));
    if extra {
        return None;
    }
    // `sodium` of `sodium-ion` against `lithium-ion`: what the word says the other does not.
    let key = |side: &str, other: &BTreeSet<String>| {
        side.split_whitespace()
            .map(|word| {
                let mut terms = content_terms(word);
                terms.retain(|t| !other.contains(t) && !filler.contains(t));
                terms
            })
            .find(|terms| !terms.is_empty())
    };
    Some(Sides {
        first: key(first, &b)?,
        second: key(second, &a)?,
    })
}

/// Words that open a side without naming it ("how do *the* ...").
const LEADING: &[&str] = &[
    "how", "do", "does", "did", "what", "which", "is", "are", "the", "a", "an", "compare",
];
/// Words a side that only names a thing does not hold: with one, it says more (`the energy
/// stored in a 4680 cell`, `how abundant is sodium`).
const SAYS_MORE: &[&str] = &[
    "in", "of", "for", "at", "on", "with", "by", "per", "to", "from", "when", "where", "that",
    "than", "is", "are", "was", "were", "be", "may", "can", "much", "many", "more", "less", "and",
    "or", "do", "does",
];
/// The most words of a side.
const SIDE_WORDS: usize = 4;

/// `asked` (lower case) cut into the two things it compares, each a name of a few words.
fn split_sides(asked: &str) -> Option<(&str, &str)> {
    let (a, b) = CONNECTORS
        .iter()
        .find_map(|connector| asked.split_once(connector))
        .or_else(|| asked.split_once(" between ")?.1.split_once(" and "))?;
    Some((side(a)?, side(b)?))
}

/// `text` without its leading words, when what remains only names a thing.
fn side(text: &str) -> Option<&str> {
    let mut rest = text.trim();
    while let Some((word, after)) = rest.split_once(' ') {
        if !LEADING.contains(&word) {
            break;
        }
        rest = after.trim_start();
    }
    let words: Vec<&str> = rest.split_whitespace().collect();
    let names = (1..=SIDE_WORDS).contains(&words.len())
        && !words.iter().any(|w| SAYS_MORE.contains(w))
        && !LEADING.contains(&rest);
    names.then_some(rest)
}

/// One aspect of a comparison: its label (the heading of its section, when there is one) and
/// the candidates it quotes, in the order of the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aspect {
    pub label: Option<String>,
    pub quotes: Vec<usize>,
}

/// How well a section compares: a sentence with figures for both sides, a figure for each
/// side in two sentences, both sides named in one sentence without a figure, or each in its
/// own. The last two only in a section with a heading: a document's opening says that it
/// compares, not how.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tier {
    Contrasted = 1,
    Named = 2,
    Paired = 3,
    Both = 4,
}

/// The aspects `candidates` compare the two `sides` on, in the order of the documents (the
/// earlier source first); empty when fewer than two give figures.
pub fn aspects(sides: &Sides, candidates: &[Candidate], question: &str) -> Vec<Aspect> {
    let terms: Vec<BTreeSet<String>> = candidates.iter().map(|c| content_terms(&c.text)).collect();
    // The sections, in order of first appearance: a sentence with no heading is its own.
    let mut sections: Vec<(usize, Option<&str>, Vec<usize>)> = Vec::new();
    for (i, c) in candidates.iter().enumerate() {
        let found = c.section.as_deref().and_then(|s| {
            sections
                .iter_mut()
                .find(|(source, label, _)| *source == c.source && *label == Some(s))
        });
        match found {
            Some((_, _, members)) => members.push(i),
            None => sections.push((c.source, c.section.as_deref(), vec![i])),
        }
    }
    let mut found: Vec<Found> = Vec::new();
    for (order, (source, label, members)) in sections.into_iter().enumerate() {
        let Some((tier, quotes)) = compared_in(sides, candidates, &terms, &members, question)
        else {
            continue;
        };
        let meaning = quotes
            .iter()
            .map(|&i| candidates[i].meaning)
            .fold(0.0, f32::max);
        let label = label.map(str::to_string);
        let aspect = Aspect { label, quotes };
        let figures = tier >= Tier::Paired;
        found.push(Found {
            figures,
            meaning,
            order,
            source,
            aspect,
        });
    }
    // The document that compares on the most figures first: one document's sections read as
    // one comparison. In each, the aspects with figures first, the nearest in meaning first.
    let with_figures = |source: usize| {
        found
            .iter()
            .filter(|f| f.source == source && f.figures)
            .count()
    };
    let mut ranked: Vec<(usize, &Found)> =
        found.iter().map(|f| (with_figures(f.source), f)).collect();
    ranked.sort_by(|(a_score, a), (b_score, b)| {
        b_score
            .cmp(a_score)
            .then(a.source.cmp(&b.source))
            .then(b.figures.cmp(&a.figures))
            .then(b.meaning.total_cmp(&a.meaning))
            .then(a.order.cmp(&b.order))
    });
    let mut chosen: Vec<&Found> = Vec::new();
    let mut stated: BTreeSet<String> = BTreeSet::new();
    for (_, f) in ranked {
        if chosen.len() == MOST_ASPECTS {
            break;
        }
        let figures: BTreeSet<String> = f
            .aspect
            .quotes
            .iter()
            .flat_map(|&i| figures_of(&candidates[i].text))
            .collect();
        // The same figure again, or the same statement, is an aspect already given, found in
        // another document.
        let repeats = f.aspect.quotes.iter().any(|&i| {
            chosen
                .iter()
                .flat_map(|c| &c.aspect.quotes)
                .any(|&j| restates(&terms[i], &terms[j]))
        });
        if repeats || !figures.is_disjoint(&stated) {
            continue;
        }
        stated.extend(figures);
        chosen.push(f);
    }
    if chosen.iter().filter(|f| f.figures).count() < 2 {
        return Vec::new();
    }
    chosen.sort_by_key(|f| (f.source, f.order));
    chosen.into_iter().map(|f| f.aspect.clone()).collect()
}

/// An aspect found in a section: whether it gives figures, its nearness in meaning to the
/// question, the section's place among all sections, and its document.
struct Found {
    figures: bool,
    meaning: f32,
    order: usize,
    source: usize,
    aspect: Aspect,
}

/// Whether one of two sentences (their terms) says what the other does: most of the shorter
/// one's terms are the other's.
fn restates(a: &BTreeSet<String>, b: &BTreeSet<String>) -> bool {
    let shorter = a.len().min(b.len());
    shorter > 0 && a.intersection(b).count() as f64 >= RESTATES * shorter as f64
}

/// How the section of `members` compares the sides, and what it quotes for it.
fn compared_in(
    sides: &Sides,
    candidates: &[Candidate],
    terms: &[BTreeSet<String>],
    members: &[usize],
    question: &str,
) -> Option<(Tier, Vec<usize>)> {
    let figure = |i: usize| measures(question, &candidates[i].text);
    // The nearest in meaning, the earliest on a tie.
    let best = |keep: &dyn Fn(usize) -> bool| {
        members
            .iter()
            .copied()
            .filter(|&i| keep(i))
            .fold(None, |best: Option<usize>, i| match best {
                Some(b) if candidates[b].meaning >= candidates[i].meaning => Some(b),
                _ => Some(i),
            })
    };
    let named = |i: usize| sides.named(&terms[i]);
    if let Some(i) = best(&|i| named(i) == (true, true) && figure(i)) {
        return Some((Tier::Both, vec![i]));
    }
    let first = best(&|i| named(i) == (true, false) && figure(i));
    let second = best(&|i| named(i) == (false, true) && figure(i));
    if let (Some(a), Some(b)) = (first, second) {
        let mut pair = vec![a, b];
        pair.sort_by_key(|&i| candidates[i].at.start);
        return Some((Tier::Paired, pair));
    }
    // Without figures, only a section with a heading compares.
    candidates[members[0]].section.as_ref()?;
    if let Some(i) = best(&|i| named(i) == (true, true)) {
        return Some((Tier::Named, vec![i]));
    }
    let first = best(&|i| named(i) == (true, false));
    let second = best(&|i| named(i) == (false, true));
    let mut pair = vec![first?, second?];
    pair.sort_by_key(|&i| candidates[i].at.start);
    Some((Tier::Contrasted, pair))
}

/// Whether `sentence` states a measure `question` does not: a number that is not a year (`270
/// Wh/kg`, `1,500 cycles`, not `2023` or `the 2010s`), or a ratio in words (`twice`, `five
/// times`, `half`).
fn measures(question: &str, sentence: &str) -> bool {
    let year = |w: &str| {
        let digits = w.trim_end_matches('s');
        digits.len() == 4 && (digits.starts_with("19") || digits.starts_with("20"))
    };
    let measured = sentence.split_whitespace().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric());
        w.starts_with(|c: char| c.is_ascii_digit()) && !year(w)
    });
    let words = crate::text::words(sentence);
    let words: Vec<&str> = words.split(' ').collect();
    let ratio = words.iter().enumerate().any(|(k, w)| {
        RATIOS.contains(w)
            || (*w == "times" && k > 0 && new_figure("", words[k - 1]) && words[k - 1] != "many")
    });
    (measured || ratio) && new_figure(question, sentence)
}

/// A ratio written as one word.
const RATIOS: &[&str] = &["twice", "half", "double", "triple", "tenfold", "percent"];

/// The figures `text` states, each with the word after it (`270 wh/kg`, `1000 cycles`).
fn figures_of(text: &str) -> Vec<String> {
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric() && c != '/')
                .to_lowercase()
        })
        .collect();
    words
        .iter()
        .enumerate()
        .filter(|(_, w)| w.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .map(|(k, w)| format!("{w} {}", words.get(k + 1).map_or("", String::as_str)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_question_that_names_two_things_and_nothing_more_is_broad() {
        for broad in [
            "How do solid-state batteries compare with lithium-ion?",
            "LFP vs NMC",
            "How does the Apache License compare to the MIT License?",
            "What is the difference between sodium-ion and lithium-ion batteries?",
        ] {
            assert!(broad_comparison(broad).is_some(), "{broad}");
        }
        for narrow in [
            "How does the energy stored in a 4680 cylindrical cell compare with that of a 2170 cell?",
            "How abundant is sodium compared with lithium in the Earth's crust?",
            "How long may a Front-Cover Text be, compared with a Back-Cover Text?",
            "What is the difference between LFP and NMC in cost?",
            "Why do dendrites form?",
        ] {
            assert!(broad_comparison(narrow).is_none(), "{narrow}");
        }
        let sides =
            broad_comparison("How does sodium-ion compare with lithium-ion?").expect("broad");
        assert_eq!(
            sides.named(&content_terms("Sodium cells and lithium cells.")),
            (true, true)
        );
        assert_eq!(
            sides.named(&content_terms("Ion transport.")),
            (false, false)
        );
    }

    use crate::offline::select::test_candidates as candidates;

    const QUESTION: &str = "How do solid-state batteries compare with lithium-ion?";

    fn labels(aspects: &[Aspect]) -> Vec<&str> {
        aspects
            .iter()
            .map(|a| a.label.as_deref().unwrap_or("-"))
            .collect()
    }

    #[test]
    fn each_section_gives_an_aspect_with_figures_for_both_sides_then_without() {
        let docs = [
            (
                0,
                None,
                "The clearest way to compare solid-state batteries with lithium-ion is one property at a time.",
            ),
            (
                0,
                Some("Energy density"),
                "Lithium-ion cells store 270 Wh/kg, while solid-state developers target 400 Wh/kg.",
            ),
            (
                0,
                Some("Safety"),
                "A lithium-ion cell holds a flammable liquid.",
            ),
            (
                0,
                Some("Safety"),
                "A solid-state cell is expected to be harder to ignite.",
            ),
            (
                0,
                Some("Lifetime"),
                "Laboratory solid-state cells have reached 1000 cycles.",
            ),
            (
                0,
                Some("Lifetime"),
                "A lithium-ion NMC cell lasts 1500 cycles.",
            ),
            (
                1,
                Some("Density"),
                "Solid-state targets of 400 Wh/kg beat lithium-ion cells by half.",
            ),
            (
                1,
                Some("Cost"),
                "Solid-state cells cost twice as much as lithium-ion cells per kWh.",
            ),
        ];
        let sides = broad_comparison(QUESTION).expect("broad");
        let found = aspects(&sides, &candidates(&docs), QUESTION);
        // The first document gives figures twice and comes first, in its order; the second's
        // density repeats a figure, its cost is a fourth aspect. The opening sentence, in no
        // section, compares nothing.
        assert_eq!(
            labels(&found),
            ["Energy density", "Safety", "Lifetime", "Cost"]
        );
        assert_eq!(found[0].quotes, [1]);
        assert_eq!(found[2].quotes, [4, 5], "one sentence for each side");
    }

    #[test]
    fn fewer_than_two_aspects_with_figures_answer_as_any_question() {
        let docs = [
            (
                0,
                Some("Energy density"),
                "Lithium-ion cells store 270 Wh/kg, while solid-state developers target 400 Wh/kg.",
            ),
            (
                0,
                Some("Safety"),
                "A lithium-ion cell holds a flammable liquid, a solid-state cell does not.",
            ),
            // A year is not a measure.
            (
                0,
                Some("History"),
                "Solid-state cells were announced in 2012, lithium-ion cells in 1991.",
            ),
        ];
        let sides = broad_comparison(QUESTION).expect("broad");
        assert!(aspects(&sides, &candidates(&docs), QUESTION).is_empty());
    }
}
