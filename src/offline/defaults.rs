//! A default a document states: the value an option or setting takes when none is given, as
//! reference documents write it (`--leak-check=<no|summary|yes|full> [default: summary]`,
//! `(default: 10)`, "The default is 12.", "defaults to `heap`", "the default value is full").
//! A question that asks for a default is answered by the sentence that states one for what it
//! names, and leads with that value; a sentence that only says `default` about something else
//! does not answer it. Pure text work.

use std::sync::LazyLock;

use regex::Regex;

use super::kinds::is_unit;
use crate::text::analyzer::content_terms;
use crate::text::sentences::split_sentences;
use crate::text::words;

/// How a default is written: `[default: X]`, `(default: X)`, `(default X)`, `default is X`,
/// `defaults to X`, `default value is X`, `default setting is X`, `default: X`, `X (default)`,
/// `the default value for the M_CHECK_ACTION parameter is X`;
/// the value is the bracket's content, else the word after (code, a flag or a figure
/// included), or the one before `(default)`.
static STATED: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(
        r"(?i)\[default:?\s+([^\]]+?)\s*\]|\(default:?\s+([^)]+?)\)|\bdefaults?(?:\s+[a-z]+){0,2}?(?:\s+(?:for|of)\s+(?:the\s+)?\S+(?:\s+(?:parameter|option|setting|variable|key))?)?(?:\s+(?:is|to)|:)\s+([`'\x22]?[\w.,/=+%:*<>-]*\w[`'\x22]?)|([`'\x22]*[\w./=+%:*<>-]*\w[`'\x22]*)\s+\(default\)",
    )
    .expect("a valid pattern")
});

/// Words that open a condition, not a value (`(default for the last chunk)`).
const CONDITIONS: &[&str] = &[
    "when", "for", "if", "unless", "in", "on", "with", "after", "before", "during", "while",
];

/// An option or setting a question names: `--leak-check`, `-v`, a key set with `=`
/// (`MaxLevelConsole=`), one in capitals joined by `_` (`SYS_UID_MIN`), one whose words run
/// together (`ServerAliveInterval`), or one in lower case joined by `_` where it is named as
/// a setting: in brackets or after `of`, `for` (`(unlock_time)`, `the default of
/// indexed_dir_slack_percentage`), not where it names a program (`does pam_faillock keep`).
static OPTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:^|[\s`(\[\x22'])(--?[A-Za-z][\w-]*)|\b([A-Za-z][A-Za-z0-9]*=)|\b([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b|(?:\(|\b(?:of|for)\s+)([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\b|\b([A-Z][a-z]+(?:[A-Z][A-Za-z0-9]*)+)\b",
    )
    .expect("a valid pattern")
});

/// `default` written right before the option it is of: `the default value for (the)`.
static DEFAULT_OF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bdefault(?:\s+(?:value|setting))?\s+(?:for|of)\s+(?:the\s+)?[`'\x22]?$")
        .expect("a valid pattern")
});

/// A value given for a setting in a list of defaults: `"info" for MaxLevelConsole=`.
static FOR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"([`'\x22]?[\w./+%:*<>-]*\w[`'\x22]?)\s+for\s*$").expect("a valid pattern")
});

