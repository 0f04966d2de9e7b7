//! The vectors of the corpus (`search.embeddings.model`): every indexed document cut into
//! chunks ([`super::chunks`]), each chunk's sentence embedding, kept beside the tantivy index
//! in `vectors.safetensors` (one `[rows, dims]` tensor of f32; its metadata names the model and
//! lists each document's path, SHA-256 and number of rows, in row order).
//!
//! Incremental like the index: a document whose text (SHA-256) already has vectors of the same
//! model keeps them, wherever it now lies; only new or changed texts are embedded, and vectors
//! of documents gone are dropped. Vectors of another model, or a file that cannot be read, are
//! not trusted: everything is embedded again. The file is replaced atomically.

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use safetensors::tensor::{Dtype, SafeTensors, TensorView};

use super::chunks::cut;
use super::report::{IndexStep, Steps};
use super::schema::StoredDoc;
use crate::embed::{EmbedError, Embedder, similarity};

/// The file's name in the index folder.
pub const FILE_NAME: &str = "vectors.safetensors";

/// The name of the one tensor in the file.
const TENSOR: &str = "vectors";

/// One document's vectors.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DocVectors {
    pub path: String,
    pub sha256: String,
    /// Its chunks' rows.
    pub rows: Range<usize>,
}

/// Every document's chunk vectors, for one model.
#[derive(Debug, Default)]
pub struct Vectors {
    model: String,
    dims: usize,
    entries: Vec<DocVectors>,
    data: Vec<f32>,
}

/// A document found by meaning: its path, the similarity of its best chunk to the query, and
/// that chunk's place among the document's chunks.
#[derive(Debug, Clone, PartialEq)]
pub struct Near {
    pub path: String,
    pub score: f32,
    pub chunk: usize,
}

/// What the vectors file in an index folder holds, read from its header alone.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Kept {
    /// The model's id ([`Embedder::id`]).
    pub model: String,
    pub dims: usize,
    /// Chunks with vectors.
    pub chunks: usize,
    /// Documents with vectors.
    pub documents: usize,
}

/// The most of a header read: the document list of a very large corpus.
const MAX_HEADER: u64 = 256 * 1024 * 1024;

impl Kept {
    /// The header of `dir`'s vectors file; `None` when there is none or it cannot be read.
    pub fn read(dir: &Path) -> Option<Kept> {
        use std::io::Read;
        let mut file = std::fs::File::open(dir.join(FILE_NAME)).ok()?;
        let mut size = [0u8; 8];
        file.read_exact(&mut size).ok()?;
        let size = u64::from_le_bytes(size);
        let mut header = Vec::new();
        file.take(size.min(MAX_HEADER))
            .read_to_end(&mut header)
            .ok()?;
        let header: serde_json::Value = serde_json::from_slice(&header).ok()?;
        let meta = header.get("__metadata__")?;
        let entries: Vec<DocVectors> =
            serde_json::from_str(meta.get("documents")?.as_str()?).ok()?;
        let shape = header.get(TENSOR)?.get("shape")?.as_array()?;
        let dim = |i: usize| shape.get(i).and_then(serde_json::Value::as_u64);
        Some(Kept {
            model: meta.get("model")?.as_str()?.to_string(),
            dims: usize::try_from(dim(1)?).ok()?,
            chunks: usize::try_from(dim(0)?).ok()?,
            documents: entries.len(),
        })
    }
}

impl Vectors {
    /// The vectors kept in `dir` for `embedder`'s model; empty when there are none, they are
    /// another model's, or the file cannot be read.
    pub fn load(dir: &Path, embedder: &Embedder) -> Vectors {
        let empty = Vectors {
            model: embedder.id().to_string(),
            dims: embedder.dims(),
            ..Vectors::default()
        };
        let Ok(bytes) = std::fs::read(dir.join(FILE_NAME)) else {
            return empty;
        };
        match Vectors::parse(&bytes) {
            Some(kept) if kept.model == empty.model && kept.dims == empty.dims => kept,
            _ => empty,
        }
    }

    fn parse(bytes: &[u8]) -> Option<Vectors> {
        let (_, header) = SafeTensors::read_metadata(bytes).ok()?;
        let meta = header.metadata().as_ref()?;
        let model = meta.get("model")?.clone();
        let entries: Vec<DocVectors> = serde_json::from_str(meta.get("documents")?).ok()?;
        let tensors = SafeTensors::deserialize(bytes).ok()?;
        let view = tensors.tensor(TENSOR).ok()?;
        let [rows, dims] = view.shape() else {
            return None;
        };
        let data: Vec<f32> = view
            .data()
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let consistent = view.dtype() == Dtype::F32
            && data.len() == rows * dims
            && entries.iter().all(|e| e.rows.end <= *rows);
        consistent.then_some(Vectors {
            model,
            dims: *dims,
            entries,
            data,
        })
    }

