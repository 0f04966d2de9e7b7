//! The subject of a question, as the offline answer reads it ([`super::stated`]): the words
//! between its auxiliary and its verb ("How many cycles do *sodium-ion cells* last?", "Is *a
//! distributor* allowed to ...?"), and those after `of` in what it asks for ("what share *of
//! the new cars bought in Norway* were ..."). A sentence holds it when it holds the rarest term
//! of its rarest specific word (a name, an acronym, a compound, a figure: `sodium-ion`, `LFP`,
//! `4680`), or, when most documents write that word and the sentence's own does, the rarest
//! term of its other words where the sentence names no other subject; without a specific word,
//! that term alone; a word no sentence writes as the question does is held by its tail
//! ("carmakers" by "vehicle makers").

use std::collections::{BTreeSet, HashMap};

use crate::text::analyzer::content_terms;
use crate::text::words;

use super::kinds::{Kind, is_unit};
use super::names::is_named;
use super::question::{asked_words, releases_in};

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
    "return",
    "measure",
    "record",
    "show",
    "keep",
    "write",
    "send",
    "listen",
    "accept",
    "allocate",
    "print",
    "report",
    "create",
    "simulate",
    "stop",
    "connect",
    "read",
    "treat",
];
/// The terms of the verbs `question` writes ([`VERBS`]): `measur` of "What does Massif
/// measure?".
pub fn verbs_of(question: &str) -> BTreeSet<String> {
    words(question)
        .split(' ')
        .filter(|w| VERBS.contains(w))
        .flat_map(content_terms)
        .collect()
}

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
    /// The rarest term of its rarest specific word (a name, an acronym, a compound, a figure;
    /// `garnet` of `garnet-electrolyte`).
    pub specific: Option<String>,
    /// The rarest term of its other words (stemmed, and as written).
    pub key: Option<(String, String)>,
    /// The question's terms: a name among them is no other subject.
    asked: BTreeSet<String>,
    /// Most documents write its specific term: it may go unsaid where the key is said.
    common: bool,
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
        .next_back();
    let free = |k: usize| !SUBORDINATE.contains(&lower[k].as_str());
    let aux = match after_comma.or_else(|| (0..raw.len()).find(asks)) {
        // `have to back` is no auxiliary: the subject is then the asked thing itself.
        Some(asking) => (asking + 1..lower.len())
            .take_while(|&k| free(k))
            .find(|&k| {
                AUXILIARIES.contains(&lower[k].as_str())
                    && lower.get(k + 1).is_none_or(|n| n != "to")
            })
            .map(|aux| (asking, aux)),
        // A question that opens with its auxiliary (`Is a distributor allowed to ...`) asks
        // yes or no of the words after it.
        None => lower
            .first()
            .filter(|w| AUXILIARIES.contains(&w.as_str()))
            .map(|_| (0, 0)),
    };
    let Some((asking, aux)) = aux else {
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
    // A verb joined to its object (`short-circuit`) is one.
    let verb = |w: &str| VERBS.contains(&w) || VERBS.contains(&w.split('-').next().unwrap_or(w));
    // A release ends the name it is of: `raise` of `did mio 1.1.0 raise its MSRV` is a verb.
    let released = |k: usize| k > start && !releases_in(tokens[k - 1]).is_empty();
    // A verb's word right after the auxiliary with `for` or `of` after it is a noun: `support`
    // of `was support for the initgroups database added`.
    let noun = |k: usize| k == start && lower.get(k + 1).is_some_and(|w| w == "for" || w == "of");
    let stops = |k: usize| {
        (verb(&lower[k]) && !noun(k)) || lower[k].ends_with("ly") || !free(k) || released(k)
    };
    // `which country has become *the largest source of nickel*`: past a verb right after the
    // auxiliary, its object.
    let object = stops(start)
        && copula_like(&lower[aux])
        && lower
            .get(start + 1)
            .is_some_and(|w| ["the", "a", "an"].contains(&w.as_str()));
    let start = start + usize::from(object);
    let mut end = (start..tokens.len())
        .find(|&k| stops(k))
        .unwrap_or(tokens.len());
    // Run to the question's end, its last word is its verb (`does that update carry`), but
    // after the copula (`what is the price of cobalt`), unless a participle (`is it settled`).
    let copula = AUXILIARIES[..4].contains(&lower[aux].as_str());
    let verb_last = !copula && !object;
    if end == tokens.len() && end > start + 1 && (verb_last || lower[end - 1].ends_with("ed")) {
        end -= 1;
    }
    (before, tokens.get(start..end).unwrap_or_default().to_vec())
}

