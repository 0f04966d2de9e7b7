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
//!   of the options the question offers;
//! - **the release** the question writes (`mio 1.1.0`) is a changelog entry's: the entry
//!   writes it, or stands under that release's heading.

use std::collections::{BTreeMap, BTreeSet};

use crate::plan::Source;
use crate::text::analyzer::{analyzer, content_terms, terms};
use crate::text::words;

use super::form::{Form, NAMED_BY_ADDRESS, NAMED_BY_PROPER_NAME, qualified, qualifiers};
use super::kinds::{Kind, is_measure_unit, is_unit, kind_of};
use super::names::{acronyms_of, is_named, names_of, own_name, spelled};
use super::question::{
    CASES, LIMITS, MEASURES, NAMED, NAMED_IN_CODE, NUMBER_WORDS, asked_extreme, asked_measure,
    asked_noun, asks_when, condition_terms, denied_terms, holds_phrase, new_figure, release_of,
    releases_in, versioned_name, writes_release, written_release,
};
use super::select::Candidate;
use super::span::figures;
use super::subject::{Rarity, Subject, names_another, points_back, subject, verbs_of};
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
    /// The term of the definition it stands in.
    pub term: Option<&'a str>,
    /// The heading of the release it stands under ([`Candidate::release`]).
    pub release: Option<&'a str>,
    /// It is a field of the record the question names, whose key it asks ([`Asked::asks_field`]):
    /// the record is the subject, however the question words it (`the curl command-line tool`).
    pub asked_field: bool,
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
    /// The acronyms the sources write for its words, with them ([`acronyms_of`]).
    acronyms: BTreeMap<String, String>,
    /// It asks for a figure.
    figure: bool,
    /// The capitalised names it writes that not most documents do ([`capitalised_names`]).
    names: Vec<String>,
    /// The names of code it writes ([`code_names`]): a sentence that states the answer holds
    /// each, or its context does.
    code: Vec<String>,
    /// The terms of its condition that a source writes ([`condition_terms`]): a sentence
    /// that states the answer holds one of them at least, or its context does (`abort` or
    /// `error` of `what exit status does sed return when it aborts because of an I/O error`).
    /// All of them, or the rarest, would take the question's own words for the document's:
    /// `if only a warning happened` is met by `If a warning occurs, exit status is 2`. Each
    /// weighs by its rarity (one over how many candidates hold it): a sentence that opens
    /// with a condition of its own meets the question's only by holding more than half the
    /// weight of those its document writes.
    condition: Vec<(String, f64)>,
    /// The words that name what it asks for, not its sort ([`thing_words`]): a sentence that
    /// states the answer holds one, or its context does, unless it asks for a kind of figure,
    /// whose unit says what it is (`mA/cm2` a current density).
    thing: BTreeSet<String>,
    /// The terms of the verbs its condition denies ([`denied_terms`]): a sentence that meets
    /// the condition writes one, where its document does.
    denied: BTreeSet<String>,
    /// The program whose release it asks for ([`release_of`]): a release is its figure
    /// where the name stands right before it (`Rust 1.95`, `GNU tar 1.13.x`, `bash-4.3`).
    release: Option<String>,
    /// The release it writes ([`written_release`]): a changelog's entry that states the
    /// answer is of that release ([`Asked::of_written_release`]).
    written_release: Option<String>,
    /// It asks what is, not what was ([`asks_past`]): a sentence that tells only what used
    /// to be states nothing of it ([`tells_past`]).
    present: bool,
    /// It asks where something starts (`since which release`, `starting with`): a release
    /// that closes a range (`2.25 and earlier`) is the last before it ([`closes`]).
    starts: bool,
    /// The extreme it asks for, if any ([`asked_extreme`]): `true` for the highest.
    highest: Option<bool>,
    /// The terms of what it asks the measure of ([`measured_terms`]): `memory` of `how much
    /// memory`; `None` when it asks none.
    measured: Option<BTreeSet<String>>,
    /// Its terms that some candidate holds, the rarest first: where a sentence lists
    /// figures, the one asked for stands nearest the rarest it writes.
    by_rarity: Vec<(String, usize)>,
    /// The terms of its verbs, when it denies nothing: a sentence that only denies them
    /// (`Massif does not measure these`) states nothing it asks ([`denies`]).
    verbs: BTreeSet<String>,
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
        let acronyms = acronyms_of(question, candidates);
        Asked {
            kind,
            subject: subject(question, kind, &rarity),
            form: Form::of(question),
            qualifiers: qualifiers(question),
            question: question.to_string(),
            // With the acronyms the sources write for its words: `MSRV` names no other thing
            // than the "minimum supported Rust version" asked for.
            question_terms: content_terms(question)
                .into_iter()
                .chain(acronyms.keys().cloned())
                .collect(),
            acronyms,
            figure,
            names: capitalised_names(question)
                .into_iter()
                .filter(|t| !rarity.common(t))
                .collect(),
            code: code_names(question),
            condition: condition_terms(question)
                .into_iter()
                .filter(|t| rarity.held(t) > 0)
                .map(|t| {
                    let weight = 1.0 / rarity.held(&t) as f64;
                    (t, weight)
                })
                .collect(),
            thing: thing_words(question),
            denied: denied_terms(question),
            release: release_of(question),
            written_release: written_release(question),
            present: !asks_past(question),
            starts: STARTS.iter().any(|w| holds_phrase(question, w)),
            highest: asked_extreme(question),
            measured: measured_terms(question),
            by_rarity: by_rarity(question, &rarity),
            verbs: match words(question).split(' ').any(|w| NEGATIONS.contains(&w)) {
                true => BTreeSet::new(),
                false => verbs_of(question),
            },
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
        self.judged(candidates, terms, sources, true)
    }

    /// Per candidate, whether it holds what a sentence that states the answer must, its
    /// subject and figure aside: the names and code the question writes, a record's field of
    /// the record it names, the condition it sets ([`Asked::stated_by`] before
    /// [`Asked::states`]) and, where it asks for a figure, a figure it does not give (and,
    /// where it asks where something starts, one that closes no range). A part of a question
    /// in parts is held to this much.
    pub fn held_by(
        &self,
        candidates: &[Candidate],
        terms: &[BTreeSet<String>],
        sources: &[Source],
    ) -> Vec<bool> {
        let judged = self.judged(candidates, terms, sources, false);
        // Where it asks where something starts, a figure that closes a range gives nothing.
        let opens = |text: &str| {
            let found = figures(&self.question, text);
            !self.starts || found.iter().any(|(at, span)| !closes(text, *at, span))
        };
        let figured =
            |c: &Candidate| !self.figure || (new_figure(&self.question, &c.text) && opens(&c.text));
        judged
            .iter()
            .zip(candidates)
            .map(|(held, c)| held.is_some() && figured(c))
            .collect()
    }

    /// [`Asked::stated_by`], or [`Asked::held_by`] unless `stating`.
    fn judged(
        &self,
        candidates: &[Candidate],
        terms: &[BTreeSet<String>],
        sources: &[Source],
        stating: bool,
    ) -> Vec<Option<Option<String>>> {
        let names = names_of(sources);
        let mut documents = vec![BTreeSet::new(); sources.len()];
        for (c, t) in candidates.iter().zip(terms) {
            documents[c.source].extend(t.iter().cloned());
        }
        let owned: Vec<BTreeSet<String>> = sources
            .iter()
            .map(|s| {
                s.in_corpus
                    .as_ref()
                    .map(|c| own_name(&c.path))
                    .unwrap_or_default()
            })
            .collect();
        let named = self.named(&owned);
        (0..candidates.len())
            .map(|i| {
                let s = candidates[i].source;
                let (title, names, document) = (&sources[s].title, &names[s], &documents[s]);
                let mut context = context_of(candidates, i, title, names, document);
                context.asked_field = candidates[i].field && self.asks_field(&candidates[i]);
                let sentence = &candidates[i].text;
                // A name is held as the sentence writes it, or by an acronym that stands for
                // it (`MSRV` holds `Rust`: [`super::names::spelled_out`]).
                let holds = |t: &String| context.holds(sentence, t) || terms[i].contains(t);
                // A question in the sources (a FAQ's) asks; it states nothing, nor does a
                // sentence on what used to be of what is.
                let silent = asks(sentence) || (self.present && tells_past(sentence));
                let held = !silent
                    && (named.is_empty() || named.iter().any(holds))
                    && self.code.iter().all(|t| context.holds(sentence, t))
                    && (!candidates[i].field || context.asked_field)
                    && self.meets_condition(sentence, &context)
                    && self.of_written_release(&candidates[i])
                    && !self.of_other_release(&candidates[i])
                    && !self.defines_other_code(&candidates[i])
                    && !opposes(&self.question, sentence);
                let denied = !self.verbs.is_disjoint(&terms[i]) && denies(sentence, &self.verbs);
                // What is asked by name is held where no kind of figure says it.
                let thing =
                    || self.kind.is_some() || self.thing.is_empty() || self.thing.iter().any(holds);
                match (held && !denied, stating) {
                    (true, true) if thing() => self.states(sentence, &terms[i], &context),
                    (true, true) => None,
                    (kept, _) => kept.then_some(None),
                }
            })
            .collect()
    }

    /// The names of which a sentence that states the answer must hold one, or its context
    /// must: the question's capitalised names, and its words that are the own name of a
    /// document of the sources (`sed` of "sed's l command", [`own_name`]), even where other
    /// documents write it too (coreutils' manual names sed, and its line-wrap default is
    /// base64's).
    fn named(&self, owned: &[BTreeSet<String>]) -> Vec<String> {
        let documented = self
            .question_terms
            .iter()
            .filter(|t| owned.iter().any(|n| n.contains(*t)));
        let mut out = self.names.clone();
        out.extend(
            documented
                .filter(|t| !out.contains(t))
                .cloned()
                .collect::<Vec<_>>(),
        );
        out
    }

    /// Whether a record's field states what is asked: a field states its key's value of its
    /// record and nothing else, so the question asks for its key (its words, `installed size`
    /// for `Installed-Size`), and its value says what the question does not (the record's
    /// `Package: postgresql-15` tells nothing of postgresql-15), nor only names its record;
    /// and the question names its record as the record does, a word of it whole
    /// (`postgresql-doc` is not the record `postgresql`).
    fn asks_field(&self, field: &Candidate) -> bool {
        let key = field.term.as_deref().unwrap_or_default();
        let keyed = content_terms(key);
        let value = field.text.get(key.len() + 1..).unwrap_or_default().trim();
        let record = field.section.as_deref().unwrap_or_default();
        let written = |name: &str| {
            self.question.split_whitespace().any(|w| {
                let w = w
                    .trim_end_matches("'s")
                    .trim_matches(|c: char| !c.is_alphanumeric() && !matches!(c, '*' | '/' | '_'));
                w.eq_ignore_ascii_case(name)
            })
        };
        !keyed.is_empty()
            && keyed.is_subset(&self.question_terms)
            && record != value
            && record.split_whitespace().any(written)
            && !content_terms(value).is_subset(&self.question_terms)
    }

    /// Whether `sentence`, in `context`, holds a term of the question's condition that the
    /// sources write, when it sets one.
    fn meets_condition(&self, sentence: &str, context: &Context<'_>) -> bool {
        let held = |(t, _): &&(String, f64)| context.holds(sentence, t);
        // `is not found`: a sentence on another case (`exits with status 255`) writes no
        // `found`, where its document does.
        let mut denied = self
            .denied
            .iter()
            .filter(|t| context.document.contains(*t))
            .peekable();
        if denied.peek().is_some() && !denied.any(|t| context.holds(sentence, t)) {
            return false;
        }
        let any = || self.condition.is_empty() || self.condition.iter().any(|t| held(&t));
        if !opens_with_condition(sentence) {
            return any();
        }
        // A word its document never writes is the question's wording (`happened` for
        // `occurs`).
        let written: Vec<&(String, f64)> = self
            .condition
            .iter()
            .filter(|(t, _)| context.document.contains(t))
            .collect();
        if written.is_empty() {
            return any();
        }
        // The exit status of another case (`If such line was not found (and no other error
        // occurred)`) shares a word of the case asked about, not its weight.
        let total: f64 = written.iter().map(|(_, w)| w).sum();
        let met: f64 = written.iter().filter(|t| held(t)).map(|(_, w)| w).sum();
        met * 2.0 > total
    }

    /// Whether `candidate`, an entry of a changelog, is of the release the question writes:
    /// the sentence or the heading of the release it stands under writes it (`fix a
    /// regression` under `# 1.1.1` is not of `mio 1.1.0`, and a changelog without `1.3.0` has
    /// no entry of it). A sentence under no release's heading is of whatever release its
    /// document is (`Apache License 2.0` throughout its text).
    fn of_written_release(&self, candidate: &Candidate) -> bool {
        let (Some(release), Some(heading)) = (&self.written_release, &candidate.release) else {
            return true;
        };
        writes_release(&candidate.text, release) || writes_release(heading, release)
    }

    /// Whether `sentence` speaks of another release of a program the question writes with its
    /// release: it writes the program's name joined to a release (`bzip2-0.1` for `bzip2
    /// version 1.0.0`), and not the question's.
    fn of_other_release(&self, candidate: &Candidate) -> bool {
        let Some(release) = &self.written_release else {
            return false;
        };
        let sentence = candidate.text.as_str();
        let headed = [&candidate.release, &candidate.section]
            .into_iter()
            .any(|h| h.as_deref().is_some_and(|h| writes_release(h, release)));
        if headed {
            return false;
        }
        let named = |token: &str| {
            let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
            versioned_name(bare).is_some_and(|name| {
                let terms = content_terms(name);
                !terms.is_empty() && terms.is_subset(&self.question_terms)
            })
        };
        !writes_release(sentence, release)
            && (sentence.split_whitespace().any(named)
                || self.writes_other_release(sentence, release))
    }

    /// Whether `candidate` stands in the definition of other code than the question writes,
    /// where it asks for a figure: a definition's figure is its term's
    /// (`--freelist-big-blocks=<number> [default: 1000000]`, whose text names `--freelist-vol`,
    /// gives nothing of `--freelist-vol`).
    fn defines_other_code(&self, candidate: &Candidate) -> bool {
        let Some(term) = candidate.term.as_deref() else {
            return false;
        };
        let said = format!(" {} ", words(term));
        let terms = content_terms(term);
        let holds = |c: &String| match c.contains(' ') {
            true => said.contains(&format!(" {c} ")),
            false => terms.contains(c),
        };
        self.figure
            && !self.code.is_empty()
            && !code_names(term).is_empty()
            && !self.code.iter().any(holds)
    }

    /// Whether `sentence` writes another release than `release`, the question's, where the
    /// question asks no release: one after the name the question writes before its own
    /// (`GCC 3.2.2` for `with GCC 3.4 or later`), or one of the same form, of three parts or
    /// more (`3.6.1:` for `the Valgrind 3.16.1 release`): what it states is of that release.
    fn writes_other_release(&self, sentence: &str, release: &str) -> bool {
        let asks_release =
            self.release.is_some() || self.kind.is_some_and(|k| k.units.contains(&"version"));
        if asks_release {
            return false;
        }
        let program = program_before(&self.question, release);
        let parts = release.split('.').count();
        let tokens: Vec<&str> = sentence.split_whitespace().collect();
        tokens.iter().enumerate().any(|(k, token)| {
            let Some(number) = release_opening(token) else {
                return false;
            };
            let after_program =
                k > 0 && program.as_ref().is_some_and(|p| words(tokens[k - 1]) == *p);
            after_program || (parts >= 3 && number.split('.').count() == parts)
        })
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
            || context.asked_field
            || context.section.is_some_and(|s| subject.held_by(s))
            || subject.held_by(context.title)
            || subject.named_by(context.names)
            || context
                .before
                .is_some_and(|b| points_back(sentence) && subject.held_by(b));
        let formed = self.form.held_by(&self.question, sentence)
            && qualified(&self.qualifiers, &spelled(sentence, &self.acronyms));
        if !held || !formed {
            return None;
        }
        if !self.figure {
            return Some(None);
        }
        let found = figures(&self.question, sentence);
        if let Some(release) = self.release_heading(&found, terms, context) {
            return Some(Some(release));
        }
        if found.is_empty() {
            // A figure in words (`about a quarter`): of the kind when its unit is said. A
            // sentence with no figure the question does not give (`the port may be set`)
            // states none.
            let said = format!(" {} ", words(sentence));
            let unit = |u: &&str| said.contains(&format!(" {u} "));
            let kind = self.kind.is_none_or(|k| k.units.iter().any(unit));
            return (kind && new_figure(&self.question, sentence)).then_some(None);
        }
        let fitting: Vec<(usize, String)> = found
            .into_iter()
            .filter(|(at, span)| {
                self.is_of_kind(sentence, *at, span)
                    && !self.counts_other(sentence, *at, span)
                    && self.is_subjects(sentence, *at, in_sentence)
                    && self.of_release(sentence, *at, span)
                    && !replaced(sentence, *at, span)
                    && !passed(sentence, *at, span, self.highest)
                    && !(self.starts && closes(sentence, *at, span))
            })
            .collect();
        // Of a list's figures (`x86_64 (Rust 1.59+), ..., powerpc64 (Rust 1.95+)`), the one
        // asked for is nearest the rarest word of the question the sentence writes.
        let subject_at = self.subject_at(sentence);
        // Apart by list items (commas, semicolons) first, then by characters.
        let segment = |at: usize| sentence[..at].matches([',', ';']).count();
        let distance = |at: usize| {
            subject_at
                .iter()
                .map(|&s| (segment(s).abs_diff(segment(at)), s.abs_diff(at)))
                .min()
        };
        fitting
            .into_iter()
            .enumerate()
            .min_by_key(|(k, (at, _))| (distance(*at), *k))
            .map(|(_, (at, span))| Some(self.with_unit_before(sentence, at, span)))
    }

    /// Where `sentence` writes the rarest of the question's terms it writes, of those as
    /// rare the one it writes the fewest times (`powerpc64` of `from which Rust version does
    /// portable-atomic use native 128-bit atomics on powerpc64`, over a document on
    /// portable-atomic that writes `Rust` before each version).
    fn subject_at(&self, sentence: &str) -> Vec<usize> {
        let written = terms(&mut analyzer(), sentence);
        self.by_rarity
            .iter()
            .map(|(term, held)| {
                let at: Vec<usize> = written
                    .iter()
                    .filter(|t| &t.text == term)
                    .map(|t| t.offset_from)
                    .collect();
                (*held, at)
            })
            .filter(|(_, at)| !at.is_empty())
            .min_by_key(|(held, at)| (*held, at.len()))
            .map(|(_, at)| at)
            .unwrap_or_default()
    }

    /// The figure `span` at `at` in `sentence` with the word of a kind written first (`a
    /// priority of 20`, `port 8080`) when that word stands in the three words before it.
    fn with_unit_before(&self, sentence: &str, at: usize, span: String) -> String {
        let Some(kind) = self.kind.filter(|k| k.before) else {
            return span;
        };
        let before = &sentence[..at];
        let unit = words_before(sentence, at, 3)
            .into_iter()
            .find(|w| kind.units.contains(&words(w).as_str()));
        match unit.and_then(|u| before.rfind(u)) {
            // `version 17.0.0` of `version (17.0.0)`.
            Some(start) => format!("{}{span}", sentence[start..at].trim_end_matches(['(', '['])),
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
        let before = words_before(sentence, at, 3);
        let mut window = format!(
            " {} {} {} ",
            words(span),
            glued_unit(span),
            words(&after.join(" "))
        );
        if kind.before {
            window.push_str(&format!("{} ", words(&before.join(" "))));
        }
        kind.units
            .iter()
            .any(|u| window.contains(&format!(" {u} ")) || (!u.is_ascii() && span.contains(u)))
            || (kind.units.contains(&"%") && span.contains('%'))
            || (kind.units.contains(&"version") && is_release(span) && !measures(sentence, end))
            || (kind.units.contains(&"$") && sentence[..end].contains('$'))
    }

    /// Whether the figure `span` at `at` in `sentence` counts another thing the question
    /// names than the one it asks the measure of: the word after it is the question's, not a
    /// unit, and not of what it asks (`900k block` of `how much memory does bunzip2 need for
    /// the default block size`, `two presets` of `what dictionary size does preset -7 use`).
    fn counts_other(&self, sentence: &str, at: usize, span: &str) -> bool {
        // The word after the number, in the span (`900k block`, `a 12-byte nonce`) or after
        // it.
        let number = |w: &&str| {
            w.contains(|c: char| c.is_ascii_digit()) || NUMBER_WORDS.contains(&words(w).as_str())
        };
        let mut tokens = span
            .split_whitespace()
            .chain(sentence[at + span.len()..].split_whitespace());
        let figure = tokens.find(number);
        let after = figure.and_then(|_| tokens.next());
        // A size joined to its unit (`a 4-byte block counter`) is the size of the noun after
        // it, whether the question names it or not.
        let joined = figure
            .and_then(|f| f.rsplit_once('-'))
            .is_some_and(|(_, unit)| is_unit(&words(unit)));
        let (Some(next), Some(measured)) = (after.map(words), &self.measured) else {
            return false;
        };
        // A rate's unit runs on (`400 MB/s per core`, `5 bytes per 32K block`).
        let rate = ["per", "every", "each", "a", "an"].contains(&next.as_str());
        let term = content_terms(&next);
        !rate
            && !is_unit(&next)
            && !term.is_empty()
            && (joined || term.is_subset(&self.question_terms))
            && term.is_disjoint(measured)
    }

    /// Whether the figure `span` at `at` in `sentence` is a release of the program asked
    /// about, when the question asks for one: written as a release is ([`is_release`]), with
    /// the name in the two words before or in the span itself (`Rust 1.95`, `bash-4.3`).
    fn of_release(&self, sentence: &str, at: usize, span: &str) -> bool {
        let Some(name) = &self.release else {
            return true;
        };
        if !is_release(span) {
            return false;
        }
        let before = words_before(sentence, at, 2);
        // `MSRV 1.88` is Rust's release where MSRV stands for the minimum supported Rust
        // version.
        let named = |text: &str| {
            words(&spelled(text, &self.acronyms))
                .split(' ')
                .any(|w| w == name)
        };
        before.iter().any(|w| named(w)) || named(span)
    }

    /// The release a changelog's entry is of, when the question asks for a release of the
    /// program whose changelog it is: its heading's (`1.13.0` of `Added a regex! macro` under
    /// `1.13.0 (2026-07-15)` in regex's), where the sentence writes the rarest word of the
    /// question the candidates write, past the program's name (`zstd` of `which gzip release
    /// added support for zstd-compressed input`), and no release of its own (`The previous
    /// release 0.1.42 was yanked` speaks of 0.1.42, not of its heading's 0.1.43).
    fn release_heading(
        &self,
        found: &[(usize, String)],
        terms: &BTreeSet<String>,
        context: &Context<'_>,
    ) -> Option<String> {
        let (program, heading) = (self.release.as_ref()?, context.release?);
        // A change to come (`in which release will locate stop reading old databases`) is
        // announced under a release that did not make it.
        if words(&self.question).split(' ').any(|w| w == "will") {
            return None;
        }
        let program_terms = content_terms(program);
        let rarest =
            self.by_rarity.iter().map(|(term, _)| term).find(|t| {
                !program_terms.contains(*t) && !["releas", "version"].contains(&t.as_str())
            });
        if rarest.is_some_and(|t| !terms.contains(t)) {
            return None;
        }
        let named = |text: &str| words(text).split(' ').any(|w| w == program);
        let of_program = is_named(context.names, program)
            || named(heading)
            || named(context.title)
            || context.section.is_some_and(named);
        let own = found.iter().any(|(_, span)| is_release(span));
        let (_, number) = releases_in(heading).into_iter().next()?;
        (of_program && !own).then_some(number)
    }

    /// Whether the figure at `at` in `sentence` is the subject's: the sentence is one clause
    /// and holds the subject (`in_sentence`), or the clause that holds the figure holds the
    /// subject or names no other subject (an acronym, a compound the question does not write).
    fn is_subjects(&self, sentence: &str, at: usize, in_sentence: bool) -> bool {
        // The case an exception names (`256 bytes for most file systems, except for small
        // file systems where ... 128 bytes`) is not the rule's.
        let lower = sentence.to_lowercase();
        if let Some(except) = lower.find(" except ")
            && at < except
            && self.subject.some()
            && self.subject.held_by(&sentence[except..])
            && !self.subject.held_by(&sentence[..except])
        {
            return false;
        }
        let clause = clause_of(sentence, at);
        // A sentence of one clause that holds the subject gives the subject's figure.
        if !self.subject.some() || (in_sentence && clause.len() == sentence.len()) {
            return true;
        }
        self.subject.held_by(clause)
            || !(names_another(clause, &self.question_terms) || self.subject.sibling_in(clause))
    }
}

