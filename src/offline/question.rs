//! What a question asks, as the offline engine's answer ([`super::answer`]) reads it: the
//! questions in one ([`parts`]), the specific words no answer may do without
//! ([`specific_terms`]), the phrases it quotes ([`quoted_phrases`]), and whether it asks for a
//! figure ([`asks_figure`]).

use std::collections::BTreeSet;

use crate::text::analyzer::{content_terms, short_options};
use crate::text::words;

use super::kinds::is_measure_unit;

/// The most questions one question is split into: one answer sentence each.
pub const MOST_PARTS: usize = 3;

/// The terms of the question's specific words: a figure or a year (`2015`), a name (a
/// capitalised word past the first), a compound (`lithium-sulfur`), an option (`-T`). When
/// no sentence holds one of them, none answers what the question asks about it.
pub fn specific_terms(question: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (k, raw) in question.split_whitespace().enumerate() {
        // An option (`-T`) is as specific as a name.
        out.extend(short_options(raw));
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        // A short acronym (`EU`) is as often written out in full: not a name to require.
        let named = k > 0
            && word.chars().next().is_some_and(char::is_uppercase)
            && !(word.len() <= 3 && word.chars().all(|c| c.is_ascii_uppercase()));
        if named || word.contains('-') || word.chars().any(|c| c.is_ascii_digit()) {
            out.extend(content_terms(word));
        }
    }
    out
}

/// The questions in one `question`: split before each `and` that starts another (`..., and
/// how much ...?`, `... and what share ...?`), at most [`MOST_PARTS`]; the last takes the
/// rest.
pub fn parts(question: &str) -> Vec<String> {
    const ASKS: &[&str] = &[
        "what", "which", "how", "when", "why", "where", "who", "whom", "whose", "would", "does",
        "do", "did", "is", "are", "can",
    ];
    let words: Vec<&str> = question.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    };
    let mut out = vec![String::new()];
    let mut depth = 0usize;
    for (k, word) in words.iter().enumerate() {
        // `and what ...`, or within three words in the same clause (`and up to what
        // temperature ...`; not `(2.3.4 and later), what is ...`, nor `-a and -w use when
        // ...`, whose `when` sets a condition).
        let asks = |n: &&str| ASKS.contains(&bare(n).as_str());
        let again = match words.get(k + 1) {
            Some(next) if asks(next) => true,
            _ => words[k + 1..]
                .iter()
                .take(3)
                .skip(1)
                .position(|n| {
                    ["what", "which", "how", "why", "where", "who"].contains(&bare(n).as_str())
                })
                .is_some_and(|at| {
                    !words[k + 1..k + 2 + at]
                        .iter()
                        .any(|w| w.ends_with([',', ')', ';', ':']))
                }),
        };
        // An `and` in brackets joins words, not questions.
        let bracketed = depth > 0;
        depth += word.matches('(').count();
        depth = depth.saturating_sub(word.matches(')').count());
        let starts = bare(word) == "and" && again && !bracketed && out.len() < MOST_PARTS;
        if starts {
            out.push(String::new());
            continue;
        }
        let part = out.last_mut().expect("one part at least");
        if !part.is_empty() {
            part.push(' ');
        }
        part.push_str(word);
    }
    out
}

/// A limit is a figure whatever asks for it (`what is the length limit`, `which range`).
pub const LIMITS: &[&str] = &[
    "maximum", "minimum", "limit", "range", "numeric", "longest", "shortest",
];
/// Words of an extreme a question asks the figure of (`what is the highest output base`).
const EXTREMES: &[&str] = &["highest", "lowest", "largest", "smallest", "biggest"];

/// The extreme a question asks for: `Some(true)` for the highest (`what is the highest
/// level`, `the maximum size`), `Some(false)` for the lowest, `None` for neither.
pub fn asked_extreme(question: &str) -> Option<bool> {
    const HIGHEST: &[&str] = &[
        "highest", "maximum", "max", "largest", "most", "longest", "biggest", "greatest",
    ];
    const LOWEST: &[&str] = &[
        "lowest", "minimum", "min", "smallest", "least", "fewest", "shortest",
    ];
    words(question)
        .split(' ')
        .find_map(|w| (HIGHEST.contains(&w) || LOWEST.contains(&w)).then(|| HIGHEST.contains(&w)))
}

/// Measures a question asks for with `what` or `which` (`what share`, `which GNU sed release`).
pub const MEASURES: &[&str] = &[
    "share",
    "percentage",
    "temperature",
    "year",
    "price",
    "density",
    "energy",
    "efficiency",
    "conductivity",
    "voltage",
    "capacity",
    "cost",
    "priority",
    "size",
    "length",
    "number",
    "amount",
    "rate",
    "speed",
    "weight",
    "version",
    "release",
    "port",
    "date",
    "level",
    "factor",
    "ratio",
    "accuracy",
    "uid",
    "gid",
    "pid",
    "width",
    "height",
    "depth",
    "interval",
    "timeout",
    "delay",
    "duration",
];

/// The clause of `question` that asks, past the conditions set before it: the words after
/// the last comma that an asking word follows (`how many compiler processes does Cargo run`
/// of `When neither --jobs nor build.jobs is set, how many ...`); the whole question when no
/// comma does.
fn main_clause(question: &str) -> &str {
    // Not `when` nor `why`, which also join a clause to what comes before (`warn, instead
    // of refusing, when a file is unsigned`).
    let asking = ["what", "which", "how", "who", "where"];
    question
        .match_indices(',')
        .map(|(at, _)| &question[at + 1..])
        .rfind(|rest| {
            let first = rest.split_whitespace().next().unwrap_or_default();
            asking.contains(&first.to_lowercase().as_str())
        })
        .unwrap_or(question)
        .trim()
}