/// A thing left out: `without giving --tool`, `without picking a level`, `without a number`,
/// `without a speed digit`, `run without`, `unless hashalg is set`,
/// `if --mode is not given`, `if the line-wrap length is not specified`, `if you don't set the
/// NULL option`, `when you don't pass any of the flags`, `when OPERATION is omitted` (or
/// `unset`), `when no -m option is given`.
static LEFT_OUT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i)\bwithout\s+(?:(?:giving|passing|specifying|setting|using|picking|choosing|selecting)\s+|(?:an?\s+|the\s+|any\s+)?--?[A-Za-z]|(?:an?\s+|any\s+)(?:\w+\s+)?(?:number|value|argument|digit)\b)|\b(?:run|called|invoked|started)\s+without\b|--?[A-Za-z][\w-]*\s+(?:is|are)\s+(?:not|never)\s+(?:given|set|specified|passed|used)|\b(?:if|when|unless)\s+(?:\w+\s+){0,2}?(?:do\s+not|don't|does\s+not|doesn't|never)\s+(?:give|pass|specify|set|supply|pick|choose|select|provide)\b|\b(?:if|when|unless)\s+[^,.;?]{0,40}?\b(?:is|are)\s+(?:not|never)\s+(?:given|set|specified|passed|supplied|provided)\b|\bunless\s+[^,.;?]{0,40}?\b(?:is|are)\s+(?:given|set|specified|passed|supplied|provided)\b|\b(?:option|setting|parameter|flag)\s+(?:is|are)\s+(?:not|never)\s+(?:given|set|specified|passed|supplied)|\b(?:is|are)\s+(?:omitted|left\s+out|unset)\b|\b(?:if|when)\s+no\s+[^,.;?]{0,30}?\b(?:is|are)\s+(?:given|set|specified|passed|supplied|provided)\b",
    )
    .expect("a valid pattern")
});

/// Whether `question` asks for a default (`the default value of`, `by default`), or what
/// holds when an option it names is left out (`without giving --tool`, `if --mode is not
/// given`).
pub fn asks_default(question: &str) -> bool {
    says_default(question) || LEFT_OUT.is_match(question) || LEFT_KEY.is_match(question)
}

/// Whether `text` writes the word `default` (or `defaults`).
pub fn says_default(text: &str) -> bool {
    words(text)
        .split(' ')
        .any(|w| w == "default" || w == "defaults")
}

/// The option `question` names (`--leak-check` in "What is the default of --leak-check?"),
/// the first when it names several; else a word in capitals it says is left out (`FORMAT` of
/// "if FORMAT is not given").
pub fn named_option(question: &str) -> Option<String> {
    options(question)
        .next()
        .map(|(_, option)| option.to_string())
        .or_else(|| {
            let left = LEFT_KEY.captures(question)?;
            Some(left.get(1)?.as_str().to_string())
        })
}

/// A key in capitals said to be left out (`FORMAT is not given`), in capitals as written:
/// LEFT_OUT's patterns ignore case, which would take any word for a key.
static LEFT_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([A-Z][A-Z0-9_]+)\s+(?:is|are)\s+(?:not|never)\s+(?:given|set|specified)")
        .expect("a valid pattern")
});

/// Of a quote whose sentences state a default each (`num-queues sets the number of
/// virtqueues (the default is 1). queue-size sets the virtqueue descriptor table size (the
/// default is 256).`), the one that writes most of `question`'s terms, the first on a tie;
/// the whole quote when fewer than two state one.
fn asked_sentence<'a>(question: &str, text: &'a str) -> &'a str {
    let asked = content_terms(question);
    let stating: Vec<&str> = split_sentences(text)
        .into_iter()
        .filter(|s| STATED.is_match(s))
        .collect();
    if stating.len() < 2 {
        return text;
    }
    let shared = |s: &&str| content_terms(s).intersection(&asked).count();
    stating.into_iter().rev().max_by_key(shared).unwrap_or(text)
}

/// The options `text` writes ([`OPTION`]), each with where it starts.
fn options(text: &str) -> impl Iterator<Item = (usize, &str)> {
    OPTION.captures_iter(text).filter_map(|c| {
        let m = c.iter().skip(1).flatten().next()?;
        Some((m.start(), m.as_str()))
    })
}

