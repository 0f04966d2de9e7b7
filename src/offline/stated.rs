//! Whether a sentence states what a question asks (issue 57): the offline answer leads with a
//! short answer only from a sentence that does ([`super::answer`]); otherwise it says that no
//! sentence of the sources states it and lists the closest passages ([`not_stated`]).
//!
//! A sentence states it when:
//! - **the subject** of the question is its subject: the rarest term of the words between the
//!   question's auxiliary and its verb ("How many cycles do *sodium-ion cells* last?") is in the
//!   sentence, its section's heading, its document's title, or, for a sentence that opens by
//!   pointing back ("Their", "It", "This"), the sentence before; a word no document writes is
//!   held by its tail ("carmakers" by "vehicle makers");
//! - **the kind** of its figure is the one asked for ([`Kind`]): a cycle count in cycles, an
//!   energy density in Wh/kg or Wh/L, a price in a currency, a share in percent, a length of
//!   time in time, a port beside the word port;
//! - **the figure is the subject's**: the clause that holds it (the sentence split at `, and`,
//!   `;`, `while`, `whereas`, `but`) holds the subject, or names no other subject (a name, an
//!   acronym, a compound: `LFP` where `NMC` is asked);
//! - **the form** of the answer is in it ([`Form`]): a time for `When`, a name for `Who`, one
//!   of the options the question offers.

use std::collections::BTreeSet;

use crate::plan::Source;
use crate::text::analyzer::content_terms;
use crate::text::words;

use super::form::{Form, qualified, qualifiers};
use super::kinds::{Kind, kind_of};
use super::names::names_of;
use super::question::asks_when;
use super::select::Candidate;
use super::span::figures;
use super::subject::{Rarity, Subject, names_another, points_back, subject};
/// Where a sentence's subject may stand besides the sentence itself.
pub struct Context<'a> {
    pub section: Option<&'a str>,
    pub title: &'a str,
    /// The sentence before it in its document, when it opens by pointing back.
    pub before: Option<&'a str>,
    /// The names its document's path gives it ([`super::names::document_names`]).
    pub names: &'a BTreeSet<String>,
    /// The terms of its document's candidates.
    pub document: &'a BTreeSet<String>,
}

/// What a question asks, as a sentence must state it.
pub struct Asked {
    pub kind: Option<&'static Kind>,
    pub subject: Subject,
    /// The form its answer takes ([`Form`]).
    pub form: Form,
    /// The words that state each qualifier of what it asks ([`qualifiers`]).
    qualifiers: Vec<&'static [&'static str]>,
    question: String,
    question_terms: BTreeSet<String>,
    /// It asks for a figure.
    figure: bool,
}

impl Asked {
    /// What `question` asks (`figure`: it asks for one) of `candidates`, whose terms are
    /// `terms`.
    pub fn new(
        question: &str,
        figure: bool,
        terms: &[BTreeSet<String>],
        candidates: &[Candidate],
    ) -> Asked {
        let sources: Vec<usize> = candidates.iter().map(|c| c.source).collect();
        let rarity = Rarity::of(terms, &sources);
        let named = kind_of(question);
        let figure = figure || named.is_some_and(|(_, near)| near);
        // `When did the price spike?` asks for a time, not a price.
        let when = asks_when(question);
        let kind = named
            .filter(|&(_, near)| near || (figure && !when))
            .map(|(k, _)| k);
        Asked {
            kind,
            subject: subject(question, kind, &rarity),
            form: Form::of(question),
            qualifiers: qualifiers(question),
            question: question.to_string(),
            question_terms: content_terms(question),
            figure,
        }
    }

