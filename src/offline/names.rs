//! What a document is called where its text does not say it: the words of its path inside
//! the corpus. People name a document as its file is named (`GPLv3`, `GFDL`, `adduser`), while
//! its text writes "GNU General Public License, Version 3" and never the name. A word of the
//! question that no sentence writes but that names a document is held by every sentence of
//! that document ([`super::answer`]): the question asks about it, not past it.

use std::collections::BTreeSet;

use crate::plan::Source;
use crate::text::analyzer::content_terms;

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

/// Adds to the `terms` of each candidate the words of the `question` that no sentence writes
/// but its document's path names ([`document_names`]): `GPLv3` asked, `GPL-3` the file.
pub fn named_by_documents(
    terms: &mut [BTreeSet<String>],
    question: &BTreeSet<String>,
    candidates: &[Candidate],
    sources: &[Source],
) {
    let unwritten: Vec<&String> = question
        .iter()
        .filter(|t| !terms.iter().any(|set| set.contains(*t)))
        .collect();
    if unwritten.is_empty() {
        return;
    }
    let names = names_of(sources);
    for (set, candidate) in terms.iter_mut().zip(candidates) {
        let Some(names) = names.get(candidate.source) else {
            continue;
        };
        set.extend(
            unwritten
                .iter()
                .filter(|t| is_named(names, t))
                .map(|t| (*t).clone()),
        );
    }
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
}