/// The default `sentence` states for what `question` asks (the option it names, when it
/// names one: `--leak-check` is stated only by a sentence that writes it, or that stands in
/// the definition whose `term` writes it), as the sentence writes it; `None` when it states
/// none.
pub fn stated_default(question: &str, sentence: &str, term: Option<&str>) -> Option<String> {
    let named = named_option(question);
    let sentence = match named {
        Some(_) => sentence,
        None => asked_sentence(question, sentence),
    };
    let defined = |option: &str| term.is_some_and(|t| option_at(t, option).is_some());
    // Where the default of what is asked is written: past the option named, before the next
    // option the sentence writes (a list of options gives each its own).
    let from = match &named {
        Some(option) => match option_at(sentence, option) {
            Some(end) => {
                let start = end - option.len();
                if let Some(value) = listed_for(sentence, start) {
                    return Some(value);
                }
                // `the default value for the M_CHECK_ACTION parameter is 3`.
                DEFAULT_OF
                    .find(&sentence[..start])
                    .map_or(end, |before| before.start())
            }
            None if defined(option) => 0,
            None => return None,
        },
        None => 0,
    };
    // The next option past the one named (which a `default ... for` before it starts at).
    let past = named
        .as_deref()
        .and_then(|option| option_at(sentence, option))
        .unwrap_or(from)
        .max(from);
    let to = options(&sentence[past..])
        .next()
        .filter(|_| named.is_some())
        .map_or(sentence.len(), |(at, _)| past + at);
    let sentence = &sentence[from..to];
    let found = STATED.captures(sentence)?;
    if let Some(bracketed) = found.get(1).or_else(|| found.get(2)) {
        // `(default when calling .flush())` says when, not what.
        let first = bracketed
            .as_str()
            .split_whitespace()
            .next()
            .unwrap_or_default();
        let when = CONDITIONS.contains(&first.to_lowercase().as_str());
        return (!when).then(|| bracketed.as_str().to_string());
    }
    if let Some(before) = found.get(4) {
        let value = before.as_str().trim_matches(['`', '"', '\'']);
        return (!value.is_empty()).then(|| value.to_string());
    }
    let value = found.get(3)?;
    let said = value.as_str();
    // A figure's unit is a part of it (`defaults to 20 percent`).
    let unit = sentence[value.end()..]
        .split_whitespace()
        .next()
        .map(|w| w.trim_end_matches(['.', ',', ';', ')']))
        .filter(|w| is_unit(&w.to_lowercase()));
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
    let figure = bare.starts_with(|c: char| c.is_ascii_digit());
    match (unit, figure) {
        (Some(unit), true) => Some(format!("{bare} {unit}")),
        _ => (!bare.is_empty() && (marked || ends)).then(|| bare.to_string()),
    }
}