    /// Per candidate (`terms` its terms, `sources` the documents), whether it states what is
    /// asked ([`Asked::states`]).
    pub fn stated_by(
        &self,
        candidates: &[Candidate],
        terms: &[BTreeSet<String>],
        sources: &[Source],
    ) -> Vec<Option<Option<String>>> {
        let names = names_of(sources);
        let mut documents = vec![BTreeSet::new(); sources.len()];
        for (c, t) in candidates.iter().zip(terms) {
            documents[c.source].extend(t.iter().cloned());
        }
        (0..candidates.len())
            .map(|i| {
                let s = candidates[i].source;
                let (title, names, document) = (&sources[s].title, &names[s], &documents[s]);
                let context = context_of(candidates, i, title, names, document);
                self.states(&candidates[i].text, &terms[i], &context)
            })
            .collect()
    }

    /// Whether `sentence` (its `terms` as the answer weighs them, in `context`) states what
    /// is asked: its subject where the sentence or its context says it and, for a figure, one
    /// of the kind asked for that is the subject's. `Some(span)`: the figure, as the sentence
    /// writes it.
    pub fn states(
        &self,
        sentence: &str,
        terms: &BTreeSet<String>,
        context: &Context<'_>,
    ) -> Option<Option<String>> {
        let subject = &self.subject;
        let in_sentence = subject.held(sentence, terms, context.document);
        let held = in_sentence
            || context.section.is_some_and(|s| subject.held_by(s))
            || subject.held_by(context.title)
            || subject.named_by(context.names)
            || context
                .before
                .is_some_and(|b| points_back(sentence) && subject.held_by(b));
        let formed =
            self.form.held_by(&self.question, sentence) && qualified(&self.qualifiers, sentence);
        if !held || !formed {
            return None;
        }
        if !self.figure {
            return Some(None);
        }
        let found = figures(&self.question, sentence);
        if found.is_empty() {
            // A figure in words (`about a quarter`): of the kind when its unit is said.
            let said = format!(" {} ", words(sentence));
            let unit = |u: &&str| said.contains(&format!(" {u} "));
            return self
                .kind
                .is_none_or(|k| k.units.iter().any(unit))
                .then_some(None);
        }
        found
            .into_iter()
            .find(|(at, span)| {
                self.is_of_kind(sentence, *at, span) && self.is_subjects(sentence, *at, in_sentence)
            })
            .map(|(at, span)| Some(self.with_unit_before(sentence, at, span)))
    }

    /// The figure `span` at `at` in `sentence` with the word of a kind written first (`a
    /// priority of 20`, `port 8080`) when that word stands in the three words before it.
    fn with_unit_before(&self, sentence: &str, at: usize, span: String) -> String {
        let Some(kind) = self.kind.filter(|k| k.before) else {
            return span;
        };
        let before = &sentence[..at];
        let unit = before
            .split_whitespace()
            .rev()
            .take(3)
            .find(|w| kind.units.contains(&words(w).as_str()));
        match unit.and_then(|u| before.rfind(u)) {
            Some(start) => format!("{}{span}", &sentence[start..at]),
            None => span,
        }
    }

    /// Whether the figure `span` at `at` in `sentence` is of the kind asked for: its unit in
    /// it or the two words after it (or, for a kind written first, the three words before).
    fn is_of_kind(&self, sentence: &str, at: usize, span: &str) -> bool {
        let Some(kind) = self.kind else {
            return true;
        };
        let end = at + span.len();
        let after: Vec<&str> = sentence[end..].split_whitespace().take(2).collect();
        let before: Vec<&str> = sentence[..at].split_whitespace().rev().take(3).collect();
        let mut window = format!(" {} {} ", words(span), words(&after.join(" ")));
        if kind.before {
            window.push_str(&format!("{} ", words(&before.join(" "))));
        }
        kind.units
            .iter()
            .any(|u| window.contains(&format!(" {u} ")) || (!u.is_ascii() && span.contains(u)))
            || (kind.units.contains(&"%") && span.contains('%'))
            || (kind.units.contains(&"$") && sentence[..end].contains('$'))
    }

