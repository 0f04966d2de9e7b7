//! The account of one [`super::LocalIndex::open`]: how many documents the index holds, what
//! this open changed, and every warning about the corpus. Plain data; the caller decides how
//! to show it (this module never prints).

use std::collections::BTreeMap;

/// What opening the index found and did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexReport {
    /// Documents in the index after the update.
    pub documents: usize,
    /// Files indexed for the first time.
    pub added: usize,
    /// Indexed files that changed and were indexed again.
    pub updated: usize,
    /// Documents taken out: their file is gone, or no longer indexable.
    pub removed: usize,
    /// Indexed files left as they were, without reading them.
    pub unchanged: usize,
    /// Files read (and parsed) by this open.
    pub read: usize,
    /// The files of the corpus that are not indexed, counted by type (`.png`: 5,
    /// `no extension`: 2): those whose name gives no kind, and those read and found not to be
    /// documents (binary, empty, without text, unreadable). Hidden files are not counted.
    pub skipped: BTreeMap<String, usize>,
    /// With an embedding model (`search.embeddings.model`): the documents whose chunks were
    /// embedded by this open (new or changed texts), and the chunks that have vectors in all.
    pub embedded: Option<Embedded>,
    /// Every warning about the corpus, including those of files read by an earlier open that
    /// are still as they were (an empty file stays reported until it is fixed).
    pub warnings: Vec<String>,
}

/// What the embedding model did at this open.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Embedded {
    /// The model's folder.
    pub model: String,
    /// Documents embedded by this open.
    pub documents: usize,
    /// Chunks with vectors, in all.
    pub chunks: usize,
}
