//! Whether a set's evidence can be cited at all: a set written for one corpus and run over
//! another (or a set of URLs run over a local corpus) scores every citation wrong and every
//! piece of evidence missed, and nothing else would say why. When no evidence entry of the set
//! names a document of the corpus (by file name, as scoring compares them), `eval` warns, on
//! stderr and in `eval.json`; unless a web or MCP provider searches beside the corpus and the set
//! names URLs, which its results may be. It lists the corpus's folders and file names only,
//! never reads a document.

use std::collections::BTreeSet;
use std::path::Path;

use super::score::evidence_key;
use super::set::Gold;

/// The warning for `set` (shown as `set_shown`) run over the local `corpus`, `web` when other
/// providers search beside it: `None` when one of its evidence entries names a document there
/// (or, with `web`, is a URL), when it gives no evidence, or when the corpus cannot be listed
/// (the run says so itself).
pub fn unnamed_evidence(set_shown: &str, set: &[Gold], corpus: &Path, web: bool) -> Option<String> {
    let entries: Vec<String> = set
        .iter()
        .flat_map(|g| g.evidence.iter())
        .flat_map(|e| e.alternatives().iter().map(|a| evidence_key(a)))
        .collect();
    let example = entries.first()?;
    if web && entries.iter().any(|e| e.contains("://")) {
        return None;
    }
    let root = std::fs::canonicalize(corpus).ok()?;
    let walk = crate::search::local::walk::walk(&root).ok()?;
    let names: BTreeSet<&str> = walk
        .files
        .iter()
        .filter_map(|f| f.path.rsplit('/').next())
        .collect();
    if entries.iter().any(|e| names.contains(e.as_str())) {
        return None;
    }
    Some(format!(
        "no evidence of the set `{set_shown}` names a document of the corpus `{}` (`{example}`, its first, is not there): citation precision and evidence recall will be 0; run it over the corpus it was written for (`--corpus`), or fix its `evidence`",
        root.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::set::parse;

    #[test]
    fn a_set_naming_no_document_of_the_corpus_is_warned_of() {
        let corpus = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(corpus.path().join("sub")).expect("folder");
        std::fs::write(corpus.path().join("sub/cells.md"), "# Cells\n").expect("doc");
        let set = |evidence: &str| {
            let line = format!(
                "{{\"id\": \"a\", \"question\": \"Q?\", \"answers\": [\"x\"], \"evidence\": {evidence}}}\n{{\"id\": \"b\", \"question\": \"R?\"}}"
            );
            parse("s.jsonl", &line).expect("a set")
        };
        let warned = unnamed_evidence(
            "s.jsonl",
            &set(r#"["gone.md", ["other.md"]]"#),
            corpus.path(),
            false,
        )
        .expect("a warning");
        assert!(
            warned.starts_with("no evidence of the set `s.jsonl` names a document of the corpus `")
                && warned.contains("(`gone.md`, its first, is not there)"),
            "{warned}"
        );
        // URLs name no document of a corpus; a web search beside it may return them.
        let urls = set(r#"["https://x.test/cells.md"]"#);
        assert!(unnamed_evidence("s.jsonl", &urls, corpus.path(), false).is_some());
        assert_eq!(
            unnamed_evidence("s.jsonl", &urls, corpus.path(), true),
            None
        );
        let files = set(r#"["gone.md"]"#);
        assert!(unnamed_evidence("s.jsonl", &files, corpus.path(), true).is_some());
        // One alternative in a subfolder is enough; a set without evidence has nothing to name.
        let found = set(r#"["gone.md", ["other.md", "cells.md"]]"#);
        assert_eq!(
            unnamed_evidence("s.jsonl", &found, corpus.path(), false),
            None
        );
        let none = parse("s", "{\"id\": \"b\", \"question\": \"R?\"}").expect("a set");
        assert_eq!(unnamed_evidence("s", &none, corpus.path(), false), None);
    }
}
