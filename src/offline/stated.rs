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
//!   acronym, a compound: `LFP` where `NMC` is asked).

use std::collections::{BTreeSet, HashMap};

use crate::agents::claims::content_terms;
use crate::text::words;

use super::names::is_named;
use super::question::asks_when;
use super::select::Candidate;
use super::span::figures;

/// A kind of figure: what in a question asks for it, and the words of its unit.
pub struct Kind {
    /// As the abstention names it (`the cycle count`).
    pub label: &'static str,
    /// Phrases of a question (as [`words`] gives it) that ask for it.
    asks: &'static [&'static str],
    /// Words of the unit (as [`words`] gives them), after the figure (`cycles`, `wh kg`).
    units: &'static [&'static str],
    /// The unit may stand before the figure (`port 80`, `a priority of 20`).
    before: bool,
}

const TIME: &[&str] = &[
    "seconds", "second", "minutes", "minute", "hours", "hour", "days", "day", "weeks", "week",
    "months", "month", "years", "year", "ms", "min",
];
const TEXT_LENGTH: &[&str] = &[
    "words",
    "word",
    "characters",
    "character",
    "lines",
    "line",
    "bytes",
    "byte",
];
const SHARE: &[&str] = &[
    "percent", "per cent", "times", "fold", "half", "third", "quarter", "fifth", "tenth", "%",
];

/// The kinds, the first that a question asks for being its kind.
const KINDS: &[Kind] = &[
    Kind {
        label: "the volumetric energy density",
        asks: &["wh l", "volumetric", "per litre", "per liter"],
        units: &["wh l", "kwh l"],
        before: false,
    },
    Kind {
        label: "the energy density",
        asks: &["wh kg", "gravimetric", "per kilogram", "specific energy"],
        units: &["wh kg", "kwh kg"],
        before: false,
    },
    Kind {
        label: "the energy density",
        asks: &["energy density"],
        units: &["wh kg", "wh l", "kwh kg", "kwh l"],
        before: false,
    },
    Kind {
        label: "the share",
        asks: &[
            "by how much",
            "how much lower",
            "how much higher",
            "how much more",
            "how much less",
            "how many times",
            "what share",
            "what percentage",
            "what proportion",
            "what fraction",
            "what percent",
            "a share",
            "efficiency",
        ],
        units: SHARE,
        before: false,
    },
    Kind {
        label: "the length of time",
        asks: &[
            "how many days",
            "how many hours",
            "how many minutes",
            "how many seconds",
            "how many weeks",
            "how many months",
            "how many years",
            "grace period",
        ],
        units: TIME,
        before: false,
    },
    Kind {
        label: "the length",
        asks: &[
            "how many words",
            "how many characters",
            "how many lines",
            "how many bytes",
        ],
        units: TEXT_LENGTH,
        before: false,
    },
    Kind {
        label: "the cycle count",
        asks: &["cycles", "cycle life", "cycle"],
        units: &["cycles", "cycle"],
        before: false,
    },
    Kind {
        label: "the temperature",
        asks: &[
            "temperature",
            "how hot",
            "how cold",
            "how warm",
            "dew point",
            "degrees",
        ],
        units: &["degrees", "celsius", "fahrenheit", "kelvin", "c"],
        before: false,
    },
    Kind {
        label: "the price",
        asks: &[
            "price",
            "cost",
            "costs",
            "how expensive",
            "per tonne",
            "a tonne",
        ],
        units: &[
            "dollars", "dollar", "usd", "euros", "euro", "eur", "yuan", "pounds", "cents", "$",
            "€", "£",
        ],
        before: true,
    },
    Kind {
        label: "the length of time",
        asks: &["how long", "how soon"],
        units: &[
            "seconds",
            "second",
            "minutes",
            "minute",
            "hours",
            "hour",
            "days",
            "day",
            "weeks",
            "week",
            "months",
            "month",
            "years",
            "year",
            "ms",
            "min",
            "words",
            "word",
            "characters",
            "character",
            "lines",
            "line",
            "bytes",
            "cycles",
            "mm",
            "cm",
            "km",
        ],
        before: false,
    },
    Kind {
        label: "the energy",
        asks: &["how much energy"],
        units: &["wh", "kwh", "mwh", "gwh", "twh", "kj", "mj"],
        before: false,
    },
    Kind {
        label: "the voltage",
        asks: &["voltage", "how many volts"],
        units: &["v", "volts", "volt", "mv", "kv"],
        before: false,
    },
    Kind {
        label: "the current density",
        asks: &["current density"],
        units: &["ma cm2", "a cm2", "ma cm", "ma cm²"],
        before: false,
    },
    Kind {
        label: "the conductivity",
        asks: &["conductivity"],
        units: &["s cm", "ms cm", "siemens"],
        before: false,
    },
    Kind {
        label: "the port",
        asks: &["port", "ports"],
        units: &["port", "ports"],
        before: true,
    },
    Kind {
        label: "the priority",
        asks: &["priority"],
        units: &["priority"],
        before: true,
    },
];