/// Whether the question asks for a quantity: `how much`, `how high` (any `how` but of
/// manner: `how does`, `how is`), `what share`, `at what temperature`, `which port`, `in
/// which release`, `when`, `what year`.
pub fn asks_figure(question: &str) -> bool {
    let question = main_clause(question);
    let words: Vec<String> = words(question).split(' ').map(str::to_string).collect();
    const MANNER: &[&str] = &[
        "do", "does", "did", "is", "are", "was", "were", "can", "could", "would", "should",
    ];
    // `what share`, `what alternative priority`, `which GNU sed release`: a measure at most
    // three words on.
    let measured = |k: usize| {
        asked_phrase(&words, k)
            .iter()
            .any(|w| MEASURES.contains(&w.trim_end_matches('s')))
    };
    // `What rule links heat to how fast a cell ages`: a `how` past another asking word, in
    // the same question, asks nothing of its own.
    let asking = ["what", "which", "who", "why", "where", "when"];
    let own = |k: usize| {
        let start = words[..k]
            .iter()
            .rposition(|w| w == "and" || w == "or")
            .map_or(0, |a| a + 1);
        !words[start..k].iter().any(|w| asking.contains(&w.as_str()))
    };
    // A limit that describes the name asked for (`which keyword sets the minimum key size`)
    // is not what is asked.
    let limit = named_thing(question).is_none()
        && words
            .iter()
            .any(|w| LIMITS.contains(&w.as_str()) || EXTREMES.contains(&w.as_str()));
    words.windows(2).enumerate().any(|(k, w)| {
        (w[0] == "how" && !MANNER.contains(&w[1].as_str()) && own(k))
            || ((w[0] == "what" || w[0] == "which") && measured(k))
    }) || asks_when(question)
        || limit
}

/// Whether the question asks when: `When ...?` asks for a time; `when` in a clause (`what is
/// the fuel when a cell burns`, `when both are set, which one...`) asks nothing.
pub fn asks_when(question: &str) -> bool {
    let said = words(question);
    let mut words = said.split(' ');
    words.next() == Some("when") && !words.any(|w| ["what", "which", "who", "how"].contains(&w))
}

/// The verbs a question's subject follows (`what string *does* ...`).
const AUXILIARIES: &[&str] = &[
    "do", "does", "did", "is", "are", "was", "were", "can", "could", "would", "should", "will",
    "has", "have", "must", "may",
];

/// Things a question asks the name of (`which keyword`, `what path`, `under which file name`):
/// the answer is written as a name, a path or code.
pub const NAMED: &[&str] = &[
    "keyword",
    "symbol",
    "marker",
    "hook",
    "field",
    "variable",
    "name",
    "path",
    "command",
    "restriction",
    "script",
    "signal",
    "option",
    "flag",
    "directory",
    "tag",
    "header",
    "term",
    "word",
    "property",
    "setting",
    "identifier",
    "extension",
    "parameter",
    "directive",
    "code",
    "file",
    "format",
    "operator",
    "api",
];

/// Things with a name in code, and with other meanings in prose (`which recycling methods`,
/// `which event`): asked the name of only by a question that writes code ([`writes_code`]).
pub const NAMED_IN_CODE: &[&str] = &[
    "function",
    "method",
    "macro",
    "constant",
    "callback",
    "event",
    "program",
    "module",
    "class",
    "attribute",
    "status",
    "error",
    "operation",
    "argument",
    "value",
    "byte",
];

/// Whether `question` writes code: a word joined by `_` or `::`, a call (`flush()`), a
/// member (`server.listen`), an option (`--version`), a variable (`$HOME`), or words run
/// together (`ChildProcess`, `readlinePromises`).
fn writes_code(question: &str) -> bool {
    question.split_whitespace().any(|raw| {
        let w = raw.trim_end_matches(['?', '.', ',', ';', ':', '!', '\'', '"']);
        let inner_dot = w.trim_end_matches("()").contains('.');
        let run_together = w.chars().any(|c| c.is_ascii_lowercase())
            && w.chars().skip(1).any(|c| c.is_ascii_uppercase());
        w.contains(['_', '$'])
            || w.contains("::")
            || w.contains("()")
            || inner_dot
            || (w.starts_with('-') && w.len() > 2)
            || run_together
    })
}

/// Words that end the phrase of what is asked (`the default value *of* ...`, `the oldest
/// kernel version *that* ...`).
const PHRASE_ENDS: &[&str] = &[
    "that", "which", "who", "of", "for", "in", "on", "to", "with", "when", "if", "by", "from",
    "after", "before", "at", "into", "onto", "about", "under", "over", "as", "than", "per",
];

/// The phrase of what is asked after the asking word at `k` (`which`, `what`): past an
/// auxiliary and an article (`what is the ...`), up to five words, to the verb or a word that
/// ends it ([`PHRASE_ENDS`]): `oldest linux kernel version` of `what is the oldest Linux
/// kernel version that still works`.
fn asked_phrase<S: AsRef<str>>(words: &[S], k: usize) -> Vec<&str> {
    phrase_and_end(words, k).0
}

/// [`asked_phrase`], with the word that ended it (an auxiliary, a word of [`PHRASE_ENDS`],
/// an article); `None` at the question's end, past five words, or for a default.
fn phrase_and_end<S: AsRef<str>>(words: &[S], k: usize) -> (Vec<&str>, Option<&str>) {
    let mut out = Vec::new();
    let mut opening = true;
    for w in words[(k + 1).min(words.len())..].iter().map(AsRef::as_ref) {
        if opening && (AUXILIARIES.contains(&w) || ["the", "a", "an"].contains(&w)) {
            continue;
        }
        // `what is the default setting for --leak-check` asks for a default: its value, not a
        // name or a measure ([`crate::offline::defaults`]).
        if w == "default" {
            return (Vec::new(), None);
        }
        opening = false;
        // An article past the first word opens another phrase (`what marker goes into *the*
        // version string`).
        let article = ["the", "a", "an"].contains(&w);
        if AUXILIARIES.contains(&w) || PHRASE_ENDS.contains(&w) || article {
            return (out, Some(w));
        }
        if out.len() == 5 {
            return (out, None);
        }
        out.push(w);
    }
    (out, None)
}

/// The phrase of what `question` asks for after its first `what` or `which`
/// ([`asked_phrase`]), its words in lower case: `archive section` of `in which archive section
/// is curl filed`; empty without one.
pub fn asked_thing(question: &str) -> String {
    let said = words(question);
    let words: Vec<&str> = said.split(' ').collect();
    words
        .iter()
        .position(|w| *w == "what" || *w == "which")
        .map(|k| asked_phrase(&words, k).join(" "))
        .unwrap_or_default()
}

