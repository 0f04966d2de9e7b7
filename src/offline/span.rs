//! The short answer: the words of the answer's sentence that are what the question asks for.
//!
//! A question that asks for a figure ("how long...", "what is the length limit...") or a name
//! ("which keyword...", "what path...") is answered first by that figure or name as the
//! sentence writes it ([`short_answer`]): `under 80 characters`, `about 270 Wh/kg`, `20 to 30
//! percent lower`, `/nonexistent`. It is a slice of the sentence, word for word, so it is a
//! quote like the sentence it comes from; the sentence follows it in the report.

use std::collections::BTreeSet;

use super::kinds::MONTHS;
use super::question::{
    NUMBER_WORDS, asks_figure, asks_name, asks_when, is_number, is_version, names_given,
    question_words, versioned_name,
};
use crate::text::words;

/// Words before a figure that say how it holds (`about 270`, `more than 4000`).
const QUALIFIERS: &[&str] = &[
    "about",
    "around",
    "roughly",
    "approximately",
    "nearly",
    "almost",
    "under",
    "over",
    "below",
    "above",
    "than",
    "more",
    "less",
    "fewer",
    "least",
    "most",
    "minus",
    "only",
    "just",
    "some",
    "between",
];
/// Qualifiers of two words: `at least`, `at most`, `up to`, `a maximum of`.
const PAIRED: &[(&str, &str)] = &[
    ("at", "least"),
    ("at", "most"),
    ("up", "to"),
    ("maximum", "of"),
    ("minimum", "of"),
];
/// Words that join two figures into one (`20 to 30`, `1000-59999` is one already).
const RANGE: &[&str] = &["to", "and", "or", "-"];
/// Marks trimmed off a short answer's ends (`(` of `(‘0’`, a closing `.`, curly quotes).
const MARKS: &[char] = &[
    ',', '.', ';', ':', '(', ')', '[', ']', '`', '"', '\'', '*', '‘', '’', '“', '”',
];
/// The most words after a figure that are its unit (`Wh/kg`, `percent lower`).
const UNIT_WORDS: usize = 3;

/// The figure or name of `sentence` that answers `question`, as `sentence` writes it; `None`
/// when the question asks for neither, or the sentence holds none it does not already say.
pub fn short_answer(question: &str, sentence: &str) -> Option<String> {
    let tokens: Vec<(usize, &str)> = tokens(sentence);
    let asked = question_words(question);
    let when = asks_when(question);
    let when_only = years_only(question);
    let found = match () {
        _ if asks_figure(question) => figure(&tokens, &asked, when, when_only, 0),
        // The name nearest to where the sentence says the thing it names, the surest on a
        // tie (`Its name property is set to 'X'`), else the first.
        _ if asks_name(question) => names_given(question, sentence)
            .first()
            .map(|&(_, _, k)| (k, k)),
        _ => None,
    }?;
    cut(sentence, &tokens, found).map(|(_, span)| span)
}

/// The span of `sentence` from token `start` to token `end`, the marks around it trimmed
/// (`(` of `(‘0’`, a closing `.`), with where it starts (a byte offset); `None` when only
/// marks are left.
fn cut(
    sentence: &str,
    tokens: &[(usize, &str)],
    (start, end): (usize, usize),
) -> Option<(usize, String)> {
    let whole = &sentence[tokens[start].0..tokens[end].0 + tokens[end].1.len()];
    let marks = |c: char| MARKS.contains(&c);
    let opened = whole.trim_start_matches(marks);
    let span = opened.trim_end_matches(marks);
    let at = tokens[start].0 + whole.len() - opened.len();
    (!span.is_empty()).then(|| (at, span.to_string()))
}

/// Every figure of `sentence` that `question` does not name, in order, as [`short_answer`]
/// cuts its first: each with where it starts in `sentence` (a byte offset).
pub fn figures(question: &str, sentence: &str) -> Vec<(usize, String)> {
    let tokens: Vec<(usize, &str)> = tokens(sentence);
    let asked = question_words(question);
    let when = asks_when(question);
    let when_only = years_only(question);
    let mut out = Vec::new();
    let mut from = 0;
    while let Some((start, end)) = figure(&tokens, &asked, when, when_only, from) {
        out.extend(cut(sentence, &tokens, (start, end)));
        from = end + 1;
    }
    out
}

/// Whether only a year answers `question`: asked only `When ...?` (a condition is not cut to
/// a figure; a `when` inside a question, `what priority ... when it registers`, asks nothing),
/// or asked `what year` or `which year` (`bzip2-0.1` is no year, whatever it is of).
fn years_only(question: &str) -> bool {
    let (_, rest) = question.trim().split_once(' ').unwrap_or_default();
    let said = format!(" {} ", words(question));
    (asks_when(question) && !asks_figure(rest))
        || [" what year ", " which year "]
            .iter()
            .any(|a| said.contains(a))
}