/// The value a list of defaults gives the option written at `at` in `sentence`, the one
/// before `for` (`Defaults to "notice" for MaxLevelKMsg=, "info" for MaxLevelConsole=`).
fn listed_for(sentence: &str, at: usize) -> Option<String> {
    if !says_default(sentence) {
        return None;
    }
    let found = FOR.captures(&sentence[..at])?;
    let value = found[1].trim_matches(['`', '"', '\'']);
    (!value.is_empty()).then(|| value.to_string())
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
        let stated = |q: &str, s: &str| stated_default(q, s, None);
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

    /// A setting is named as configuration files write it, and its default read where a
    /// list gives each its own, or where its definition's term names it.
    #[test]
    fn a_settings_default_is_read_from_a_list_or_its_definition() {
        for (q, key) in [
            (
                "What is the default MaxLevelConsole= in journald.conf?",
                "MaxLevelConsole=",
            ),
            ("What is the default SYS_UID_MIN?", "SYS_UID_MIN"),
            ("After how long by default (unlock_time)?", "unlock_time"),
            (
                "What is the default of indexed_dir_slack_percentage?",
                "indexed_dir_slack_percentage",
            ),
            (
                "What ServerAliveInterval does ssh use by default?",
                "ServerAliveInterval",
            ),
        ] {
            assert_eq!(named_option(q).as_deref(), Some(key), "{q}");
        }
        // A program's name is no setting.
        assert_eq!(
            named_option("Where does pam_faillock keep records by default?"),
            None
        );
        let q = "What is the default MaxLevelConsole= in journald.conf?";
        let list = "Defaults to \"notice\" for MaxLevelKMsg=, \"info\" for MaxLevelConsole=, \
                    and \"emerg\" for MaxLevelWall=.";
        assert_eq!(stated_default(q, list, None).as_deref(), Some("info"));
        let q = "What is the default value of M_CHECK_ACTION?";
        let of = "Since glibc 2.3.4, the default value for the M_CHECK_ACTION parameter is 3.";
        assert_eq!(stated_default(q, of, None).as_deref(), Some("3"));
        // A quote of several sentences, each with its default: the one of what is asked.
        let two = "The export takes a name. num-queues sets the number of virtqueues (the \
                   default is 1). queue-size sets the virtqueue descriptor table size (the \
                   default is 256).";
        let q = "What is the default descriptor table size of the export?";
        assert_eq!(stated_default(q, two, None).as_deref(), Some("256"));
        let q = "How many virtqueues does the export get by default?";
        assert_eq!(stated_default(q, two, None).as_deref(), Some("1"));
        // A bracket that says when something is the default gives no value.
        let when = "zlib.constants.BROTLI_OPERATION_FLUSH (default when calling .flush())";
        assert_eq!(
            stated_default("Which kind is the default?", when, None),
            None
        );
        let q = "What is the default of indexed_dir_slack_percentage?";
        let sentence = "This relation defaults to 20 percent.";
        assert_eq!(stated_default(q, sentence, None), None, "no term: not its");
        let term = Some("indexed_dir_slack_percentage");
        assert_eq!(
            stated_default(q, sentence, term).as_deref(),
            Some("20 percent")
        );
        assert_eq!(
            stated_default(q, sentence, Some("inode_count_fullmap")),
            None
        );
    }

    #[test]
    fn leaving_an_option_out_asks_for_its_default() {
        for q in [
            "If I run valgrind without giving --tool, which tool is used?",
            "What profiling mode does DHAT use if --mode is not given?",
            "Which mode applies when -m is never set?",
            "What output format does EXPLAIN produce if FORMAT is not given?",
            "What string stands for null if you don't set the NULL option?",
            "What is the INDEX_CLEANUP setting when you do not specify it?",
            "Which operation is assumed when OPERATION is omitted?",
            "If the line-wrap length is not specified, at what length does sed wrap lines?",
            "What block size does bzip2 use when you don't pass any of the -1 to -9 flags?",
            "If I run zstd without picking a compression level, which level does it use?",
            "When --long is given without a number, what window log is used?",
            "When gzip is run without a speed digit, which compression level does it use?",
            "Which shell does su start when invoked without arguments?",
            "Which hash algorithm is used unless hashalg is set?",
            "Which shutdown mode does pg_ctl stop use when no -m option is given?",
            "What value does dpkg put in LESS when it starts a pager and LESS is unset?",
        ] {
            assert!(asks_default(q), "{q}");
        }
        assert_eq!(
            named_option("What does EXPLAIN produce if FORMAT is not given?").as_deref(),
            Some("FORMAT")
        );
        assert!(!asks_default(
            "If you set the NULL option, what is printed?"
        ));
        // What is used when a thing is not given is its default; but a key left out is one
        // in capitals: a word in lower case is no key.
        let uncached = "Which file is read if the cache is not given?";
        assert!(asks_default(uncached));
        assert_eq!(named_option(uncached), None);
        assert!(!asks_default("If the cache is given, which file is read?"));
        assert!(!asks_default("What does --mode=copy profile?"));
        assert!(!asks_default("Which format compresses without loss?"));
        assert!(!asks_default(
            "Which mode is used when no server is running?"
        ));
        assert_eq!(
            stated_default(
                "If I run valgrind without giving --tool, which tool is used?",
                "--tool=<toolname> [default: memcheck] Run the Valgrind tool called toolname.",
                None
            )
            .as_deref(),
            Some("memcheck")
        );
    }
}
