//! The offline engine's final report: an answer first, then the findings by direction.
//!
//! The answer is one to three quoted sentences chosen by how much of the question they
//! cover. A question in parts (`..., and how ...?`, see [`parts`]) gets the best sentence for
//! each part, often from two documents; a question in one part gets its best sentence and at
//! most two more from the same document, each covering what the ones before did not. Terms
//! weigh by the square of their rarity among the sentences of the sources, so that the word
//! that names the subject outweighs the words every document shares; words of the question's
//! phrasing that no source holds weigh nothing. There is no answer, and the report says so,
//! names what the documents never mention and quotes nothing, when the best sentence covers
//! less than [`ANSWER_FLOOR`], when a specific word of the question (a year, a figure, a name,
//! a compound's part) is in no sentence, when a figure or year it names is not stated by
//! the answer's sentences (the 2023 price is not the 2015 price), or when it asks for a
//! figure in one part and none of the answer's sentences states one.
//!
//! A question asking for a figure or a name gets it first, as the sentence writes it
//! ([`super::span`]); one asking for a default, the default its sentence gives (of the option
//! it names, [`super::defaults`]), and none when no sentence gives one. A broad comparison
//! ("how do A and B compare?") is answered aspect by aspect, one line per section giving
//! figures for both sides ([`super::compare`]).
//!
//! With an embedding model (`search.embeddings.model`), each sentence also carries how near
//! its passage is to the question in meaning: that multiplies its rank (up to 1 +
//! [`MEANING_WEIGHT`]), and never stands in for the question's words: a sentence near in
//! meaning that holds fewer of them than [`ANSWER_FLOOR`], or not the subject, states nothing
//! (when it could, ranking by meaning made the strict figures worse: stated-answer precision
//! 0.474 instead of 0.684 on the debian set, 0.438 instead of 0.688 on the licenses set).
//! Without a model nothing changes.
//!
//! The findings follow under each search task (direction) that found their documents first:
//! the sentences that cover at least [`findings::FINDING_FLOOR`] of the question, at most
//! [`findings::PER_DIRECTION`] each, none repeating or nearly repeating a sentence already
//! quoted. They come from the documents the answer cites; another document is quoted only by
//! a sentence as much to the point as the answer's first ([`findings::OTHER_DOCUMENT`]), so
//! that the report cites what answers and not all that was read. Sources are numbered in the order the report first
//! cites them, and only those cited are listed: no gaps.

use std::collections::{BTreeSet, HashMap};

use crate::agents::Direction;
use crate::plan::Source;
use crate::text::analyzer::{content_terms, short_options};
use crate::text::{is_key, words};

use super::compare::{aspects, broad_comparison};
use super::defaults::{asks_default, named_option, says_default, stated_default};
use super::form::Form;
use super::names::{named_by_documents, spelled_out};
use super::question::{
    MOST_PARTS, asked_thing, asks_figure, asks_name, holds_phrase, named_thing, names_given,
    new_figure, no_answer, parts, quoted_phrases, releases_in, specific_terms, written_release,
};
use super::select::{Candidate, NEAR_DUPLICATE, jaccard};
use super::stated::{Asked, not_stated};

mod findings;
mod lead;

/// The least share of the question the best sentence must cover to be given as its answer.
pub const ANSWER_FLOOR: f64 = 0.35;
/// The least share of the question not yet covered that a second or third answer sentence
/// must add.
const MORE_FLOOR: f64 = 0.2;
/// The most sentences of the answer.
const ANSWER_SENTENCES: usize = MOST_PARTS;
/// What a sentence's coverage counts for when it holds what the question asks for and does
/// not say: a figure for a quantity, a name for a name.
const ASKED_BONUS: f64 = 2.0;
/// How much a sentence's nearness in meaning to the question (its passage's cosine
/// similarity, 0 to 1) adds to its rank: at 1, this many times its word gain again.
pub const MEANING_WEIGHT: f64 = 2.0;
/// What a sentence that leans on one it is quoted without counts for.
const ORPHAN_WEIGHT: f64 = 0.5;

/// The report, the sources it cites (numbered as it numbers them) and each quote with the
/// number of the source it cites.
#[derive(Debug, Clone, PartialEq)]
pub struct Composed {
    pub report: String,
    pub sources: Vec<Source>,
    pub quotes: Vec<(usize, String)>,
}

/// The final report over `candidates` (the quotable units of `sources`, `source` an index
/// into it), grouped by `directions`; `preface` opens it.
pub fn compose(
    preface: &str,
    question: &str,
    candidates: &[Candidate],
    sources: &[Source],
    directions: &[Direction],
) -> Composed {
    let scorer = Scorer::new(question, candidates, sources);
    let compared = broad_comparison(question)
        .map(|sides| aspects(&sides, candidates, question))
        .unwrap_or_default();
    let answer: Vec<usize> = match compared.is_empty() {
        true => scorer.answer(),
        false => compared.iter().flat_map(|a| a.quotes.clone()).collect(),
    };
    let mut report = format!("{preface}\n\n## Answer\n\n");
    let mut numbers = Numbers::default();
    let mut quotes = Vec::new();
    // No sentence states it, but some come close: said plainly, the closest quoted.
    let none = answer.is_empty() && compared.is_empty();
    let closest = if none { scorer.closest() } else { Vec::new() };
    if answer.is_empty() && closest.is_empty() {
        report.push_str(&no_answer(question, &scorer.absent, sources.len()));
        return Composed {
            report,
            sources: Vec::new(),
            quotes,
        };
    }
    let abstained = !closest.is_empty();
    if abstained {
        let number = |s: usize| numbers.of(s);
        quotes = not_stated(&scorer.what(), &closest, candidates, number, &mut report);
    }
    let answer = if abstained { closest } else { answer };
    // The figure or name asked for comes first, as its sentence writes it; the sentence
    // follows.
    let first = answer[0];
    let lead = (compared.is_empty() && !abstained)
        .then(|| scorer.lead(first))
        .flatten();
    if let Some(span) = lead {
        let n = numbers.of(candidates[first].source);
        report.push_str(&format!("{span} [{n}]\n\n"));
        if let Some(heading) = heading_giving(&span, &candidates[first]) {
            report.push_str(&format!("{heading} [{n}]\n\n"));
            quotes.push((n, heading.to_string()));
        }
        quotes.push((n, span));
    }
    let mut quote = |i: usize, numbers: &mut Numbers| {
        let c = &candidates[i];
        let n = numbers.of(c.source);
        quotes.push((n, c.text.clone()));
        format!("{} [{n}]", c.text)
    };
    let mut said = |picked: &[usize]| -> String {
        let said: Vec<String> = picked.iter().map(|&i| quote(i, &mut numbers)).collect();
        said.join(" ")
    };
    if compared.is_empty() && !abstained {
        report.push_str(&said(&answer));
        report.push('\n');
    }
    // A broad comparison, aspect by aspect: the label is the section's heading.
    for aspect in &compared {
        let label = aspect
            .label
            .as_deref()
            .map(|l| crate::markdown::inline(l, 80));
        let label = label.map_or(String::new(), |l| format!("**{l}.** "));
        report.push_str(&format!("- {label}{}\n", said(&aspect.quotes)));
    }
    let mut taken = answer;
    let found = scorer.findings(directions, &mut taken);
    report.push_str(&findings_section(found, |i| quote(i, &mut numbers)));
    Composed {
        report,
        sources: numbers.order.iter().map(|&s| sources[s].clone()).collect(),
        quotes,
    }
}