/// The kind of figure `question` asks for, if it names one: the one it names first, near an
/// asking word if one is (`at what current density ... at room temperature`), the first of
/// [`KINDS`] on a tie; with whether it is named near an asking word (`what did *a tonne*
/// ... cost`: the question asks for that figure, whatever its other words).
pub fn kind_of(question: &str) -> Option<(&'static Kind, bool)> {
    let said = format!(" {} ", words(question));
    let at = |k: &Kind| {
        k.asks
            .iter()
            .filter_map(|a| said.find(&format!(" {a} ")))
            .min()
    };
    // A kind named within three words of an asking word is what is asked (`at minus 20
    // degrees, what share ...`).
    let asking: Vec<usize> = ["what", "which", "how"]
        .iter()
        .flat_map(|w| {
            let w = format!(" {w} ");
            said.match_indices(&w).map(|(p, _)| p).collect::<Vec<_>>()
        })
        .collect();
    let near = |p: usize| {
        asking.iter().any(|&a| {
            let (from, to) = (a.min(p), a.max(p));
            said[from..to].split_whitespace().count() <= 3
        })
    };
    let mut best: Option<(bool, usize, &'static Kind)> = None;
    for kind in KINDS {
        if let Some(p) = at(kind) {
            let rank = (!near(p), p);
            if best.is_none_or(|(n, b, _)| rank < (n, b)) {
                best = Some((rank.0, p, kind));
            }
        }
    }
    best.map(|(far, _, k)| (k, !far))
}

/// Words that stand between a question's asking words and its subject; the first four are
/// the copula, after which the subject runs to the question's end.
const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "do", "does", "did", "can", "could", "must", "should", "may",
    "might", "will", "would", "has", "have", "had", "shall",
];
const ASKING: &[&str] = &[
    "what", "which", "how", "when", "where", "who", "whom", "whose", "why",
];
/// Verbs that end a question's subject (`do sodium-ion cells *last*`; a word ending in `-ly`
/// does too: `do NMC cells *typically* last`).
const VERBS: &[&str] = &[
    "last",
    "reach",
    "cost",
    "give",
    "take",
    "achieve",
    "begin",
    "start",
    "release",
    "melt",
    "need",
    "use",
    "used",
    "using",
    "ship",
    "hold",
    "store",
    "stored",
    "deliver",
    "lose",
    "fall",
    "rise",
    "climb",
    "say",
    "allow",
    "allowed",
    "require",
    "required",
    "mean",
    "become",
    "make",
    "keep",
    "get",
    "set",
    "go",
    "goes",
    "run",
    "work",
    "support",
    "refer",
    "stay",
    "remain",
    "contain",
    "list",
    "be",
    "been",
    "being",
    "happen",
    "swell",
    "short",
    "register",
    "compare",
    "differ",
    "call",
    "carry",
    "apply",
    "follow",
    "handed",
    "produce",
    "mine",
    "add",
    "issued",
    "published",
    "heard",
    "settled",
    "given",
    "put",
    "choose",
    "pick",
];
/// Words of a question's phrasing that name no subject (`a *typical* NMC cell *still*`).
const PHRASING: &[&str] = &[
    "also", "only", "ever", "still", "then", "now", "always", "never", "just", "typical", "about",
    "full", "first", "new", "main", "least", "most", "many", "much", "more", "less", "long",
    "high", "low", "today", "one", "kind", "kinds", "sort", "type", "largest", "smallest",
    "biggest", "best", "usual", "common",
];
/// Words opening a subject that points back to what the question said before (`its
/// executable`, `that update`): the subject is not in the words that follow.
const BACK: &[&str] = &[
    "its", "their", "his", "her", "this", "that", "these", "those", "such", "it", "they",
];