impl Context<'_> {
    /// Whether `sentence`, in this context, holds the name `term` (a content term, or a
    /// phrase of words): it, its
    /// section, its definition's term, its document's title or path, or the sentence before
    /// when it points back.
    fn holds(&self, sentence: &str, term: &str) -> bool {
        // A phrase (`child process`) is held where its words stand in order.
        let in_text = |text: &str| match term.contains(' ') {
            true => format!(" {} ", words(text)).contains(&format!(" {term} ")),
            false => content_terms(text).contains(term),
        };
        in_text(sentence)
            || self.section.is_some_and(in_text)
            || self.term.is_some_and(in_text)
            || in_text(self.title)
            || is_named(self.names, term)
            || self
                .before
                .is_some_and(|b| points_back(sentence) && in_text(b))
    }
}

/// Nouns that tell what sort of thing a question asks for, not which (`which one`, `what
/// kind`): [`thing_words`] leaves them out, as it does the things asked the name of, the
/// measures and limits, and the forms' nouns ([`NAMED`], [`MEASURES`], [`NAMED_BY_ADDRESS`]).
const SORTS: &[&str] = &[
    "one",
    "ones",
    "kind",
    "type",
    "thing",
    "way",
    "word",
    "words",
    "purpose",
    "effect",
    "meaning",
    "role",
    "use",
    "difference",
    "value",
    "result",
    "reason",
    "benefit",
    "advantage",
    "drawback",
];

