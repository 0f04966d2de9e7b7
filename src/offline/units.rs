//! What the offline engine may quote: sentences, each with the sentence before it when it
//! leans on it. A sentence that starts mid-thought ("They...", "Therefore...", "that liquid
//! ...", any sentence starting in lower case) quoted alone changes meaning or says nothing, so
//! it is quoted together with the sentences of its paragraph it follows from (at most
//! [`MAX_LEANING`] back), as one exact slice of the text. One that has nothing to lean on (it
//! opens its paragraph, or the whole would be too long to quote) stands alone, marked
//! `orphan`, and ranks lower ([`super::select`]). What opens a section (the text's start, a
//! line after a blank one, as under a heading) begins no thought midway: there, only a word
//! that points back leans, and one in lower case is a name (`libffi is...`).
//!
//! Two shapes of text lean the same way: a run-in label (`State of charge. How full a battery
//! is...`, a glossary's or a FAQ's term too short to quote alone) is quoted with the sentence
//! it introduces; and a line that stops mid-sentence (a definition list's term, `Choose LFP
//! when`) runs on into a next line that starts in lower case (`cost matters most, as in
//! taxis.`), as one paragraph. A definition list's term on a line of its own (``` ``nocheck``
//! ```, `**allow-stderr**`, `1000-59999:`) is quoted with its definition's first sentence,
//! which says "This tag" or "this range" and leaves the term to say which.
//!
//! What is not prose ([`super::prose`]) is never quoted nor leaned on: code and signatures
//! between fence lines and navigation lines are skipped, and what follows them opens a
//! section, as under a heading; a version note ("Changed in version 3.6: ...") and what
//! follows it in its paragraph are not quoted, and it is no definition's term.

use std::collections::HashSet;
use std::ops::Range;

use super::defaults::says_default;
use super::prose::{is_signature, is_version_note, prose_lines};
use super::question::releases_in;
use super::select::{is_option, quotable, quotable_length};
use crate::search::local::paragraphs::{HEADING_WORDS, field_key, reads_as_heading, second_column};
use crate::text::is_key;
use crate::text::sentences::sentence_ranges;

/// How many sentences back a leaning sentence may reach for the one it follows from.
const MAX_LEANING: usize = 2;

/// First words that point back at what came before.
const LEANS_BACK: &[&str] = &[
    "accordingly",
    "additionally",
    "also",
    "and",
    "besides",
    "both",
    "but",
    "consequently",
    "furthermore",
    "he",
    "hence",
    "her",
    "his",
    "however",
    "instead",
    "it",
    "its",
    "likewise",
    "meanwhile",
    "moreover",
    "nevertheless",
    "nonetheless",
    "nor",
    "or",
    "otherwise",
    "she",
    "similarly",
    "so",
    "still",
    "such",
    "that",
    "their",
    "them",
    "then",
    "these",
    "they",
    "this",
    "those",
    "thus",
    "therefore",
    "yet",
];

/// A stretch of text that may be quoted: one sentence, or a leaning sentence with those it
/// follows from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    /// Byte range in the text.
    pub at: Range<usize>,
    /// A leaning sentence quoted without what it leans on.
    pub orphan: bool,
    /// The term of the definition it stands in, if it does: what its sentences are about
    /// (`unlock_time=n` for "The default is 600."): the term of the paragraph (one line of the
    /// text) right after it.
    pub term: Option<Range<usize>>,
    /// It is a record's field (`Installed-Size: 1226`), its term the field's key.
    pub field: bool,
}