/// The subject of a question: its words as written, and the terms a sentence must hold.
#[derive(Debug, Clone, Default)]
pub struct Subject {
    /// The words between the auxiliary and the verb, as the question writes them.
    pub phrase: String,
    /// The terms of its rarest specific word (a name, an acronym, a compound, a figure): a
    /// sentence must hold them all.
    pub specific: Option<BTreeSet<String>>,
    /// Without one, its rarest term (stemmed, and as written): a sentence must hold it and
    /// name no other subject ([`names_another`]).
    pub key: Option<(String, String)>,
}

/// Words that open a clause of their own: the subject is not past them.
const SUBORDINATE: &[&str] = &[
    "if", "when", "before", "after", "because", "unless", "until", "while", "whether", "so",
];

/// The words of `question` that are its subject: after its auxiliary (`do`, `is`), up to its
/// verb, and those after `of` between its asking word and the auxiliary (`what share *of the
/// new cars bought in Norway* were ...`); none without an auxiliary, or where the subject
/// points back (`its executable`). The asking word is the first after the last comma that
/// has one (`When both are set, *which* one ...`).
fn subject_words(question: &str) -> (Vec<&str>, Vec<&str>) {
    let raw: Vec<&str> = question.split_whitespace().collect();
    let tokens: Vec<&str> = raw
        .iter()
        .map(|t| t.trim_matches(|c: char| !c.is_alphanumeric()))
        .collect();
    let lower: Vec<String> = tokens.iter().map(|t| t.to_lowercase()).collect();
    let asks = |k: &usize| ASKING.contains(&lower[*k].as_str());
    let after_comma = (0..raw.len())
        .filter(|&k| raw[k].ends_with(','))
        .filter_map(|c| (c + 1..raw.len()).find(asks))
        .last();
    let Some(asking) = after_comma.or_else(|| (0..raw.len()).find(asks)) else {
        return (Vec::new(), Vec::new());
    };
    let free = |k: usize| !SUBORDINATE.contains(&lower[k].as_str());
    // `have to back` is no auxiliary: the subject is then the asked thing itself.
    let aux = (asking + 1..lower.len())
        .take_while(|&k| free(k))
        .find(|&k| {
            AUXILIARIES.contains(&lower[k].as_str()) && lower.get(k + 1).is_none_or(|n| n != "to")
        });
    let Some(aux) = aux else {
        return (Vec::new(), Vec::new());
    };
    let back = |k: usize| lower.get(k).is_some_and(|w| BACK.contains(&w.as_str()));
    let of = (asking + 1..aux)
        .find(|&k| lower[k] == "of")
        .filter(|&k| !back(k + 1));
    let before: Vec<&str> = of.map_or(Vec::new(), |k| tokens[k + 1..aux].to_vec());
    let start = aux + 1;
    if back(start) {
        return (before, Vec::new());
    }
    let stops =
        |k: usize| VERBS.contains(&lower[k].as_str()) || lower[k].ends_with("ly") || !free(k);
    let mut end = (start..tokens.len())
        .find(|&k| stops(k))
        .unwrap_or(tokens.len());
    // Run to the question's end, its last word is its verb (`does that update carry`), but
    // after the copula (`what is the price of cobalt`), unless a participle (`is it settled`).
    let copula = AUXILIARIES[..4].contains(&lower[aux].as_str());
    if end == tokens.len() && end > start + 1 && (!copula || lower[end - 1].ends_with("ed")) {
        end -= 1;
    }
    (before, tokens.get(start..end).unwrap_or_default().to_vec())
}

