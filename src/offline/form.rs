//! The form an answer takes, beyond its subject and its kind of figure (issue 57): `When ...?`
//! is answered by a time, `Who ...?` or `Which country ...?` by a name, `Where ...?` by a
//! path or a name, `Which ..., A or B?` by one of the options; and the words that narrow
//! what is asked (`the default`, `the first`): a sentence without that form or those words does not state the answer, however
//! many of the question's words it holds. `Why ...?` is answered by a sentence that gives a
//! cause as causes are written (`because`, `hence`, `due to`, `when prices spiked`, `for its
//! low cost`): a cause said without one (`whose voltage curve is flat`) is missed, and the
//! answer says it is not stated rather than offer a sentence that merely shares the
//! question's words (every why-question of the shipped sets was answered wrongly so before).

use crate::text::words;

use super::kinds::MONTHS;
use super::question::new_proper_name;

/// Nouns that, asked for with `which` or `what`, are answered by a proper name.
pub const NAMED_BY_PROPER_NAME: &[&str] = &[
    "country",
    "countries",
    "company",
    "companies",
    "organisation",
    "organization",
    "person",
    "people",
    "court",
    "courts",
    "city",
    "nation",
    "firm",
    "manufacturer",
    "maker",
    "university",
    "author",
    "authors",
    "body",
    "foundation",
];

/// Nouns that, asked for with `which` or `what`, are answered by an address.
pub const NAMED_BY_ADDRESS: &[&str] = &[
    "address",
    "addresses",
    "url",
    "urls",
    "website",
    "email",
    "e-mail",
];

/// The words a sentence gives a cause with.
const CAUSES: &[&str] = &[
    "because",
    "since",
    "when",
    "for its",
    "for their",
    "so that",
    "hence",
    "therefore",
    "due to",
    "owing to",
    "thanks to",
    "reason",
    "reasons",
    "in order to",
    "as a result",
    "caused by",
    "causes",
    "leads to",
    "that is why",
    "which is why",
];

/// Words that give a cause only where they open a clause (`It does less, so ...`, `Thus,
/// ...`), not within one (`the work thus licensed`, `doing so`).
const CAUSES_OPENING: &[&str] = &["so", "thus"];

/// Whether `sentence` gives a cause as causes are written ([`CAUSES`], [`CAUSES_OPENING`]).
fn gives_cause(sentence: &str) -> bool {
    let said = format!(" {} ", words(sentence));
    let lower = sentence.to_lowercase();
    let opens = |c: &str| {
        lower.starts_with(&format!("{c} "))
            || lower.starts_with(&format!("{c},"))
            || [",", ";", ":"].iter().any(|p| {
                lower.contains(&format!("{p} {c} ")) || lower.contains(&format!("{p} {c},"))
            })
    };
    CAUSES.iter().any(|c| said.contains(&format!(" {c} ")))
        || CAUSES_OPENING.iter().any(|c| opens(c))
}

/// The words a sentence gives something a name with.
const NAMING: &[&str] = &[
    "called",
    "calls",
    "named",
    "name",
    "names",
    "renamed",
    "known as",
    "dubbed",
    "titled",
    "nicknamed",
];

/// Whether a question's words (`what was valgrind called ...`) ask what something is named:
/// `what`, a form of `be`, then `called`, `named` or `known as` after its subject.
fn asks_a_name(w: &[&str]) -> bool {
    let be = ["is", "was", "are", "were"];
    w.get(1).is_some_and(|x| be.contains(x))
        && w.iter()
            .skip(3)
            .any(|x| ["called", "named", "known"].contains(x))
}

/// Words of a question that narrow which of its subject's values it asks for (`the default
/// value`, `the first version`, `the largest source`), each with the words a sentence states
/// that value by: a sentence that holds none gives another value.
const QUALIFIERS: &[(&[&str], &[&str])] = &[
    (&["default"], &["default", "defaults"]),
    (
        &["first", "earliest"],
        &[
            "first",
            "earliest",
            "initially",
            "originally",
            "introduced",
            "since",
        ],
    ),
    (
        &["largest", "biggest"],
        &["largest", "biggest", "most", "leading", "top", "main"],
    ),
    (&["smallest"], &["smallest", "least", "fewest", "lowest"]),
    (
        &["maximum", "highest"],
        &[
            "maximum", "max", "most", "up to", "limit", "highest", "exceed",
        ],
    ),
    (
        &["minimum", "lowest"],
        &["minimum", "min", "least", "lowest", "below"],
    ),
    (
        &["latest", "newest"],
        &["latest", "newest", "last", "most recent", "current"],
    ),
];

