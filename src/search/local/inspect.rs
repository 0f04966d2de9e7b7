//! What a run would find in a corpus and its index, told without reading a document or
//! changing the index (for `doctor`): the documents the walk finds, by type; the files passed
//! over; whether the index is there and current (the files a run would read again, the
//! documents it would take out), with the files it skipped and why; and the vectors kept
//! beside it, by which model. Reads folder listings, metadata, the manifest and the vectors
//! file's header only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::LocalSearchError;
use super::extract::type_label;
use super::manifest::{self, Loaded};
use super::{location, vectors, walk};

/// A corpus and its index as they stand.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// The canonical corpus folder.
    pub corpus: PathBuf,
    /// The document files found, counted by type (`.md`: 12).
    pub documents: BTreeMap<String, usize>,
    /// The files whose name gives no kind, counted by type (`.png`: 5).
    pub passed_over: BTreeMap<String, usize>,
    /// What the walk warned of (links out of the corpus, folders that cannot be listed).
    pub warnings: Vec<String>,
    pub index: IndexState,
}

/// The index folder as it stands.
#[derive(Debug, Clone, Serialize)]
pub struct IndexState {
    pub dir: PathBuf,
    /// Whether a usable manifest is there (else the next run builds the index whole).
    pub present: bool,
    /// Why the index there will be rebuilt (another version, another corpus, unreadable).
    pub rebuilt: Option<String>,
    /// Documents indexed.
    pub indexed: usize,
    /// Files the next run reads: new, or changed since they were read.
    pub to_read: usize,
    /// Indexed documents whose file is gone.
    pub gone: usize,
    /// Files read and not indexed, each with why (the warning that names it).
    pub skipped: Vec<String>,
    /// The vectors kept beside the index, if any.
    pub vectors: Option<vectors::Kept>,
}

impl IndexState {
    /// Whether a run would use the index as it is, without reading a file.
    pub fn is_current(&self) -> bool {
        self.present && self.to_read == 0 && self.gone == 0
    }
}

/// Inspects `corpus` and its index (in `index_dir`, else the default folder).
pub fn inspect(corpus: &Path, index_dir: Option<&Path>) -> Result<Inspection, LocalSearchError> {
    let corpus = location::canonical_corpus(corpus)?;
    let dir = location::resolve_index_dir(&corpus, index_dir)?;
    let walk = walk::walk(&corpus)?;
    let mut documents = BTreeMap::new();
    for file in &walk.files {
        *documents
            .entry(type_label(Path::new(&file.path)))
            .or_default() += 1;
    }
    let index = index_state(&dir, &corpus.to_string_lossy(), &walk.files);
    Ok(Inspection {
        corpus,
        documents,
        passed_over: walk.passed_over,
        warnings: walk.warnings,
        index,
    })
}

/// The index in `dir` against the files found.
fn index_state(dir: &Path, corpus: &str, found: &[walk::Found]) -> IndexState {
    let mut state = IndexState {
        dir: dir.to_path_buf(),
        present: false,
        rebuilt: None,
        indexed: 0,
        to_read: found.len(),
        gone: 0,
        skipped: Vec::new(),
        vectors: vectors::Kept::read(dir),
    };
    let manifest = match manifest::load(dir, corpus) {
        Loaded::Missing => return state,
        Loaded::Invalid(why) => {
            state.rebuilt = Some(why);
            return state;
        }
        Loaded::Valid(manifest) => manifest,
    };
    state.present = true;
    state.to_read = found
        .iter()
        .filter(|f| {
            manifest
                .files
                .get(&f.path)
                .is_none_or(|e| e.size != f.size || e.mtime_ns != f.mtime_ns)
        })
        .count();
    let paths: std::collections::HashSet<&str> = found.iter().map(|f| f.path.as_str()).collect();
    for (path, entry) in &manifest.files {
        state.indexed += usize::from(entry.indexed);
        state.gone += usize::from(entry.indexed && !paths.contains(path.as_str()));
        if !entry.indexed {
            // Its warnings name it; a file that is not a document raised none.
            match entry.warnings.as_slice() {
                [] => state.skipped.push(format!("`{path}`: not a document")),
                warnings => state.skipped.extend(warnings.iter().cloned()),
            }
        }
    }
    state
}