/// The quotable units of `text`, one per quotable sentence, in order.
pub fn units(text: &str) -> Vec<Unit> {
    let mut out = Vec::new();
    // The text's start, and a line after a blank one (under a heading), open a section.
    let mut opens_section = true;
    // The term of a definition list the line before named, if it did.
    let mut term: Option<Range<usize>> = None;
    // The lines set apart (fenced) since the last line of prose: one alone is a tag (a man
    // page's option, `indexed_dir_slack_percentage`), the term of the prose after it.
    let mut apart: Vec<Range<usize>> = Vec::new();
    let fields: HashSet<usize> = records(text)
        .into_iter()
        .flatten()
        .map(|f| f.start)
        .collect();
    for (line, prose) in lines(text) {
        if !prose {
            opens_section = true;
            term = None;
            if !text[line.clone()].trim_start().starts_with("```") {
                apart.push(line);
            }
            continue;
        }
        // The term of the definition the line is: its tag, or the term on the line before.
        let mut defining = match std::mem::take(&mut apart).as_slice() {
            [tag] if is_tag(&text[tag.clone()]) => Some(tag.clone()),
            _ => None,
        };
        let blank = text[line.clone()].trim().is_empty();
        let opening = std::mem::replace(&mut opens_section, blank);
        if blank {
            continue;
        }
        // A line of two columns (`-m, --max-time <seconds>  Maximum time ...`), and a record's
        // field (`Installed-Size: 1226`), is a definition with its term on the line.
        let field = fields.contains(&line.start);
        let (body, own) = columns(text, &line, field);
        let columns = own.is_some();
        let (mut sentences, note) = prose_sentences(text, body);
        // A definition's sentences come after its term: the term is its sentence 0.
        let named = definition_term(text, &line).filter(|_| note != Some(0) && own.is_none());
        let defines = own.or(std::mem::replace(&mut term, named));
        let defined = defines.is_some();
        if defined {
            defining.clone_from(&defines);
        }
        sentences.splice(0..0, defines);
        // What opens a section has nothing before it to lean on: a first word in lower case
        // there is a name written so (`libffi`, `npm`), not a sentence begun mid-thought.
        let leans_alone = |k: usize| {
            let sentence = &text[sentences[k].clone()];
            match k == 0 && opening {
                true => points_back(sentence),
                false => leans_back(sentence),
            }
        };
        // A run-in label, or a definition's term, leans forward: the sentence after it is
        // quoted with it, and it is never quoted alone.
        let label = defined
            || (!sentences.is_empty() && !leans_alone(0) && is_label(&text[sentences[0].clone()]));
        // A definition's second sentence leans too when its first says too little to quote
        // (`1000-59999:` `Dynamically allocated user accounts.` `By default adduser will
        // choose ids in this range.`).
        // Within a definition, a default too short to quote alone (`The default is 600.`,
        // `Defaults to 0700.`) is quoted with the sentence before.
        let short = |k: usize| {
            let sentence = &text[sentences[k].clone()];
            defining.is_some() && !quotable(sentence) && says_default(sentence)
        };
        let leans = |k: usize| match k {
            0 => !label && leans_alone(0),
            1 => label || leans_alone(1) || short(1),
            _ => {
                leans_alone(k)
                    || (defined && k == 2 && !quotable(&text[sentences[1].clone()]))
                    || short(k)
            }
        };
        let line = Line {
            sentences: &sentences,
            label,
            defined,
            term: &defining,
            columns,
            field,
        };
        line.units(text, leans, &mut out);
    }
    out
}

/// The sentences of `body` in `text` that may be quoted: signatures left out, and those
/// from a version note on ("Changed in version 3.6: ..."); with where the note was.
fn prose_sentences(text: &str, body: Range<usize>) -> (Vec<Range<usize>>, Option<usize>) {
    let mut sentences = sentence_ranges(text, body);
    sentences.retain(|s| !is_signature(&text[s.clone()]));
    let note = sentences
        .iter()
        .position(|s| is_version_note(&text[s.clone()]));
    sentences.truncate(note.unwrap_or(sentences.len()));
    (sentences, note)
}

/// The sentences of one line, as [`units`] quotes them.
struct Line<'a> {
    sentences: &'a [Range<usize>],
    /// Its first is a run-in label or a definition's term, never quoted alone.
    label: bool,
    /// Its first is a definition's term.
    defined: bool,
    /// The term of the definition it stands in.
    term: &'a Option<Range<usize>>,
    /// Its term is its first column ([`columns`]).
    columns: bool,
    /// It is a record's field: its value is quoted whatever its length, as a table's cell.
    field: bool,
}

/// The fewest words of a quotable definition on a line of two columns.
const COLUMN_WORDS: usize = 4;

impl Line<'_> {
    /// Adds to `out` a unit per quotable sentence: alone, with the sentences it `leans` on,
    /// or alone as an orphan when they would not make a quotable whole.
    fn units(&self, text: &str, leans: impl Fn(usize) -> bool, out: &mut Vec<Unit>) {
        let sentences = self.sentences;
        for (k, sentence) in sentences.iter().enumerate().skip(usize::from(self.label)) {
            let mut first = k;
            while first > 0 && k - first < MAX_LEANING && leans(first) {
                first -= 1;
            }
            let whole = sentences[first].start..sentence.end;
            // A term says what its definition is about; what is quoted is the definition.
            let said = |at: &Range<usize>| match self.defined && at.start == sentences[0].start {
                true => sentences[1].start..at.end,
                false => at.clone(),
            };
            // A line of two columns defines its term in a phrase, as a table does, with no
            // full stop (`Fail on HTTP errors but save the body`).
            let phrase = |t: &str| {
                let words = t.split_whitespace().count();
                self.columns && (words >= COLUMN_WORDS || (self.field && words > 0))
            };
            let fits = |at: &Range<usize>| {
                let said = &text[said(at)];
                (quotable(said) || phrase(said)) && quotable_length(&text[at.clone()])
            };
            let (at, orphan) = if !leans(k) {
                (sentence.clone(), false)
            } else if first < k && !leans(first) && fits(&whole) {
                (whole, false)
            } else {
                (sentence.clone(), true)
            };
            if fits(&at) {
                out.push(Unit {
                    at,
                    orphan,
                    term: self.term.clone(),
                    field: self.field,
                });
            }
        }
    }
}

