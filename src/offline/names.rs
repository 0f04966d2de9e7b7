//! What a document is called where its text does not say it: the words of its path inside
//! the corpus. People name a document as its file is named (`GPLv3`, `GFDL`, `adduser`), while
//! its text writes "GNU General Public License, Version 3" and never the name. A word of the
//! question that no sentence writes but that names a document is held by every sentence of
//! that document ([`super::answer`]): the question asks about it, not past it.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::plan::Source;
use crate::text::analyzer::{STOPWORDS, content_terms};

use super::question::writes_release;
use super::select::Candidate;

/// The names `path` (a document's path inside the corpus, `/`-separated) gives its document,
/// as [`is_named`] compares a question's word with them: each word of each part of the path
/// (`usr/share/doc/adduser/README` → `adduser`), a part's words run together (`GPL-3` →
/// `gpl3`, `LGPL-2.1` → `lgpl21`) and a name with its major version (`LGPL-2.1` → `lgpl2`).
pub fn document_names(path: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for part in path.split('/') {
        let words: Vec<String> = part
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        for word in &words {
            out.insert(word.clone());
            out.extend(content_terms(word));
        }
        if words.len() > 1 {
            out.insert(words.concat());
        }
        if let [name, major, ..] = words.as_slice()
            && major.chars().all(|c| c.is_ascii_digit())
        {
            out.insert(format!("{name}{major}"));
        }
    }
    out
}

/// Whether `term`, a content term of the question, is one of a document's `names`
/// ([`document_names`]): as written, or with a `v` between a name and its version left out
/// (`gplv3` names `GPL-3`).
pub fn is_named(names: &BTreeSet<String>, term: &str) -> bool {
    let chars: Vec<char> = term.chars().collect();
    let versioned = (1..chars.len().saturating_sub(1)).find(|&k| {
        chars[k] == 'v' && chars[k - 1].is_alphabetic() && chars[k + 1].is_ascii_digit()
    });
    names.contains(term)
        || versioned.is_some_and(|k| {
            let unversioned: String = chars[..k].iter().chain(&chars[k + 1..]).collect();
            names.contains(&unversioned)
        })
}

/// The names of each of `sources` ([`document_names`]; none for a web page).
pub fn names_of(sources: &[Source]) -> Vec<BTreeSet<String>> {
    sources
        .iter()
        .map(|s| s.in_corpus.as_ref().map(|c| document_names(&c.path)))
        .map(Option::unwrap_or_default)
        .collect()
}

/// The terms of the one thing a document's file is named for, when it is: its name up to the
/// first dot, a single word or one with only a version after a hyphen (`gzip.1.gz`,
/// `ssh_config.5.gz`, `GPL-3`); none for a file named by a phrase
/// (`low-temperature-performance.txt`).
pub fn own_name(path: &str) -> BTreeSet<String> {
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let mut parts = stem.split('-');
    let first = parts.next().unwrap_or_default();
    match parts.all(|p| p.starts_with(|c: char| c.is_ascii_digit())) {
        true => content_terms(first),
        false => BTreeSet::new(),
    }
}

/// Adds to the `terms` of each candidate the words of the `question` that its document's path
/// names ([`document_names`]) and no sentence writes (`GPLv3` asked, `GPL-3` the file), or,
/// for a candidate under the heading of the `release` the question writes
/// ([`super::question::written_release`]), whether a sentence writes them or not (`mio` of
/// `mio-CHANGELOG.md`).
pub fn named_by_documents(
    terms: &mut [BTreeSet<String>],
    question: &BTreeSet<String>,
    release: Option<&str>,
    candidates: &[Candidate],
    sources: &[Source],
) {
    let unwritten: BTreeSet<&String> = question
        .iter()
        .filter(|t| !terms.iter().any(|set| set.contains(*t)))
        .collect();
    let names = names_of(sources);
    for (set, candidate) in terms.iter_mut().zip(candidates) {
        let Some(names) = names.get(candidate.source) else {
            continue;
        };
        // An entry under the release the question writes (`MSRV was increased to 1.71.`
        // under `# 1.1.0`) is of what its changelog's name says, as much as a sentence that
        // writes it.
        let of_release = candidate
            .release
            .as_deref()
            .is_some_and(|heading| release.is_some_and(|r| writes_release(heading, r)));
        let named = question
            .iter()
            .filter(|t| of_release || unwritten.contains(t))
            .filter(|t| is_named(names, t));
        set.extend(named.cloned());
    }
}

/// The longest run of words an acronym stands for.
const ACRONYM_WORDS: usize = 6;

/// Adds to the `terms` of each candidate the words an acronym stands for where one of the
/// candidate and the `question` writes the acronym and the other the words whose initials
/// spell it: a sentence with `MSRV` holds "minimum supported Rust version" of the question,
/// and one that writes those words holds the question's `MSRV`.
pub fn spelled_out(terms: &mut [BTreeSet<String>], question: &str, candidates: &[Candidate]) {
    let known = acronyms_of(question, candidates);
    let asked = acronyms(question);
    for (set, candidate) in terms.iter_mut().zip(candidates) {
        for words in stands_for(&candidate.text, &known) {
            set.extend(content_terms(words));
        }
        if asked.is_empty() {
            continue;
        }
        let written = initials(&candidate.text);
        for acronym in asked.iter().filter(|a| written.contains_key(*a)) {
            set.extend(content_terms(acronym));
        }
    }
}