    /// Whether the figure at `at` in `sentence` is the subject's: the sentence is one clause
    /// and holds the subject (`in_sentence`), or the clause that holds the figure holds the
    /// subject or names no other subject (an acronym, a compound the question does not write).
    fn is_subjects(&self, sentence: &str, at: usize, in_sentence: bool) -> bool {
        let clause = clause_of(sentence, at);
        // A sentence of one clause that holds the subject gives the subject's figure.
        if !self.subject.some() || (in_sentence && clause.len() == sentence.len()) {
            return true;
        }
        self.subject.held_by(clause) || !names_another(clause, &self.question_terms)
    }
}

/// Where a clause ends and the next begins: the figure of one is not the other's.
const CLAUSE_BREAKS: &[&str] = &[
    ", and ",
    "; ",
    " while ",
    " whereas ",
    " but ",
    ", or ",
    ", compared with ",
    ", unlike ",
];

/// The clause of `sentence` that holds byte `at`.
fn clause_of(sentence: &str, at: usize) -> &str {
    let mut start = 0;
    let mut end = sentence.len();
    let lower = sentence.to_lowercase();
    for brk in CLAUSE_BREAKS {
        for (k, _) in lower.match_indices(brk) {
            if k + brk.len() <= at {
                start = start.max(k + brk.len());
            } else if k >= at {
                end = end.min(k);
            }
        }
    }
    sentence.get(start..end.max(start)).unwrap_or(sentence)
}
impl Asked {
    /// What the question asks, as the Answer section names it when no sentence states it:
    /// `the energy density of LFP cells`.
    pub fn what(&self) -> String {
        let phrase = self.subject.phrase.as_str();
        match (self.kind, phrase.is_empty()) {
            (Some(kind), false) => format!("{} of {}", kind.label, unframed(phrase, kind)),
            (Some(kind), true) => kind.label.to_string(),
            (None, false) => format!("what the question asks about {phrase}"),
            (None, true) => "what the question asks".to_string(),
        }
    }
}

/// Writes to `report` the Answer section of a question no sentence states: that said
/// plainly (`what` it asks, [`Asked::what`]), then the `closest` candidates, each cited by
/// its source's `number`; gives the quotes it cites (the number, the text).
pub fn not_stated(
    what: &str,
    closest: &[usize],
    candidates: &[Candidate],
    mut number: impl FnMut(usize) -> usize,
    report: &mut String,
) -> Vec<(usize, String)> {
    report.push_str(&format!(
        "{} {}.\n\nClosest passages:\n\n",
        crate::agents::quality::NOT_STATED,
        crate::markdown::inline(what, 200)
    ));
    let mut quotes = Vec::new();
    for &i in closest {
        let (n, text) = (number(candidates[i].source), candidates[i].text.clone());
        report.push_str(&format!("- {text} [{n}]\n"));
        quotes.push((n, text));
    }
    quotes
}

/// The subject `phrase` without the kind's own words before `of` (`the price of cobalt`:
/// `cobalt`).
fn unframed<'a>(phrase: &'a str, kind: &Kind) -> &'a str {
    let Some((frame, rest)) = phrase.split_once(" of ") else {
        return phrase;
    };
    let framed = words(frame)
        .split(' ')
        .all(|w| ["the", "a", "an"].contains(&w) || kind.asks.iter().any(|a| a.contains(w)));
    if framed { rest } else { phrase }
}

/// The context of candidate `i`: its section, its document's `title`, `names` and terms
/// (`document`), the candidate before it in its document.
pub fn context_of<'a>(
    candidates: &'a [Candidate],
    i: usize,
    title: &'a str,
    names: &'a BTreeSet<String>,
    document: &'a BTreeSet<String>,
) -> Context<'a> {
    let c = &candidates[i];
    let before = candidates
        .iter()
        .filter(|o| o.source == c.source && o.at.end <= c.at.start)
        .max_by_key(|o| o.at.end)
        .map(|o| o.text.as_str());
    Context {
        section: c.section.as_deref(),
        title,
        before,
        names,
        document,
    }
}