/// Whether `word` follows a number to make it a figure (`10 *to* 80 *percent*`), not a name.
fn is_measure(word: &str) -> bool {
    let word = word.to_lowercase();
    ["to", "and", "or", "percent"].contains(&word.as_str())
        || KINDS.iter().any(|k| k.units.contains(&word.as_str()))
}

/// Whether `word`, of a question's subject, names something specific: a figure (`4680`), a
/// capital (`LFP`, `GPLv3`, `Apache`), a compound (`sodium-ion`).
fn is_specific(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit() || c.is_uppercase())
        || (word.contains('-') && word.chars().any(char::is_alphabetic))
}

/// The subject of `question`; its key, without a specific word, the rarest of its terms by
/// `df` (how many candidates hold each term; one none holds is the rarest), the `kind`'s
/// words aside.
pub fn subject(question: &str, kind: Option<&Kind>, df: &HashMap<&str, usize>) -> Subject {
    let (before, after) = subject_words(question);
    let shown = match after.is_empty() {
        true => before.join(" "),
        false => after.join(" "),
    };
    let phrase: Vec<&str> = before.into_iter().chain(after).collect();
    let unit_words: BTreeSet<&str> = kind
        .map(|k| {
            k.asks
                .iter()
                .chain(k.units)
                .flat_map(|a| a.split(' '))
                .collect()
        })
        .unwrap_or_default();
    let mut key: Option<(String, String, usize)> = None;
    let mut specific: Option<(BTreeSet<String>, usize)> = None;
    for (k, word) in phrase.iter().enumerate() {
        let bare = word.to_lowercase();
        let phrasing = PHRASING.contains(&bare.as_str()) || VERBS.contains(&bare.as_str());
        if phrasing || unit_words.contains(bare.as_str()) {
            continue;
        }
        let terms: BTreeSet<String> = content_terms(word)
            .into_iter()
            .filter(|t| !unit_words.contains(t.as_str()))
            .collect();
        // Of the specific words, the rarest (its rarest term) is the one a sentence must hold.
        let rarity = |t: &String| df.get(t.as_str()).copied().unwrap_or(0);
        let figure = word
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            && phrase.get(k + 1).is_some_and(|next| is_measure(next));
        let specific_word = is_specific(word) && !figure;
        if let Some(d) = terms.iter().map(rarity).min().filter(|_| specific_word) {
            if specific.as_ref().is_none_or(|(_, best)| d < *best) {
                specific = Some((terms.clone(), d));
            }
        }
        for term in terms {
            let d = df.get(term.as_str()).copied().unwrap_or(0);
            if key.as_ref().is_none_or(|(_, _, best)| d < *best) {
                key = Some((term, bare.clone(), d));
            }
        }
    }
    Subject {
        phrase: shown,
        specific: specific.map(|(terms, _)| terms),
        key: key.map(|(term, word, _)| (term, word)),
    }
}

impl Subject {
    /// Whether `text`, whose terms are `terms`, holds the subject.
    fn held(&self, text: &str, terms: &BTreeSet<String>) -> bool {
        if let Some(specific) = &self.specific {
            return specific.is_subset(terms);
        }
        let Some((term, word)) = &self.key else {
            return true;
        };
        // A word written apart (`vehicle makers` for `carmakers`) holds by its tail.
        let said = words(text);
        let tail = |w: &str| w.len() >= 5 && word.len() >= w.len() + 3 && word.ends_with(w);
        terms.contains(term) || said.split(' ').any(tail)
    }

    /// Whether `text` holds the subject.
    fn held_by(&self, text: &str) -> bool {
        self.held(text, &content_terms(text))
    }

    /// Whether the names of a document's path (`GPL-3` for `GPLv3`) hold its specific word.
    fn named_by(&self, names: &BTreeSet<String>) -> bool {
        self.specific
            .as_ref()
            .is_some_and(|s| s.iter().all(|t| is_named(names, t)))
    }

    /// Whether the question has a subject to hold.
    fn some(&self) -> bool {
        self.specific.is_some() || self.key.is_some()
    }
}