/// The words of `text` as written (white space apart), each with where it starts.
fn tokens(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut at = 0;
    for token in text.split_whitespace() {
        let start = at + text[at..].find(token).unwrap_or(0);
        out.push((start, token));
        at = start + token.len();
    }
    out
}

/// The first figure the question does not name, with its qualifiers, a second figure of a
/// range, and its unit: the first and last token.
fn figure(
    tokens: &[(usize, &str)],
    asked: &BTreeSet<String>,
    when: bool,
    years_only: bool,
    from: usize,
) -> Option<(usize, usize)> {
    let bare = |k: usize| tokens[k].1.trim_matches(|c: char| !c.is_alphanumeric());
    // A year answers only when the question asks when (or which year); a release's name with
    // its version (`bash-3.1`) only when it asks for a version or a release.
    let years = when || asked.contains("year");
    let versions = asked.contains("version") || asked.contains("release");
    let number = |k: usize| {
        let word = bare(k);
        // A number is said as a whole: `1` is not said by `gzip 1.9`.
        let said = match is_number(word) {
            true => asked.contains(word),
            false => words(word).split(' ').all(|w| asked.contains(w)),
        };
        let kind = match is_year(word) {
            true => years,
            false => !years_only,
        };
        // Another program's release (`bash-3.0` for a question on gzip) is not asked for.
        let named = versioned_name(word).is_none_or(|n| asked.contains(&n.to_lowercase()));
        let version = versions && is_version(word) && named;
        // A number in words (`eight times`, `a quarter`), or set as a value (`N=3`).
        // A fraction's word is one after an article (`a third`; `the third sequence` is none).
        let lower = word.to_lowercase();
        let fraction = ["half", "third", "quarter"].contains(&lower.as_str());
        let counted = k > 0 && ["a", "an", "one"].contains(&bare(k - 1).to_lowercase().as_str());
        // `one` is a figure only as a range's first (`one to four hex digits`).
        let ranged = lower == "one"
            && k + 2 < tokens.len()
            && RANGE.contains(&tokens[k + 1].1)
            && NUMBER_WORDS.contains(&bare(k + 2).to_lowercase().as_str());
        let spelled = (NUMBER_WORDS.contains(&lower.as_str()) && (!fraction || counted)) || ranged;
        let set = word
            .split_once('=')
            .is_some_and(|(_, v)| v.starts_with(|c: char| c.is_ascii_digit()));
        // An issue's number (`#1116`) is none.
        let issue = tokens[k].1.trim_start_matches(['(', '[']).starts_with('#');
        (word.starts_with(|c: char| c.is_ascii_digit()) || version || spelled || set)
            && !said
            && !issue
            && kind
    };
    // A list's number (`25. The operator ...`) opens the sentence and is no figure of it.
    let listed = |k: usize| k == 0 && tokens[0].1.ends_with(['.', ')']) && tokens.len() > 1;
    let first = (from..tokens.len()).find(|&k| number(k) && !listed(k))?;
    let mut start = first;
    let lower = |k: usize| bare(k).to_lowercase();
    while start > 0 && !ends_clause(tokens[start - 1].1) {
        let before = lower(start - 1);
        let paired = start > 1
            && !ends_clause(tokens[start - 2].1)
            && PAIRED.contains(&(lower(start - 2).as_str(), before.as_str()));
        // `a quarter`, `a thousand times`: the article is the number's; `August 1997`: the
        // month is the year's.
        let article = start == first && (before == "a" || before == "an");
        let month = start == first && is_year(bare(first)) && MONTHS.contains(&before.as_str());
        match () {
            _ if paired => start -= 2,
            _ if QUALIFIERS.contains(&before.as_str()) || article || month => start -= 1,
            _ => break,
        }
    }
    let mut end = first;
    if end + 2 < tokens.len()
        && !ends_clause(tokens[end].1)
        && RANGE.contains(&tokens[end + 1].1)
        && number(end + 2)
    {
        end += 2;
    }
    // A year has no unit (`August 1997 showed`).
    match years_only {
        true => Some((start, end)),
        false => Some((start, with_unit(tokens, asked, end))),
    }
}