/// The qualifiers of `question` ([`QUALIFIERS`]): for each, the words that state it.
pub fn qualifiers(question: &str) -> Vec<&'static [&'static str]> {
    let said = format!(" {} ", words(question));
    QUALIFIERS
        .iter()
        .filter(|(asks, _)| asks.iter().any(|a| said.contains(&format!(" {a} "))))
        .map(|&(_, states)| states)
        .collect()
}

/// Whether `sentence` states each of the `qualifiers` a question asks with.
pub fn qualified(qualifiers: &[&[&str]], sentence: &str) -> bool {
    let said = format!(" {} ", words(sentence));
    qualifiers
        .iter()
        .all(|states| states.iter().any(|w| said.contains(&format!(" {w} "))))
}

/// The form a question's answer takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// A time: a year, a decade or a month.
    Time,
    /// A proper name the question does not write.
    Name,
    /// One of the options the question ends with, in lower-case words.
    Choice(Vec<String>),
    /// A cause ([`CAUSES`]).
    Reason,
    /// A place: a path, or a proper name the question does not write.
    Place,
    /// An address the question does not write: a URL, an e-mail address, an IP address.
    Address,
    /// A name something is or was given (`What was Valgrind called before release?`): said
    /// where a sentence names ([`NAMING`]).
    Naming,
    /// Anything that states the subject.
    Any,
}

impl Form {
    /// The form of `question`'s answer.
    pub fn of(question: &str) -> Form {
        let said = words(question);
        let w: Vec<&str> = said.split(' ').collect();
        if let Some(options) = options(question) {
            return Form::Choice(options);
        }
        match w.first().copied() {
            Some("when")
                if !w
                    .iter()
                    .any(|x| ["what", "which", "who", "how"].contains(x)) =>
            {
                Form::Time
            }
            Some("who" | "whom" | "whose") => Form::Name,
            Some("why") => Form::Reason,
            Some("where") => Form::Place,
            _ if asks_for(&w, NAMED_BY_ADDRESS) => Form::Address,
            Some("what") if asks_a_name(&w) => Form::Naming,
            _ if asks_for(&w, NAMED_BY_PROPER_NAME) => Form::Name,
            _ => Form::Any,
        }
    }

    /// Whether `sentence` has this form's answer to `question`.
    pub fn held_by(&self, question: &str, sentence: &str) -> bool {
        match self {
            Form::Time => holds_time(sentence),
            Form::Name => new_proper_name(question, sentence),
            Form::Choice(options) => {
                let said = format!(" {} ", words(sentence));
                options.iter().any(|o| said.contains(&format!(" {o} ")))
            }
            Form::Reason => gives_cause(sentence),
            Form::Naming => {
                let said = format!(" {} ", words(sentence));
                NAMING.iter().any(|n| said.contains(&format!(" {n} ")))
            }
            Form::Place => {
                let asked = words(question);
                let path = |t: &str| t.contains('/') && !asked.contains(&words(t));
                sentence.split_whitespace().any(path) || new_proper_name(question, sentence)
            }
            Form::Address => sentence
                .split_whitespace()
                .map(|t| t.trim_matches(|c: char| "<>()[],;\"'`".contains(c)))
                .any(|t| is_address(t) && !question.contains(t.trim_end_matches('.'))),
            Form::Any => true,
        }
    }

    /// Whether `span`, a short answer cut from a sentence, is of this form: one of the options
    /// for a choice; any span otherwise.
    pub fn fits(&self, span: &str) -> bool {
        match self {
            Form::Choice(options) => options.contains(&words(span)),
            _ => true,
        }
    }
}

/// `which` or `what` with, within two words, one of `nouns`.
fn asks_for(w: &[&str], nouns: &[&str]) -> bool {
    w.iter().enumerate().any(|(k, x)| {
        (*x == "which" || *x == "what") && w[k + 1..].iter().take(2).any(|n| nouns.contains(n))
    })
}