/// The text of `line` of `text` past its term, and the term, when it is a line of two
/// columns ([`second_column`]), a list item with a run-in term ([`item_term`]) or a record's
/// `field` ([`field_columns`]); the whole line and none otherwise.
fn columns(text: &str, line: &Range<usize>, field: bool) -> (Range<usize>, Option<Range<usize>>) {
    if field {
        return field_columns(text, line);
    }
    let raw = &text[line.clone()];
    let start = line.start + (raw.len() - raw.trim_start().len());
    if let Some(at) = second_column(&text[start..line.end]) {
        let term = start..start + text[start..start + at].trim_end().len();
        return (start + at..line.end, Some(term));
    }
    let item = &text[start..line.end];
    let term_at = start + (item.len() - past_marker(item).len());
    match item_term(&text[term_at..line.end]).filter(|_| term_at > start) {
        Some((term, at)) => (term_at + at..line.end, Some(term_at..term_at + term)),
        None => (line.clone(), None),
    }
}

/// `content` past its list marker (`-`, `*`, `+` and a space), when it opens with one.
fn past_marker(content: &str) -> &str {
    content
        .strip_prefix(['-', '*', '+'])
        .filter(|rest| rest.starts_with(' '))
        .map_or(content, str::trim_start)
}

/// A list item's run-in term (`iconv, iconvconfig: convert between character encodings`,
/// `` `std`: enables the standard library``): a few words before a colon, none ending a
/// sentence; the term's length and where its text starts.
fn item_term(item: &str) -> Option<(usize, usize)> {
    let colon = item.find(": ")?;
    let term = &item[..colon];
    let words = term.split_whitespace().count();
    let text = &item[colon + 1..];
    ((1..=TERM_WORDS).contains(&words)
        && !term.contains(['.', '!', '?', ';', '('])
        && !text.trim().is_empty())
    .then(|| (colon, colon + 1 + (text.len() - text.trim_start().len())))
}

/// A record's field of `line` of `text` as two columns: its value, and its key without the
/// colon.
fn field_columns(text: &str, line: &Range<usize>) -> (Range<usize>, Option<Range<usize>>) {
    let colon = field_key(&text[line.clone()]).unwrap_or(0);
    let value = &text[line.start + colon..line.end];
    let at = line.start + colon + (value.len() - value.trim_start().len());
    (
        at..line.end,
        Some(line.start..line.start + colon.saturating_sub(1)),
    )
}

/// The fields of each record in `text`, as the reader sets records apart (a block of lines
/// between blank ones, [`crate::search::local::paragraphs`]): a block that opens with a field
/// ([`field_key`]) and holds two at least, half its lines or more (the others are a field's
/// text: a package's description).
fn records(text: &str) -> Vec<Vec<Range<usize>>> {
    let mut out = Vec::new();
    let lines = prose_lines(text);
    for block in lines.split(|(range, _)| text[range.clone()].trim().is_empty()) {
        let is_field = |(range, prose): &&(Range<usize>, bool)| {
            *prose && field_key(&text[range.clone()]).is_some()
        };
        let fields: Vec<Range<usize>> = block
            .iter()
            .filter(is_field)
            .map(|(r, _)| r.clone())
            .collect();
        let record = block.first().is_some_and(|l| is_field(&l))
            && fields.len() >= 2
            && 2 * fields.len() >= block.len();
        if record {
            out.push(fields);
        }
    }
    out
}

/// The keys of fields that name their record (`Package: xz-utils`, `Files: xdiff/*`); a
/// record without one is named by its first field.
const NAMING_KEYS: &[&str] = &["Package:", "Source:", "Name:", "Files:", "Upstream-Name:"];