/// Where a sentence's subject may stand besides the sentence itself.
pub struct Context<'a> {
    pub section: Option<&'a str>,
    pub title: &'a str,
    /// The sentence before it in its document, when it opens by pointing back.
    pub before: Option<&'a str>,
    /// The names its document's path gives it ([`super::names::document_names`]).
    pub names: &'a BTreeSet<String>,
    /// Its passage is near the question in meaning: it may say the subject in other words.
    pub near_in_meaning: bool,
}

/// Words a sentence opens with when its subject is in the sentence before.
const POINTING_BACK: &[&str] = &[
    "their",
    "they",
    "it",
    "its",
    "this",
    "these",
    "those",
    "such",
    "both",
    "the latter",
];

/// Whether `sentence` opens by pointing back to the one before.
pub fn points_back(sentence: &str) -> bool {
    let said = format!("{} ", words(sentence));
    POINTING_BACK
        .iter()
        .any(|p| said.starts_with(&format!("{p} ")))
}

/// What a question asks, as a sentence must state it.
pub struct Asked {
    pub kind: Option<&'static Kind>,
    pub subject: Subject,
    question: String,
    question_terms: BTreeSet<String>,
    /// It asks for a figure.
    figure: bool,
}

impl Asked {
    pub fn new(question: &str, figure: bool, df: &HashMap<&str, usize>) -> Asked {
        let named = kind_of(question);
        let figure = figure || named.is_some_and(|(_, near)| near);
        // `When did the price spike?` asks for a time, not a price.
        let when = asks_when(question);
        let kind = named
            .filter(|&(_, near)| near || (figure && !when))
            .map(|(k, _)| k);
        Asked {
            kind,
            subject: subject(question, kind, df),
            question: question.to_string(),
            question_terms: content_terms(question),
            figure,
        }
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
        let in_sentence = context.near_in_meaning || subject.held(sentence, terms);
        let held = in_sentence
            || context.section.is_some_and(|s| subject.held_by(s))
            || subject.held_by(context.title)
            || subject.named_by(context.names)
            || context
                .before
                .is_some_and(|b| points_back(sentence) && subject.held_by(b));
        if !held {
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
            .map(|(_, span)| Some(span))
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

/// Whether `clause` names a subject whose terms `asked` (the question's) does not hold: an
/// acronym (`LFP`) or a compound of letters (`lithium-ion`), a unit's word aside.
fn names_another(clause: &str, asked: &BTreeSet<String>) -> bool {
    clause.split_whitespace().any(|raw| {
        let token = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let letters = token.chars().filter(|c| c.is_alphabetic()).count();
        let acronym = letters >= 3 && token.chars().all(|c| c.is_ascii_uppercase());
        let compound = token.contains('-') && token.chars().all(|c| c.is_alphabetic() || c == '-');
        let unit = KINDS
            .iter()
            .any(|k| k.units.contains(&token.to_lowercase().as_str()));
        let another = (acronym || compound) && !unit;
        another && !content_terms(token).iter().all(|t| asked.contains(t))
    })
}

/// The Answer section of a question no sentence states: that said plainly, then the
/// `closest` passages (each a quote and its source's number).
pub fn not_stated(asked: &Asked, closest: &[(usize, String)]) -> String {
    let what = match (asked.kind, asked.subject.phrase.is_empty()) {
        (Some(kind), false) => format!("{} of {}", kind.label, asked.subject.phrase),
        (Some(kind), true) => kind.label.to_string(),
        (None, false) => format!("what the question asks about {}", asked.subject.phrase),
        (None, true) => "what the question asks".to_string(),
    };
    let mut text = format!(
        "{} {}.\n\nClosest passages:\n\n",
        crate::agents::quality::NOT_STATED,
        crate::markdown::inline(&what, 200)
    );
    for (n, quote) in closest {
        text.push_str(&format!("- {quote} [{n}]\n"));
    }
    text
}

/// The context of candidate `i`: its section, its document's `title` and `names`, the
/// candidate before it in its document.
pub fn context_of<'a>(
    candidates: &'a [Candidate],
    i: usize,
    title: &'a str,
    names: &'a BTreeSet<String>,
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
        near_in_meaning: f64::from(c.meaning) >= super::answer::MEANING_FLOOR,
    }
}