/// Whether the auxiliary `aux` joins its verb to what follows (`has become`, `is called`).
fn copula_like(aux: &str) -> bool {
    ["has", "have", "had", "is", "are", "was", "were"].contains(&aux)
}

/// Whether `word` follows a number to make it a figure (`10 *to* 80 *percent*`), not a name.
fn is_measure(word: &str) -> bool {
    let word = word.to_lowercase();
    ["to", "and", "or", "percent"].contains(&word.as_str()) || is_unit(&word)
}

/// Whether `word`, of a question's subject, names something specific: a figure (`4680`), a
/// capital (`LFP`, `GPLv3`, `Apache`), a compound (`sodium-ion`).
fn is_specific(word: &str) -> bool {
    word.chars().any(|c| c.is_ascii_digit() || c.is_uppercase())
        || (word.contains('-') && word.chars().any(char::is_alphabetic))
}

/// How rare each term is among the candidates: how many hold it, and in how many documents.
pub struct Rarity {
    candidates: HashMap<String, usize>,
    documents: HashMap<String, BTreeSet<usize>>,
    /// How many documents the candidates come from.
    sources: usize,
}

impl Rarity {
    /// Of candidates whose terms are `terms`, from the documents `sources`.
    pub fn of(terms: &[BTreeSet<String>], sources: &[usize]) -> Rarity {
        let mut rarity = Rarity {
            candidates: HashMap::new(),
            documents: HashMap::new(),
            sources: sources.iter().collect::<BTreeSet<_>>().len(),
        };
        for (set, &source) in terms.iter().zip(sources) {
            for t in set {
                *rarity.candidates.entry(t.clone()).or_default() += 1;
                rarity
                    .documents
                    .entry(t.clone())
                    .or_default()
                    .insert(source);
            }
        }
        rarity
    }

    /// How many candidates hold `term`.
    pub fn held(&self, term: &str) -> usize {
        self.candidates.get(term).copied().unwrap_or(0)
    }

    /// Whether most of the documents write `term` (`lithium-ion` over batteries): it tells
    /// no subject from another.
    pub fn common(&self, term: &str) -> bool {
        let documents = self.documents.get(term).map_or(0, BTreeSet::len);
        self.sources >= 3 && 2 * documents > self.sources
    }
}

/// The subject of `question`; its key, without a specific word, the rarest of its terms by
/// `rarity` (one no candidate holds is the rarest), the `kind`'s words aside.
pub fn subject(question: &str, kind: Option<&Kind>, rarity: &Rarity) -> Subject {
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
    let asked = asked_words(question);
    let mut key: Option<(String, String, usize)> = None;
    let mut specific: Option<(String, usize)> = None;
    // The verb of a relative clause (`ships` of `the keystore that ships with the JDK`) is
    // said of the subject, not its name.
    let relative = |k: usize| {
        k > 0 && ["that", "which", "who"].contains(&phrase[k - 1].to_lowercase().as_str())
    };
    for (k, word) in phrase.iter().enumerate() {
        let bare = word.to_lowercase();
        let phrasing =
            PHRASING.contains(&bare.as_str()) || VERBS.contains(&bare.as_str()) || relative(k);
        if phrasing || unit_words.contains(bare.as_str()) || asked.contains(&bare) {
            continue;
        }
        // A release is a condition on the sentence, not its subject: `41` of `0.1.41` is no
        // word a sentence on it writes ([`releases_in`]).
        let release = !releases_in(word).is_empty();
        let number = |t: &str| release && t.chars().all(|c| c.is_ascii_digit());
        let terms = content_terms(word)
            .into_iter()
            .filter(|t| !unit_words.contains(t.as_str()) && !number(t));
        // The rarest term of a word: `garnet` of `garnet-electrolyte`.
        let Some((term, held)) = terms
            .map(|t| (t.clone(), rarity.held(&t)))
            .min_by_key(|t| t.1)
        else {
            continue;
        };
        let figure = word
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.' || c == ',')
            && phrase.get(k + 1).is_some_and(|next| is_measure(next));
        match is_specific(word) && !figure {
            true if specific.as_ref().is_none_or(|(_, best)| held < *best) => {
                specific = Some((term, held));
            }
            false if key.as_ref().is_none_or(|(_, _, best)| held < *best) => {
                key = Some((term, bare.clone(), held));
            }
            _ => {}
        }
    }
    Subject {
        phrase: shown,
        common: specific
            .as_ref()
            .is_some_and(|(term, _)| rarity.common(term)),
        specific: specific.map(|(term, _)| term),
        key: key.map(|(term, word, _)| (term, word)),
        asked: content_terms(question),
    }
}