    /// Brings the vectors in line with `documents` (every document of the index): returns how
    /// many documents were embedded. The chunks of all new texts are embedded together, so the
    /// model's batches group chunks of a like length.
    pub fn refresh(
        &mut self,
        documents: &[StoredDoc],
        embedder: &Embedder,
        steps: &Steps,
    ) -> Result<usize, EmbedError> {
        let kept: HashMap<&str, &DocVectors> = self
            .entries
            .iter()
            .map(|e| (e.sha256.as_str(), e))
            .collect();
        let new: Vec<Vec<String>> = documents
            .iter()
            .map(|d| match kept.contains_key(d.sha256.as_str()) {
                true => Vec::new(),
                false => cut(&d.body),
            })
            .collect();
        let texts: Vec<&str> = new.iter().flatten().map(String::as_str).collect();
        let total = texts.len();
        let done = std::sync::atomic::AtomicUsize::new(0);
        let counted = |n: usize| {
            let done = done.fetch_add(n, std::sync::atomic::Ordering::Relaxed) + n;
            steps.tell(IndexStep::Embedded { done, total });
        };
        steps.tell(IndexStep::Embedded { done: 0, total });
        let mut fresh = embedder.embed_counted(&texts, &counted)?.into_iter();
        let dims = self.dims.max(1);
        let mut entries = Vec::with_capacity(documents.len());
        let mut data = Vec::with_capacity(self.data.len());
        let mut embedded = 0;
        for (doc, chunks) in documents.iter().zip(&new) {
            let start = data.len() / dims;
            match kept.get(doc.sha256.as_str()) {
                Some(old) => {
                    data.extend_from_slice(&self.data[old.rows.start * dims..old.rows.end * dims])
                }
                None => {
                    for vector in fresh.by_ref().take(chunks.len()) {
                        data.extend(vector);
                    }
                    embedded += 1;
                }
            }
            entries.push(DocVectors {
                path: doc.path.clone(),
                sha256: doc.sha256.clone(),
                rows: start..data.len() / dims,
            });
        }
        self.entries = entries;
        self.data = data;
        Ok(embedded)
    }

    /// Whether the vectors cover exactly `documents`, at the same paths.
    pub fn covers(&self, documents: &[StoredDoc]) -> bool {
        self.entries.len() == documents.len()
            && self
                .entries
                .iter()
                .zip(documents)
                .all(|(e, d)| e.path == d.path && e.sha256 == d.sha256)
    }

    /// Writes the vectors to `dir` (atomically).
    pub fn save(&self, dir: &Path) -> std::io::Result<()> {
        let bytes: Vec<u8> = self.data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let rows = self.data.len() / self.dims.max(1);
        let invalid = |e: safetensors::SafeTensorError| std::io::Error::other(e.to_string());
        let view = TensorView::new(Dtype::F32, vec![rows, self.dims], &bytes).map_err(invalid)?;
        let meta = HashMap::from([
            ("model".to_string(), self.model.clone()),
            (
                "documents".to_string(),
                serde_json::to_string(&self.entries).map_err(std::io::Error::other)?,
            ),
        ]);
        let file = safetensors::serialize([(TENSOR, view)], Some(meta)).map_err(invalid)?;
        crate::atomic::write(&dir.join(FILE_NAME), &file)
    }

    /// How many chunks have vectors.
    pub fn rows(&self) -> usize {
        self.data.len() / self.dims.max(1)
    }

    /// The similarity of each chunk of the document at `path` to `query`, in chunk order.
    pub fn similarities(&self, path: &str, query: &[f32]) -> Option<Vec<f32>> {
        let entry = self.entries.iter().find(|e| e.path == path)?;
        Some(
            entry
                .rows
                .clone()
                .map(|row| similarity(query, &self.data[row * self.dims..(row + 1) * self.dims]))
                .collect(),
        )
    }

    /// The `limit` documents whose best chunk is nearest `query` (a vector of the same model),
    /// nearest first; ties in path order.
    pub fn nearest(&self, query: &[f32], limit: usize) -> Vec<Near> {
        let mut near: Vec<Near> = self
            .entries
            .iter()
            .filter_map(|e| {
                let (chunk, score) = e
                    .rows
                    .clone()
                    .map(|row| {
                        similarity(query, &self.data[row * self.dims..(row + 1) * self.dims])
                    })
                    .enumerate()
                    .max_by(|a, b| a.1.total_cmp(&b.1).then(b.0.cmp(&a.0)))?;
                Some(Near {
                    path: e.path.clone(),
                    score,
                    chunk,
                })
            })
            .collect();
        near.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.path.cmp(&b.path))
        });
        near.truncate(limit);
        near
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_tells_the_model_its_dimension_and_what_has_vectors() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(Kept::read(dir.path()), None, "no file, nothing kept");
        let entry = |path: &str, rows| DocVectors {
            path: path.into(),
            sha256: "00".into(),
            rows,
        };
        let vectors = Vectors {
            model: "m1".into(),
            dims: 3,
            entries: vec![entry("/a", 0..2), entry("/b", 2..5)],
            data: vec![0.5; 15],
        };
        vectors.save(dir.path()).expect("save");
        let kept = Kept::read(dir.path()).expect("kept");
        assert_eq!(
            kept,
            Kept {
                model: "m1".into(),
                dims: 3,
                chunks: 5,
                documents: 2
            }
        );
        std::fs::write(dir.path().join(FILE_NAME), b"\x10\0\0\0\0\0\0\0{not json").expect("w");
        assert_eq!(Kept::read(dir.path()), None, "a broken header is none");
    }
}