/// The name of each record of `text` ([`records`]) with where the record starts: the value
/// of its naming field ([`NAMING_KEYS`]). A record is a section of its own, and this is its
/// heading.
pub fn record_names(text: &str) -> Vec<(usize, &str)> {
    records(text)
        .into_iter()
        .filter_map(|fields| {
            let named = fields
                .iter()
                .find(|f| {
                    NAMING_KEYS
                        .iter()
                        .any(|k| text[(*f).clone()].starts_with(k))
                })
                .or(fields.first())?;
            let (value, _) = field_columns(text, named);
            Some((fields.first()?.start, text[value].trim()))
        })
        .filter(|(_, name)| (1..=HEADING_WORDS).contains(&name.split_whitespace().count()))
        .collect()
}

/// The most words of a definition list's term.
const TERM_WORDS: usize = 3;

/// The term of a definition list that `line` of `text` is, where the term starts (past a
/// list's marker): a line of its own that names what the next one defines, written as code
/// or in bold (``` ``nocheck`` ```, `- **allow-stderr**`), as a name with a figure or a joint
/// in it (`1000-59999`, `perl-major-upgrade`; not a release, `1.2.3`), or in a few words and a
/// colon (`Depends:`).
fn definition_term(text: &str, line: &Range<usize>) -> Option<Range<usize>> {
    let raw = &text[line.clone()];
    let content = raw.trim();
    let term = past_marker(content);
    let words: Vec<&str> = term.split_whitespace().collect();
    let bare = term.trim_end_matches(':');
    let marked = ["``", "**", "`"]
        .iter()
        .any(|m| bare.len() > 2 * m.len() && bare.starts_with(m) && bare.ends_with(m));
    // A release alone (a changelog's `1.2.3`, `[0.4.0]`) heads the release's changes.
    let named = words.len() == 1
        && term.chars().any(char::is_alphanumeric)
        && term.contains(|c: char| c.is_ascii_digit() || matches!(c, '-' | '_' | '/' | '.'))
        && releases_in(term).is_empty();
    let colon = term.ends_with(':') && !term.ends_with("::");
    let option = is_option(term);
    let is_term = (1..=TERM_WORDS).contains(&words.len())
        && !term.ends_with(['.', '!', '?', ',', ';'])
        && !term.starts_with(['|', '#', '>'])
        && (marked || named || colon || option);
    let is_term = is_term || is_keys(&words);
    let start = line.start + (raw.len() - raw.trim_start().len()) + (content.len() - term.len());
    is_term.then(|| start..start + term.len())
}

/// Whether `line`, set apart alone before prose, is a tag that the prose defines: a list of
/// settings' keys or options ([`is_keys`]: `-a, --all`, `indexed_dir_slack_percentage`), not
/// a line of code (`var2=${!var1}`, `bash-2.0 requires this:`).
fn is_tag(line: &str) -> bool {
    is_keys(&line.split_whitespace().collect::<Vec<_>>())
}

/// The most words of a line of settings' names.
const KEYS_WORDS: usize = 8;

/// Whether `words` (a line's) name settings as a reference's list does (`MAX_MEMBERS_PER_GROUP
/// (number)`, `SUB_UID_MIN (number), SUB_UID_MAX (number)`, `MaxLevelStore=, MaxLevelSyslog=`,
/// `FIRST_UID and LAST_UID`, `-a, --all`, `config_int ( VARIABLE )`): each a key (joined by
/// `_`, set with `=`, an option, in capitals or with its words run together), a type or
/// arguments in brackets, or `and`/`or`; a key at least, and keys apart by commas or
/// `and`/`or`.
fn is_keys(words: &[&str]) -> bool {
    // What stands in brackets is a type or an argument (`config_int ( VARIABLE )`).
    let mut depth = 0usize;
    let bracketed: Vec<bool> = words
        .iter()
        .map(|w| {
            let inside = depth > 0 || w.starts_with('(');
            depth += w.matches('(').count();
            depth = depth.saturating_sub(w.matches(')').count());
            inside
        })
        .collect();
    let key = |k: usize| !bracketed[k] && is_key(words[k].trim_end_matches(','));
    let filler = |k: usize| bracketed[k] || ["and", "or"].contains(&words[k].trim_end_matches(','));
    // Keys side by side are a table's row (`history_control HISTCONTROL`), not a list.
    let keys = (0..words.len()).filter(|&k| key(k)).count();
    let joints = words
        .iter()
        .filter(|w| w.ends_with(',') || ["and", "or"].contains(w))
        .count();
    (1..=KEYS_WORDS).contains(&words.len())
        && keys > 0
        && joints + 1 >= keys
        && (0..words.len()).all(|k| key(k) || filler(k))
}