impl Subject {
    /// Whether `text`, whose terms are `terms`, in a document whose terms are `document`,
    /// holds the subject: its specific term, or, when most documents write that and so does
    /// its own, its other key where it names no other subject ([`names_another`]: `the plastic
    /// separator` holds `the separator of a lithium-ion cell` over batteries, but a page on
    /// fast charging that never says `sodium-ion` does not hold `a fast charge of a sodium-ion
    /// cell`); without a specific word, its key.
    pub fn held(&self, text: &str, terms: &BTreeSet<String>, document: &BTreeSet<String>) -> bool {
        let key = self.key.as_ref().map(|(term, word)| {
            // A word written apart (`vehicle makers` for `carmakers`) holds by its tail.
            let tail = |w: &str| w.len() >= 5 && word.len() >= w.len() + 3 && word.ends_with(w);
            terms.contains(term) || words(text).split(' ').any(tail)
        });
        match &self.specific {
            Some(specific) => {
                terms.contains(specific)
                    || (self.common
                        && document.contains(specific)
                        && key == Some(true)
                        && !names_another(text, &self.asked))
            }
            None => key != Some(false),
        }
    }

    /// Whether `text` holds the subject.
    pub fn held_by(&self, text: &str) -> bool {
        let terms = content_terms(text);
        self.held(text, &terms, &terms)
    }

    /// Whether the names of a document's path (`GPL-3` for `GPLv3`, `mio-CHANGELOG.md` for
    /// `mio`) hold its specific word, or its key where it has none.
    pub fn named_by(&self, names: &BTreeSet<String>) -> bool {
        let key = self.key.as_ref().map(|(term, _)| term);
        self.specific
            .as_ref()
            .or(key)
            .is_some_and(|t| is_named(names, t))
    }

    /// Whether `clause` writes a word of the compound its specific term is of (`man` of
    /// `man-db`) and not the specific term: it is of a sibling (`man`, not `man-db`).
    pub fn sibling_in(&self, clause: &str) -> bool {
        let Some(specific) = &self.specific else {
            return false;
        };
        let written = content_terms(clause);
        !written.contains(specific)
            && self
                .phrase
                .split_whitespace()
                .filter(|w| w.contains('-'))
                .map(content_terms)
                .filter(|compound| compound.contains(specific))
                .any(|compound| {
                    compound
                        .iter()
                        .any(|t| t != specific && written.contains(t))
                })
    }

    /// Whether the question has a subject to hold.
    pub fn some(&self) -> bool {
        self.specific.is_some() || self.key.is_some()
    }
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

/// Whether `clause` names a subject whose terms `asked` (the question's) does not hold: an
/// acronym (`LFP`) or a compound of letters (`lithium-ion`), a unit's word aside.
pub fn names_another(clause: &str, asked: &BTreeSet<String>) -> bool {
    clause.split_whitespace().any(|raw| {
        let token = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let letters = token.chars().filter(|c| c.is_alphabetic()).count();
        let acronym = letters >= 3 && token.chars().all(|c| c.is_ascii_uppercase());
        let compound = token.contains('-') && token.chars().all(|c| c.is_alphabetic() || c == '-');
        let unit = is_unit(&token.to_lowercase());
        let another = (acronym || compound) && !unit;
        another && !content_terms(token).iter().all(|t| asked.contains(t))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A term most documents write may go unsaid in a sentence whose document writes it; a
    /// page that never names `sodium-ion` does not give a sodium-ion cell's charging time.
    #[test]
    fn a_common_subject_goes_unsaid_only_where_its_document_writes_it() {
        let docs = [
            "Sodium-ion cells charge fast in the cold.",
            "Sodium-ion cells are cheap.",
            "Sodium-ion cells suit grids.",
            "A fast charge takes 18 minutes.",
        ];
        let terms: Vec<BTreeSet<String>> = docs.iter().map(|d| content_terms(d)).collect();
        let rarity = Rarity::of(&terms, &[0, 1, 2, 3]);
        let asked = "How long does a fast charge of a sodium-ion cell take?";
        let subject = subject(asked, None, &rarity);
        let sentence = &terms[3];
        assert!(!subject.held(docs[3], sentence, sentence));
        let mut document = sentence.clone();
        document.extend(terms[0].iter().cloned());
        assert!(subject.held(docs[3], sentence, &document));
    }

    #[test]
    fn a_question_asking_yes_or_no_has_the_subject_after_its_auxiliary() {
        let asked = "Is a distributor under the Artistic License allowed to sell the software?";
        let (_, subject) = subject_words(asked);
        assert_eq!(
            subject,
            ["a", "distributor", "under", "the", "Artistic", "License"]
        );
        // Without an auxiliary first or an asking word, no subject.
        assert!(
            subject_words("Tell me about the Artistic License.")
                .1
                .is_empty()
        );
    }
}