/// The terms of what `question` asks for that name it ([`asked_noun`] without [`SORTS`]):
/// `qcow2` and `compat` of `which qcow2 compat level`, none of `which option`.
fn thing_words(question: &str) -> BTreeSet<String> {
    let sorts: Vec<&str> = [NAMED, NAMED_IN_CODE, MEASURES, LIMITS, SORTS]
        .into_iter()
        .chain([NAMED_BY_PROPER_NAME, NAMED_BY_ADDRESS])
        .flatten()
        .copied()
        .collect();
    let sorts = content_terms(&sorts.join(" "));
    // A name or code is held as [`Asked::named`] and [`Asked::code`] hold it (`ChildProcess`
    // by `child process`).
    let named: Vec<&str> = question
        .split_whitespace()
        .filter(|w| w.chars().any(|c| c.is_uppercase() || "_-=/.$".contains(c)))
        .collect();
    let named = content_terms(&named.join(" "));
    content_terms(&asked_noun(question))
        .into_iter()
        .filter(|t| !sorts.contains(t) && !named.contains(t))
        .collect()
}

/// Whether `sentence` opens with a condition (`If a warning occurs, exit status is 2.`): it
/// states its figure for that case.
fn opens_with_condition(sentence: &str) -> bool {
    let opening = sentence.split_whitespace().next().unwrap_or_default();
    CASES.contains(&opening.to_lowercase().as_str())
}

/// The last `n` words of `sentence` before `at`, the nearest first; marks alone (`(` of
/// `version (17.0.0)`) are no words.
fn words_before(sentence: &str, at: usize, n: usize) -> Vec<&str> {
    sentence[..at]
        .split_whitespace()
        .rev()
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .take(n)
        .collect()
}

/// Words that say the figure after them is the one replaced, not the one stated (`exits
/// with status 1 instead of with status 2`).
const REPLACED: &[&str] = &["instead of", "rather than", "as opposed to", "in place of"];

/// Whether the figure `span` at `at` in `sentence` is one replaced ([`REPLACED`] within the
/// four words before it, or its span's qualifier: `than 10 seconds`).
fn replaced(sentence: &str, at: usize, span: &str) -> bool {
    said_before(words_before(sentence, at, 4), span, REPLACED)
}

/// Whether one of `phrases` is said in `before` (the words before a figure, the nearest
/// first) or in the qualifier of the figure's `span` (`than 10 seconds`).
fn said_before(before: Vec<&str>, span: &str, phrases: &[&str]) -> bool {
    let qualifier = span
        .split(|c: char| c.is_ascii_digit())
        .next()
        .unwrap_or_default();
    let mut said: Vec<&str> = before.into_iter().rev().collect();
    said.push(qualifier);
    let said = said.join(" ");
    phrases.iter().any(|p| holds_phrase(&said, p))
}

/// Words that say the figure after them is a bound the value passes upwards (`levels beyond
/// 19, up to 22`): no highest value.
const PASSED_UPWARDS: &[&str] = &[
    "beyond",
    "above",
    "over",
    "exceeding",
    "more than",
    "greater than",
    "larger than",
    "past",
];
/// Words that say the figure after them is a bound the value passes downwards: no lowest one.
const PASSED_DOWNWARDS: &[&str] = &["below", "under", "less than", "fewer than", "smaller than"];

/// Whether the figure `span` at `at` in `sentence` is a bound the extreme asked for passes
/// (`highest`: `beyond 19`), in its span's qualifier or the two words before it, within its
/// clause and past any figure before it (`up to 22` of `beyond 19, up to 22` is no bound).
fn passed(sentence: &str, at: usize, span: &str, highest: Option<bool>) -> bool {
    if ends_range(sentence, at, span, highest) {
        return true;
    }
    let bounds = match highest {
        Some(true) => PASSED_UPWARDS,
        Some(false) => PASSED_DOWNWARDS,
        None => return false,
    };
    // Within its clause, past any figure before it.
    let before = words_before(sentence, at, 2)
        .into_iter()
        .take_while(|w| !w.ends_with([',', ';']) && !w.contains(|c: char| c.is_ascii_digit()))
        .collect();
    said_before(before, span, bounds)
}