/// The headings of `text`, each with where it starts, in order: a paragraph of one line with
/// blank lines around it, as the indexed text sets a heading apart, that reads as one
/// ([`reads_as_heading`]: a few words that end no sentence, or a FAQ's question).
pub fn headings(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut before_blank = true;
    let lines = prose_lines(text);
    for (k, (range, prose)) in lines.iter().enumerate() {
        let (at, line) = (range.start, &text[range.clone()]);
        let trimmed = line.trim();
        let after_blank = lines
            .get(k + 1)
            .is_none_or(|(next, _)| text[next.clone()].trim().is_empty());
        let opened = std::mem::replace(&mut before_blank, trimmed.is_empty());
        let heading = *prose && opened && after_blank && reads_as_heading(trimmed);
        if heading {
            out.push((at + line.len() - line.trim_start().len(), trimmed));
        }
    }
    out
}

/// The byte ranges of the paragraphs of `text`, each with whether it is prose: its lines (a
/// line is a paragraph in the indexed text), a line of prose that stops mid-sentence run on
/// into a next one that starts in lower case.
fn lines(text: &str) -> Vec<(Range<usize>, bool)> {
    let mut out: Vec<(Range<usize>, bool)> = Vec::new();
    for (range, prose) in prose_lines(text) {
        let line = &text[range.clone()];
        let runs_on = prose
            && out.last().is_some_and(|(last, was_prose)| {
                let before = text[last.clone()].trim_end();
                *was_prose
                    && before.ends_with(char::is_alphanumeric)
                    && line.trim_start().starts_with(char::is_lowercase)
            });
        match out.last_mut() {
            Some((last, _)) if runs_on => last.end = range.end,
            _ => out.push((range, prose)),
        }
    }
    out
}

/// A run-in label: a few words ending a sentence of their own (`State of charge.`), too short
/// to say anything alone, and with no verb to say it with (`Prices are volatile.` is a
/// sentence).
fn is_label(sentence: &str) -> bool {
    const VERBS: &[&str] = &[
        "is", "are", "was", "were", "be", "been", "has", "have", "had", "do", "does", "did", "can",
        "could", "will", "would", "may", "might", "must", "should",
    ];
    let words: Vec<String> = sentence
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    words.len() <= 4
        && !quotable(sentence)
        && sentence.ends_with(['.', ':'])
        && !words.iter().any(|w| VERBS.contains(&w.as_str()))
}

/// Whether `sentence` starts mid-thought: in lower case, or with a word that points back.
pub fn leans_back(sentence: &str) -> bool {
    first_word(sentence)
        .chars()
        .next()
        .is_some_and(char::is_lowercase)
        || points_back(sentence)
}

/// Whether `sentence` starts with a word that points back at what came before (`They`).
fn points_back(sentence: &str) -> bool {
    LEANS_BACK.contains(&first_word(sentence).to_lowercase().as_str())
}