/// Whether `token` is an address: a URL (`https://gnupg.org/faq/`, `www.zlib.net`), an
/// e-mail address (`procps@freelists.org`) or an IP address (`127.0.0.1`, `::1`).
fn is_address(token: &str) -> bool {
    let dotted = |t: &str| t.contains('.') && !t.ends_with('.');
    let ip = token.split('.').count() == 4
        && token
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    token.contains("://")
        || token.starts_with("www.")
        || token
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && dotted(host))
        || ip
        || (token.contains("::") && token.chars().all(|c| c.is_ascii_hexdigit() || c == ':'))
}

/// The options of a question that ends by offering them (`..., Breaks or Conflicts?`,
/// `...: gzip, bzip2 or xz?`): each at most three words, without an asking word, the first
/// after a comma or a colon.
fn options(question: &str) -> Option<Vec<String>> {
    let (mut rest, last) = question.trim().trim_end_matches('?').rsplit_once(" or ")?;
    let mut options = vec![words(last)];
    while let Some(k) = rest.rfind([',', ':']) {
        let item = words(&rest[k + 1..]);
        let asks = item
            .split(' ')
            .any(|w| ["what", "which", "who", "how", "when", "why", "where"].contains(&w));
        if item.is_empty() || item.split(' ').count() > 3 || asks {
            break;
        }
        options.insert(0, item);
        if rest[k..].starts_with(':') {
            break;
        }
        rest = &rest[..k];
    }
    let short = |o: &String| !o.is_empty() && o.split(' ').count() <= 3;
    (options.len() >= 2 && options.iter().all(short)).then_some(options)
}

/// Whether `sentence` writes a time: a year (`1989`, `1990s`; not a part of a code such as
/// `02110-1301`), or a month (`May` beside a number: `you may` is none).
fn holds_time(sentence: &str) -> bool {
    let said = words(sentence);
    let w: Vec<&str> = said.split(' ').collect();
    let number = |k: Option<&&str>| k.is_some_and(|x| x.chars().all(|c| c.is_ascii_digit()));
    let month = w.iter().enumerate().any(|(k, x)| {
        MONTHS.contains(x)
            || (*x == "may" && (number(w.get(k + 1)) || k > 0 && number(w.get(k - 1))))
    });
    month || sentence.split_whitespace().any(is_year)
}