/// The Findings section of the sentences `found` under each direction's title, each quoted
/// by `quote`; empty when none is.
fn findings_section(
    found: Vec<(String, Vec<usize>)>,
    mut quote: impl FnMut(usize) -> String,
) -> String {
    let mut findings = String::new();
    for (title, picked) in found {
        let title = crate::markdown::inline(&title, 200);
        findings.push_str(&format!("\n### {title}\n\n"));
        for i in picked {
            findings.push_str(&format!("- {}\n", quote(i)));
        }
    }
    match findings.is_empty() {
        true => findings,
        false => format!("\n## Findings\n{findings}"),
    }
}

/// The heading of the release `candidate` stands under, when it gives the figure `span` the
/// candidate does not write (`1.13.0` of a changelog's entry): it is quoted, on a line of its
/// own, after the figure and before the entry.
fn heading_giving<'c>(span: &str, candidate: &'c Candidate) -> Option<&'c str> {
    let given = |h: &&str| h.contains(span) && !candidate.text.contains(span);
    candidate.release.as_deref().filter(given)
}

/// What a `report` says under `## Answer`, to its end (tests read the answer so).
#[cfg(test)]
pub fn answer_section(report: &str) -> &str {
    report.split("## Answer\n\n").nth(1).unwrap_or("")
}

/// Source numbers in the order the report first cites each source.
#[derive(Default)]
struct Numbers {
    order: Vec<usize>,
    given: HashMap<usize, usize>,
}

impl Numbers {
    fn of(&mut self, source: usize) -> usize {
        *self.given.entry(source).or_insert_with(|| {
            self.order.push(source);
            self.order.len()
        })
    }
}

/// The terms of `text`, with each phrase `question` quotes that it holds: a phrase quoted is
/// a term of its own, held where its words stand in order (the sentence that names `state of
/// charge` beats one with `state` and `charge`).
fn with_phrases(question: &str, text: &str) -> BTreeSet<String> {
    let mut terms = content_terms(text);
    let phrases = quoted_phrases(question);
    terms.extend(phrases.into_iter().filter(|p| holds_phrase(text, p)));
    terms
}

/// The terms of each of `candidates` as they weigh for `question` ([`with_phrases`]). A
/// record's field is of its record: it holds the record's name. A sentence under a release's
/// heading is of that release: it holds its number (`41` of `# 0.1.41`). With the words its
/// document's name and the acronyms it writes stand for ([`named_by_documents`],
/// [`spelled_out`]).
fn candidate_terms(
    question: &str,
    candidates: &[Candidate],
    sources: &[Source],
) -> Vec<BTreeSet<String>> {
    let mut terms: Vec<BTreeSet<String>> = candidates
        .iter()
        .map(|c| {
            let mut terms = match (c.field, &c.section) {
                (true, Some(record)) => with_phrases(question, &format!("{record} {}", c.text)),
                _ => with_phrases(question, &c.text),
            };
            let releases = c.release.as_deref().map(releases_in).unwrap_or_default();
            terms.extend(releases.iter().flat_map(|(_, r)| content_terms(r)));
            // A sentence of a definition is of its term's options (`-b bits`).
            terms.extend(c.term.iter().flat_map(|t| short_options(t)));
            terms
        })
        .collect();
    let release = written_release(question);
    let asked = content_terms(question);
    named_by_documents(&mut terms, &asked, release.as_deref(), candidates, sources);
    spelled_out(&mut terms, question, candidates);
    terms
}

/// How much of the question each candidate covers.
struct Scorer<'a> {
    candidates: &'a [Candidate],
    /// The question's terms with their weights.
    question: Vec<(String, f64)>,
    /// The question's specific terms that no sentence holds (`2015`, a name, a compound's
    /// part): with one, nothing here answers it.
    absent: Vec<String>,
    /// The figures and years the question names (`2015`, `4680`): the answer must state them.
    figures_named: Vec<String>,
    /// Per candidate: it states a figure the question does not, and the question asks for
    /// one; or a name, and it asks for one.
    holds_asked: Vec<bool>,
    /// The terms of each question in one it asks ([`parts`]).
    parts: Vec<BTreeSet<String>>,
    /// The question asks for a figure ([`asks_figure`]).
    asks_figure: bool,
    /// The question asks for a name ([`asks_name`]).
    asks_name: bool,
    /// The question asks for a default ([`asks_default`]).
    asks_default: bool,
    terms: Vec<BTreeSet<String>>,
    /// What the question asks, as a sentence must state it.
    asked: Asked,
    /// Per candidate: whether it states that ([`Asked::states`]), with its figure; every
    /// candidate does of a question in parts, whose parts are checked by their form.
    stated: Vec<Option<Option<String>>>,
    /// Of a question in parts, per part and candidate: whether it holds the part
    /// ([`Asked::held_by`] of the part alone).
    held_parts: Vec<Vec<bool>>,
    /// The form of each part's answer ([`Form`]), with the part as written and the names
    /// most documents read write ([`pervasive_names`]), which answer no part.
    forms: Vec<(Form, String)>,
    /// The question, followed by the names most documents read write ([`pervasive_names`]):
    /// what a name that answers must not be.
    known: String,
}