/// The phrase of what `question` asks for ([`asked_thing`]) where an auxiliary ends it
/// (`qcow2 compat level` of `which qcow2 compat level does ...`), up to a possessive
/// (`Unicode version` of `which Unicode version's tables are`), or `of` after `what is the`
/// (`initial password` of `what is the initial password of the keystore`); empty where none
/// ends it, as the phrase may run into the verb (`which company holds ...`, `which ulimit flag
/// controls`).
pub fn asked_noun(question: &str) -> String {
    let said = words(question);
    let w: Vec<&str> = said.split(' ').collect();
    let Some(k) = w.iter().position(|x| *x == "what" || *x == "which") else {
        return String::new();
    };
    let (phrase, end) = phrase_and_end(&w, k);
    // `what is the initial password of the keystore` asks for a password.
    let copula = w
        .get(k + 1)
        .is_some_and(|x| ["is", "are", "was", "were"].contains(x));
    if !end.is_some_and(|x| AUXILIARIES.contains(&x) || (copula && x == "of")) {
        return String::new();
    }
    // `which Unicode version's tables are ...` asks for a version: the possessor.
    let owner = phrase
        .iter()
        .position(|x| *x == "s")
        .unwrap_or(phrase.len());
    phrase[..owner].join(" ")
}

/// What `question` asks how much or how many of, or the phrase of what it asks for
/// ([`asked_thing`]): `memory` of `how much memory does bunzip2 need`, `hex digits` of `how
/// many hex digits can follow`.
pub fn asked_measure(question: &str) -> String {
    let said = words(question);
    let words: Vec<&str> = said.split(' ').collect();
    words
        .windows(2)
        .position(|w| w[0] == "how" && ["much", "many"].contains(&w[1]))
        .map(|k| asked_phrase(&words, k + 1).join(" "))
        .unwrap_or_else(|| asked_thing(question))
}

/// The words that say how much `question` asks for, in the phrase after its first `what` or
/// `which` ([`asked_phrase`]): a limit, a superlative, a count (`maximum number` of `what is
/// the maximum number of parameters ...`, `largest` of `what is the largest output base`);
/// they are not its subject ([`super::subject`]).
pub fn asked_words(question: &str) -> BTreeSet<String> {
    let how_much = |w: &&str| {
        LIMITS.contains(w) || ["number", "amount", "count"].contains(w) || w.ends_with("est")
    };
    asked_thing(question)
        .split(' ')
        .filter(how_much)
        .map(str::to_string)
        .collect()
}

/// Words that open a case, in a question or a sentence (`when it aborts ...`, `If a warning
/// occurs, ...`).
pub const CASES: &[&str] = &["if", "when", "unless", "once", "whenever"];

/// The terms of `question`'s condition, the words from the first word past its opening that
/// opens one ([`CASES`], or `because`) to a comma or its end, unless the condition is that something
/// is left out: that asks for a default ([`super::defaults::asks_default`]), which a sentence
/// states in its own words.
pub fn condition_terms(question: &str) -> BTreeSet<String> {
    condition(question)
        .map(|clause| content_terms(&clause))
        .unwrap_or_default()
}

/// The terms of the verbs that `question`'s condition denies (`found` of `when the command is
/// not found`, `allocate` of `when it cannot allocate memory`): the case turns on them, so a
/// sentence that meets it writes one. None for a thing left out, which asks for a default.
pub fn denied_terms(question: &str) -> BTreeSet<String> {
    let Some(clause) = condition(question) else {
        return BTreeSet::new();
    };
    let said = words(&clause);
    let tokens: Vec<&str> = said.split(' ').collect();
    // `doesn't` is `doesn t` in words.
    let denies = |w: &str| ["not", "cannot", "never", "t"].contains(&w);
    let mut out = BTreeSet::new();
    for (k, _) in tokens.iter().enumerate().filter(|(_, w)| denies(w)) {
        let verb = tokens[k + 1..]
            .iter()
            .find(|w| !AUXILIARIES.contains(w) && !["be", "been", "being"].contains(w));
        out.extend(verb.map(|v| content_terms(v)).unwrap_or_default());
    }
    out
}

/// The words of `question`'s condition: from the first word past its opening that opens one
/// ([`CASES`], or `because`) to a comma or its end, what stands in brackets set aside; `None`
/// for a thing left out ([`super::defaults::asks_default`]).
fn condition(question: &str) -> Option<String> {
    let raw: Vec<&str> = question.split_whitespace().collect();
    let opens = |w: &&str| {
        let w = words(w);
        CASES.contains(&w.as_str()) || w == "because"
    };
    let start = raw.iter().skip(1).position(opens)? + 1;
    let clause: Vec<&str> = raw[start..]
        .iter()
        .scan(false, |ended, w| {
            let take = !*ended;
            *ended |= w.ends_with([',', ';']);
            take.then_some(*w)
        })
        .collect();
    // What stands in brackets qualifies the case, or sets one aside (`(not an error)`).
    let clause: String = clause
        .join(" ")
        .split('(')
        .map(|part| part.split_once(')').map_or(part, |(_, after)| after))
        .collect();
    (!super::defaults::asks_default(&clause)).then_some(clause)
}

/// Words before `version` that say which release, not whose (`the minimum supported version`).
const RELEASE_WORDS: &[&str] = &[
    "minimum",
    "maximum",
    "oldest",
    "latest",
    "first",
    "last",
    "current",
    "supported",
    "new",
    "older",
    "newer",
    "earliest",
    "which",
    "what",
];

/// The program whose release a question asks for, as it writes it before or after `version`
/// or `release` (`rust` of `which Rust version`, `bash` of `which version of bash`), when it
/// asks for one.
pub fn release_of(question: &str) -> Option<String> {
    let said = words(question);
    let words: Vec<&str> = said.split(' ').collect();
    words.iter().enumerate().find_map(|(k, w)| {
        let phrase = asked_phrase(&words, k);
        let at = phrase
            .iter()
            .position(|p| ["version", "release"].contains(p))?;
        let asks = *w == "which" || *w == "what";
        let before = at.checked_sub(1).map(|b| phrase[b]);
        let of = words
            .iter()
            .skip(k)
            .skip_while(|x| !["version", "release"].contains(x));
        let after: Vec<&str> = of.skip(1).copied().collect();
        let named = match (
            before.filter(|b| !RELEASE_WORDS.contains(b)),
            after.as_slice(),
        ) {
            (Some(name), _) | (None, &["of", name, ..]) => Some(name),
            _ => None,
        };
        named.filter(|_| asks).map(str::to_string)
    })
}

/// Whether the question asks for a name: `which` or `what` followed, within three words, by a
/// thing that has one ([`NAMED`]).
pub fn asks_name(question: &str) -> bool {
    named_thing(question).is_some()
}