/// Words of a question that asks where something starts.
const STARTS: &[&str] = &[
    "since",
    "starting",
    "from which",
    "first",
    "introduced",
    "added",
    "no longer",
    "began",
    "became",
];
/// Words after a figure that close a range with it (`glibc 2.25 and earlier`).
const CLOSING: &[&str] = &[
    "and earlier",
    "or earlier",
    "and older",
    "or older",
    "and before",
    "and below",
    "or below",
    "and lower",
    "or lower",
];

/// Whether the figure `span` at `at` in `sentence` closes a range ([`CLOSING`] right after
/// it).
fn closes(sentence: &str, at: usize, span: &str) -> bool {
    let after: Vec<&str> = sentence[at + span.len()..]
        .split_whitespace()
        .take(2)
        .collect();
    let after = after.join(" ");
    CLOSING.iter().any(|c| holds_phrase(&after, c))
}

/// Words between the ends of a range (`2 through 16`, `1 to 9`).
const THROUGH: &[&str] = &["through", "thru", "to"];

/// Whether the figure `span` at `at` in `sentence` is the other end of a range than the
/// extreme asked for: its low end (`2 through BC_BASE_MAX`) where the highest is asked, its
/// high end (`1 to 9`) where the lowest is.
fn ends_range(sentence: &str, at: usize, span: &str, highest: Option<bool>) -> bool {
    let through = |w: Option<&str>| w.is_some_and(|w| THROUGH.contains(&words(w).as_str()));
    match highest {
        Some(true) => through(sentence[at + span.len()..].split_whitespace().next()),
        Some(false) => {
            let before = words_before(sentence, at, 2);
            let figure = before
                .get(1)
                .is_some_and(|w| w.contains(|c: char| c.is_ascii_digit()));
            through(before.first().copied()) && figure
        }
        None => false,
    }
}

/// Words that tell what was before: a sentence with one, and no word of the present, tells
/// what used to be (`'die' used to be the default value of $huge`); not `is used to`, nor
/// `previously` of `the previously allocated headers`.
const PAST: &[&str] = &[
    "used to be",
    "used to have",
    "used to default",
    "formerly",
    "historically",
];
/// Words that tell what is now.
const PRESENT: &[&str] = &["now", "currently", "today", "since"];

/// The release number a word opens with (`3.12.0` of `(3.12.0.RC1:`): digits with points
/// between them.
fn release_opening(token: &str) -> Option<&str> {
    let token = token.trim_start_matches(|c: char| !c.is_alphanumeric());
    let end = token
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(token.len());
    let number = token[..end].trim_end_matches('.');
    let numbers = number.split('.').all(|p| !p.is_empty());
    (number.contains('.') && numbers).then_some(number)
}

/// The name a question writes right before its `release` (`gcc` of `With GCC 3.4 or later`),
/// in lower case, when it is a word.
fn program_before(question: &str, release: &str) -> Option<String> {
    let tokens: Vec<&str> = question.split_whitespace().collect();
    let at = tokens
        .iter()
        .position(|t| release_opening(t) == Some(release))?;
    let name = words(tokens.get(at.checked_sub(1)?)?);
    let word = !name.is_empty() && !name.contains(' ') && name.chars().all(char::is_alphanumeric);
    (word && !["version", "release", "v"].contains(&name.as_str())).then_some(name)
}

/// Whether `sentence` tells only what used to be ([`PAST`], no word of [`PRESENT`]).
fn tells_past(sentence: &str) -> bool {
    let has = |w: &&str| holds_phrase(sentence, w);
    PAST.iter().any(has) && !PRESENT.iter().any(has)
}

/// Whether `question` asks what was: a verb in the past (`was`, `did`), `old`, `previous`,
/// or a word of [`PAST`].
fn asks_past(question: &str) -> bool {
    ["was", "were", "did", "had", "old", "previous"]
        .iter()
        .chain(PAST)
        .any(|w| holds_phrase(question, w))
}

/// Comparatives and their opposites.
const OPPOSITES: &[(&str, &str)] = &[
    ("more", "fewer"),
    ("more", "less"),
    ("higher", "lower"),
    ("larger", "smaller"),
    ("bigger", "smaller"),
    ("faster", "slower"),
    ("longer", "shorter"),
    ("increase", "decrease"),
    ("increases", "decreases"),
];

/// Words that tell a thing began: a release it came in.
const BEGAN: &[&str] = &[
    "added",
    "introduced",
    "supported",
    "support",
    "available",
    "new",
];
/// Words that tell a thing ended: a release it went out in.
const ENDED: &[&str] = &["removed", "dropped", "deprecated", "deleted", "obsolete"];

/// Whether `sentence` says the opposite of a comparative `question` writes, and not the
/// comparative itself (`one fewer command` for `one more command`), or that a thing ended
/// where the question asks when one began (`these options were removed in glibc 2.25` for
/// `since which release is the attempts option supported`), or the other way: it states the
/// other way.
fn opposes(question: &str, sentence: &str) -> bool {
    let (asked, said) = (words(question), words(sentence));
    let has = |text: &str, w: &str| text.split(' ').any(|t| t == w);
    let turned = |x: &[&str], y: &[&str]| {
        let any = |text: &str, of: &[&str]| of.iter().any(|w| has(text, w));
        any(&asked, x) && !any(&asked, y) && !any(&said, x) && any(&said, y)
    };
    OPPOSITES
        .iter()
        .any(|&(a, b)| turned(&[a], &[b]) || turned(&[b], &[a]))
        || turned(BEGAN, ENDED)
        || turned(ENDED, BEGAN)
}

/// Whether `sentence` ends as a question (`Why not?)`): it states no answer.
fn asks(sentence: &str) -> bool {
    sentence
        .trim_end_matches(|c: char| c.is_whitespace() || "\"')".contains(c))
        .ends_with('?')
}

/// The terms of what `question` asks the measure of ([`asked_measure`]): the measure's own
/// (`memory` of `how much memory`) and the noun after its `of` (`parameters` of `the maximum
/// number of parameters`); `None` when it asks none.
fn measured_terms(question: &str) -> Option<BTreeSet<String>> {
    let measure = asked_measure(question);
    if measure.is_empty() {
        return None;
    }
    let said = words(question);
    let of = format!("{measure} of ");
    let counted = said
        .split_once(&of)
        .and_then(|(_, rest)| rest.split(' ').find(|w| !["the", "a", "an"].contains(w)));
    let mut terms = content_terms(&measure);
    terms.extend(counted.map(content_terms).unwrap_or_default());
    Some(terms)
}

/// The terms of `question` that some candidate holds, each with how many, the rarest first;
/// not those of its own figures (`512` and `bit` of `a 512-bit key`), which set a condition
/// rather than place what is asked (`a 512-bit key can encode a 53-byte message (512 bit = 64
/// bytes)`).
fn by_rarity(question: &str, rarity: &Rarity) -> Vec<(String, usize)> {
    let (figures, words): (Vec<&str>, Vec<&str>) = question
        .split_whitespace()
        .partition(|w| w.starts_with(|c: char| c.is_ascii_digit()));
    let of_words = content_terms(&words.join(" "));
    let of_figures = content_terms(&figures.join(" "));
    let mut held: Vec<(String, usize)> = content_terms(question)
        .into_iter()
        .filter(|t| of_words.contains(t) || !of_figures.contains(t))
        .map(|t| {
            let n = rarity.held(&t);
            (t, n)
        })
        .filter(|(_, n)| *n > 0)
        .collect();
    held.sort_by_key(|(_, n)| *n);
    held
}

/// Whether `span` is written as a release is: a version with its dots (`4.3`, `2.0.1`), or
/// after a name (`bash-3.1`).
fn is_release(span: &str) -> bool {
    !releases_in(span).is_empty()
}

/// Whether the figure ending at `end` in `sentence` is a measure, not a release: a share
/// (`69.3 %`) or a figure with another kind's unit after it (`2.5 seconds`); a span that holds
/// its unit is no release already ([`releases_in`]).
fn measures(sentence: &str, end: usize) -> bool {
    let after = &sentence[end..];
    let unit = after
        .split_whitespace()
        .next()
        .map(words)
        .unwrap_or_default();
    after.trim_start().starts_with('%') || is_measure_unit(&unit)
}

/// The unit written onto the first figure of `span`, in lower case (`k` of `32K`, `x` of
/// `up to 10x`, `ms` of `500ms`); empty when there is none.
fn glued_unit(span: &str) -> String {
    let mut tokens = span.split_whitespace();
    let first = tokens
        .find(|t| t.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_default();
    let unit = first.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.' || c == ',');
    match unit.len() < first.len() && unit.chars().all(char::is_alphabetic) {
        true => unit.to_lowercase(),
        false => String::new(),
    }
}

/// Words that deny what follows them.
const NEGATIONS: &[&str] = &["not", "nor", "never", "cannot", "t", "no", "neither"];

/// Whether `sentence` (a unit of sentences) writes one of the `verbs` (their terms) and
/// denies it the first time, within the three words before (`Massif does not measure
/// these. ... tools such as top that measure ...`).
fn denies(sentence: &str, verbs: &BTreeSet<String>) -> bool {
    let said = words(sentence);
    let said: Vec<&str> = said.split(' ').collect();
    let first = said
        .iter()
        .position(|w| content_terms(w).iter().any(|t| verbs.contains(t)));
    first.is_some_and(|k| {
        said[k.saturating_sub(3)..k]
            .iter()
            .any(|w| NEGATIONS.contains(w))
    })
}

/// The terms of the capitalised words `question` writes past the first of each of its
/// sentences, longer than two letters: the names it asks about (`Massif`, `MaxLevelConsole`);
/// a name run together also as the phrase of its words (`child process`), held either way.
fn capitalised_names(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut opens = true;
    for raw in question.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let named = !opens
            && word.len() > 2
            && word.starts_with(char::is_uppercase)
            && !is_unit(&word.to_lowercase());
        if named {
            let mut terms: Vec<String> = content_terms(word).into_iter().collect();
            terms.extend(camel_words(word));
            out.extend(
                terms
                    .into_iter()
                    .filter(|t| !out.contains(t))
                    .collect::<Vec<_>>(),
            );
        }
        opens = raw.ends_with(['.', '?', '!', ':']);
    }
    out
}