/// Whether `token`, a word of a sentence as written, is a year or a decade.
fn is_year(token: &str) -> bool {
    let bare = token.trim_matches(|c: char| ".,;:()[]\"'".contains(c));
    let year = bare.strip_suffix('s').unwrap_or(bare);
    year.len() == 4
        && year.chars().all(|c| c.is_ascii_digit())
        && (1000..=2199).contains(&year.parse::<u32>().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_asking_word_gets_its_form() {
        assert_eq!(Form::of("When was version 1 issued?"), Form::Time);
        assert_eq!(Form::of("When a cell burns, what is the fuel?"), Form::Any);
        assert_eq!(Form::of("Who publishes new versions?"), Form::Name);
        assert_eq!(Form::of("Which country mines most nickel?"), Form::Name);
        assert_eq!(
            Form::of("Which field is stronger, Breaks or Conflicts?"),
            Form::Choice(vec!["breaks".into(), "conflicts".into()])
        );
        assert_eq!(
            Form::of("Which is used: gzip, bzip2 or xz?"),
            Form::Choice(vec!["gzip".into(), "bzip2".into(), "xz".into()])
        );
        assert_eq!(Form::of("Why is it called Lesser?"), Form::Reason);
        assert_eq!(Form::of("How many cycles do cells last?"), Form::Any);
        let named = Form::of("What was Valgrind called before its first release?");
        assert_eq!(named, Form::Naming);
        let q = "What was Valgrind called?";
        assert!(named.held_by(q, "Originally the project was named Heimdall."));
        assert!(!named.held_by(q, "First, Valgrind only traces the top-level process."));
        assert_eq!(
            Form::of("What is the file named in a config?"),
            Form::Naming
        );
        assert_eq!(Form::of("What is called first?"), Form::Any);
        assert_eq!(
            Form::of("If both are set, which one wins, A or B?"),
            Form::Choice(vec!["a".into(), "b".into()])
        );
        // A long alternative is no list of options.
        assert_eq!(
            Form::of("Is it sold, or is only the copying charged for?"),
            Form::Any
        );
    }

    /// `what address`, `which URL`: a URL, an e-mail or an IP address the question does not
    /// write.
    #[test]
    fn an_address_is_answered_by_one() {
        let q = "At what address can the FAQ be read as plain text?";
        assert_eq!(Form::of(q), Form::Address);
        for s in [
            "It is at https://frob.example/faq.txt now.",
            "Mail frob@lists.example.org for a copy.",
            "The server listens on 127.0.0.1 only.",
            "See <www.frob.example>.",
        ] {
            assert!(Form::Address.held_by(q, s), "{s}");
        }
        for s in [
            "A FAQ is a moving target, so we no longer ship it.",
            "Version 1.2.3 of the FAQ is older.",
            "Write to the maintainer @ the list.",
        ] {
            assert!(!Form::Address.held_by(q, s), "{s}");
        }
        let q = "Is https://frob.example/faq.txt the FAQ's address?";
        assert!(!Form::Address.held_by(q, "It is https://frob.example/faq.txt."));
    }

    #[test]
    fn a_sentence_holds_the_form_or_does_not_state_the_answer() {
        let q = "When was version 1 issued?";
        assert!(Form::Time.held_by(q, "It was issued in February 1989."));
        assert!(Form::Time.held_by(q, "It dates from the 1980s."));
        assert!(Form::Time.held_by(q, "It came out on 3 May."));
        assert!(!Form::Time.held_by(q, "Section 1.12 defines You."));
        assert!(!Form::Time.held_by(q, "You may copy it."));
        assert!(!Form::Time.held_by(q, "Write to Boston, MA 02110-1301 USA."));
        let q = "Which country mines most nickel?";
        assert!(Form::Name.held_by(q, "Most nickel is mined in Indonesia."));
        assert!(!Form::Name.held_by(q, "Recycling is a second source of supply."));
        // A sentence within the quote opens with its capital: no name.
        let q = "Who found the overflow in the padding code?";
        let s = "The padding code may overflow. This is also exposed to archive users.";
        assert!(!Form::Name.held_by(q, s));
        assert!(Form::Name.held_by(q, "Credit for finding it goes to Joern Schneeweisz."));
        let choice = Form::of("Which field is stronger, Breaks or Conflicts?");
        assert!(choice.held_by("", "Conflicts is stronger than Breaks."));
        assert!(!choice.held_by("", "The dpkg tool reads the field."));
        let q = "Why is it called Lesser?";
        assert!(Form::Reason.held_by(q, "It is called Lesser because it does less."));
        assert!(Form::Reason.held_by(q, "It does less, hence the name Lesser."));
        assert!(Form::Reason.held_by(q, "Operators value it for its low cost."));
        assert!(!Form::Reason.held_by(q, "The Lesser licence is version 2.1."));
        assert!(!Form::Reason.held_by(q, "If you want to, use the Lesser licence."));
        assert!(Form::Reason.held_by(q, "It does less, so it is Lesser."));
        assert!(Form::Reason.held_by(q, "Thus, it is called Lesser."));
        assert!(!Form::Reason.held_by(q, "The work thus licensed is called Lesser."));
        assert!(!Form::Reason.held_by(q, "Doing so is called Lesser."));
        assert!(choice.fits("Conflicts"));
        assert!(!choice.fits("dpkg"));
    }

    #[test]
    fn a_qualified_value_is_stated_only_by_a_sentence_that_qualifies_it() {
        let asked = qualifiers("Which value is the default, the one every tool supports?");
        assert!(qualified(&asked, "By default the value is binary-targets."));
        assert!(!qualified(&asked, "The value may be no or binary-targets."));
        let asked = qualifiers("Which version was the first to support the field?");
        assert!(qualified(
            &asked,
            "The field was introduced in version 1.19."
        ));
        assert!(!qualified(&asked, "Version 1.22 supports the field."));
        assert!(qualifiers("How many cycles do cells last?").is_empty());
    }
}