/// The last token of the figure that ends at token `end`: its unit's words after it, up to
/// [`UNIT_WORDS`] (`dollars per tonne`, none for a version), and a bound after the unit (`ten
/// lines or less`).
fn with_unit(tokens: &[(usize, &str)], asked: &BTreeSet<String>, mut end: usize) -> usize {
    let bare = |k: usize| tokens[k].1.trim_matches(|c: char| !c.is_alphanumeric());
    let lower = |k: usize| bare(k).to_lowercase();
    // A version has no unit (`bash-4.0 introduced ...`, `0.8.0 Changed ...`).
    let dotted = bare(end).matches('.').count() >= 2;
    let mut units = if is_version(bare(end)) || dotted {
        UNIT_WORDS
    } else {
        0
    };
    while units < UNIT_WORDS && !ends_clause(tokens[end].1) && end + 1 < tokens.len() {
        let next = bare(end + 1).to_lowercase();
        // `dollars per tonne`: `per` joins a unit's words.
        if next == "per" && end + 2 < tokens.len() && !ends_clause(tokens[end + 1].1) {
            end += 1;
            continue;
        }
        let stop = crate::text::analyzer::STOPWORDS.contains(&next.as_str());
        // A word the question says is its own (`how much *lower*`), but for the unit it
        // counts in (`how many *cycles*`).
        if next.is_empty() || (units > 0 && asked.contains(&next)) || stop {
            break;
        }
        end += 1;
        units += 1;
    }
    // `ten lines or less`: a bound after the unit is the figure's.
    let bound = |k: usize| ["less", "more", "fewer", "greater"].contains(&lower(k).as_str());
    if end + 2 < tokens.len()
        && !ends_clause(tokens[end].1)
        && lower(end + 1) == "or"
        && bound(end + 2)
    {
        end += 2;
    }
    end
}

/// Whether `word` is a year (`2023`, `1991`; `the 2010s`).
fn is_year(word: &str) -> bool {
    let digits = word.trim_end_matches('s');
    digits.len() == 4
        && (digits.starts_with("19") || digits.starts_with("20"))
        && digits.chars().all(|c| c.is_ascii_digit())
}

