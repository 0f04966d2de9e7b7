//! The index's ranking by meaning (`search.embeddings.model`): embedding the corpus's chunks
//! when the index opens, fusing a search's ranking by words with the documents nearest the
//! query, and the nearness of a document's chunks to a question (for the offline answer).

use std::path::Path;
use std::sync::Arc;

use super::super::chunks::cut;
use super::super::report::{Embedded, Steps};
use super::super::schema::StoredDoc;
use super::super::vectors::Vectors;
use super::{FUSION_DEPTH, LocalIndex, LocalSearchError};
use crate::embed::Embedder;
use crate::search::fusion::fused_order;

/// A document ranked: its score, canonical path, stored fields, and, when meaning alone found
/// it, the place of its nearest chunk (shown as its passage).
pub(super) type Ranked = (f32, String, StoredDoc, Option<usize>);

impl LocalIndex {
    /// Embeds the chunks of the documents that have no vectors yet, and keeps the vectors.
    pub(super) fn embed(
        &mut self,
        embedder: Arc<Embedder>,
        steps: &Steps,
    ) -> Result<Embedded, LocalSearchError> {
        let mut vectors = Vectors::load(&self.dir, &embedder);
        let documents = self.stored_documents()?;
        let mut embedded = 0;
        if !vectors.covers(&documents) {
            embedded = vectors.refresh(&documents, &embedder, steps)?;
            vectors
                .save(&self.dir)
                .map_err(|e| LocalSearchError::io("write the vectors in", &self.dir, e))?;
        }
        let report = Embedded {
            model: embedder.dir().display().to_string(),
            documents: embedded,
            chunks: vectors.rows(),
        };
        self.meaning = Some((embedder, vectors));
        Ok(report)
    }

    /// The vector of `question`, when searches rank by meaning (`None`, with a warning, when
    /// the model fails on it: the answer is then chosen by words).
    pub fn question_vector(&self, question: &str) -> Option<Vec<f32>> {
        let (embedder, _) = self.meaning.as_ref()?;
        match embedder.embed(&[question]) {
            Ok(mut vectors) => vectors.pop(),
            Err(e) => {
                tracing::warn!("{e}; the answer is chosen by words only");
                None
            }
        }
    }

    /// Each chunk of `text`, the document at canonical `path` as the index holds it, with its
    /// nearness to `asked` (a [`LocalIndex::question_vector`]); `None` without a model or
    /// vectors for it.
    pub fn chunk_nearness(
        &self,
        path: &Path,
        text: &str,
        asked: &[f32],
    ) -> Option<Vec<(String, f32)>> {
        let (_, vectors) = self.meaning.as_ref()?;
        let scores = vectors.similarities(path.to_str()?, asked)?;
        Some(cut(text).into_iter().zip(scores).collect())
    }

    /// The documents ranked by words (`by_words`) and the documents nearest `query` by
    /// meaning, fused by reciprocal rank ([`fused_order`]), the best `limit`. A document found
    /// by meaning alone is shown by its nearest chunk (its place returned); one the words found
    /// keeps its best-matching passage. The score is the fused one.
    pub(super) fn fuse(
        &self,
        query: &str,
        by_words: Vec<(f32, String, StoredDoc)>,
        embedder: &Embedder,
        vectors: &Vectors,
        limit: usize,
    ) -> Result<Vec<Ranked>, LocalSearchError> {
        let asked = embedder.embed(&[query])?;
        let near = vectors.nearest(&asked[0], limit.saturating_mul(FUSION_DEPTH));
        let words: Vec<&str> = by_words.iter().map(|(_, p, _)| p.as_str()).collect();
        let meaning: Vec<&str> = near.iter().map(|n| n.path.as_str()).collect();
        let mut out = Vec::with_capacity(limit);
        for (path, score) in fused_order(&[words, meaning]).into_iter().take(limit) {
            let (stored, chunk) = match by_words.iter().find(|(_, p, _)| p == path) {
                Some((_, _, stored)) => (stored.clone(), None),
                None => {
                    let Some(stored) = self.stored_at(path)? else {
                        continue;
                    };
                    let chunk = near.iter().find(|n| n.path == path).map(|n| n.chunk);
                    (stored, chunk)
                }
            };
            // Reciprocal rank scores are below 1: f32 keeps their order.
            out.push((score as f32, path.to_string(), stored, chunk));
        }
        Ok(out)
    }
}