/// The thing a question asks the name of ([`asks_name`]): `symbol` in `which symbol lets you
/// ...`.
pub fn named_thing(question: &str) -> Option<&'static str> {
    let said = words(question);
    let words: Vec<&str> = said.split(' ').collect();
    words.iter().enumerate().find_map(|(k, w)| {
        let asks = *w == "which" || *w == "what";
        // The thing is named before the verb: `what string does the lock method return`
        // asks for a string, not a method; `what is the only callback` for a callback.
        let named = asked_phrase(&words, k);
        // An exit status is a program's value, whatever else the question writes.
        let code = writes_code(question) || named.contains(&"exit");
        let things = NAMED.iter().chain(NAMED_IN_CODE.iter().filter(|_| code));
        // The last that names a thing is what the phrase names (`test file operator`).
        let thing = named
            .into_iter()
            .rev()
            .find_map(|n| things.clone().copied().find(|t| is_word(t, n)));
        // `what does asn1_get_length_der return ...` asks for a value, `what must the
        // function be named` for a name: the asking word is the verb's object.
        let object = words.get(k + 1).is_some_and(|n| AUXILIARIES.contains(n));
        let verb = |v: &[&str]| object && code && words[k + 1..].iter().any(|w| v.contains(w));
        let asked = match () {
            _ if verb(&["return", "returns", "returned"]) => Some("value"),
            _ if verb(&["named", "called"]) => Some("name"),
            _ => None,
        };
        thing.or(asked).filter(|_| asks)
    })
}

/// How many words from where a sentence says the thing asked for its name may stand
/// (`PERL_JSON_PP_USE_B environmental variable`, `the 'close' event`, `Its name property is
/// set to 'X'`): a name further on names something else.
const NEAR: usize = 5;

/// Words for an option, one as good as another (`parameter` for `option`).
const OPTIONS: &[&str] = &["option", "parameter", "setting", "flag"];

/// Whether `word` (as written) says `thing` or its plural; an option by any of its words.
fn says(thing: &str, word: &str) -> bool {
    // `err.code` says `code`.
    let said = words(word);
    let said = said.rsplit(' ').next().unwrap_or_default();
    match () {
        _ if OPTIONS.contains(&thing) => OPTIONS.iter().any(|o| is_word(o, said)),
        // What a function returns is its value.
        _ if thing == "value" => ["value", "return", "returned"]
            .iter()
            .any(|v| is_word(v, said)),
        _ => is_word(thing, said),
    }
}

/// Whether `said` (lower-case words) is `noun` or its plural (`status`, `statuses`).
fn is_word(noun: &str, said: &str) -> bool {
    said == noun
        || said
            .strip_suffix('s')
            .is_some_and(|w| w == noun || w.strip_suffix('e') == Some(noun))
}

/// The names `sentence` gives the thing `question` asks the name of ([`named_thing`]): its
/// words that are names the question does not write ([`name_kind`]: code, a path or file name
/// such as `changelog.Debian.gz`, a word joined by hyphens or underscores in one case such as
/// `allow-stderr` or `PERL_JSON_PP_USE_B`, a capitalised word past the first), within
/// [`NEAR`] words of one that says the thing (a path or a directory is known by its `/`,
/// [`names_a`]). Each as (how far from the thing, how surely a name, where), nearest first.
pub fn names_given(question: &str, sentence: &str) -> Vec<(usize, u8, usize)> {
    let asked = words(question);
    let asked: BTreeSet<&str> = asked.split(' ').collect();
    let thing = named_thing(question);
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    let near = match thing {
        Some(t) if !matches!(t, "directory" | "path") => {
            let said: Vec<usize> = (0..tokens.len()).filter(|&k| says(t, tokens[k])).collect();
            Some(said)
        }
        _ => None,
    };
    let distance = |k: usize| match &near {
        Some(said) => said
            .iter()
            .map(|&t| t.abs_diff(k))
            .min()
            .filter(|&d| d <= NEAR),
        None => Some(0),
    };
    // A status, a code or a value may be a number (`exit status is 2`, `returns -2`), one
    // the question does not write whole (`gzip 1.9` writes no `1`).
    let asked_numbers = question_words(question);
    let numbered = matches!(thing, Some("status" | "code" | "value" | "byte"));
    let number = |k: usize| {
        let n = tokens[k].trim_end_matches(['.', ',', ';', ':', ')']);
        let digits = n.strip_prefix('-').unwrap_or(n);
        let number = !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit());
        (numbered && number && !asked_numbers.contains(digits)).then_some(4)
    };
    let mut out: Vec<(usize, u8, usize)> = (0..tokens.len())
        .filter(|&k| names_a(thing, tokens[k]))
        .filter_map(|k| {
            let kind = name_kind(&asked, place(&tokens, k), tokens[k]).or_else(|| number(k))?;
            Some((distance(k)?, kind, k))
        })
        .collect();
    out.sort();
    out
}

/// The words of `question`, a number whole (`1.9`, not `1` and `9`).
pub fn question_words(question: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for token in question.split_whitespace() {
        let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
        match is_number(bare) {
            true => {
                out.insert(bare.to_string());
            }
            false => out.extend(words(token).split(' ').map(str::to_string)),
        }
    }
    out
}

/// Whether `word` is a number written with digits and points (`1.9`, `1,500`, `42`).
pub fn is_number(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_digit())
        && word
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
}

/// Whether `token` may name the `thing` asked for: a directory or a path is written with a
/// `/` (`/var/log/journal`), whatever else a sentence on it names (`"auto"`, `re-enabled`);
/// an option is not a word of prose ([`is_prose_compound`]), and a file is written as one
/// ([`is_file_name`]: not `-r` in a sentence on the history file).
pub fn names_a(thing: Option<&str>, token: &str) -> bool {
    match thing {
        Some("directory" | "path") => token.contains('/'),
        // A word of prose joined by hyphens names no option (`the internal-only option`).
        Some("option" | "flag") => !is_prose_compound(token),
        Some("file") => is_file_name(token),
        _ => true,
    }
}