/// Whether a token ends a clause (`Wh/kg,`, `characters.`, `72]`).
fn ends_clause(token: &str) -> bool {
    token.ends_with([',', '.', ';', ':', ')', ']', '?', '!'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_a_figure_whatever_it_is_written_after() {
        for word in ["bash-3.1", "v4.2", "gzip-1.10"] {
            assert!(is_version(word), "{word}");
        }
        for word in ["UTF-8", "x86-64", "v8", "ext4", "bash-", "a-1.b"] {
            assert!(!is_version(word), "{word}");
        }
        let q = "As of which bash version is the operator right-associative?";
        let s = "The operator is right-associative as of bash-3.1.";
        assert_eq!(short_answer(q, s).as_deref(), Some("bash-3.1"));
        // A list's number is none.
        let s = "25. The operator is right-associative as of bash-3.1.";
        assert_eq!(short_answer(q, s).as_deref(), Some("bash-3.1"));
        // Another program's release is not the one asked for.
        let q = "In which gzip release was the --keep option added?";
        assert_eq!(short_answer(q, "It came with bash-3.0 for all."), None);
        assert_eq!(
            short_answer(q, "The --keep option came with gzip-1.6.").as_deref(),
            Some("gzip-1.6")
        );
    }

    /// A figure's place is where its span starts, past the marks trimmed off its token,
    /// whatever characters follow (`(‘0’`: the span is a slice of the sentence there).
    #[test]
    fn a_figures_place_is_where_its_span_starts() {
        let s = "Decode into binary string form (‘0’ and ‘1’) with (12) bits.";
        let found = figures("What form does it decode into?", s);
        assert!(!found.is_empty());
        for (at, span) in found {
            assert_eq!(s.get(at..at + span.len()), Some(span.as_str()));
        }
    }

    /// A number the question writes is said only whole: `gzip 1.9` does not say `1`.
    #[test]
    fn a_number_is_said_by_the_question_only_whole() {
        let q = "Since gzip 1.9, what exit status does gunzip return?";
        let s = "Since 1.9, gunzip exits with status 1.";
        assert_eq!(short_answer(q, s).as_deref(), Some("1"));
        assert_eq!(figures(q, s).len(), 1);
    }

    #[test]
    fn a_figure_is_answered_with_its_qualifier_range_and_unit() {
        let cases = [
            (
                "What range of values can the percentage field take?",
                "The field takes a value between 0 and 100, inclusive.",
                "between 0 and 100",
            ),
            (
                "Up to what level can repeating -q raise the quietness?",
                "Repeated, it raises quietness up to a maximum of 2.",
                "maximum of 2",
            ),
            (
                "What is the length limit for the one-line summary?",
                "The single line synopsis should be kept brief---certainly under 80 characters.",
                "under 80 characters",
            ),
            (
                "How much energy do the best lithium-ion cells store?",
                "The best lithium-ion cells in production store about 270 Wh/kg, while others target 400 Wh/kg.",
                "about 270 Wh/kg",
            ),
            (
                "How much lower is energy density at pack level?",
                "Pack-level figures are typically 20 to 30 percent lower than cell-level figures.",
                // What the question says already is not the answer's.
                "20 to 30 percent",
            ),
            (
                "How high did lithium carbonate prices climb?",
                "The price of lithium carbonate rose above 70,000 dollars per tonne in 2022.",
                "above 70,000 dollars per tonne",
            ),
            (
                "How many hex digits may follow the escape?",
                "The escape takes a value of one to four hex digits, and no more.",
                "one to four hex",
            ),
            (
                "At about what temperature does the separator melt?",
                "At about 130 degrees Celsius the separator melts.",
                "about 130 degrees Celsius",
            ),
            (
                "How much energy can a 20-foot container store?",
                "A 20-foot container holds up to 5 MWh in 2024.",
                "up to 5 MWh",
            ),
            (
                "How many cycles does an LFP cell last?",
                "An LFP cell lasts more than 4000 cycles.",
                "more than 4000 cycles",
            ),
            // A number in words, with its article; a value set; a bound after the unit.
            (
                "How large a share goes into formation?",
                "Formation can make up about a quarter of the investment.",
                "about a quarter",
            ),
            (
                "How much more did storage cost in 2010?",
                "Storage cost about eight times more in 2010 than in 2023.",
                "about eight times",
            ),
            (
                "How many members must back a change?",
                "To start with, we're going with N=3, meaning three members.",
                "N=3",
            ),
            (
                "How long may an inline function be?",
                "Small inline functions (ten lines or less in length) are allowed.",
                "ten lines or less",
            ),
        ];
        for (question, sentence, span) in cases {
            assert_eq!(
                short_answer(question, sentence).as_deref(),
                Some(span),
                "{question}"
            );
            assert!(sentence.contains(span));
        }
    }

    #[test]
    fn an_issue_number_is_no_figure_and_a_version_has_no_unit() {
        let q = "How large is a compiled program?";
        assert_eq!(short_answer(q, "Fixed in #1116 for all."), None);
        let q = "In which release did the macro come?";
        assert_eq!(
            short_answer(q, "0.8.0 Changed the macro.").as_deref(),
            Some("0.8.0")
        );
    }

    #[test]
    fn an_ordinal_is_no_figure() {
        let q = "How much faster is the length function?";
        let s = "It may not be symmetric if the second and third sequence differ.";
        assert_eq!(short_answer(q, s), None);
        assert_eq!(
            short_answer(q, "It is a third faster.").as_deref(),
            Some("a third faster")
        );
    }

    #[test]
    fn a_name_is_answered_as_written_and_other_questions_get_no_short_answer() {
        let sentence = "The canonical non-existent home directory is ``/nonexistent``.";
        assert_eq!(
            short_answer(
                "What path should a system account have as its home?",
                sentence
            )
            .as_deref(),
            Some("/nonexistent")
        );
        assert_eq!(
            short_answer("Why do dendrites form?", "Dendrites form at 3 V."),
            None
        );
        assert_eq!(
            short_answer(
                "What priority should a package use when it registers?",
                "Register with a priority of 20."
            )
            .as_deref(),
            Some("20")
        );
        // `when` in a clause asks for no year.
        assert_eq!(
            short_answer(
                "What priority should a package use when it registers?",
                "Since 2019, register with a priority of 20."
            )
            .as_deref(),
            Some("20")
        );
        // Asked when, a condition is not cut to its figure; a year is the answer.
        assert_eq!(
            short_answer(
                "When must a maintainer bump the epoch?",
                "Bump it when 2.3 is older."
            ),
            None
        );
        assert_eq!(
            short_answer(
                "When did prices spike?",
                "Prices spiked 40 percent in 2022."
            )
            .as_deref(),
            Some("2022")
        );
        // Asked what year, a release is no answer; a year's month is the year's.
        let q = "In what year was bzip2 version 1.0.0 released?";
        let s = "Work since the release of bzip2-0.1 in August 1997 showed problems.";
        assert_eq!(short_answer(q, s).as_deref(), Some("August 1997"));
        assert_eq!(short_answer(q, "It replaced bzip2-0.9.5 then."), None);
        assert_eq!(
            short_answer("When was it released?", "It was released in May 1997.").as_deref(),
            Some("1997")
        );
        // The question's own figure is not an answer.
        assert_eq!(
            short_answer(
                "How long did the 2023 tests last?",
                "The 2023 tests were long."
            ),
            None
        );
    }
}