/// The acronyms that `candidates` write for words of the `question`, each with those words
/// (`msrv`: "minimum supported Rust version"): they name nothing else.
pub fn acronyms_of(question: &str, candidates: &[Candidate]) -> BTreeMap<String, String> {
    let spelled = initials(question);
    candidates
        .iter()
        .flat_map(|c| acronyms(&c.text))
        .filter_map(|a| spelled.get(&a).map(|words| (a, words.clone())))
        .collect()
}

/// `sentence` with the words each acronym it writes stands for (`known`, [`acronyms_of`])
/// after it, as a reader takes it in: `The MSRV is 1.88. minimum supported Rust version`.
pub fn spelled(sentence: &str, known: &BTreeMap<String, String>) -> String {
    let mut out = sentence.to_string();
    for words in stands_for(sentence, known) {
        out.push(' ');
        out.push_str(words);
    }
    out
}

/// The words each acronym of `text` that is `known` stands for.
fn stands_for<'a>(
    text: &str,
    known: &'a BTreeMap<String, String>,
) -> impl Iterator<Item = &'a String> {
    acronyms(text).into_iter().filter_map(|a| known.get(&a))
}

/// The acronyms `text` writes, in lower case: words of three to [`ACRONYM_WORDS`] capitals
/// (`MSRV`, `FFI`; a plural's `s` left off: `APIs`; not a part of `MS-DOS`). Two letters
/// spell too many pairs of words to say which.
fn acronyms(text: &str) -> BTreeSet<String> {
    text.split_whitespace()
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()))
        .map(|w| w.strip_suffix('s').filter(|a| a.len() > 1).unwrap_or(w))
        .filter(|w| (3..=ACRONYM_WORDS).contains(&w.len()))
        .filter(|w| w.chars().all(|c| c.is_ascii_uppercase()))
        .map(str::to_ascii_lowercase)
        .collect()
}

/// Each run of three to [`ACRONYM_WORDS`] words of `text` that each say something, by the
/// initials that spell it, in lower case (`msrv`: "minimum supported Rust version").
fn initials(text: &str) -> HashMap<String, String> {
    let words: Vec<&str> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    // As the analyzer leaves words out: one character, or a stopword.
    let content: Vec<bool> = words
        .iter()
        .map(|w| w.chars().count() > 1 && !STOPWORDS.contains(&w.to_lowercase().as_str()))
        .collect();
    let mut out = HashMap::new();
    for start in 0..words.len() {
        let end = words.len().min(start + ACRONYM_WORDS);
        for stop in start + 3..=end {
            // A word that says nothing (`the`) is in no acronym: `TCP` is not "the
            // connection phase".
            if !content[start..stop].iter().all(|&c| c) {
                break;
            }
            let run = &words[start..stop];
            let spelled: String = run
                .iter()
                .filter_map(|w| w.chars().next())
                .flat_map(char::to_lowercase)
                .collect();
            out.entry(spelled).or_insert_with(|| run.join(" "));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_named_by_its_paths_words_and_a_question_may_add_a_v_to_its_version() {
        let names = document_names("GPL-3");
        assert!(is_named(&names, "gpl3") && is_named(&names, "gpl"));
        assert!(is_named(&names, "gplv3"));
        assert!(!is_named(&names, "gplv2"));
        let names = document_names("LGPL-2.1");
        for name in ["lgpl", "lgpl21", "lgpl2"] {
            assert!(names.contains(name), "{name}");
        }
        assert!(is_named(&document_names("GFDL-1.3"), "gfdl"));
        let names = document_names("usr/share/doc/adduser/README.md");
        assert!(names.contains("adduser") && names.contains("readme"));
        assert!(!is_named(&names, "v8"));
        assert!(
            is_named(&document_names("dev2"), "dev2"),
            "a name that ends in v"
        );
    }

    #[test]
    fn a_file_named_for_one_thing_gives_its_own_name_a_phrase_gives_none() {
        let own = |p: &str| own_name(p).into_iter().collect::<Vec<_>>();
        assert_eq!(own("man1/gzip.1.gz"), ["gzip"]);
        assert_eq!(own("GPL-3"), ["gpl"]);
        assert_eq!(own("faillock.conf.5.gz"), ["faillock"]);
        assert!(own("low-temperature-performance.txt").is_empty());
    }

    /// An acronym one side writes holds the words the other spells it with, both ways.
    #[test]
    fn an_acronym_holds_the_words_its_initials_spell() {
        let docs = [
            (0, None, "Currently, the MSRV is 1.88 with or without simd."),
            (0, None, "The minimum supported Rust version is 1.70."),
            (0, None, "The MS-DOS code page is supported."),
        ];
        let candidates = crate::offline::select::test_candidates(&docs);
        let mut terms: Vec<BTreeSet<String>> =
            candidates.iter().map(|c| content_terms(&c.text)).collect();
        let q = "What is the current minimum supported Rust version?";
        spelled_out(&mut terms, q, &candidates);
        assert!(content_terms("minimum supported Rust version").is_subset(&terms[0]));
        assert!(!terms[2].contains("minimum"), "{:?}", terms[2]);
        let tcp = [(0, None, "It sets the TCP keepalive time.")];
        let keepalive = crate::offline::select::test_candidates(&tcp);
        let mut held = vec![content_terms(tcp[0].2)];
        spelled_out(
            &mut held,
            "Which option caps the connection phase?",
            &keepalive,
        );
        assert!(!held[0].contains("phase"), "{held:?}");
        let mut terms: Vec<BTreeSet<String>> =
            candidates.iter().map(|c| content_terms(&c.text)).collect();
        spelled_out(&mut terms, "What is the MSRV?", &candidates);
        assert!(terms[1].contains("msrv") && !terms[2].contains("msrv"));
    }
}