/// Whether `token` may be a file's name: a path (`~/.docutils`), a name with its extension
/// (`docutils.conf`) or one written in capitals (`README`, `ChangeLog`); not an option (`-r`)
/// nor a word quoted (`"stylesheet"`).
fn is_file_name(token: &str) -> bool {
    let name = token.trim_matches(|c: char| !c.is_alphanumeric() && !"~/._-".contains(c));
    let name = name.trim_end_matches('.');
    let capitals = name.chars().filter(char::is_ascii_uppercase).count();
    let inner_dot = name.trim_start_matches('.').contains('.');
    !name.starts_with('-')
        && (name.contains('/') || inner_dot || name.starts_with('.') || capitals >= 2)
}

/// Whether `token` is a word of prose joined by hyphens: letters in lower case and hyphens
/// only, without a sign (`internal-only`, `command-line`; not `--keep` nor `max_size`).
fn is_prose_compound(token: &str) -> bool {
    let word = token.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
    word.contains('-')
        && word.starts_with(|c: char| c.is_ascii_lowercase())
        && word.chars().all(|c| c.is_ascii_lowercase() || c == '-')
}

/// Whether `sentence` writes a proper name `question` does not: a capitalised word past the
/// first, as a person, a country or a court is written (not code or a path); a word that
/// opens a sentence within it (`... specifiers. This functionality ...`) is capitalised as the
/// first is.
pub fn new_proper_name(question: &str, sentence: &str) -> bool {
    let asked = words(question);
    let asked: BTreeSet<&str> = asked.split(' ').collect();
    let tokens: Vec<&str> = sentence.split_whitespace().collect();
    (0..tokens.len()).any(|k| name_kind(&asked, place(&tokens, k), tokens[k]) == Some(3))
}

/// Where the `k`th of `tokens` stands for [`name_kind`]: first (0) where it opens a sentence
/// within the quote (`... (-Fd). They allow ...`: `They` is capitalised as a first word is),
/// else `k`.
fn place(tokens: &[&str], k: usize) -> usize {
    match k > 0 && tokens[k - 1].ends_with(['.', '!', '?']) {
        true => 0,
        false => k,
    }
}

/// How surely `token`, the `k`th word of a sentence, is a name the question (its `asked`
/// words) does not write: 0 for code, 1 a path or file name, 2 a word with its sign (`--keep`,
/// `$HOME`) or joined by hyphens or underscores, 3 a capitalised word; `None` when it is none.
pub fn name_kind(asked: &BTreeSet<&str>, k: usize, raw: &str) -> Option<u8> {
    // Code may be all punctuation (``|``).
    let code = raw
        .trim_end_matches([',', '.', ';', ':', ')'])
        .trim_matches('`');
    if raw.starts_with('`') && !code.is_empty() && code.chars().all(|c| c.is_ascii_punctuation()) {
        return Some(0);
    }
    let token = raw.trim_matches(|c: char| !c.is_alphanumeric() && c != '/');
    // `pam_faillock` is the question's when it writes `pam_faillock`.
    let said = words(token);
    if said.is_empty() || said.split(' ').all(|w| asked.contains(w)) {
        return None;
    }
    let inner = |c: char| token.chars().skip(1).any(|t| t == c);
    // One case throughout: `allow-stderr`, `PERL_JSON_PP_USE_B`.
    let one_case =
        token.chars().all(|c| !c.is_uppercase()) || token.chars().all(|c| !c.is_lowercase());
    // An option, a variable or a marker is written with its sign (`--keep`, `$HOME`, `+really`).
    let signed = raw.starts_with(['-', '+', '$', '@', '%'])
        && raw
            .chars()
            .skip(1)
            .find(|c| *c != '-')
            .is_some_and(char::is_alphabetic);
    match () {
        _ if raw.starts_with(['`', '\'', '"']) => Some(0),
        _ if token.starts_with('/') || inner('.') || inner('/') => Some(1),
        _ if signed || (one_case && (inner('-') || inner('_'))) => Some(2),
        _ if k > 0 && token.starts_with(char::is_uppercase) && token.len() > 2 => Some(3),
        _ => None,
    }
}

/// The phrases `question` puts in quotes (`what does 'state of charge' mean?`), each as a
/// term of its own: `"state of charge"`, its words in lower case. A sentence holds it when it
/// has those words in that order ([`holds_phrase`]).
pub fn quoted_phrases(question: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for phrase in crate::search::local::query::quoted(question) {
        let term = format!("\"{}\"", words(phrase));
        if term.contains(' ') && !out.contains(&term) {
            out.push(term);
        }
    }
    out
}

/// Whether `text` holds the quoted phrase `term` (as [`quoted_phrases`] gives it).
pub fn holds_phrase(text: &str, term: &str) -> bool {
    let phrase = term.trim_matches('"');
    format!(" {} ", words(text)).contains(&format!(" {phrase} "))
}

/// Numbers written as words (`eight times`, `a quarter`, `twice`): figures as much as `8`.
pub const NUMBER_WORDS: &[&str] = &[
    "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "fifteen", "twenty", "thirty", "forty", "fifty", "hundred", "thousand", "million", "billion",
    "half", "third", "quarter", "twice", "double", "triple", "tenfold", "dozen",
];

/// The name a release's version is written after (`bash` of `bash-3.1`), if any.
pub fn versioned_name(word: &str) -> Option<&str> {
    word.rsplit_once('-')
        .map(|(name, _)| name)
        .filter(|_| is_version(word))
}

/// Whether `word` is a release's name with its version (`bash-3.1`, `v4.2`, `1.6` is a
/// figure anyway): a figure of a version, whatever it is written after.
pub fn is_version(word: &str) -> bool {
    let version = word
        .rsplit_once('-')
        .map(|(_, v)| v)
        .or_else(|| word.strip_prefix(['v', 'V']))
        .unwrap_or("");
    let mut parts = version.split('.');
    let numbers = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    version.contains('.') && parts.all(numbers)
}

/// The releases `text` writes, as numbers (`1.1.0` of `# 1.1.0`, `[0.2.11]`, `v1.1.0`,
/// `bash-5.2`), each with the index of its word: a number with points between digits only.
/// A list's number opening the text (`1.2. Where does ...`) is none.
pub fn releases_in(text: &str) -> Vec<(usize, String)> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (k, token) in tokens.iter().enumerate() {
        let bare = token.trim_matches(|c: char| !c.is_alphanumeric());
        let dotted = |w: &str| w.contains('.') && w.split('.').all(|p| p.parse::<u32>().is_ok());
        let number = match (dotted(bare), is_version(bare)) {
            (true, _) => bare,
            (false, true) => bare.rsplit(['-', 'v', 'V']).next().unwrap_or(bare),
            _ => continue,
        };
        let listed = k == 0 && tokens.len() > 1 && token.ends_with('.');
        // A measure is no release: `69.3%`, `2.5 seconds`.
        let measure = token.contains('%')
            || tokens
                .get(k + 1)
                .is_some_and(|w| w.starts_with('%') || is_measure_unit(&words(w)));
        if !listed && !measure {
            out.push((k, number.to_string()));
        }
    }
    out
}