/// Nouns a question calls a name of code by: `attempts` of `the attempts option`.
const CALLED: &[&str] = &["option", "keyword", "directive", "flag"];
/// Words before such a noun that say which, not its name (`the default option`).
const NOT_NAMES: &[&str] = &[
    "default",
    "new",
    "same",
    "other",
    "first",
    "last",
    "following",
    "main",
    "global",
    "only",
];

/// The names of code `question` writes, as the words of each (`allow unknown` of
/// `allow_unknown`, `no time strict` of `--no-time-strict`): a word joined by underscores, an
/// option, a variable (`$huge`), a setting given a value (by its key: `storage` of
/// `Storage=persistent`), a word the question calls an option or a keyword (`attempts` of
/// `the attempts option`).
fn code_names(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let said = words(question);
    let said: Vec<&str> = said.split(' ').collect();
    for k in 1..said.len().saturating_sub(1) {
        let called = CALLED.contains(&said[k + 1]) && ["the", "its"].contains(&said[k - 1]);
        if called && !NOT_NAMES.contains(&said[k]) {
            for term in content_terms(said[k]) {
                if !out.contains(&term) {
                    out.push(term);
                }
            }
        }
    }
    for raw in question.split_whitespace() {
        let word = raw.trim_end_matches(['?', '.', ',', ';', ':', ')', '\'', '"', '`']);
        let word = word.trim_start_matches(['(', '\'', '"', '`']);
        // A variable is written with its sign (`$huge`, `@ARGV`, `%ENV`).
        let variable = word.starts_with(['$', '@', '%'])
            && word[1..].starts_with(|c: char| c.is_alphabetic() || c == '{');
        let code = word.contains(['_', '='])
            || (word.starts_with('-') && word.len() > 2)
            || variable
            || is_path(word);
        // A setting given a value is held by its key (`Storage=persistent`: `Storage`).
        let word = match word.split_once('=') {
            Some((key, _)) if !key.is_empty() => key,
            _ => word,
        };
        // One word is held as a term (stemmed), more as a phrase.
        let said = words(word);
        let terms = match said.contains(' ') {
            true => vec![said],
            false => content_terms(word).into_iter().collect(),
        };
        for term in terms {
            if code && !out.contains(&term) {
                out.push(term);
            }
        }
    }
    out
}

/// Whether `word` is a file's name or a path: a name with an extension (`config.guess`,
/// `os.path`: a dot between a letter or digit and two letters) or a slash that joins no
/// initials (`xdiff/xhistogram.c`, `mpi/`, not `I/O` or `TCP/IP`).
fn is_path(word: &str) -> bool {
    let chars: Vec<char> = word.chars().collect();
    let extension = chars.windows(4).any(|w| {
        w[0].is_alphanumeric() && w[1] == '.' && w[2].is_alphabetic() && w[3].is_alphabetic()
    });
    let initials = word
        .split('/')
        .all(|part| !part.chars().any(char::is_lowercase));
    let slash = word.contains('/') && !initials && word != "and/or";
    extension || slash
}

