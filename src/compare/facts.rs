//! [`fact_changes`]: what two final reports of one question claim, compared by their facts
//! rather than by their wording. A model words its report anew every night; what a reader
//! wants to hear of is a figure or a name that changed, a claim that is new, or one that is
//! gone.
//!
//! - A report's facts are its claims (the claim check's sentences), or its sentences when it
//!   has none (its lines joined where a model wrapped a sentence over two), with citations
//!   left out; a "sentence" of fewer than [`FEWEST_WORDS`] words (an address alone) is none.
//! - Two facts are the same claim when their content words overlap by [`SAME_CLAIM`]
//!   (Jaccard, figures aside), or by [`SAME_FIGURES_CLAIM`] when they state the same figures:
//!   "About 270 Wh/kg is what solid-state cells reach" is "Solid-state cells reach about 270
//!   Wh/kg". The closest pairs are matched first, each fact at most once.
//! - A matched pair changed when its figures (a number with the unit after it, `270 wh/kg`)
//!   differ as values, or one names (a capitalised word) what the other does not write; else
//!   it is the same fact, however it is worded. An unmatched fact is new, or gone.

use std::collections::BTreeSet;

use serde::Serialize;

use crate::plan::{FINAL_BATCH, PlanFile};
use crate::text::analyzer::{STOPWORDS, content_terms};
use crate::text::sentences::split_sentences;

/// The least overlap of content words for two claims to be one.
pub const SAME_CLAIM: f64 = 0.5;
/// A sentence of fewer words (a fragment, an address alone) states no fact.
const FEWEST_WORDS: usize = 3;
/// The least overlap for two claims that state the same figures to be one.
pub const SAME_FIGURES_CLAIM: f64 = 0.25;

/// One claim of a report: its sentence and what it is compared by.
#[derive(Debug, Clone, PartialEq)]
struct Fact {
    sentence: String,
    /// Its content words, figures aside.
    words: BTreeSet<String>,
    /// Its figures as values (`270 wh/kg`, `2023`).
    figures: BTreeSet<String>,
    /// Its capitalised words, in lower case.
    names: BTreeSet<String>,
}

/// A fact that changed, is new, or is gone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FactChange {
    /// The same claim states other figures or names.
    Changed {
        before: String,
        after: String,
        /// The figures and names only the old claim states.
        values_before: Vec<String>,
        /// The figures and names only the new claim states.
        values_after: Vec<String>,
    },
    /// A claim only the new report makes.
    New { after: String },
    /// A claim only the old report made.
    Gone { before: String },
}