/// Whether `heading` heads a release's changes: it writes a release ([`releases_in`]) as what
/// it is about, not as a section's number (`2.1 Invoking sed`, `Chapter 3.2`) nor in a note
/// (`TEMPLATE available since 0.23`): a number opening the heading is followed by no word
/// (`1.2.3`, `0.1.41 (November 27, 2024)`, `[0.2.11] - 2023-11-08`); one after a word follows
/// `version` or `release` (`Noteworthy changes in release 1.12`), or a name of a word or two
/// (`mio 1.1.0`, `GNU tar 1.34`), not a part of a document.
pub fn heads_release(heading: &str) -> bool {
    const PARTS: &[&str] = &["section", "chapter", "part", "appendix", "figure", "table"];
    let tokens: Vec<&str> = heading.split_whitespace().collect();
    releases_in(heading).iter().any(|&(k, _)| {
        let before = |j: usize| words(tokens[j]);
        match k {
            0 => !tokens
                .get(1)
                .is_some_and(|w| w.starts_with(char::is_alphabetic)),
            _ if ["version", "release"].contains(&before(k - 1).as_str()) => true,
            1 | 2 => !(0..k).any(|j| PARTS.contains(&before(j).as_str())),
            _ => false,
        }
    })
}

/// Whether `text` writes `release` as a release ([`releases_in`]): `5.2` of `bash-5.2`, not
/// of `5.2.1`.
pub fn writes_release(text: &str, release: &str) -> bool {
    releases_in(text).iter().any(|(_, r)| r == release)
}

/// The release a question writes (`1.1.0` of `what did mio 1.1.0 raise its MSRV to`,
/// `5.2` of `bash-5.2`), not a figure with its unit (`1.5 seconds`).
pub fn written_release(question: &str) -> Option<String> {
    releases_in(question)
        .into_iter()
        .next()
        .map(|(_, number)| number)
}

/// Whether `sentence` holds a number (in digits or in words) that `question` does not. A
/// digit inside a name (`ssh(1)`, `ext4`, `UTF-8`) is no figure; a version after a name
/// (`bash-3.1`) is one where the question asks for a version or a release of what it names.
pub fn new_figure(question: &str, sentence: &str) -> bool {
    let asked = words(question);
    let versions = asked.split(' ').any(|w| w == "version" || w == "release");
    let numbers = |text: &str| -> BTreeSet<String> {
        let tokens: Vec<&str> = text
            .split(|c: char| c.is_whitespace() || c == '/')
            .filter(|w| !w.is_empty())
            .collect();
        // A list's number (`25. The ...`) is none.
        let listed = |k: usize, w: &str| {
            k == 0
                && tokens.len() > 1
                && w.strip_suffix(['.', ')'])
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        };
        // A release of what the question names (`bash-3.1` of a question on bash).
        let release = |w: &str| {
            versions
                && versioned_name(w).is_none_or(|n| asked.split(' ').any(|a| a == n.to_lowercase()))
                && is_version(w)
        };
        let figure = |w: &str| {
            w.starts_with(|c: char| c.is_ascii_digit())
                || release(w.trim_end_matches(['.', ',', ';', ':', ')']))
        };
        let digits = tokens
            .iter()
            .enumerate()
            .filter(|&(k, w)| !listed(k, w))
            .map(|(_, w)| w.trim_start_matches(|c: char| !c.is_alphanumeric()))
            .filter(|w| figure(w))
            .flat_map(|w| w.split(|c: char| !c.is_ascii_digit() && c != ',' && c != '.'))
            .map(|n| n.trim_matches(|c: char| c == ',' || c == '.').to_string())
            .filter(|n| n.chars().any(|c| c.is_ascii_digit()));
        let spelled = words(text)
            .split(' ')
            .filter(|w| NUMBER_WORDS.contains(w))
            .map(str::to_string)
            .collect::<Vec<_>>();
        digits.chain(spelled).collect()
    };
    let asked = numbers(question);
    numbers(sentence).iter().any(|n| !asked.contains(n))
}

