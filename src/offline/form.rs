//! The form an answer takes, beyond its subject and its kind of figure (issue 57): `When ...?`
//! is answered by a time, `Who ...?` or `Which country ...?` by a name, `Why ...?` by a
//! cause, `Which ..., A or B?` by one of the options. A sentence without that form does not state the answer, however
//! many of the question's words it holds.

use crate::text::words;

use super::question::new_name;

/// Nouns that, asked for with `which` or `what`, are answered by a proper name.
const NAMED_BY_PROPER_NAME: &[&str] = &[
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

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words that give a cause: a sentence without one does not say why.
const CAUSES: &[&str] = &[
    "because",
    "since",
    "due to",
    "so that",
    "in order to",
    "reason",
    "reasons",
    "therefore",
    "thus",
    "hence",
    "as a result",
    "owing to",
    "caused by",
];

/// The form a question's answer takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Form {
    /// A time: a year, a decade or a month.
    Time,
    /// A proper name the question does not write.
    Name,
    /// A cause.
    Reason,
    /// One of the options the question ends with, in lower-case words.
    Choice(Vec<String>),
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
            _ if asks_proper_name(&w) => Form::Name,
            _ => Form::Any,
        }
    }

    /// Whether `sentence` has this form's answer to `question`.
    pub fn held_by(&self, question: &str, sentence: &str) -> bool {
        match self {
            Form::Time => holds_time(sentence),
            Form::Name => new_name(question, sentence),
            Form::Reason => {
                let said = format!(" {} ", words(sentence));
                CAUSES.iter().any(|c| said.contains(&format!(" {c} ")))
            }
            Form::Choice(options) => {
                let said = format!(" {} ", words(sentence));
                options.iter().any(|o| said.contains(&format!(" {o} ")))
            }
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

/// `which` or `what` with, within two words, a noun answered by a proper name.
fn asks_proper_name(w: &[&str]) -> bool {
    w.iter().enumerate().any(|(k, x)| {
        (*x == "which" || *x == "what")
            && w[k + 1..]
                .iter()
                .take(2)
                .any(|n| NAMED_BY_PROPER_NAME.contains(n))
    })
}

/// The options of a question that ends by offering them (`..., Breaks or Conflicts?`,
/// `...: gzip, bzip2 or xz?`): each at most three words, after the last comma or colon.
fn options(question: &str) -> Option<Vec<String>> {
    let tail = question
        .trim()
        .trim_end_matches('?')
        .rsplit_once([',', ':'])?
        .1;
    let (rest, last) = tail.rsplit_once(" or ")?;
    let mut options: Vec<String> = rest.split(',').map(words).collect();
    options.push(words(last));
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
        // A long alternative is no list of options.
        assert_eq!(
            Form::of("Is it sold, or is only the copying charged for?"),
            Form::Any
        );
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
        let q = "Why is it called Lesser?";
        assert!(Form::Reason.held_by(q, "It is Lesser because it does less."));
        assert!(!Form::Reason.held_by(q, "Use the Lesser license instead."));
        let choice = Form::of("Which field is stronger, Breaks or Conflicts?");
        assert!(choice.held_by("", "Conflicts is stronger than Breaks."));
        assert!(!choice.held_by("", "The dpkg tool reads the field."));
        assert!(choice.fits("Conflicts"));
        assert!(!choice.fits("dpkg"));
    }
}