/// A field that states what is asked is of the record the question names, in whatever words
/// it names it (`the curl command-line tool`): it holds them.
fn of_named_records(
    terms: &mut [BTreeSet<String>],
    candidates: &[Candidate],
    stated: &[Option<Option<String>>],
    asked: &Asked,
) {
    for (i, c) in candidates.iter().enumerate() {
        if c.field && stated[i].is_some() {
            terms[i].extend(content_terms(&asked.subject.phrase));
        }
    }
}

/// Of a question in `parts`, per part and candidate: whether it holds the part
/// ([`Asked::held_by`] of the part alone); none for a question in one part.
fn held_parts(
    parts: &[String],
    terms: &[BTreeSet<String>],
    candidates: &[Candidate],
    sources: &[Source],
) -> Vec<Vec<bool>> {
    if parts.len() == 1 {
        return Vec::new();
    }
    parts
        .iter()
        .map(|p| {
            let asked = Asked::new(p, asks_figure(p), terms, candidates);
            asked.held_by(candidates, terms, sources)
        })
        .collect()
}

/// Per candidate: whether it states what `question` asks ([`Asked::stated_by`]), with its
/// figure; every candidate does of a question in parts, whose parts are checked by their form.
/// The option a question on a default names is what it asks about: a sentence that gives that
/// option's default states it, whatever else its subject.
fn stated_by(
    question: &str,
    asked: &Asked,
    candidates: &[Candidate],
    terms: &[BTreeSet<String>],
    sources: &[Source],
) -> Vec<Option<Option<String>>> {
    let mut stated = match parts(question).len() {
        1 => asked.stated_by(candidates, terms, sources),
        _ => vec![Some(None); candidates.len()],
    };
    if asks_default(question) && named_option(question).is_some() {
        for (said, c) in stated.iter_mut().zip(candidates) {
            if let Some(value) = stated_default(question, &c.text, c.term.as_deref()) {
                *said = Some(Some(value));
            }
        }
    }
    stated
}

/// The `asked` terms of question `text` with their weights over the candidates' `terms`
/// (the fewer candidates hold one, the heavier; a word of the question's phrasing that the
/// documents do not use weighs nothing), and its specific terms that no candidate holds.
fn weights(
    text: &str,
    asked: BTreeSet<String>,
    terms: &[BTreeSet<String>],
) -> (Vec<(String, f64)>, Vec<String>) {
    let mut df: HashMap<&str, usize> = HashMap::new();
    for set in terms {
        for t in set {
            *df.entry(t.as_str()).or_default() += 1;
        }
    }
    let n = terms.len() as f64;
    let weighted = asked
        .into_iter()
        .filter_map(|t| {
            let d = *df.get(t.as_str())?;
            Some((t, (1.0 + n / (d as f64 + 1.0)).ln().powi(2)))
        })
        .collect();
    let absent = specific_terms(text)
        .into_iter()
        .filter(|t| !df.contains_key(t.as_str()))
        .collect();
    (weighted, absent)
}

/// Things a setting is (`which keyword`, `which option`, `which test operator`): a
/// definition's term names one.
const SETTINGS: &[&str] = &[
    "keyword",
    "option",
    "parameter",
    "setting",
    "variable",
    "flag",
    "field",
    "directive",
    "key",
    "operator",
];

/// Whether candidate `c` writes a name of the `thing` the question asks for and does not
/// write itself (`known`): a new name where it says the thing ([`names_given`]), or its
/// definition's term ([`term_name`]).
fn names_asked(known: &str, thing: Option<&str>, c: &Candidate) -> bool {
    !names_given(known, &c.text).is_empty() || term_name(known, thing, c).is_some()
}

/// The name of the setting whose definition candidate `c` stands in (its term's first word:
/// `even_deny_root`, `MAX_MEMBERS_PER_GROUP` of `MAX_MEMBERS_PER_GROUP (number)`), when the
/// question asks for a setting's name (`thing`) and does not write it (`known`).
fn term_name(known: &str, thing: Option<&str>, c: &Candidate) -> Option<String> {
    let asked = words(known);
    let asked: BTreeSet<&str> = asked.split(' ').collect();
    let names: Vec<&str> = c
        .term
        .as_deref()?
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
        .map(|w| w.split('=').next().unwrap_or(w))
        .collect();
    let name = *names.first()?;
    // A setting is written as one ([`is_key`]): `bash-2.0` is none.
    let setting = is_key(name) && thing.is_some_and(|t| SETTINGS.contains(&t));
    // A term that the question names by one of its names (`-m, --mirror`) is what it asks
    // about, not its answer; a word of its gloss (`(number)`) or its argument (`FILE` of `-N
    // FILE`) names nothing.
    let said = |name: &str| {
        let said = words(name);
        (is_key(name) || name.starts_with('-'))
            && !said.is_empty()
            && said.split(' ').all(|w| asked.contains(w))
    };
    let named = names
        .iter()
        .enumerate()
        .any(|(k, n)| (k == 0 || n.starts_with('-')) && said(n));
    (setting && !named).then(|| name.to_string())
}

