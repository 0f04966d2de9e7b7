//! A default a document states: the value an option or setting takes when none is given, as
//! reference documents write it (`--leak-check=<no|summary|yes|full> [default: summary]`,
//! `(default: 10)`, "The default is 12.", "defaults to `heap`", "the default value is full").
//! A question that asks for a default is answered by the sentence that states one for what it
//! names, and leads with that value; a sentence that only says `default` about something else
//! does not answer it. Pure text work.

use std::sync::LazyLock;

use regex::Regex;

use crate::text::words;

/// How a default is written: `[default: X]`, `(default: X)`, `(default X)`, `default is X`,
/// `defaults to X`, `default value is X`, `default setting is X`, `default: X`, `X (default)`;
/// the value is the bracket's content, else the word after (code, a flag or a figure
/// included), or the one before `(default)`.
static STATED: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(
        r"(?i)\[default:?\s+([^\]]+?)\s*\]|\(default:?\s+([^)]+?)\)|\bdefaults?(?:\s+(?:value|setting))?(?:\s+(?:is|to)|:)\s+([`'\x22]?[\w.,/=+%:*<>-]*\w[`'\x22]?)|([`'\x22]*[\w./=+%:*<>-]*\w[`'\x22]*)\s+\(default\)",
    )
    .expect("a valid pattern")
});

/// An option a question names: `--leak-check`, `-v`.
static OPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:^|[\s`(\[\x22'])(--?[A-Za-z][\w-]*)").expect("a valid pattern")
});

/// An option left out: `without giving --tool`, `if --mode is not given`.
static LEFT_OUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bwithout\s+(?:giving|passing|specifying|setting|using)?\s*(?:an?\s+|the\s+|any\s+)?--?[A-Za-z]|--?[A-Za-z][\w-]*\s+(?:is|are)\s+(?:not|never)\s+(?:given|set|specified|passed|used)",
    )
    .expect("a valid pattern")
});

/// Whether `question` asks for a default (`the default value of`, `by default`), or what
/// holds when an option it names is left out (`without giving --tool`, `if --mode is not
/// given`).
pub fn asks_default(question: &str) -> bool {
    words(question)
        .split(' ')
        .any(|w| w == "default" || w == "defaults")
        || LEFT_OUT.is_match(question)
}

/// The option `question` names (`--leak-check` in "What is the default of --leak-check?"),
/// the first when it names several.
pub fn named_option(question: &str) -> Option<String> {
    OPTION.captures(question).map(|c| c[1].to_string())
}

/// The default `sentence` states for what `question` asks (the option it names, when it
/// names one: `--leak-check` is stated only by a sentence that writes it), as the sentence
/// writes it; `None` when it states none.
pub fn stated_default(question: &str, sentence: &str) -> Option<String> {
    let named = named_option(question);
    // Where the default of what is asked is written: past the option named, before the next
    // option the sentence writes (a list of options gives each its own).
    let from = match &named {
        Some(option) => option_at(sentence, option)?,
        None => 0,
    };
    let to = OPTION
        .find_at(sentence, from)
        .filter(|_| named.is_some())
        .map_or(sentence.len(), |m| m.start());
    let sentence = &sentence[from..to];
    let found = STATED.captures(sentence)?;
    if let Some(bracketed) = found.get(1).or_else(|| found.get(2)) {
        return Some(bracketed.as_str().to_string());
    }
    if let Some(before) = found.get(4) {
        let value = before.as_str().trim_matches(['`', '"', '\'']);
        return (!value.is_empty()).then(|| value.to_string());
    }
    let value = found.get(3)?;
    let said = value.as_str();
    let bare = said.trim_matches(|c: char| matches!(c, '`' | '"' | '\'' | ',' | '.' | ':'));
    // In prose, a value is code, quoted, a flag or a figure, or a word that ends its clause
    // ("the default is full, which ..."), not the first word of one ("is strongly
    // recommended").
    let marked =
        said.starts_with(['`', '"', '\'', '-']) || bare.starts_with(|c: char| c.is_ascii_digit());
    let ends = sentence[value.end()..]
        .trim_start_matches(['`', '"', '\''])
        .starts_with(['.', ',', ';', ')'])
        || sentence[value.end()..].trim().is_empty();
    (!bare.is_empty() && (marked || ends)).then(|| bare.to_string())
}

/// Where `sentence` writes `option` as a whole (`--leak-check=...`, not `--leak-checks`): the
/// end of its first such occurrence.
fn option_at(sentence: &str, option: &str) -> Option<usize> {
    sentence.match_indices(option).find_map(|(at, _)| {
        let end = at + option.len();
        let after = sentence[end..].chars().next();
        (!after.is_some_and(|c| c.is_alphanumeric() || c == '-' || c == '_')).then_some(end)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_is_read_as_reference_documents_write_it() {
        let stated = |q: &str, s: &str| stated_default(q, s);
        let q = "What is Memcheck's default setting for --leak-check?";
        assert_eq!(
            stated(q, "--leak-check=<no|summary|yes|full> [default: summary]").as_deref(),
            Some("summary")
        );
        // Another option's default does not answer.
        assert_eq!(
            stated(q, "--leak-resolution=<low|med|high> [default: high]"),
            None
        );
        assert_eq!(stated(q, "--leak-checks=<n> [default: 3]"), None);
        // The default written past the option named, not the next option's.
        let two =
            "--leak-check=<no|yes> sets the check. --leak-resolution=<low|high> [default: high]";
        assert_eq!(stated(q, two), None);
        let asked = "What is the default size of the queue (--freelist-vol)?";
        let vol = "--freelist-big-blocks=<n> [default: 1000000] Blocks above --freelist-vol \
                   (default: 20000000) go first.";
        assert_eq!(stated(asked, vol).as_deref(), Some("20000000"));
        let q = "What does the tool do by default?";
        for (sentence, value) in [
            ("Sets the depth (default: 30).", "30"),
            ("The default is 12.", "12"),
            ("It defaults to `heap` when unset.", "heap"),
            ("The default value is full, which records all.", "full"),
            ("A timeout (default 10 s) applies.", "10 s"),
            (
                "- ``binary-targets`` (default): Declares that the package needs root.",
                "binary-targets",
            ),
        ] {
            assert_eq!(stated(q, sentence).as_deref(), Some(value), "{sentence}");
        }
        // `default` that gives no value.
        assert_eq!(
            stated(q, "The default setting is strongly recommended."),
            None
        );
        assert_eq!(
            stated(q, "By default, Massif does not measure these."),
            None
        );
        assert!(asks_default(q) && asks_default("What are the defaults?"));
        assert!(!asks_default("Which tool measures heap memory?"));
    }

    #[test]
    fn leaving_an_option_out_asks_for_its_default() {
        for q in [
            "If I run valgrind without giving --tool, which tool is used?",
            "What profiling mode does DHAT use if --mode is not given?",
            "Which mode applies when -m is never set?",
        ] {
            assert!(asks_default(q), "{q}");
        }
        assert!(!asks_default("What does --mode=copy profile?"));
        assert_eq!(
            stated_default(
                "If I run valgrind without giving --tool, which tool is used?",
                "--tool=<toolname> [default: memcheck] Run the Valgrind tool called toolname."
            )
            .as_deref(),
            Some("memcheck")
        );
    }
}
