//! The repository's own files that tests read (`fixtures/`, the shipped corpus of
//! `fixtures/corpus/`), found from `CARGO_MANIFEST_DIR` whatever the current folder, and the
//! offline engine run over that corpus. Nothing here writes into the repository.

use std::path::{Path, PathBuf};

use super::bin::{Cmd, researchflow};

/// The repository's root.
pub fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `fixtures/<path>` of the repository.
pub fn fixture(path: &str) -> PathBuf {
    root().join("fixtures").join(path)
}

/// The shipped corpus, `fixtures/corpus/`.
pub fn corpus() -> PathBuf {
    fixture("corpus")
}

/// Copies the files of the shipped corpus into `to`, made if it is missing.
pub fn copy_corpus(to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(corpus()).expect("fixtures/corpus") {
        let path = entry.expect("entry").path();
        if path.is_file() {
            std::fs::copy(&path, to.join(path.file_name().expect("name"))).expect("copy");
        }
    }
}

/// `researchflow ARGS --offline --corpus CORPUS --index-dir DIR/index`, run in `dir`.
pub fn offline_over(dir: &Path, corpus: &Path, args: &[&str]) -> Cmd {
    researchflow()
        .current_dir(dir)
        .args(args)
        .args(["--offline", "--corpus"])
        .arg(corpus)
        .arg("--index-dir")
        .arg(dir.join("index"))
}

/// `researchflow ARGS --offline --corpus corpus --index-dir index` in `dir`: the corpus and
/// the index named as a user in that folder names them.
pub fn offline_here(dir: &Path, args: &[&str]) -> Cmd {
    researchflow().current_dir(dir).args(args).args([
        "--offline",
        "--corpus",
        "corpus",
        "--index-dir",
        "index",
    ])
}

/// [`offline_over`] the shipped corpus.
pub fn offline(dir: &Path, args: &[&str]) -> Cmd {
    offline_over(dir, &corpus(), args)
}

/// The sentence-embedding model the tests rank by meaning with (all-MiniLM-L6-v2), put in
/// `target/models/` by `scripts/setup/embedding-model.sh`, which the test command runs first.
pub fn embedding_model() -> PathBuf {
    let dir = root().join("target/models/all-MiniLM-L6-v2");
    assert!(
        dir.join("model.onnx").is_file() && dir.join("libonnxruntime.so").is_file(),
        "no embedding model in `{}`: run `bash scripts/setup/embedding-model.sh` (scripts/test.sh does)",
        dir.display()
    );
    dir
}