/// The words a name run together in capitals writes apart, in lower case (`child process` of
/// `ChildProcess`), when it is one.
fn camel_words(word: &str) -> Option<String> {
    let mut out = String::new();
    let mut before: Option<char> = None;
    for c in word.chars() {
        if c.is_uppercase() && before.is_some_and(char::is_lowercase) {
            out.push(' ');
        }
        out.extend(c.to_lowercase());
        before = Some(c);
    }
    out.contains(' ').then_some(out)
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
    /// `the energy density of LFP cells` for a kind of figure; else `an answer to the
    /// question`, which the report's title writes (the words of a question without a kind cut
    /// to a phrase read oddly: `the autosprintf constructor do`).
    pub fn what(&self) -> String {
        let phrase = self.subject.phrase.as_str();
        match (self.kind, phrase.is_empty()) {
            (Some(kind), false) => format!("{} of {}", kind.label, unframed(phrase, kind)),
            (Some(kind), true) => kind.label.to_string(),
            (None, _) => "an answer to the question".to_string(),
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
        term: c.term.as_deref(),
        release: c.release.as_deref(),
        asked_field: false,
    }
}

#[cfg(test)]
mod tests {
    use super::code_names;
    use crate::offline::answer::{answer_section, compose};
    use crate::offline::select::{Candidate, test_candidates, test_sources};

    /// The Answer section `question` gets over `docs` (document, sentence), each document
    /// titled `D<n>`.
    fn answer(question: &str, docs: &[(usize, &str)]) -> String {
        let docs: Vec<(usize, Option<&str>, &str)> =
            docs.iter().map(|&(d, t)| (d, None, t)).collect();
        answer_over(question, &test_candidates(&docs))
    }

    /// Over the sentences `without`, `question` gets no stated answer; with `stating` added,
    /// its answer leads with `lead`.
    fn stated_only_by(
        question: &str,
        without: &[(usize, &str)],
        stating: (usize, &str),
        lead: &str,
    ) {
        let said = answer(question, without);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let mut all = without.to_vec();
        all.push(stating);
        let said = answer(question, &all);
        assert!(said.starts_with(lead), "{said}");
    }

    /// The Answer section `question` gets over `candidates`.
    fn answer_over(question: &str, candidates: &[Candidate]) -> String {
        let n = candidates.iter().map(|c| c.source + 1).max().unwrap_or(0);
        let report = compose("# Q", question, candidates, &test_sources(n), &[]).report;
        answer_section(&report).to_string()
    }

    /// The name of a setting is its definition's term: a question for the keyword that does
    /// something leads with the term of the definition that says it.
    #[test]
    fn a_question_for_a_settings_name_is_answered_by_its_definitions_term() {
        let q = "Which keyword sets the minimum RSA key size that the client will accept?";
        let docs = [
            (
                0,
                None,
                "Specifies the minimum RSA key size that the client will accept.",
            ),
            (
                0,
                None,
                "Specifies the ciphers the client will accept from the server.",
            ),
        ];
        let mut candidates = test_candidates(&docs);
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("No sentence of the"), "no term: {said}");
        candidates[0].term = Some("RequiredRSASize".into());
        candidates[1].term = Some("Ciphers".into());
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("RequiredRSASize [1]"), "{said}");
        // A term the question names by one of its names is what it asks about: `-m` is
        // another name of `--mirror`, not the options it stands for.
        let q = "Which options is --mirror a shortcut for?";
        let docs = [
            (
                0,
                None,
                "-m,  --mirror  shortcut for -N -r -l inf --no-remove-listing",
            ),
            (
                0,
                None,
                "-p,  --page-requisites  get all images a page needs",
            ),
        ];
        let mut candidates = test_candidates(&docs);
        candidates[0].term = Some("-m,  --mirror".into());
        candidates[1].term = Some("-p,  --page-requisites".into());
        let said = answer_over(q, &candidates);
        assert!(!said.starts_with("-m"), "{said}");
    }

    /// What a question asks how much of (`the maximum number`) is not its subject: a
    /// sentence on the maximum output base does not give the most parameters a function may
    /// have, even in the manual whose name the question writes.
    #[test]
    fn the_measure_asked_for_is_not_the_subject() {
        let q = "What is the maximum number of parameters a bc function definition may have?";
        let base = (0, "In bc the maximum output base is currently set at 999.");
        let other = (0, "In bc function definitions are checked when called.");
        let limit = (
            0,
            "In bc a function definition may have at most 32767 parameters.",
        );
        stated_only_by(q, &[base, other], limit, "at most 32767 parameters [1]");
    }

    /// A condition the question sets (`when it aborts because of an I/O error`) is met by the
    /// sentence that states the answer: the exit status of another case is not it.
    #[test]
    fn a_sentence_that_states_the_answer_meets_the_questions_condition() {
        let q = "What exit status does sed return when it aborts because of an I/O error?";
        // Another case shares a word of the one asked about (`error`), not its weight.
        let found = (
            0,
            "If such line was not found (and no other error occurred), sed will exit with status 0.",
        );
        let quits = (0, "The q command makes sed stop without aborting.");
        let aborted = (
            0,
            "On an I/O error sed aborts at once and exits with status 4.",
        );
        stated_only_by(q, &[found, quits], aborted, "4 [1]");
        // A case is met in the document's words (`occurs`), not the question's (`happened`),
        // and a case the question sets aside in brackets is none it asks about.
        let q = "What exit status does gzip return if only a warning happened (not an error)?";
        let error = (0, "If an error occurs, gzip exits with status 1.");
        let signal = (1, "Something that happened to wget is reported.");
        let warning = (0, "If a warning occurs, the exit status of gzip is 2.");
        stated_only_by(q, &[error, signal], warning, "2 [1]");
        // A case that turns on a denied verb (`is not found`) is met by a sentence that
        // writes it, not by one on another case that shares its other words.
        let q = "What exit status does xargs return when the command it is supposed to run is \
                 not found?";
        let stops = (
            0,
            "When a command run by xargs exits with status 255, xargs is supposed to stop.",
        );
        let skipped = (
            0,
            "Files that are not found are skipped by xargs with a warning.",
        );
        let missing = (
            0,
            "If the command to run is not found, xargs exits with status 127.",
        );
        stated_only_by(q, &[stops, skipped], missing, "127 [1]");
        assert_eq!(
            super::denied_terms("What does it do when it cannot allocate memory?"),
            ["alloc".to_string()].into()
        );
        assert!(super::denied_terms("What is used if -b is not given?").is_empty());
    }

    /// A default is stated only by a sentence that says it is one: a width a sentence gives
    /// for another case does not say what is used when none is given.
    #[test]
    fn a_default_is_stated_only_where_a_sentence_says_it_is_one() {
        let q = "If the line-wrap length is not specified, at what length does the l command wrap?";
        let zero = (
            0,
            "A line-wrap length of 0 means the l command never wraps long lines.",
        );
        let default = (
            0,
            "The l command wraps at the default line-wrap length of 70 characters.",
        );
        stated_only_by(q, &[zero], default, "70 characters [1]");
        // The figure given as the default, not the one before it.
        let q = "How many bits does ssh-keygen use for a new RSA key if -b is not given?";
        let sizes = (
            0,
            "For ssh-keygen -b and RSA keys, the minimum size is 1024 bits and the default is 3072 bits.",
        );
        let said = answer(q, &[sizes]);
        assert!(said.starts_with("3072"), "{said}");
    }

    /// A directory is answered by a path, not by another name its sentence writes.
    #[test]
    fn a_question_for_a_directory_is_answered_by_a_path() {
        let q = "Under which directory does the journal store its data on disk?";
        let words = (
            0,
            "If \"auto\" is set, the journal stores its data on disk when it can.",
        );
        let path = (
            0,
            "The journal stores its data on disk below the /var/log/journal directory.",
        );
        stated_only_by(q, &[words], path, "/var/log/journal [1]");
    }

    /// A figure of another named thing is not the one asked about: Memcheck's slowdown does
    /// not answer for Massif, even in a sentence that covers the question's words.
    #[test]
    fn a_sentence_on_another_named_thing_does_not_state_what_is_asked_of_this_one() {
        let q = "How many times slower than native does a program run under Massif?";
        let memcheck = (
            0,
            "Memcheck makes a program run 10-50 times slower than native.",
        );
        let other = (1, "Massif records snapshots of the heap.");
        let said = answer(q, &[memcheck, other]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let massif = (
            1,
            "Under Massif a program runs about 20 times slower than native.",
        );
        let said = answer(q, &[memcheck, massif]);
        assert!(said.starts_with("about 20 times [1]"), "{said}");
    }

    /// A date is a figure with its month: the article's number beside it is none.
    #[test]
    fn a_date_is_answered_by_a_figure_with_its_month() {
        let q = "On what date was the copyright treaty adopted?";
        let said = answer(
            q,
            &[(
                0,
                "Under article 11 of the copyright treaty, adopted on 20 December 1996, locks are law.",
            )],
        );
        assert!(said.starts_with("20 December 1996 [1]"), "{said}");
        let said = answer(
            q,
            &[(
                0,
                "Article 11 of the copyright treaty was adopted by most states.",
            )],
        );
        assert!(said.starts_with("No sentence of the"), "{said}");
    }

    /// A name run together (`ChildProcess`) is held where its words are written apart.
    #[test]
    fn a_name_run_together_is_held_by_its_words_apart() {
        let q = "Which ChildProcess event is emitted after the process has ended?";
        let apart = (
            0,
            "The 'close' event is emitted after a child process has ended.",
        );
        let class = (
            1,
            "Instances of ChildProcess are made by spawn, never by hand.",
        );
        let said = answer(q, &[apart, class]);
        assert!(said.starts_with("close [1]\n\nThe 'close' event"), "{said}");
        let other = (
            0,
            "The 'exit' event is emitted after a worker thread has ended.",
        );
        let said = answer(q, &[other, class]);
        assert!(said.starts_with("No sentence of the"), "{said}");
    }

    /// A sentence that denies the question's verb says what is not the answer.
    #[test]
    fn a_sentence_that_denies_what_is_asked_does_not_answer_it() {
        let q = "What does the Massif tool measure?";
        let denied = (
            0,
            "By default, the Massif tool does not measure stack memory.",
        );
        let said = answer(q, &[denied]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let stated = (
            0,
            "The Massif tool measures how much heap memory a program uses.",
        );
        let said = answer(q, &[denied, stated]);
        assert!(
            said.starts_with("The Massif tool measures how much heap"),
            "{said}"
        );
        // A question that denies asks of the denial.
        let said = answer("What does the Massif tool not measure?", &[denied]);
        assert!(
            said.starts_with("By default, the Massif tool does not"),
            "{said}"
        );
    }

    /// What a question asks for by name (`prefix`, `qcow2 compat level`) is held by the
    /// sentence that states it, or its context; a sort (`which option`) need not be, nor a
    /// phrase that runs into the verb (`which company holds`).
    #[test]
    fn what_is_asked_by_name_is_held_by_the_sentence_that_states_it() {
        stated_only_by(
            "What prefix does Data::Dumper use for variable names in its output?",
            &[(
                0,
                "Data::Dumper output differs between runs for variable names.",
            )],
            (
                0,
                "Data::Dumper uses the prefix VAR for variable names in its output.",
            ),
            "Data::Dumper uses the prefix VAR",
        );
        assert_eq!(super::thing_words("Which option does frob take?").len(), 0);
        assert_eq!(
            super::thing_words("Which company holds the copyright?").len(),
            0
        );
        let asked = super::thing_words("Which Unicode version's tables are shipped?");
        assert_eq!(asked.len(), 0, "{asked:?}");
        let asked = super::thing_words("What dictionary size does preset 7 use?");
        assert_eq!(asked.into_iter().collect::<Vec<_>>(), ["dictionari"]);
    }

    /// A FAQ's question holds the words asked, and states nothing.
    #[test]
    fn a_question_in_the_sources_states_no_answer() {
        let asked = (0, "Why don't I see per-CPU stats in top?");
        stated_only_by(
            "Which key turns on the per-CPU stats in top?",
            &[asked],
            (1, "In top, the 1 key turns on the per-CPU stats."),
            "In top, the 1 key",
        );
    }

    /// `which port` asks for a figure: a sentence that only says `port` states none.
    #[test]
    fn a_sentence_with_the_kinds_word_and_no_figure_states_no_figure() {
        let q = "If the socket is given without a port, which port is used?";
        let vague = (0, "The socket option sends messages to the specified port.");
        let said = answer(q, &[vague]);
        assert!(!said.contains("specified port. [1]\n"), "{said}");
        assert!(said.starts_with("No sentence of the"), "{said}");
        let stated = (
            0,
            "When the socket is given without a port, port 1500 is used.",
        );
        let said = answer(q, &[vague, stated]);
        assert!(said.starts_with("port 1500 [1]"), "{said}");
        // A user's ID is a figure: a definition of the user that gives none states none.
        let q = "What uid does the www-data user have on a Debian system?";
        let vague = (
            0,
            "www-data Some web servers run as www-data on a Debian system.",
        );
        let said = answer(q, &[vague]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let stated = (0, "The www-data user has uid 33 on a Debian system.");
        let said = answer(q, &[vague, stated]);
        assert!(said.starts_with("uid 33 [1]"), "{said}");
    }

    #[test]
    fn a_comparison_is_answered_by_a_ratio_and_memory_by_an_amount_of_it() {
        let q = "How much faster did regular expression matching become in release 4.3?";
        let other = (
            0,
            "In release 4.3, the regular expression '.' matches U+D400 again.",
        );
        let said = answer(q, &[other]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let ratio = (
            0,
            "In release 4.3, regular expression matching is up to 10x faster.",
        );
        let said = answer(q, &[other, ratio]);
        assert!(said.starts_with("up to 10x faster [1]"), "{said}");

        let q = "How much memory does inflate need for a window of 15 bits?";
        let shift = (
            0,
            "Inflate needs (in bytes) 1 << windowBits for its window.",
        );
        let said = answer(q, &[shift]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let amount = (
            0,
            "Inflate needs 32K for a window of 15 bits, plus a few kilobytes.",
        );
        let said = answer(q, &[shift, amount]);
        assert!(said.starts_with("32K [1]"), "{said}");

        let q = "By what factor does a heap string grow its buffer?";
        let width = (
            0,
            "On 32-bit architectures a heap string grows its buffer when it is full.",
        );
        let factor = (
            0,
            "A heap string grows its buffer by a factor of 1.5x when full.",
        );
        stated_only_by(q, &[width], factor, "1.5x");
    }

    #[test]
    fn a_release_is_of_the_program_asked_about_and_code_asked_about_is_held() {
        let q = "Which gcc version was the benchmark compiled with?";
        let kernel = (
            0,
            "The benchmark ran on Linux 5.11.0-41-generic, compiled with gcc.",
        );
        let said = answer(q, &[kernel]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let gcc = (
            0,
            "The benchmark was compiled with gcc 9.3.0 on Linux 5.11.0.",
        );
        let said = answer(q, &[kernel, gcc]);
        assert!(said.starts_with("9.3.0 [1]"), "{said}");
        // A name of code the question writes is held where the answer is.
        let q = "Since which version is the allow_unknown option available?";
        let other = (0, "The allow_nonref option is available since version 4.0.");
        let said = answer(q, &[other]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let held = (
            0,
            "The allow_unknown option is available since version 2.1.",
        );
        let said = answer(q, &[other, held]);
        assert!(said.starts_with("version 2.1 [1]"), "{said}");
        // A file or a path the question writes is code too; initials are not.
        let q = "Which licence applies to curl's config.guess?";
        let other = (
            0,
            "The complete text of the GNU General Public License is in /usr.",
        );
        let said = answer(q, &[other]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        assert_eq!(code_names("What covers the mpi/ directory?"), ["mpi"]);
        assert_eq!(
            code_names("Is it xdiff/xhistogram.c?"),
            ["xdiff xhistogram c"]
        );
        assert!(code_names("What does an I/O error or TCP/IP and/or e.g. 3.5 do?").is_empty());
        assert_eq!(
            code_names("What is the default of Text::Wrap's $huge?"),
            ["huge"]
        );
        assert!(code_names("Does it cost $5 or 50%?").is_empty());
    }

    #[test]
    fn where_is_answered_by_a_path_or_a_name() {
        let q = "Where does the daemon look for its helper binary?";
        let vague = (0, "The daemon configures the helper binary to invoke.");
        let said = answer(q, &[vague]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let path = (
            0,
            "The daemon looks for its helper binary in /usr/lib/helper.",
        );
        let said = answer(q, &[vague, path]);
        assert!(said.contains("/usr/lib/helper"), "{said}");
    }

    /// A record's field states its key's value of its record, where the question asks for
    /// the key of that record by the name the record gives itself, alone or in a phrase.
    #[test]
    fn a_records_field_states_its_key_of_its_record() {
        let text = "Package: xz-utils\nInstalled-Size: 1226\nVersion: 5.4.1-1\n\n\
                    Package: gzip\nInstalled-Size: 252\nVersion: 1.12-1\nSection: utils";
        let candidates = crate::offline::quotes::candidates_of(text, 0, "status");
        let said = |q: &str| answer_over(q, &candidates);
        assert!(said("What is the installed size of gzip?").starts_with("252"));
        assert!(said("What installed size does xz-utils have?").starts_with("1226"));
        assert!(said("Which version of gzip is installed?").contains("1.12-1"));
        // The record is the subject, in whatever words the question names it.
        let phrased = said("In which archive section is the gzip compression tool filed?");
        assert!(phrased.starts_with("Section: utils"), "{phrased}");
        for unstated in [
            // Not the record of `gzip`, whose name is a word of it.
            "What is the installed size of gzip-doc?",
            // No field of its key: the record's own name is no answer.
            "Which package does gzip depend on?",
            // A field the question does not ask for.
            "What is the archive area of xz-utils?",
        ] {
            let said = said(unstated);
            assert!(said.starts_with("No sentence of the"), "{unstated}: {said}");
        }
    }

    /// Each part of a question in parts is answered by a sentence that holds the names the
    /// part writes: a licence of another name publishes no version of this one.
    #[test]
    fn each_part_is_answered_by_a_sentence_that_holds_its_names() {
        let q = "Who may publish new versions of ACME, and which courts hear its disputes?";
        let other = (0, "Only Globex may publish new versions of Initech.");
        let courts = (0, "Disputes over ACME are heard by the courts of Ohio.");
        let said = answer(q, &[other, courts]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let stating = (0, "Only Acme Corp may publish new versions of ACME.");
        let said = answer(q, &[other, courts, stating]);
        assert!(said.starts_with("Only Acme Corp"), "{said}");
    }

    /// An acronym stands for the words whose initials spell it: `MSRV` states the minimum
    /// supported Rust version, and names no other thing.
    #[test]
    fn an_acronym_states_what_its_initials_spell() {
        let q = "What is the current minimum supported Rust version of the crate?";
        let other = (
            0,
            "The crate builds on stable Rust and needs no nightly features.",
        );
        let stating = (
            0,
            "Currently, the MSRV is 1.88 with or without simd, which is older than Firefox's MSRV.",
        );
        stated_only_by(q, &[other], stating, "1.88");
    }

    /// Of a sentence's list of figures, the one asked for stands nearest the rarest word of
    /// the question it writes, in the same item of the list.
    #[test]
    fn of_a_list_of_figures_the_one_next_to_what_is_asked() {
        let list = "The crate uses native atomics on x86_64 (Rust 1.59+), s390x (Rust 1.84+), \
                    and powerpc64 (Rust 1.95+), otherwise the fallback is used.";
        let other = "The crate falls back to locks where native atomics are missing.";
        for (on, version) in [("powerpc64", "1.95"), ("x86_64", "1.59"), ("s390x", "1.84")] {
            let q = format!("From which Rust version does the crate use native atomics on {on}?");
            let said = answer(&q, &[(0, list), (0, other)]);
            assert!(said.starts_with(version), "{on}: {said}");
        }
    }

    /// Of two clauses' figures, the subject's: a clause that writes `man` of `man-db` and not
    /// `db` is of a sibling, `man`.
    #[test]
    fn of_two_clauses_figures_the_one_whose_clause_holds_the_subject() {
        let s = "(On the test system, man took five minutes to do a full-text search of all manual pages, \
                 severely degrading performance for that time; man-db took around 40 seconds.)";
        let q = "On the man-db author's test system, how long did man-db take to do a \
                 full-text search of all manual pages?";
        let other = "Neither man nor man-db includes a full-text search engine for manual \
                     pages, but man-db performs this search three times as quickly as man.";
        let said = answer(q, &[(0, other), (0, s)]);
        assert!(said.starts_with("around 40 seconds"), "{said}");
    }

    /// A figure after `instead of` is the one replaced.
    #[test]
    fn a_figure_replaced_is_not_the_one_stated() {
        let s = "For example, 'gunzip --help >/dev/full' now consistently exits with status 1 \
                 (error), instead of with status 2 (warning) on some platforms.";
        let q = "What exit status does 'gunzip --help >/dev/full' consistently return?";
        let said = answer(q, &[(0, s)]);
        assert!(
            said.starts_with("1 [1]") || said.starts_with("status 1"),
            "{said}"
        );
        let s = "The daemon now waits rather than 10 seconds.";
        let said = answer("How many seconds does the daemon wait?", &[(0, s)]);
        assert!(said.starts_with("No sentence of the"), "{said}");
    }

    /// A figure in brackets after its unit's word is answered with the word, not the bracket.
    #[test]
    fn a_figure_in_brackets_is_answered_with_the_word_before_it() {
        let s = "Only the latest Unicode version (17.0.0) is now shipped.";
        let said = answer("Which Unicode version's tables are shipped?", &[(0, s)]);
        assert!(said.starts_with("version 17.0.0 [1]"), "{said}");
    }

    /// A figure that counts another thing the question names (its condition's `block`) is
    /// not the measure it asks for; a rate's unit (`per 32K block`) is the measure's.
    #[test]
    fn a_figure_of_another_thing_the_question_names_is_not_the_measure() {
        let q = "How much memory does the tool need for files made with the default block size?";
        let other = (
            0,
            "The tool compresses files in 900k block sizes by default, as a rule.",
        );
        let stating = (
            0,
            "The tool needs 3700k of memory for files made with the default block size.",
        );
        stated_only_by(q, &[other], stating, "3700k");
        let q = "How much overhead is added for each block of input?";
        let rate = (
            0,
            "The tool adds an overhead of 5 bytes per 32K block of input, at worst.",
        );
        assert!(answer(q, &[rate]).starts_with("5 bytes"));
    }

    /// The highest value asked for is not a bound it passes (`beyond 19`), and the lowest not
    /// one it stays under.
    #[test]
    fn a_bound_passed_is_not_the_extreme_asked_for() {
        let s = "The --ultra flag enables levels beyond 19, up to 22, and needs more memory.";
        let said = answer(
            "What is the highest level the --ultra flag enables?",
            &[(0, s)],
        );
        assert!(said.starts_with("up to 22 [1]"), "{said}");
        let s = "Sizes below 4 KiB are refused; the smallest block the tool writes is 8 KiB.";
        let said = answer(
            "What is the smallest block size the tool writes?",
            &[(0, s)],
        );
        assert!(said.starts_with("8 KiB [1]"), "{said}");
    }

    /// A question that writes a release is answered by a changelog's entry under that
    /// release's heading, and by none when the changelog has no such release.
    #[test]
    fn a_release_the_question_writes_is_stated_under_its_heading_only() {
        let text = "Changes\n\n1.2.0 (2024-05-01)\n\nThe MSRV was raised to 1.74 for the new \
                    resolver.\n\n1.1.0 (2023-11-20)\n\nThe MSRV was raised to 1.71 for the new \
                    windows-sys.\n\n1.0.0\n\nFirst stable release of the library.\n";
        let candidates = crate::offline::quotes::candidates_of(text, 0, "Changes");
        let q = "What was the MSRV raised to in 1.1.0?";
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("The MSRV was raised to 1.71"), "{said}");
        let said = answer_over("What was the MSRV raised to in 1.3.0?", &candidates);
        assert!(said.starts_with("No sentence of the"), "{said}");
    }

    /// A sentence that says the opposite of the question's comparative states the other way.
    #[test]
    fn the_opposite_of_the_comparative_asked_is_no_answer() {
        let q = "Which signal makes a running xargs run one more command in parallel?";
        let fewer = (
            0,
            "After you send it the signal SIGUSR2, xargs will run one fewer command in parallel.",
        );
        let more = (
            0,
            "After you send it the signal SIGUSR1, xargs will run one more command in parallel.",
        );
        stated_only_by(q, &[fewer], more, "SIGUSR1 [1]");
    }

    /// An abstention names the kind of figure asked and its subject; without a kind, it says
    /// that no sentence answers the question its title writes.
    #[test]
    fn an_abstention_names_the_kind_asked_or_the_question() {
        let q = "How many cycles do sodium-ion cells last?";
        let said = answer(q, &[(0, "Sodium-ion cells last long and weigh 20 kg.")]);
        assert!(
            said.starts_with("No sentence of the sources states the cycle count of sodium-ion"),
            "{said}"
        );
        let q = "What is the initial password of the keystore that ships with the kit?";
        let ships = "The keystore ships with the kit and a default set of root certificates.";
        let said = answer(q, &[(0, ships)]);
        assert!(
            said.starts_with("No sentence of the sources states an answer to the question.\n"),
            "{said}"
        );
    }

    /// The question's own figure places nothing: the figure asked for is not the one that
    /// restates it in other units.
    #[test]
    fn the_questions_own_figure_does_not_place_the_figure_asked_for() {
        let q = "How big a message can a 512-bit key encode?";
        let s = "For example, a 512-bit key can encode a 53-byte message (512 bit = 64 bytes, 11 \
                 bytes are used for random padding).";
        let said = answer(q, &[(0, s)]);
        assert!(said.starts_with("a 53-byte message [1]"), "{said}");
    }

    /// `What is the X of Y` asks for an X: a sentence on Y alone states nothing of it.
    #[test]
    fn what_is_the_thing_of_a_subject_asks_for_that_thing() {
        let q = "What is the initial password of the keystore that ships with the kit?";
        let ships = (
            0,
            "The keystore ships with the kit and a default set of root certificates.",
        );
        let password = (0, "The initial password of the keystore file is changeit.");
        stated_only_by(
            q,
            &[ships],
            password,
            "The initial password of the keystore",
        );
        // A sort of thing names none.
        let asked = super::thing_words("What is the purpose of the keystore?");
        assert!(asked.is_empty(), "{asked:?}");
    }

    /// `how much data` asks for an amount of it, in its units: a standard's number is none,
    /// nor is the curly quote after it, nor the size of another thing the question names (`a
    /// 12-byte nonce`).
    #[test]
    fn how_much_data_asks_for_an_amount_in_bytes() {
        let q = "With ChaCha, how much data can be encrypted under one key and nonce?";
        let rfc = (
            0,
            "ChaCha under one key and nonce follows ‘RFC 8439’ for its counter.",
        );
        let amount = (
            0,
            "ChaCha takes a 12-byte nonce, which allows up to 256 gigabytes of data to be \
             encrypted under one key and nonce.",
        );
        stated_only_by(q, &[rfc], amount, "up to 256 gigabytes");
        let found = crate::offline::span::figures(q, rfc.1);
        assert_eq!(found.first().map(|f| f.1.as_str()), Some("8439"));
    }

    /// A sentence that writes another release of the program the question names with its
    /// release speaks of that one.
    #[test]
    fn a_sentence_on_another_release_of_the_program_states_nothing_of_this_one() {
        let other = "Work since the release of bzip2-0.1 in August 1997 showed complexities in \
                     the file format.\n\n";
        let this = "The release of bzip2-1.0.0 in March 2000 removed those complexities.\n";
        let q = "In what year was bzip2 version 1.0.0 released?";
        let candidates = crate::offline::quotes::candidates_of(other, 0, "Notes");
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let text = format!("{other}{this}");
        let candidates = crate::offline::quotes::candidates_of(&text, 0, "Notes");
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("March 2000 [1]"), "{said}");
    }

    /// A question for the release of a program that did something is answered by the
    /// heading of the release its changelog's entry stands under, quoted on a line of its own;
    /// not for an entry that writes a release of its own, nor one without the question's
    /// rarest word.
    #[test]
    fn a_changelogs_entry_is_of_the_release_it_stands_under() {
        let text = "Changes\n\nlibfoo 1.2.0 (2024-05-01)\n\nAdded the --frobnicate option to the \
                    command line.\n\nThe previous release 1.1.0 was yanked over a broken build.\n\n\
                    Support for zstd input on the command line is planned for release 2.0.0.\n\n\
                    libfoo 1.1.0 (2023-11-20)\n\nAdded a fix for a crash of the --quiet option when \
                    reading empty input files from the command line.\n";
        let candidates = crate::offline::quotes::candidates_of(text, 0, "Changes");
        let said = answer_over(
            "Which libfoo release added the --frobnicate option?",
            &candidates,
        );
        assert!(
            said.starts_with("1.2.0 [1]\n\nlibfoo 1.2.0 (2024-05-01) [1]\n\nAdded the"),
            "{said}"
        );
        let said = answer_over("Which libfoo release was yanked?", &candidates);
        assert!(!said.starts_with("1.2.0"), "{said}");
        let q = "In which libfoo release will the --frobnicate option be added?";
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let q = "Which libfoo release added the zstd option to the command line?";
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("No sentence of the"), "{said}");
    }

    /// A sentence that tells only what used to be states nothing of what is; it answers a
    /// question on what was.
    #[test]
    fn what_used_to_be_is_no_answer_to_what_is() {
        let past = (
            0,
            "Historically, the daemon used to wait 30 seconds before it gave up.",
        );
        let now = (
            0,
            "The daemon waits 60 seconds before it gives up on a connection.",
        );
        let q = "How many seconds does the daemon wait before it gives up?";
        stated_only_by(q, &[past], now, "60 seconds");
        assert!(super::tells_past(
            "'die' used to be the default value of $huge."
        ));
        assert!(!super::tells_past(
            "This option is used to set the timeout."
        ));
        assert!(!super::tells_past(
            "It leaks the previously allocated headers."
        ));
        let q = "How many seconds did the daemon wait before it gave up?";
        let said = answer(q, &[past]);
        assert!(said.starts_with("30 seconds"), "{said}");
    }

    /// A default is stated with a word between `default` and its value: `the daemon's default
    /// timeout is 60 seconds`.
    #[test]
    fn a_default_is_stated_with_the_thing_it_is_of_named_between() {
        let s = (
            0,
            "The daemon's default timeout is 60 seconds for every connection.",
        );
        let said = answer("What is the daemon's default timeout?", &[s]);
        assert!(said.starts_with("60 seconds [1]"), "{said}");
    }

    /// A kind's word that says what another is of (`release` of `release date`) is not what
    /// is asked: the date is, not the version beside it.
    #[test]
    fn a_release_date_is_asked_as_a_date() {
        let q = "What is the release date of the GNU ed version covered by the manual?";
        let said = answer(
            q,
            &[(
                0,
                "This manual is for GNU ed (version 1.19, 11 January 2023).",
            )],
        );
        assert!(said.starts_with("11 January 2023 [1]"), "{said}");
    }

    /// A share or a measure (`69.3%`, `2.5 seconds`) is no release.
    #[test]
    fn a_measure_is_no_release() {
        use crate::offline::question::releases_in;
        assert!(releases_in("texinfo.tex: 69.3% -- replaced").is_empty());
        assert!(releases_in("it waits 2.5 seconds").is_empty());
        assert_eq!(releases_in("since glibc 2.26"), [(2, "2.26".to_string())]);
        let q = "When was the Valgrind 3.16.1 release published?";
        assert_eq!(
            crate::offline::question::written_release(q).as_deref(),
            Some("3.16.1"),
            "a release's own word after it is no unit of a measure"
        );
    }

    /// What a sentence says of another release than the one the question writes is not said
    /// of it: of the same form (`3.6.1` for `3.16.1`), or after the name the question writes
    /// before its own (`GCC 3.2.2` for `GCC 3.4`).
    #[test]
    fn a_sentence_on_another_release_states_nothing_of_the_one_asked() {
        let q = "When was the Valgrind 3.16.1 release published?";
        let other = (0, "(3.6.1: 16 February 2011, vex r2103, valgrind r11561).");
        let own = (0, "Valgrind 3.16.1 was published on 22 June 2020.");
        // `When` asks the month and year.
        stated_only_by(q, &[other], own, "June 2020 [1]");
        let q = "With GCC 3.4 or later, which environment variable stops the STL pooling memory?";
        let older = (
            0,
            "With GCC 3.2.2 and later, the environment variable GLIBCPP_FORCE_NEW stops the STL pooling memory.",
        );
        let own = (
            0,
            "With GCC 3.4 and later, the environment variable GLIBCXX_FORCE_NEW stops the STL pooling memory.",
        );
        stated_only_by(q, &[older], own, "GLIBCXX_FORCE_NEW [1]");
    }

    /// A definition's figure is its term's: the definition of `--freelist-big-blocks` names
    /// `--freelist-vol` and gives its own default, not that one's.
    #[test]
    fn a_definitions_figure_is_its_terms() {
        let q = "How big is Memcheck's queue of freed blocks by default, the default of --freelist-vol?";
        let big = "--freelist-big-blocks=<number> [default: 1000000]";
        let vol = "--freelist-vol=<number> [default: 20000000]";
        let docs = [
            (
                0,
                None,
                "--freelist-big-blocks=<number> [default: 1000000] Blocks of the queue of freed blocks bigger than --freelist-vol are reused first by Memcheck.",
            ),
            (
                0,
                None,
                "--freelist-vol=<number> [default: 20000000] Memcheck puts freed blocks in a queue of freed blocks.",
            ),
        ];
        let mut candidates = test_candidates(&docs);
        candidates[0].term = Some(big.into());
        candidates[1].term = Some(vol.into());
        let said = answer_over(q, &candidates[..1]);
        assert!(said.starts_with("No sentence of the"), "{said}");
        let said = answer_over(q, &candidates);
        assert!(said.starts_with("20000000 [1]"), "{said}");
    }

    /// Where the question asks where a change starts, a release that closes a range (`2.25
    /// and earlier`) is the last before it, not the answer.
    #[test]
    fn a_release_that_closes_a_range_is_not_where_a_change_starts() {
        let q = "Starting with which glibc version is the search list no longer limited in size?";
        let before = (
            0,
            "In glibc 2.25 and earlier, the search list is limited to six domains with a total of 256 characters.",
        );
        let since = (
            0,
            "Since glibc 2.26, the search list is no longer limited in size.",
        );
        stated_only_by(q, &[before], since, "2.26 [1]");
        let at = before.1.find("2.25").unwrap_or_default();
        assert!(super::closes(before.1, at, "2.25"));
        let at = since.1.find("2.26").unwrap_or_default();
        assert!(!super::closes(since.1, at, "2.26"));
    }

    /// A sentence that says a thing went out (`removed`) does not say when one came in
    /// (`supported`), nor one on another option the option the question names (`the attempts
    /// option`).
    #[test]
    fn a_removal_does_not_state_when_a_thing_began() {
        let q = "Since which glibc release is the attempts option supported?";
        let removed = (0, "The attempts option was removed in glibc 2.25.");
        let other = (0, "The rotate option is supported since glibc 2.2.");
        let began = (0, "The attempts option is supported since glibc 2.4.");
        stated_only_by(q, &[removed, other], began, "2.4 [1]");
    }

    /// `support for` after the auxiliary is a noun, the head of the subject: a sentence
    /// without the initgroups database states nothing of it.
    #[test]
    fn support_for_a_thing_is_the_subject() {
        let q = "In which glibc release was support for the initgroups database added to nsswitch.conf?";
        let reload = (
            0,
            "Starting with glibc 2.33, nsswitch.conf is automatically reloaded if it changes.",
        );
        let added = (
            0,
            "Support for the initgroups database was added to nsswitch.conf in glibc 2.11.",
        );
        stated_only_by(q, &[reload], added, "2.11 [1]");
    }

    /// Of a range, the end the question does not ask for is not its answer: `2` of `2
    /// through BC_BASE_MAX` is no highest value.
    #[test]
    fn the_other_end_of_a_range_is_not_the_extreme_asked() {
        let q = "What is the highest output base that GNU bc supports?";
        let range = (
            0,
            "The output bases GNU bc supports are 2 through BC_BASE_MAX.",
        );
        let top = (0, "The highest output base GNU bc supports is 999.");
        stated_only_by(q, &[range], top, "999 [1]");
        let s = "Levels run from 1 to 9.";
        assert!(super::ends_range(
            s,
            s.find('9').unwrap_or_default(),
            "9",
            Some(false)
        ));
        assert!(!super::ends_range(
            s,
            s.find('1').unwrap_or_default(),
            "1",
            Some(false)
        ));
        assert!(super::ends_range(
            s,
            s.find('1').unwrap_or_default(),
            "1",
            Some(true)
        ));
    }

    /// The figure of a rule is not that of the exception the question asks about.
    #[test]
    fn the_rules_figure_is_not_the_exceptions() {
        let q = "What inode size do small file systems get by default?";
        let s = "By default the inode size is 256 bytes for most file systems, except for small file systems where the inode size will be 128 bytes.";
        let said = answer(q, &[(0, s)]);
        assert!(said.starts_with("128 bytes [1]"), "{said}");
    }
}