/// The capitalised words that more than half of the documents among `candidates` write, when
/// there are three or more, each after a space: a name every document writes (`Debian` across
/// Debian's manuals) is what they are about, not what a question asks for.
fn pervasive_names(candidates: &[Candidate]) -> String {
    let mut writers: HashMap<String, BTreeSet<usize>> = HashMap::new();
    for c in candidates {
        for token in c.text.split_whitespace().skip(1) {
            let token = token.trim_matches(|c: char| !c.is_alphanumeric());
            if token.starts_with(char::is_uppercase) && token.chars().all(char::is_alphanumeric) {
                writers
                    .entry(token.to_lowercase())
                    .or_default()
                    .insert(c.source);
            }
        }
    }
    let documents: BTreeSet<usize> = candidates.iter().map(|c| c.source).collect();
    let mut names: Vec<String> = match documents.len() {
        0..3 => Vec::new(),
        n => writers
            .into_iter()
            .filter(|(_, by)| by.len() * 2 > n)
            .map(|(name, _)| name)
            .collect(),
    };
    names.sort();
    names.iter().map(|n| format!(" {n}")).collect()
}

impl<'a> Scorer<'a> {
    fn new(text: &'a str, candidates: &'a [Candidate], sources: &[Source]) -> Scorer<'a> {
        let with_phrases = |t: &str| with_phrases(text, t);
        let mut terms = candidate_terms(text, candidates, sources);
        let (question, absent) = weights(text, with_phrases(text), &terms);
        // The names a choice asks between are its options, which the question writes.
        let choice = matches!(Form::of(text), Form::Choice(_));
        let (figure, name) = (asks_figure(text), asks_name(text) && !choice);
        let default = asks_default(text);
        let pervasive = pervasive_names(candidates);
        let known = format!("{text}{pervasive}");
        // A name answers only where the sentence says what it names: the `|` of a sentence on
        // `symbols`, not a word in a sentence on something else.
        let thing = named_thing(text);
        let names = |c: &Candidate| names_asked(&known, thing, c);
        // A record's field whose key is what is asked (`Installed-Size` of `what is the
        // installed size`) holds it: its value is the answer.
        let asked_thing = content_terms(&asked_thing(text));
        let keys_asked = |c: &Candidate| {
            let key = c.term.as_deref().map(content_terms).unwrap_or_default();
            c.field && !key.is_empty() && key.is_subset(&asked_thing)
        };
        // A default of the kind asked: a figure when it asks for one, a name where it says
        // what it names.
        let gives_default = |c: &Candidate| {
            stated_default(text, &c.text, c.term.as_deref()).is_some_and(|value| {
                (!figure || value.contains(|c: char| c.is_ascii_digit())) && (!name || names(c))
            })
        };
        let asked = Asked::new(text, figure, &terms, candidates);
        let stated = stated_by(text, &asked, candidates, &terms, sources);
        of_named_records(&mut terms, candidates, &stated, &asked);
        let asked_parts = parts(text);
        let forms = asked_parts
            .iter()
            .map(|p| (Form::of(p), format!("{p}{pervasive}")))
            .collect();
        let held_parts = held_parts(&asked_parts, &terms, candidates, sources);
        Scorer {
            candidates,
            question,
            absent,
            figures_named: content_terms(text)
                .into_iter()
                .filter(|t| t.chars().any(|c| c.is_ascii_digit()))
                .collect(),
            parts: asked_parts.iter().map(|p| with_phrases(p)).collect(),
            asks_figure: figure,
            asks_name: name,
            asks_default: default,
            holds_asked: candidates
                .iter()
                .zip(&stated)
                .map(|(c, stated)| {
                    // A release's heading gives its entry's figure ([`Asked::states`]).
                    let from_heading =
                        matches!(stated, Some(Some(span)) if !c.text.contains(span.as_str()));
                    // A default is asked only of a sentence that says it is one.
                    let holds = (figure && (new_figure(text, &c.text) || from_heading))
                        || (name && names(c))
                        || keys_asked(c);
                    match default {
                        true => gives_default(c) || (holds && says_default(&c.text)),
                        false => holds,
                    }
                })
                .collect(),
            terms,
            asked,
            stated,
            held_parts,
            forms,
            known,
        }
    }

    /// The share of the question's weight that candidate `i` covers of what `covered` does
    /// not, an orphan's halved.
    fn gain(&self, i: usize, covered: &BTreeSet<&str>) -> f64 {
        self.gain_in(i, None, covered)
    }

    /// What a candidate's `gain` counts for when candidates are ranked (not when it is held
    /// against a floor): more when it holds what the question asks for.
    fn ranked(&self, i: usize, gain: f64) -> f64 {
        let meaning = 1.0 + MEANING_WEIGHT * f64::from(self.candidates[i].meaning).max(0.0);
        match self.holds_asked[i] {
            true => gain * ASKED_BONUS * meaning,
            false => gain * meaning,
        }
    }

    /// [`Scorer::gain`] over the question's terms that `part` holds (all when `None`).
    fn gain_in(&self, i: usize, part: Option<&BTreeSet<String>>, covered: &BTreeSet<&str>) -> f64 {
        let in_part = |t: &String| part.is_none_or(|p| p.contains(t));
        let total: f64 = self
            .question
            .iter()
            .filter(|(t, _)| in_part(t))
            .map(|(_, w)| w)
            .sum();
        if total <= 0.0 {
            return 0.0;
        }
        let held: f64 = self
            .question
            .iter()
            .filter(|(t, _)| in_part(t))
            .filter(|(t, _)| !covered.contains(t.as_str()) && self.terms[i].contains(t))
            .map(|(_, w)| w)
            .sum();
        let orphan = if self.candidates[i].orphan {
            ORPHAN_WEIGHT
        } else {
            1.0
        };
        orphan * held / total
    }

    /// The best candidate by `gain` among those `taken` leaves free, with the fewer terms
    /// (the more to the point) on a tie, then the earlier.
    fn best(&self, gain: impl Fn(usize) -> f64, taken: &[usize]) -> Option<(usize, f64)> {
        let mut best: Option<(usize, f64)> = None;
        for i in 0..self.candidates.len() {
            if taken.iter().any(|&j| self.clashes(i, j)) {
                continue;
            }
            let g = gain(i);
            let better = match best {
                None => g > 0.0,
                Some((b, bg)) => {
                    g > bg + 1e-9 || (g > bg - 1e-9 && self.terms[i].len() < self.terms[b].len())
                }
            };
            if better {
                best = Some((i, g));
            }
        }
        best
    }

    /// The answer's sentences, best first; empty when none covers [`ANSWER_FLOOR`], or when
    /// the question names something no sentence holds.
    fn answer(&self) -> Vec<usize> {
        self.answer_with(true)
    }

    /// [`Scorer::answer`], its first sentence one that states what is asked when `strict`.
    fn answer_with(&self, strict: bool) -> Vec<usize> {
        if !self.absent.is_empty() {
            return Vec::new();
        }
        let chosen = match self.parts.len() {
            1 => self.answer_whole(strict),
            _ => self.answer_by_part(strict),
        };
        // A figure or year the question names must be stated where the answer is: a price
        // of another year is not the price it asks for.
        let stated = |t: &String| chosen.iter().any(|&i| self.terms[i].contains(t));
        // A question in one part that asks for a figure or a name is not answered by
        // sentences that state none: the id a question asks for is not in a sentence about ids.
        // Nor is one that asks for a default by sentences that state none, though they are
        // the closest passages when no sentence states it.
        let asked_missing = self.parts.len() == 1
            && (self.asks_figure || self.asks_name || (strict && self.asks_default))
            && !chosen.iter().any(|&i| self.holds_asked[i]);
        match self.figures_named.iter().all(stated) && !asked_missing {
            true => chosen,
            false => Vec::new(),
        }
    }

    /// The passages closest to answering a question in one part that no sentence states
    /// ([`Asked::states`]): those its answer would quote without that check.
    fn closest(&self) -> Vec<usize> {
        self.answer_with(false)
    }

    /// A question in parts: the best sentence for each part that covers [`ANSWER_FLOOR`] of
    /// it and, when `strict`, holds the part ([`Asked::held_by`]) and is of the form of
    /// its answer ([`Form`]: a cause for `why`), unless a sentence already chosen covers it as
    /// well.
    fn answer_by_part(&self, strict: bool) -> Vec<usize> {
        let none = BTreeSet::new();
        let mut chosen: Vec<usize> = Vec::new();
        for (k, (part, (form, text))) in self.parts.iter().zip(&self.forms).enumerate() {
            let holds =
                |i: usize| self.held_parts[k][i] && form.held_by(text, &self.candidates[i].text);
            let of_part = |i: usize| match self.gain_in(i, Some(part), &none) {
                g if g < ANSWER_FLOOR || (strict && !holds(i)) => 0.0,
                g => self.ranked(i, g),
            };
            // A part with no term of its own (`and when?`) only adds what is asked.
            let Some((i, gain)) = self.best(of_part, &chosen) else {
                match strict && !part.is_empty() {
                    true => return Vec::new(),
                    false => continue,
                }
            };
            if chosen.iter().all(|&j| of_part(j) < gain) {
                chosen.push(i);
            }
        }
        chosen
    }

    /// What the question asks, as said when no sentence states it ([`Asked::what`]); a
    /// question in parts has no one subject: one part or another went unanswered.
    fn what(&self) -> String {
        match self.parts.len() {
            1 => self.asked.what(),
            _ => "an answer to every part of the question".to_string(),
        }
    }

    /// A question in one part: up to [`ANSWER_SENTENCES`] from one document, chosen greedily,
    /// each further one adding [`MORE_FLOOR`] of what is not yet covered. When `strict`, the
    /// first states what is asked and, of a question that asks for a figure or a name, leads
    /// with it ([`Scorer::lead`]): a sentence on the subject that gives no figure is no answer
    /// to how much, and one that names nothing new none to which.
    fn answer_whole(&self, strict: bool) -> Vec<usize> {
        let leads: Vec<bool> = (0..self.candidates.len())
            .map(|i| {
                !strict
                    || self.stated[i].is_some()
                        && (!(self.asks_figure || self.asks_name) || self.lead(i).is_some())
            })
            .collect();
        let mut chosen: Vec<usize> = Vec::new();
        let mut covered: BTreeSet<&str> = BTreeSet::new();
        while chosen.len() < ANSWER_SENTENCES {
            let floor = if chosen.is_empty() {
                ANSWER_FLOOR
            } else {
                MORE_FLOOR
            };
            // A further sentence must answer on its own as well as add what is missing.
            let none = BTreeSet::new();
            // A second document would answer a second question, which this one does not ask.
            let first = chosen.first().map(|&j| self.candidates[j].source);
            let gain = |i: usize| {
                let same_document = first.is_none_or(|s| s == self.candidates[i].source);
                let answers = self.gain(i, &none) >= ANSWER_FLOOR;
                let states = !chosen.is_empty() || leads[i];
                match answers && same_document && states {
                    true => self.ranked(i, self.gain(i, &covered)),
                    false => 0.0,
                }
            };
            let Some((i, _)) = self.best(gain, &chosen) else {
                break;
            };
            if self.gain(i, &covered) < floor {
                break;
            }
            covered.extend(
                self.question
                    .iter()
                    .map(|(t, _)| t.as_str())
                    .filter(|t| self.terms[i].contains(*t)),
            );
            chosen.push(i);
        }
        chosen
    }

    /// Whether candidates `i` and `j` may not both be quoted: the same place of one source
    /// (overlapping), or near-duplicates.
    fn clashes(&self, i: usize, j: usize) -> bool {
        let (a, b) = (&self.candidates[i], &self.candidates[j]);
        i == j
            || (a.source == b.source && a.at.start < b.at.end && b.at.start < a.at.end)
            || jaccard(&self.terms[i], &self.terms[j]) >= NEAR_DUPLICATE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates from `docs`, one per sentence (`source`, text).
    fn candidates(docs: &[(usize, &str)]) -> Vec<Candidate> {
        let docs: Vec<(usize, Option<&str>, &str)> = docs
            .iter()
            .map(|&(source, text)| (source, None, text))
            .collect();
        crate::offline::select::test_candidates(&docs)
    }

    fn sources(n: usize) -> Vec<Source> {
        crate::offline::select::test_sources(n)
    }

    const DOCS: &[(usize, &str)] = &[
        (0, "Sodium-ion cells use no lithium and no cobalt."),
        (
            0,
            "Grid storage operators value sodium-ion for its low cost.",
        ),
        (
            0,
            "Sodium-ion cells suit grid storage since they tolerate cold.",
        ),
        (
            1,
            "Dendrites form when lithium deposits unevenly on the anode.",
        ),
        (
            2,
            "A stiff solid electrolyte can suppress dendrites by pressing back.",
        ),
        (2, "Polymer electrolytes are soft."),
        (3, "In 2023 pack prices fell to 139 dollars per kWh."),
        (3, "Recycling recovers nickel from spent cells."),
    ];

    fn compose_for(question: &str, directions: &[Direction]) -> Composed {
        compose("# Q", question, &candidates(DOCS), &sources(4), directions)
    }

    #[test]
    fn each_part_of_a_question_gets_its_sentence_and_sources_are_numbered_in_citing_order() {
        let q = "Why do lithium dendrites form, and how do solid electrolytes suppress them?";
        let c = compose_for(q, &[]);
        let answer = c.report.split("## Answer\n\n").nth(1).expect("answer");
        assert!(
            answer.starts_with(
                "Dendrites form when lithium deposits unevenly on the anode. [1] \
                 A stiff solid electrolyte can suppress dendrites by pressing back. [2]"
            ),
            "{}",
            c.report
        );
        let urls: Vec<&str> = c.sources.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(urls, ["file:///c/d1.md", "file:///c/d2.md"]);
        assert_eq!(c.quotes.len(), 2);
    }

    /// Half an answer is not stated as the answer: the part no sentence answers is said to
    /// be unanswered and the closest passages follow. A part that only adds what is asked
    /// (`and when?`) needs no sentence of its own.
    #[test]
    fn a_question_in_parts_is_answered_only_when_every_part_is() {
        let q = "Why do lithium dendrites form, and who mines the ore?";
        let c = compose_for(q, &[]);
        let answer = c.report.split("## Answer\n\n").nth(1).expect("answer");
        assert!(
            answer.starts_with(
                "No sentence of the sources states an answer to every part of the question."
            ),
            "{}",
            c.report
        );
        assert!(answer.contains("- Dendrites form when lithium"), "{answer}");
        let q = "What did pack prices fall to, and when?";
        let (answer, _) = answer_of(q, DOCS, 4);
        assert!(
            answer.starts_with("In 2023 pack prices fell to 139"),
            "{answer}"
        );
        // A part that asks for a figure is held by a sentence that gives one: a sentence on
        // keepalives that gives no time does not answer how long.
        let said = |q: &str, docs: &[(usize, &str)]| {
            let c = compose("# Q", q, &candidates(docs), &sources(2), &[]);
            answer_section(&c.report).to_string()
        };
        let q = "How long does curl wait before it sends keepalive probes, and which port does ssh use?";
        let docs = [
            (
                0,
                "Keepalives are used by curl to detect broken idle connections.",
            ),
            (1, "By default ssh connects to port 22 on the remote host."),
        ];
        let half = said(q, &docs);
        assert!(half.starts_with("No sentence of the"), "{half}");
        let mut all = docs.to_vec();
        all.push((
            0,
            "By default curl waits 60 seconds before it sends keepalive probes.",
        ));
        let whole = said(q, &all);
        assert!(whole.contains("60 seconds"), "{whole}");
        assert!(!whole.starts_with("No sentence of the"), "{whole}");
        // A part that asks where something starts is not held by the release that closes
        // the range before it.
        let q = "Which glibc version introduced the trust-ad option, and which port does ssh use?";
        let docs = [
            (
                0,
                "In glibc 2.30 and earlier, the trust-ad option is not known.",
            ),
            (1, "By default ssh connects to port 22 on the remote host."),
        ];
        let closed = said(q, &docs);
        assert!(closed.starts_with("No sentence of the"), "{closed}");
        let mut all = docs.to_vec();
        all.push((0, "The trust-ad option was introduced in glibc 2.31."));
        let opened = said(q, &all);
        assert!(opened.contains("2.31"), "{opened}");
    }

    /// A name every document read writes is what they are about, not an answer; a question
    /// that asks for a name is not answered by a sentence that writes none.
    #[test]
    fn a_name_every_document_writes_does_not_answer_what_a_question_names() {
        let docs = [
            (
                0,
                "The maintainer of a Debian package marks each upload in its version string.",
            ),
            (1, "Debian archives keep every upload of a package."),
            (
                2,
                "A Debian package names its maintainer in the control file.",
            ),
        ];
        let q = "What marker goes into the version string of a reverted upload?";
        let (answer, _) = answer_of(q, &docs, 3);
        assert!(!answer.starts_with("Debian"), "{answer}");
        assert!(answer.starts_with("No sentence of the"), "{answer}");
        let mut more = docs.to_vec();
        more.push((
            0,
            "A reverted upload puts the ``+really`` marker into its version string.",
        ));
        let (answer, _) = answer_of(q, &more, 3);
        assert!(answer.starts_with("+really [1]"), "{answer}");
    }

    /// A name answers only from a sentence that says what it names: `architecture-independent`
    /// is a name, but of no symbol.
    #[test]
    fn a_name_answers_only_from_a_sentence_on_the_thing_asked_for() {
        let docs = [
            (
                0,
                "Several architecture-independent packages will do for one requirement.",
            ),
            (1, "Relationship fields list packages by name."),
        ];
        let q = "Which symbol lets a requirement say that any one of several packages will do?";
        let (answer, _) = answer_of(q, &docs, 2);
        assert!(answer.starts_with("No sentence of the"), "{answer}");
        let mut more = docs.to_vec();
        more.push((
            1,
            "A requirement says any one of several packages will do with ``|`` symbols between them.",
        ));
        let (answer, _) = answer_of(q, &more, 2);
        assert!(
            answer.starts_with("| [1]") || answer.starts_with("``|``"),
            "{answer}"
        );
    }

    fn answer_of(question: &str, docs: &[(usize, &str)], n: usize) -> (String, Vec<String>) {
        let c = compose("# Q", question, &candidates(docs), &sources(n), &[]);
        let answer = answer_section(&c.report).to_string();
        (answer, c.sources.into_iter().map(|s| s.url).collect())
    }

    /// A sentence that says it in other words ("climbed to a record" for "spike") holds too
    /// few of the question's words to state the answer by them; near in meaning, it still
    /// does not: nearness ranks what the words let through and never stands in for them.
    #[test]
    fn a_sentence_near_in_meaning_states_nothing_its_words_do_not() {
        let docs = [
            (
                0,
                "The price of battery-grade material climbed to a record during 2022.",
            ),
            (
                1,
                "Lithium deposits lie in the salt flats of the high Andes.",
            ),
            (
                2,
                "Carbonate rocks weather slowly under a cold and dry sky.",
            ),
        ];
        let question = "When did the lithium carbonate price spike?";
        let (words_only, cited) = answer_of(question, &docs, 3);
        assert!(!words_only.contains("climbed"), "{words_only}");
        assert!(cited.is_empty(), "no answer by words: {cited:?}");
        let mut near = candidates(&docs);
        for (c, meaning) in near.iter_mut().zip([0.62, 0.30, 0.20]) {
            c.meaning = meaning;
        }
        let c = compose("# Q", question, &near, &sources(3), &[]);
        let answer = c.report.split("## Answer\n\n").nth(1).unwrap_or("");
        assert!(answer.starts_with("No sentence of the"), "{}", c.report);
        assert!(!answer.starts_with("2022"), "{answer}");
    }

    #[test]
    fn a_quoted_phrase_outweighs_its_words_found_apart() {
        let docs = [
            (
                0,
                "Solid-state batteries charge faster in the lab, a state no car battery has reached.",
            ),
            (
                1,
                "State of charge. How full a battery is, as a percentage of its capacity.",
            ),
            (
                2,
                "Fast chargers push charge into a battery up to its voltage limit.",
            ),
        ];
        let (answer, cited) = answer_of(
            "In battery jargon, what does 'state of charge' refer to?",
            &docs,
            3,
        );
        assert!(answer.starts_with("State of charge. How full"), "{answer}");
        assert_eq!(cited, ["file:///c/d1.md"], "{answer}");
    }

    #[test]
    fn a_sentence_stating_the_figure_asked_for_outranks_one_that_only_names_the_subject() {
        let docs = [
            (
                0,
                "When lithium carbonate prices spiked in 2022, interest in sodium-ion surged.",
            ),
            (
                1,
                "The price of lithium carbonate rose above 70,000 dollars per tonne in 2022.",
            ),
            (2, "Nickel prices spiked in 2022 as well."),
        ];
        let question = "How high did lithium carbonate prices climb during the 2022 price spike?";
        let (answer, cited) = answer_of(question, &docs, 3);
        assert!(
            answer.starts_with(
                "above 70,000 dollars per tonne [1]\n\nThe price of lithium carbonate rose"
            ),
            "{answer}"
        );
        assert_eq!(cited, ["file:///c/d1.md"], "{answer}");
        // Not asked for a figure, the sentence that covers more of the question answers.
        let (answer, _) = answer_of(
            "Why did interest in sodium-ion grow as lithium carbonate prices spiked in 2022?",
            &docs,
            3,
        );
        assert!(
            answer.starts_with("When lithium carbonate prices spiked"),
            "{answer}"
        );
    }

    #[test]
    fn a_year_or_name_the_documents_do_not_give_leaves_no_answer_and_cites_nothing() {
        // 2015 is in no sentence: the 2023 price is not the answer.
        let c = compose_for("What did a battery pack cost per kWh in 2015?", &[]);
        assert!(
            c.report.contains("No sentence of the documents"),
            "{}",
            c.report
        );
        assert!(
            c.report.contains("None of them mentions 2015."),
            "{}",
            c.report
        );
        assert!(c.sources.is_empty() && c.quotes.is_empty());
        // The year is in a sentence, but not in one that answers.
        let docs = [
            (0, "Prices fell in 2015."),
            (1, "A pack cost 139 dollars per kWh."),
        ];
        let c = compose(
            "# Q",
            "What did a pack cost per kWh in 2015?",
            &candidates(&docs),
            &sources(2),
            &[],
        );
        assert!(c.sources.is_empty(), "{}", c.report);
        let c = compose_for("How many cells did QuantumScape deliver?", &[]);
        assert!(
            c.report.contains("None of them mentions QuantumScape."),
            "{}",
            c.report
        );
    }

    /// `GPLv3` is written by no sentence, but it names the file `GPL-3`: its sentences answer,
    /// and the other licence's, which says the same of itself, does not. A name no path gives
    /// still leaves no answer.
    #[test]
    fn a_name_the_text_never_writes_is_held_by_the_document_its_path_names() {
        let docs = [
            (
                0,
                "A written offer must remain valid for at least three years.",
            ),
            (
                1,
                "The offer must remain valid for three years and as long as you offer spare parts.",
            ),
        ];
        let mut sources = sources(2);
        for (source, path) in sources.iter_mut().zip(["GPL-2", "GPL-3"]) {
            source.in_corpus = Some(crate::in_corpus::InCorpus {
                path: path.into(),
                sha256: String::new(),
            });
        }
        let ask = |q: &str| compose("# Q", q, &candidates(&docs), &sources, &[]).report;
        let report = ask("How long must an offer remain valid under GPLv3?");
        assert!(
            report.contains("as long as you offer spare parts. [1]"),
            "{report}"
        );
        let report = ask("How long must an offer remain valid under GPLv2?");
        assert!(
            report.contains("for at least three years. [1]") && !report.contains("spare"),
            "{report}"
        );
        let report = ask("How long must an offer remain valid under GPLv4?");
        assert!(report.contains("None of them mentions GPLv4."), "{report}");
    }

    /// A name in lower case the question writes (`mio`) and no sentence does is held by the
    /// document its path names (`mio-CHANGELOG.md`), not by another's.
    #[test]
    fn a_name_in_lower_case_is_held_by_the_document_its_path_names() {
        let docs = [
            (0, "The default backlog of listeners is 1024 connections."),
            (1, "The default backlog of listeners is 128 connections."),
        ];
        let mut sources = sources(2);
        for (source, path) in sources
            .iter_mut()
            .zip(["mio-CHANGELOG.md", "tokio-CHANGELOG.md"])
        {
            source.in_corpus = Some(crate::in_corpus::InCorpus {
                path: path.into(),
                sha256: String::new(),
            });
        }
        let q = "How many connections does the default backlog of mio listeners hold?";
        let report = compose("# Q", q, &candidates(&docs), &sources, &[]).report;
        let said = answer_section(&report);
        assert!(
            said.starts_with("1024 [1]") && !said.contains("128"),
            "{said}"
        );
    }

    /// A program the question names, whose manual is among the sources, is held by the
    /// sentence that answers or its document, even where most documents write its name:
    /// coreutils' line-wrap default is not sed's.
    #[test]
    fn a_program_whose_manual_is_a_source_is_held_by_the_answer() {
        let docs = [
            (
                0,
                "By default the l command of sed prints lines unambiguously.",
            ),
            (1, "The default is to wrap after 76 characters."),
            (1, "Tools such as sed and awk read the output."),
            (2, "Scripts often pipe the output through sed."),
        ];
        let mut sources = sources(3);
        for (source, path) in sources
            .iter_mut()
            .zip(["sed.txt", "coreutils.txt", "bash.txt"])
        {
            source.in_corpus = Some(crate::in_corpus::InCorpus {
                path: path.into(),
                sha256: String::new(),
            });
        }
        let q = "At what length does sed wrap long lines by default?";
        let report = compose("# Q", q, &candidates(&docs), &sources, &[]).report;
        assert!(
            report.contains("No sentence of the sources states"),
            "{report}"
        );
    }

    #[test]
    fn a_question_asking_for_a_figure_is_not_answered_by_sentences_without_one() {
        let question = "Which numeric ids are allocated centrally and statically by the project?";
        let vague = (
            0,
            "The ids are allocated centrally and statically by the project, on demand.",
        );
        let c = compose("# Q", question, &candidates(&[vague]), &sources(1), &[]);
        assert!(
            c.report.contains("No sentence of the documents"),
            "{}",
            c.report
        );
        assert!(c.sources.is_empty() && c.quotes.is_empty(), "{}", c.report);
        let stated = (
            1,
            "The ids 60000-64999 are allocated centrally and statically.",
        );
        let (answer, cited) = answer_of(question, &[vague, stated], 2);
        assert!(answer.starts_with("60000-64999 [1]"), "{answer}");
        assert_eq!(cited, ["file:///c/d1.md"], "{answer}");
    }

    #[test]
    fn findings_come_under_their_direction_from_the_answers_documents_without_repeats() {
        let directions = [
            Direction {
                title: "Sodium-ion".into(),
                sources: vec![0, 3],
            },
            Direction {
                title: "Dendrites".into(),
                sources: vec![1, 2],
            },
        ];
        let c = compose_for(
            "Why do grid storage operators value sodium-ion cells?",
            &directions,
        );
        let (answer, findings) = c.report.split_once("## Findings").expect(&c.report);
        assert!(answer.contains("Grid storage operators value sodium-ion for its low cost. [1]"));
        assert!(
            findings.contains("### Sodium-ion\n\n- Sodium-ion cells suit grid storage since they tolerate cold. [1]\n"),
            "{}",
            c.report
        );
        assert!(
            !findings.contains("### Dendrites"),
            "nothing of that direction is to the point"
        );
        assert!(
            !findings.contains("operators value"),
            "the answer is not repeated"
        );
        assert_eq!(c.sources.len(), 1);
    }

    /// Candidates of one document's definitions: (term, sentence).
    fn defined(docs: &[(&str, &str)]) -> Vec<Candidate> {
        let texts: Vec<(usize, &str)> = docs.iter().map(|&(_, text)| (0, text)).collect();
        let mut out = candidates(&texts);
        for (c, (term, _)) in out.iter_mut().zip(docs) {
            c.term = Some(term.to_string());
        }
        out
    }

    #[test]
    fn a_short_option_the_question_writes_is_held_by_its_answer_or_by_its_term() {
        let answer = |q: &str, docs: &[(&str, &str)]| {
            let c = compose("# Q", q, &defined(docs), &sources(1), &[]);
            answer_section(&c.report).to_string()
        };
        let q = "How many worker threads does xz use when -T is not given?";
        let unsaid = answer(q, &[("xz", "By default xz uses 4 worker threads.")]);
        assert!(unsaid.starts_with("No sentence"), "{unsaid}");
        let said = answer(q, &[("-T threads", "By default xz uses 4 worker threads.")]);
        assert!(said.starts_with("4 worker [1]"), "{said}");
        // The option's argument (`FILE`) is no name the question gives: `-N` answers.
        let q = "Which test file operator is true if the file has been modified?";
        let c = &defined(&[("-N FILE", "-N FILE True if the file has been modified.")])[0];
        assert_eq!(term_name(q, named_thing(q), c).as_deref(), Some("-N"));
        // An option the question names is what it asks about, by either of its names.
        let q = "Which option is like -m?";
        let c = &defined(&[("-m, --mirror", "Mirror the repository.")])[0];
        assert_eq!(term_name(q, named_thing(q), c), None);
    }
}
