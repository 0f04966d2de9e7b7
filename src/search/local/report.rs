//! The account of one [`super::LocalIndex::open`]: how many documents the index holds, what
//! this open changed, and every warning about the corpus. Plain data; the caller decides how
//! to show it (this module never prints).

use std::collections::BTreeMap;
use std::sync::Arc;

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

/// How far an open of the index has come, as it goes: files read of those it reads (new or
/// changed), then chunks embedded of those it embeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexStep {
    Read { done: usize, total: usize },
    Embedded { done: usize, total: usize },
}

/// Whoever is told of each [`IndexStep`] (a progress display); nobody by default.
#[derive(Clone, Default)]
pub struct Steps(Option<Arc<dyn Fn(IndexStep) + Send + Sync>>);

impl Steps {
    pub fn to(tell: impl Fn(IndexStep) + Send + Sync + 'static) -> Steps {
        Steps(Some(Arc::new(tell)))
    }

    pub fn tell(&self, step: IndexStep) {
        if let Some(tell) = &self.0 {
            tell(step);
        }
    }
}

impl std::fmt::Debug for Steps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Steps(told)"
        } else {
            "Steps(none)"
        })
    }
}