/// What the report says when no sentence answers `question`: how many documents were read,
/// and which of its words none of them mentions (`absent`: their terms).
pub fn no_answer(question: &str, absent: &[String], documents: usize) -> String {
    if documents == 0 {
        return "There is no source to quote: no search of this run returned a document of the \
                corpus.\n"
            .into();
    }
    let mut text = format!(
        "No sentence of the documents the searches returned answers the question \
         ({documents} document(s) read)."
    );
    // The question's own words, not their stems.
    let mut missing: Vec<&str> = Vec::new();
    for word in question.split(|c: char| !c.is_alphanumeric() && c != '-') {
        let terms = content_terms(word);
        if terms.iter().any(|t| absent.contains(t)) && !missing.contains(&word) {
            missing.push(word);
        }
    }
    match missing.is_empty() {
        true => text.push_str(" None of their sentences covers enough of what it asks."),
        false => text.push_str(&format!(
            " None of them mentions {}.",
            crate::markdown::inline(&missing.join(", "), 300)
        )),
    }
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_how_inside_a_question_asks_no_figure_of_its_own() {
        assert!(!asks_figure(
            "What rule of thumb links heat to how fast a lithium-ion cell ages?"
        ));
        assert!(asks_figure("How fast does a cell age above 25 degrees?"));
        assert!(asks_figure("Up to how many cycles does a cell last?"));
        assert!(asks_figure("By what factor does the buffer grow?"));
        assert!(asks_figure("What detection accuracy does the tool report?"));
        assert!(asks_figure("What tab stop width does Text::Wrap assume?"));
        assert!(asks_figure(
            "Which cell ages faster, and how fast does it age?"
        ));
    }

    /// An option is named with its sign, not by a word of prose joined by hyphens.
    #[test]
    fn a_word_of_prose_names_no_option() {
        let q = "In make 4.2, what was the internal --jobserver-fds option renamed to?";
        let s = "The internal-only option --jobserver-fds is now --jobserver-auth.";
        let tokens: Vec<&str> = s.split_whitespace().collect();
        let named: Vec<&str> = names_given(q, s).iter().map(|n| tokens[n.2]).collect();
        assert_eq!(named, ["--jobserver-auth."]);
        assert!(names_a(Some("option"), "max_size") && names_a(Some("option"), "--keep"));
        assert!(names_a(Some("word"), "internal-only"));
        // A file is named neither by an option nor by a word of prose.
        assert!(!names_a(Some("file"), "-r") && !names_a(Some("file"), "(--append"));
        assert!(!names_a(Some("file"), "system-wide") && !names_a(Some("file"), "\"stylesheet\""));
        assert!(names_a(Some("file"), "~/.bash_history") && names_a(Some("file"), "README"));
        assert!(names_a(Some("file"), "`docutils.conf`,") && names_a(Some("file"), ".netrc"));
        assert!(!names_a(Some("file"), "end.") && !names_a(Some("file"), "Files"));
    }

    #[test]
    fn a_question_is_split_before_each_and_that_asks_again() {
        assert_eq!(
            parts("In current glibc (2.3.4 and later), what is the default value?").len(),
            1
        );
        assert_eq!(
            parts("Is it 2.3.4 and later, what is its default?").len(),
            1
        );
        assert_eq!(parts("Why is the sky blue?"), ["Why is the sky blue?"]);
        assert_eq!(
            parts("Why do dendrites form, and how do solid electrolytes suppress them?"),
            [
                "Why do dendrites form,",
                "how do solid electrolytes suppress them?"
            ]
        );
        assert_eq!(
            parts("Which cobalt and nickel?").len(),
            1,
            "`and` joining nouns"
        );
        assert_eq!(parts("a and what b and how c and why d").len(), MOST_PARTS);
        assert_eq!(
            parts("Which file do -a and -w use when no name is given?").len(),
            1,
            "`when` within a clause sets a condition"
        );
        assert_eq!(parts("Is it cheap, and when did it start?").len(), 2);
    }

    #[test]
    fn a_quoted_phrase_is_one_term_held_where_its_words_stand_in_order() {
        let q = "What does 'State of Charge' mean, and is \"SoC\" the 'same' for a car's pack?";
        assert_eq!(quoted_phrases(q), ["\"state of charge\""]);
        assert!(holds_phrase(
            "The state-of-charge is shown.",
            "\"state of charge\""
        ));
        assert!(!holds_phrase(
            "The charge state of the pack.",
            "\"state of charge\""
        ));
        assert!(!holds_phrase("A state of charges.", "\"state of charge\""));
    }

    #[test]
    fn the_phrase_of_what_is_asked_names_its_measure_its_thing_and_its_program() {
        let phrase = |q: &str| {
            let said = words(q);
            let w: Vec<&str> = said.split(' ').collect();
            asked_phrase(&w, 0).join(" ")
        };
        assert_eq!(
            phrase("What is the oldest Linux kernel version that still works?"),
            "oldest linux kernel version"
        );
        assert_eq!(
            phrase("What marker goes into the version string?"),
            "marker goes"
        );
        assert_eq!(phrase("What is the default setting for --leak-check?"), "");
        assert!(asks_figure(
            "What is the oldest Linux kernel version that still works?"
        ));
        assert!(asks_figure(
            "For which compression levels is the output identical?"
        ));
        assert!(!asks_figure("What marker goes into the version string?"));
        assert_eq!(
            release_of("Which gcc version compiled it?").as_deref(),
            Some("gcc")
        );
        assert_eq!(
            release_of("In which version of bash did it change?").as_deref(),
            Some("bash")
        );
        assert_eq!(
            release_of("What is the current minimum supported Rust version of encoding_rs?")
                .as_deref(),
            Some("rust")
        );
        assert_eq!(release_of("What is the minimum supported version?"), None);
        // What a function returns is a value; an exit status is one whatever the question.
        assert_eq!(
            named_thing("What does asn1_get_length_der() return?"),
            Some("value")
        );
        assert_eq!(
            named_thing("What must my_backend's extern be named?"),
            Some("name")
        );
        assert_eq!(
            named_thing("What does the cathode return to the grid?"),
            None
        );
        assert_eq!(
            named_thing("Which exit status does xargs give?"),
            Some("status")
        );
        let q = "What does asn1_get_length_der() return on indefinite length?";
        let s = "Returns: the decoded length value, or -1 on indefinite length.";
        assert!(!names_given(q, s).is_empty());
    }

    #[test]
    fn the_thing_whose_name_is_asked_is_named_before_the_verb() {
        let thing = |q: &str| named_thing(q);
        assert_eq!(
            thing("Which environment variable restores it?"),
            Some("variable")
        );
        // A thing named in code is asked the name of by a question that writes code.
        assert_eq!(
            thing("Which function does xsltApplyStylesheet() call?"),
            Some("function")
        );
        assert_eq!(thing("Which recycling methods recover cobalt?"), None);
        assert_eq!(thing("What string does the lock() method return?"), None);
        assert_eq!(
            thing("What is the only callback that merge() uses?"),
            Some("callback")
        );
        // A file is a name, code or not; the phrase names what its last such word does.
        assert_eq!(
            thing("Which file does Docutils read for a user's settings?"),
            Some("file")
        );
        assert_eq!(thing("Which test file operator is true?"), Some("operator"));
        assert_eq!(thing("Under which file name is it shipped?"), Some("name"));
        assert_eq!(
            thing("Which archive format is the default?"),
            Some("format")
        );
        assert_eq!(thing("Which Windows API does it call?"), Some("api"));
        let asked = BTreeSet::new();
        assert_eq!(name_kind(&asked, 3, "PERL_JSON_PP_USE_B"), Some(2));
        assert_eq!(name_kind(&asked, 3, "allow-stderr"), Some(2));
        assert_eq!(name_kind(&asked, 3, "CamelCase_word"), Some(3));
    }

    #[test]
    fn a_question_for_a_name_is_answered_by_a_name_it_does_not_hold() {
        for q in [
            "Which keyword in the build-options variable tells a build to skip its tests?",
            "What path should be set as the home directory of a system account?",
            "Under which file name does a package ship its changelog?",
            "Which test restriction keeps a test from failing?",
        ] {
            assert!(asks_name(q), "{q}");
        }
        assert!(!asks_name("Why do dendrites form?"));
        assert!(!asks_name("What happens when a cell overheats?"));
        let q = "What path should be set as the home directory?";
        let given = |q: &str, s: &str| !names_given(q, s).is_empty();
        assert!(given(
            q,
            "The canonical home directory is ``/nonexistent``."
        ));
        // A path is written with a `/`: another name is not one.
        assert!(!given(q, "Declare the allow-stderr restriction."));
        // A name stands near where the sentence says the thing it names.
        let named = "Under which name should it be shipped?";
        assert!(given(
            named,
            "It ships under the name changelog.Debian.gz in its docs."
        ));
        assert!(!given(
            named,
            "Its name is given elsewhere; for its docs see changelog.Debian.gz."
        ));
        assert!(given(named, "Use the name Expat for it."));
        let q = "Which environment variable restores the old behaviour?";
        let s = "For the old behaviour, set PERL_JSON_PP_USE_B environment variable to true \
                 before you \"use\" JSON.";
        assert_eq!(names_given(q, s).first(), Some(&(2, 2, 5)));
        // A status may be a number.
        let q = "What exit status does gzip --test return on a warning?";
        assert!(given(q, "If a warning occurs, exit status is 2."));
        assert!(!given(
            "What path should be set as the home directory?",
            "Users should have their home directory set to this value."
        ));
        assert!(asks_figure("What is the length limit of a synopsis?"));
        assert!(asks_figure("Which range of numeric codes is used?"));
        assert!(asks_figure(
            "What alternative priority should it register with?"
        ));
        assert!(asks_figure("When did prices spike?"));
        // `when` in a clause asks for no time.
        assert!(!asks_figure("What acts as the fuel when a cell burns?"));
        assert!(!asks_figure(
            "When both are set, which one should a program honour?"
        ));
    }

    #[test]
    fn a_figure_is_new_in_digits_or_in_words() {
        let q = "How much more did a kWh cost in 2010 than in 2023?";
        assert!(new_figure(q, "It cost about eight times more in 2010."));
        assert!(new_figure(q, "Prices fell to 139 dollars in 2023."));
        assert!(new_figure(q, "Prices halved, then fell by half again."));
        assert!(!new_figure(q, "Prices fell a lot between 2010 and 2023."));
        assert!(!new_figure(
            "Why did eight plants close?",
            "Eight plants closed."
        ));
        // A digit inside a name is no figure.
        assert!(!new_figure(
            "Which key size?",
            "See ssh(1), ext4 and UTF-8."
        ));
        assert!(new_figure("Which level?", "Levels run from -1 to -9."));
        assert!(!new_figure(
            "Which version?",
            "25. The operator is stricter."
        ));
        assert!(new_figure(
            "Which bash version?",
            "25. It is so as of bash-3.1."
        ));
        assert!(!new_figure(
            "How much faster?",
            "25. It is so as of bash-3.1."
        ));
        // Another program's release is none.
        assert!(!new_figure(
            "Which gzip version?",
            "It is so as of bash-3.1."
        ));
    }

    #[test]
    fn which_port_and_which_release_ask_for_figures_a_limit_describing_a_name_does_not() {
        assert!(asks_figure("If no port is given, which port is used?"));
        assert!(asks_figure("In which Valgrind release was DHAT added?"));
        assert!(asks_figure(
            "Which GNU sed release added the --debug option?"
        ));
        assert!(asks_figure("On what date was the treaty adopted?"));
        assert!(!asks_figure(
            "Which keyword sets the minimum RSA key size the client accepts?"
        ));
        assert!(asks_figure("What is the minimum RSA key size?"));
        // A capital that opens a sentence within the quote is no name.
        let q = "Which output format is the only one able to dump in parallel?";
        let s = "The formats are custom (-Fc) and directory (-Fd). They allow parallel restores.";
        assert!(
            names_given(q, s).iter().all(|&(_, _, k)| k != 8),
            "{:?}",
            names_given(q, s)
        );
        assert!(asks_figure(
            "What is the longest a package name is allowed to be?"
        ));
        // A name the question writes joined by `_` is not new.
        assert!(
            names_given(
                "Which file does pam_faillock keep its records in?",
                "The file of pam_faillock keeps them."
            )
            .is_empty()
        );
    }

    /// A condition set before the question (`When neither --jobs nor build.jobs is set,`)
    /// does not make a `how many` after it a question of when; a `when` that joins a clause
    /// to what comes before asks nothing.
    #[test]
    fn the_clause_that_asks_is_past_the_conditions_before_it() {
        let q = "When neither --jobs nor build.jobs is set, how many processes does Cargo run?";
        assert_eq!(main_clause(q), "how many processes does Cargo run?");
        assert!(asks_figure(q));
        let q = "Which option makes APT merely warn, instead of refusing, when a file is unsigned?";
        assert_eq!(main_clause(q), q);
        assert!(!asks_figure(q));
        assert!(asks_figure(
            "What is the highest output base that GNU bc supports?"
        ));
    }

    #[test]
    fn releases_are_written_numbers_with_points_a_section_number_heads_no_release() {
        let found =
            |t: &str| -> Vec<String> { releases_in(t).into_iter().map(|(_, r)| r).collect() };
        assert_eq!(found("[0.2.11] - 2023-11-08"), ["0.2.11"]);
        assert_eq!(found("added to bash-5.2 since v5.1"), ["5.2", "5.1"]);
        assert!(found("1.2. Where does the name come from?").is_empty());
        assert!(heads_release("0.1.41 (November 27, 2024)"));
        assert!(heads_release(
            "Noteworthy changes in release 1.12 (2022-04-07)"
        ));
        assert!(!heads_release("2.1 Invoking sed"));
        assert!(!heads_release("Chapter 3.2"));
        assert!(!heads_release("TEMPLATE available since 0.23"));
        assert!(heads_release("GNU tar 1.34") && heads_release("Version 4.3 (19 Jan 2020)"));
        assert_eq!(
            written_release("What did mio 1.1.0 raise its MSRV to?").as_deref(),
            Some("1.1.0")
        );
        assert_eq!(written_release("What happens after 1.5 seconds?"), None);
        assert!(writes_release("bash-5.2 is out", "5.2") && !writes_release("5.2.1", "5.2"));
        assert_eq!(asked_extreme("What is the highest level?"), Some(true));
        assert_eq!(asked_extreme("What is the minimum size?"), Some(false));
        assert_eq!(asked_extreme("What is the default size?"), None);
    }
}