/// What changed between the facts of `old`'s and `new`'s final reports (the rules are in the
/// module documentation): changed ones in the new report's order, then new, then gone.
pub fn fact_changes(old: &PlanFile, new: &PlanFile) -> Vec<FactChange> {
    let (old, new) = (facts_of(old), facts_of(new));
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    for (i, o) in old.iter().enumerate() {
        for (j, n) in new.iter().enumerate() {
            let overlap = jaccard(&o.words, &n.words);
            let same_figures = !o.figures.is_empty() && o.figures == n.figures;
            if overlap >= SAME_CLAIM || (same_figures && overlap >= SAME_FIGURES_CLAIM) {
                pairs.push((overlap, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    let mut old_of: Vec<Option<usize>> = vec![None; new.len()];
    let mut matched_old = vec![false; old.len()];
    for (_, i, j) in pairs {
        if !matched_old[i] && old_of[j].is_none() {
            matched_old[i] = true;
            old_of[j] = Some(i);
        }
    }
    let mut out = Vec::new();
    for (j, n) in new.iter().enumerate() {
        let Some(o) = old_of[j].map(|i| &old[i]) else {
            continue;
        };
        let (before, after) = (values(o, n), values(n, o));
        if before != after {
            out.push(FactChange::Changed {
                before: o.sentence.clone(),
                after: n.sentence.clone(),
                values_before: before.difference(&after).cloned().collect(),
                values_after: after.difference(&before).cloned().collect(),
            });
        }
    }
    let new_only = new.iter().zip(&old_of).filter(|(_, o)| o.is_none());
    out.extend(new_only.map(|(n, _)| FactChange::New {
        after: n.sentence.clone(),
    }));
    let gone = old.iter().zip(&matched_old).filter(|(_, m)| !**m);
    out.extend(gone.map(|(o, _)| FactChange::Gone {
        before: o.sentence.clone(),
    }));
    out
}

/// A fact's values as held against `other`'s: its figures, and its names whose words
/// `other` does not write (so "Solid-state" opening one sentence is not a name the other
/// lacks when it writes "solid-state" inside).
fn values(fact: &Fact, other: &Fact) -> BTreeSet<String> {
    let unwritten = fact
        .names
        .iter()
        .filter(|name| !content_terms(name).iter().all(|t| other.words.contains(t)));
    fact.figures.iter().chain(unwritten).cloned().collect()
}

/// The facts of `plan`'s final report: its claims, else its sentences; none without one.
fn facts_of(plan: &PlanFile) -> Vec<Fact> {
    let Some(last) = plan.nodes.iter().rfind(|n| n.batch == FINAL_BATCH) else {
        return Vec::new();
    };
    let sentences: Vec<String> = match last.claims.is_empty() {
        false => last.claims.iter().map(|c| c.sentence.clone()).collect(),
        true => {
            let text = unwrapped(&last.summary);
            split_sentences(&text)
                .into_iter()
                .map(str::to_string)
                .collect()
        }
    };
    let mut out: Vec<Fact> = Vec::new();
    for sentence in sentences {
        let fact = fact(&sentence);
        let words = fact.sentence.split_whitespace().count();
        if words >= FEWEST_WORDS && !out.iter().any(|f| f.sentence == fact.sentence) {
            out.push(fact);
        }
    }
    out
}

/// `text` with the lines of each paragraph joined, as a model wraps a sentence over lines;
/// a list item or a heading still starts a line of its own.
fn unwrapped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines().map(str::trim) {
        let starts = line.is_empty()
            || line.starts_with(['-', '*', '#', '>'])
            || line
                .split_once(". ")
                .is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()));
        if !out.is_empty() {
            out.push(if starts || out.ends_with('\n') {
                '\n'
            } else {
                ' '
            });
        }
        out.push_str(line);
    }
    out
}

/// One sentence read as a fact, its citations (`[1]`, `[2, 3]`) left out.
fn fact(sentence: &str) -> Fact {
    let text = without_citations(sentence);
    let words = content_terms(&text)
        .into_iter()
        .filter(|w| !w.chars().all(|c| c.is_ascii_digit()))
        .collect();
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let bare = |t: &str| {
        t.trim_matches(|c: char| !c.is_alphanumeric() && c != '%')
            .to_string()
    };
    let mut figures = BTreeSet::new();
    let mut names = BTreeSet::new();
    for (k, token) in tokens.iter().enumerate() {
        let word = bare(token);
        if word.chars().any(|c| c.is_ascii_digit()) {
            let unit = tokens.get(k + 1).map(|t| unit(t)).unwrap_or_default();
            let number = word.replace(',', "");
            figures.insert(format!("{number} {unit}").trim().to_string());
        } else if is_name(&word) {
            names.insert(word.to_lowercase());
        }
    }
    Fact {
        sentence: plain(&crate::text::collapsed(&text)),
        words,
        figures,
        names,
    }
}

/// Whether `word` is a name: capitalised, and no stopword (`The`, `In`).
fn is_name(word: &str) -> bool {
    word.starts_with(char::is_uppercase)
        && word.chars().count() > 1
        && !STOPWORDS.contains(&word.to_lowercase().as_str())
}

/// `sentence` without the Markdown a report writes around it: a list marker, bold.
fn plain(sentence: &str) -> String {
    let sentence = sentence
        .strip_prefix("- ")
        .or_else(|| sentence.strip_prefix("* "))
        .unwrap_or(sentence);
    sentence.replace("**", "")
}

/// The unit a figure's next word is, in lower case (`Wh/kg,` is `wh/kg`), or empty when it is
/// a plain word: a unit is short, or has a `/` or `%` in it.
fn unit(token: &str) -> String {
    let word = token
        .trim_end_matches(|c: char| !c.is_alphanumeric() && c != '%')
        .to_lowercase();
    let short = word.chars().count() <= 5 && word.chars().all(char::is_alphabetic);
    let unit = word.contains(['/', '%']) || (short && !STOPWORDS.contains(&word.as_str()));
    match unit && word.starts_with(|c: char| c.is_alphabetic() || c == '%') {
        true => word,
        false => String::new(),
    }
}

/// `text` without its citations: brackets of digits, commas and spaces.
fn without_citations(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let citation = after.find(']').filter(|&close| {
            close > 0
                && after[..close]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ',' || c == ' ')
        });
        match citation {
            Some(close) => rest = &after[close + 1..],
            None => {
                out.push('[');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.replace(" .", ".")
}

/// The Jaccard overlap of two sets (0 when both are empty).
fn jaccard(a: &BTreeSet<String>, b: &BTreeSet<String>) -> f64 {
    let union = a.union(b).count();
    match union {
        0 => 0.0,
        n => a.intersection(b).count() as f64 / n as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{final_summary, plan};

    fn report(summary: &str) -> PlanFile {
        plan("Q?", [final_summary("b", "Final").with_summary(summary)])
    }

    const BEFORE: &str = "Solid-state cells reach about 270 Wh/kg [1]. Lithium-ion packs \
                          cost 139 dollars per kWh in 2023 [2]. QuantumScape leads the field [1].";

    #[test]
    fn the_same_facts_in_other_words_and_order_are_no_change() {
        let reworded = "In 2023, lithium-ion packs cost 139 dollars per kWh [1]. About 270 \
                        Wh/kg is what solid-state cells reach [2]. The field is led by \
                        QuantumScape [2].";
        assert_eq!(fact_changes(&report(BEFORE), &report(reworded)), []);
    }

    #[test]
    fn a_changed_figure_or_name_is_a_change_and_a_claim_is_new_or_gone() {
        let after = "Solid-state cells reach about 290 Wh/kg [1]. Toyota leads the field [1]. \
                     Sodium-ion cells need no lithium at all [3].";
        let changes = fact_changes(&report(BEFORE), &report(after));
        assert_eq!(
            changes,
            [
                FactChange::Changed {
                    before: "Solid-state cells reach about 270 Wh/kg.".into(),
                    after: "Solid-state cells reach about 290 Wh/kg.".into(),
                    values_before: vec!["270 wh/kg".into()],
                    values_after: vec!["290 wh/kg".into()],
                },
                FactChange::Changed {
                    before: "QuantumScape leads the field.".into(),
                    after: "Toyota leads the field.".into(),
                    values_before: vec!["quantumscape".into()],
                    values_after: vec!["toyota".into()],
                },
                FactChange::New {
                    after: "Sodium-ion cells need no lithium at all.".into()
                },
                FactChange::Gone {
                    before: "Lithium-ion packs cost 139 dollars per kWh in 2023.".into()
                },
            ]
        );
    }

    #[test]
    fn a_report_without_a_final_summary_has_no_facts() {
        let empty = plan("Q?", []);
        assert_eq!(fact_changes(&empty, &empty), []);
        assert_eq!(
            fact_changes(&empty, &report("A cell holds 5 Ah [1].")).len(),
            1
        );
        let wrapped = report("A lithium cell\nholds 5 Ah [1].\n- A pack holds\n12 cells.");
        let flat = report(
            "A lithium cell holds 5 Ah.\n\nhttps://cells.example/a\n- A pack holds 12 cells.",
        );
        assert_eq!(
            fact_changes(&wrapped, &flat),
            [],
            "wrapped lines, a bare address"
        );
        let shown = fact("- **Energy.** A cell holds 5 Ah [1].").sentence;
        assert_eq!(
            shown, "Energy. A cell holds 5 Ah.",
            "the report's Markdown left out"
        );
    }
}