fn first_word(sentence: &str) -> String {
    sentence
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's field is a definition of its key, quoted however short; a record is a
    /// section named by its naming field.
    #[test]
    fn a_records_fields_are_definitions_and_its_name_its_heading() {
        let text = "Intro text of the status file.\n\n\
                    Files: xdiff/*\nCopyright: 2003, Davide Libenzi\nLicense: LGPL-2.1+\n\n\
                    Format: https://example.org/dep5\nUpstream-Name: git\n\n\
                    Note: one field\nand a line of prose are no record.";
        let found: Vec<(&str, Option<&str>, bool)> = units(text)
            .into_iter()
            .map(|u| (&text[u.at], u.term.map(|t| &text[t]), u.field))
            .collect();
        assert!(found.contains(&("License: LGPL-2.1+", Some("License"), true)));
        assert!(found.contains(&("Copyright: 2003, Davide Libenzi", Some("Copyright"), true)));
        assert!(
            !found
                .iter()
                .any(|(t, _, field)| *field && t.starts_with("Note"))
        );
        let names: Vec<&str> = record_names(text).into_iter().map(|(_, n)| n).collect();
        assert_eq!(names, ["xdiff/*", "git"]);
        let (at, _) = record_names(text)[0];
        assert!(text[at..].starts_with("Files:"));
    }

    #[test]
    fn a_short_line_set_apart_that_ends_no_sentence_is_a_heading() {
        let text = "Solid-state compared\n\nIntro sentence here.\n\nEnergy density\n\n\
                    The cells store 270 Wh/kg.\nA list line\nNot a heading.\n\n| a | b |\n\nLifetime";
        let found: Vec<&str> = headings(text).into_iter().map(|(_, h)| h).collect();
        assert_eq!(
            found,
            ["Solid-state compared", "Energy density", "Lifetime"]
        );
        let (at, heading) = headings(text)[1];
        assert_eq!(&text[at..at + heading.len()], "Energy density");
    }

    fn quoted(text: &str) -> Vec<(&str, bool)> {
        units(text)
            .into_iter()
            .map(|u| (&text[u.at], u.orphan))
            .collect()
    }

    #[test]
    fn a_leaning_sentence_is_quoted_with_the_one_it_follows_from() {
        let text = "Solid electrolytes replace the flammable liquid in a cell. They promise a \
                    higher energy density and fewer fires. Therefore carmakers watch them very \
                    closely indeed.\n\
                    They cost far more than the liquid ones today in every market.\n\
                    Sulfides conduct ions as fast as the liquid does at room temperature.";
        assert_eq!(
            quoted(text),
            [
                (
                    "Solid electrolytes replace the flammable liquid in a cell.",
                    false
                ),
                (
                    "Solid electrolytes replace the flammable liquid in a cell. They promise a \
                     higher energy density and fewer fires.",
                    false
                ),
                (
                    "Solid electrolytes replace the flammable liquid in a cell. They promise a \
                     higher energy density and fewer fires. Therefore carmakers watch them very \
                     closely indeed.",
                    false
                ),
                (
                    "They cost far more than the liquid ones today in every market.",
                    true
                ),
                (
                    "Sulfides conduct ions as fast as the liquid does at room temperature.",
                    false
                ),
            ]
        );
    }

    #[test]
    fn a_run_in_label_is_quoted_with_the_sentence_it_introduces() {
        let text = "State of charge. How full a battery is, as a share of its capacity.\n\
                    Prices are volatile. Lithium rose twice as fast as wages did that year.\n\
                    Choose LFP cathodes when\n\
                    cost, lifetime and safety matter most, as in taxis and buses.\n\
                    Choose NMC cathodes when\n\
                    Range matters most to the buyers of premium long-range models.";
        let got = quoted(text);
        assert_eq!(
            got[0],
            (
                "State of charge. How full a battery is, as a share of its capacity.",
                false
            )
        );
        // A short sentence with a verb is no label: the next one stands alone.
        assert_eq!(
            got[1],
            ("Lithium rose twice as fast as wages did that year.", false)
        );
        // A line that stops mid-sentence runs on into a line in lower case, not into one that
        // starts a sentence of its own.
        assert_eq!(
            got[2],
            (
                "Choose LFP cathodes when\ncost, lifetime and safety matter most, as in taxis and buses.",
                false
            )
        );
        assert_eq!(
            got[3],
            (
                "Range matters most to the buyers of premium long-range models.",
                false
            )
        );
        assert_eq!(got.len(), 4, "{got:?}");
    }

    /// A definition list's term is quoted with its definition: what the definition is about
    /// is in the term (`This tag`, `this range`).
    #[test]
    fn a_definition_is_quoted_with_its_term() {
        let text = "The following tags are standard:\n\
                    ``nocheck``\n\
                    This tag says to not run any build-time test suite. It is honoured widely.\n\
                    - **allow-stderr**\n\n\
                    Output to stderr is not considered a failure by the test runner.\n\
                    1000-59999:\n\
                    Dynamically allocated user accounts. By default adduser will choose ids \
                    in this range.\n\
                    `TAG: proposal <https://bugs.example.org>`_\n\
                    What needs to happen next is a patch with the wording of the change.\n\
                    --num-callers=<number> [default: 12]\n\
                    Specifies the maximum number of entries shown in stack traces.";
        let got: Vec<&str> = quoted(text).into_iter().map(|(u, _)| u).collect();
        assert_eq!(
            got,
            [
                "``nocheck``\nThis tag says to not run any build-time test suite.",
                // A sentence that leans back reaches the term through the first.
                "``nocheck``\nThis tag says to not run any build-time test suite. It is \
                 honoured widely.",
                "**allow-stderr**\n\nOutput to stderr is not considered a failure by the test \
                 runner.",
                "1000-59999:\nDynamically allocated user accounts. By default adduser will \
                 choose ids in this range.",
                // A link is no term: the sentence after it stands alone.
                "What needs to happen next is a patch with the wording of the change.",
                // A command-line option with its default, as a reference lists options.
                "--num-callers=<number> [default: 12]\nSpecifies the maximum number of \
                 entries shown in stack traces.",
            ]
        );
        assert!(is_option("--leak-check=<no|yes>") && is_option("-v shows more"));
        assert!(!is_option("- item") && !is_option("-3 degrees") && !is_option("--"));
    }

    #[test]
    fn what_leans_back_and_what_does_not() {
        for s in [
            "They grow.",
            "that liquid burns.",
            "\"Therefore, no.",
            "It is.",
            "and so on.",
        ] {
            assert!(leans_back(s), "{s}");
        }
        for s in [
            "Lithium grows.",
            "400 Wh/kg is the target.",
            "Theyre.",
            "Thermal runaway.",
            "",
        ] {
            assert!(!leans_back(s), "{s}");
        }
    }

    /// Under a heading, a paragraph in lower case opens with a name: it leans on nothing and
    /// what leans on it is quoted with it; a line in lower case within a section still leans.
    #[test]
    fn a_section_opening_in_lower_case_opens_with_a_name() {
        let text = "2.7 Thread Safety\n\nlibffi is not completely thread-safe at all. However, \
                    many of its parts are safe to call from threads.\n\
                    libffi closures are the exception to this rule in every port.";
        assert_eq!(
            quoted(text),
            [
                ("libffi is not completely thread-safe at all.", false),
                (
                    "libffi is not completely thread-safe at all. However, many of its parts are \
                     safe to call from threads.",
                    false
                ),
                (
                    "libffi closures are the exception to this rule in every port.",
                    true
                ),
            ]
        );
    }

    /// Too far back, or too long together: the sentence alone, ranked lower.
    /// A definition's sentences know its term, as far as the next term: a term on a line of
    /// its own (a list of settings' keys too), or a tag set apart alone before them, as a man
    /// page's option is (never glued to them).
    #[test]
    fn a_definitions_sentences_know_its_term_up_to_the_next() {
        let terms = |text: &str| -> Vec<(String, Option<String>)> {
            units(text)
                .into_iter()
                .map(|u| (text[u.at].to_string(), u.term.map(|t| text[t].to_string())))
                .collect()
        };
        let text = "OPTIONS\n\nunlock_time=n\nThe access comes back after n seconds. \
                    The default value of this setting is 600 seconds. The default is 600.\n\
                    MAX_MEMBERS_PER_GROUP (number)\n\
                    Maximum members per group entry in the file.\n";
        let got = terms(text);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(
            got[1].0,
            "The default value of this setting is 600 seconds."
        );
        assert_eq!(got[1].1.as_deref(), Some("unlock_time=n"));
        // A default too short to quote alone is quoted with the sentence before.
        assert_eq!(
            got[2].0,
            "The default value of this setting is 600 seconds. The default is 600."
        );
        assert_eq!(got[3].1.as_deref(), Some("MAX_MEMBERS_PER_GROUP (number)"));
        let fenced = "Intro sentence that says nothing much at all.\n```\n\
                      indexed_dir_slack_percentage\n```\nReserve this share of each leaf \
                      for new entries. This relation defaults to 20 percent.\n\n\
                      A later paragraph that stands on its own here.\n";
        let got = terms(fenced);
        assert_eq!(got[0].1, None, "{got:?}");
        let tagged = &got[1..3];
        assert!(
            tagged
                .iter()
                .all(|(text, term)| !text.contains("indexed_dir")
                    && term.as_deref() == Some("indexed_dir_slack_percentage")),
            "{got:?}"
        );
        assert_eq!(got[3].1, None, "a blank line ends the definition: {got:?}");
        // A block of code is no tag.
        let code = "```\nmake\nmake install\n```\nThen the tool is ready for use by all.\n";
        assert_eq!(terms(code)[0].1, None);
        // A method with its arguments is a term; keys side by side are none.
        let method = "```\nconfig_int ( VARIABLE )\n```\nRetrieve the integer configuration. \
                      A suffix of 'm' multiplies the value by 1048576.\n";
        let got = terms(method);
        assert_eq!(
            got[0].1.as_deref(),
            Some("config_int ( VARIABLE )"),
            "{got:?}"
        );
        assert!(is_keys(&["config_int", "(", "VARIABLE", ")"]));
        assert!(!is_keys(&["history_control", "HISTCONTROL"]));
    }

    /// A line of two columns (a program's `--help`, a table of exit codes) is a definition
    /// with its term on the line: its text is quoted with it and knows it.
    #[test]
    fn a_line_of_two_columns_is_a_definition_with_its_term() {
        let text = "-m, --max-time <fractional seconds> Maximum time allowed for the transfer.\n\
                    --fail-with-body     Fail on HTTP errors but save the body\n\
                    2  if serious trouble (e.g., cannot access command-line argument).\n";
        let got: Vec<(&str, Option<&str>)> = units(text)
            .into_iter()
            .map(|u| (&text[u.at], u.term.map(|t| &text[t])))
            .collect();
        assert_eq!(got.len(), 3, "{got:?}");
        assert_eq!(got[0].1, Some("-m, --max-time <fractional seconds>"));
        assert!(got[0].0.ends_with("allowed for the transfer."), "{got:?}");
        assert_eq!(got[1].1, Some("--fail-with-body"));
        assert_eq!(got[2].1, Some("2"));
    }

    /// A list item with a run-in term (`iconv, iconvconfig:`) is a definition too; a sentence
    /// that runs on past its colon, or a line that is no item, is not.
    #[test]
    fn a_list_items_run_in_term_is_a_definition() {
        let text = "* iconv, iconvconfig: convert between character encodings
                    - `std`: enables the standard library
                    * The cache is one file. It holds: keys and values, nothing else.
                    Note: the cache is flushed at exit by the program.
";
        let got: Vec<(&str, Option<&str>)> = units(text)
            .into_iter()
            .map(|u| (&text[u.at], u.term.map(|t| &text[t])))
            .collect();
        assert_eq!(
            got[0],
            (
                "iconv, iconvconfig: convert between character encodings",
                Some("iconv, iconvconfig")
            )
        );
        assert_eq!(got[1].1, Some("`std`"));
        assert_eq!(got.len(), 4, "{got:?}");
        assert!(got[2..].iter().all(|(_, term)| term.is_none()), "{got:?}");
    }

    #[test]
    fn a_leaning_sentence_without_a_quotable_whole_is_an_orphan() {
        let long = format!("Cells age in many ways, {}.", "slowly and ".repeat(60));
        let text = format!("{long} They lose capacity with every single cycle they run.");
        let got = quoted(&text);
        assert_eq!(
            got.last(),
            Some(&("They lose capacity with every single cycle they run.", true))
        );
        let chain = "Cells age with every cycle they run. It happens slowly over the years. \
                     Then it speeds up near the end of life. So it must be watched by the BMS.";
        let got = quoted(chain);
        assert_eq!(
            got[3],
            ("So it must be watched by the BMS.", true),
            "{got:?}"
        );
    }

    /// Code, a signature and navigation are never quoted, nor glued to a sentence as a term
    /// or a run-on line; a version note and what follows it in its paragraph are not quoted.
    #[test]
    fn code_signatures_navigation_and_version_notes_are_never_quoted() {
        let text = "Next: Simple Example, Previous: Top, Up: Using libffi [Index]\n\n\
                    Intro\n\nThe cache is flushed when its buffer fills or the program exits.\n\
                    ```\njson.float_style\n```\n\
                    A string that says how the encoder writes floats in every output.\n\
                    ```python\nlogger.info(\"The cache is flushed after every single write.\")\n\
                    cache.flush(when)\n```\n\
                    flushes the cache to disk at once, whatever is in it now.\n\
                    Changed in version 3.6: All optional parameters are now keyword-only. \
                    They were positional before then.\n\
                    Deprecated since 2.0:\nThe cache is kept in memory until the program ends.\n\
                    Writes wait during a flush. New in version 2.1: writes never wait for it.";
        let got: Vec<&str> = quoted(text).into_iter().map(|(u, _)| u).collect();
        assert_eq!(
            got,
            [
                "The cache is flushed when its buffer fills or the program exits.",
                "A string that says how the encoder writes floats in every output.",
                "flushes the cache to disk at once, whatever is in it now.",
                "The cache is kept in memory until the program ends.",
            ]
        );
        // Under code, a paragraph opens a section: in lower case it opens with a name.
        assert!(!units(text)[2].orphan);
        let found: Vec<&str> = headings(text).into_iter().map(|(_, h)| h).collect();
        assert_eq!(found, ["Intro"]);
        assert!(headings("A sentence.\n\n```\nx = 1\n\nfoo_bar\n\ny\n```\n").is_empty());
    }

    /// A release alone on its line heads the release's changes: it is no definition's term
    /// quoted with the first of them.
    #[test]
    fn a_release_alone_is_no_definitions_term() {
        let text = "1.1.0\n\nThe MSRV was raised to 1.71 for the new windows-sys crate.\n";
        let found = quoted(text);
        assert_eq!(found.len(), 1);
        assert!(found[0].0.starts_with("The MSRV"), "{found:?}");
    }
}
