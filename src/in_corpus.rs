//! [`InCorpus`]: where a document of a local corpus lies within the corpus, and what it held.
//! A `file://` URL names a document by its absolute path, which changes when the corpus is
//! copied, moved or mounted elsewhere; its path inside the corpus and the hash of its text do
//! not, so two runs over the same documents find the same sources wherever each found them.
//! The local index gives it with every result; a plan's sources keep it; `diff` compares by
//! it. Plain data.

use serde::{Deserialize, Serialize};

/// A local document's place in its corpus and the hash of its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InCorpus {
    /// Its path relative to the corpus folder, `/`-separated (`guides/cells.md`).
    pub path: String,
    /// The SHA-256 of its text as indexed, in lower-case hex.
    pub sha256: String,
}
