//! Sentence embeddings in process: a BERT-family model in the sentence-transformers layout
//! (`config.json`, `tokenizer.json`, `model.safetensors` in one folder, such as
//! all-MiniLM-L6-v2), run on the CPU by candle. A text becomes the mean of its tokens' last
//! hidden states (padding left out), scaled to length 1, so the dot product of two vectors is
//! their cosine similarity. Texts longer than [`MAX_TOKENS`] tokens are cut there.
//!
//! Pure computation on a loaded model: no index, no network. Loading names the folder and the
//! file that is missing or unreadable.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config};
use sha2::{Digest, Sha256};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// The most tokens of one text the model reads (all-MiniLM-L6-v2 was trained on 128; 256 is
/// its limit).
pub const MAX_TOKENS: usize = 256;

/// Texts embedded in one forward pass: small batches on both cores embed fastest here, and
/// keep the peak memory low (`scripts/bench-local-search.sh` with embeddings, 100 documents on
/// 2 cores: batches of 16 on one thread 4.7 chunks/s and 443 MB; of 16 on two 7.6 and 768
/// MB; of 8 on two 8.9 and 436 MB; of 4 on two 7.9 and 281 MB).
const BATCH: usize = 4;

/// Vectors, each with the index of its text.
type Placed = Vec<(usize, Vec<f32>)>;

/// The files a model folder must hold.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "the embedding model folder `{dir}` has no `{file}` (a model in the sentence-transformers \
         layout holds config.json, tokenizer.json and model.safetensors; set \
         `search.embeddings.model` to such a folder)"
    )]
    Missing { dir: PathBuf, file: &'static str },
    #[error("cannot read `{file}` of the embedding model `{dir}`: {cause}")]
    Unreadable {
        dir: PathBuf,
        file: &'static str,
        cause: String,
    },
    #[error("the embedding model `{dir}` failed on a text: {cause}")]
    Failed { dir: PathBuf, cause: String },
}

/// A loaded sentence-embedding model.
pub struct Embedder {
    dir: PathBuf,
    model: BertModel,
    tokenizer: Tokenizer,
    dims: usize,
    id: String,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .field("dims", &self.dims)
            .finish()
    }
}

impl Embedder {
    /// The model in folder `dir`.
    pub fn load(dir: &Path) -> Result<Embedder, EmbedError> {
        for file in MODEL_FILES {
            if !dir.join(file).is_file() {
                return Err(EmbedError::Missing {
                    dir: dir.to_path_buf(),
                    file,
                });
            }
        }
        let unreadable = |file: &'static str, cause: String| EmbedError::Unreadable {
            dir: dir.to_path_buf(),
            file,
            cause,
        };
        let config_text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| unreadable("config.json", e.to_string()))?;
        let config: Config = serde_json::from_str(&config_text)
            .map_err(|e| unreadable("config.json", e.to_string()))?;
        let dims = config.hidden_size;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..Default::default()
            }))
            .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
        let weights = dir.join("model.safetensors");
        let bytes =
            std::fs::read(&weights).map_err(|e| unreadable("model.safetensors", e.to_string()))?;
        let tokenizer_text = std::fs::read(dir.join("tokenizer.json"))
            .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
        let id = model_id(&[
            config_text.as_bytes(),
            &tokenizer_text,
            &bytes.len().to_le_bytes(),
            &bytes[..bytes.len().min(64 * 1024)],
        ]);
        let vb = VarBuilder::from_buffered_safetensors(bytes, DType::F32, &Device::Cpu)
            .map_err(|e| unreadable("model.safetensors", e.to_string()))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| unreadable("model.safetensors", e.to_string()))?;
        Ok(Embedder {
            dir: dir.to_path_buf(),
            model,
            tokenizer,
            dims,
            id,
        })
    }

    /// The model's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The length of a vector.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// What names this model's vectors: a SHA-256 of its config, its tokenizer, and its
    /// weights' size and first 64 KiB (the safetensors header: every tensor's name, shape and
    /// place), so that vectors of another model are never mixed with these.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The vector of each text, in order, each of length 1. Texts are batched by length, so
    /// that a batch pads its texts to about the same number of tokens.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_counted(texts, &|_| {})
    }

    /// [`Embedder::embed`], telling `counted` how many texts each batch embedded as it ends.
    pub fn embed_counted(
        &self,
        texts: &[&str],
        counted: &(dyn Fn(usize) + Sync),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let batches: Vec<&[usize]> = order.chunks(BATCH).collect();
        // Batches run on every core, each thread taking every n-th batch: one forward pass
        // keeps barely more than one core busy.
        let threads = std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .clamp(1, batches.len().max(1));
        // This thread takes the first share: one batch (a query) starts no thread.
        let share = |t: usize| batches.iter().skip(t).step_by(threads).copied();
        let done: Vec<Result<Placed, String>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (1..threads)
                .map(|t| scope.spawn(move || self.embed_batches(texts, share(t), counted)))
                .collect();
            let mut done = vec![self.embed_batches(texts, share(0), counted)];
            done.extend(workers.into_iter().map(|w| {
                w.join()
                    .unwrap_or_else(|_| Err("an embedding thread panicked".into()))
            }));
            done
        });
        let mut out = vec![Vec::new(); texts.len()];
        for placed in done {
            let placed = placed.map_err(|cause| EmbedError::Failed {
                dir: self.dir.clone(),
                cause,
            })?;
            for (i, vector) in placed {
                out[i] = vector;
            }
        }
        Ok(out)
    }

    /// The vectors of the texts of `batches` (indices into `texts`), each with its index.
    fn embed_batches<'b>(
        &self,
        texts: &[&str],
        batches: impl Iterator<Item = &'b [usize]>,
        counted: &(dyn Fn(usize) + Sync),
    ) -> Result<Placed, String> {
        let mut out = Vec::new();
        for batch in batches {
            let batch_texts: Vec<&str> = batch.iter().map(|&i| texts[i]).collect();
            let vectors = self.embed_batch(&batch_texts)?;
            out.extend(batch.iter().copied().zip(vectors));
            counted(batch.len());
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
        let encodings = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| e.to_string())?;
        let rows = |take: &dyn Fn(&tokenizers::Encoding) -> &[u32]| -> candle_core::Result<Tensor> {
            let rows = encodings
                .iter()
                .map(|e| Tensor::new(take(e), &Device::Cpu))
                .collect::<candle_core::Result<Vec<_>>>()?;
            Tensor::stack(&rows, 0)
        };
        let pooled = (|| -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = rows(&|e| e.get_ids())?;
            let mask = rows(&|e| e.get_attention_mask())?;
            let hidden = self.model.forward(&ids, &ids.zeros_like()?, Some(&mask))?;
            let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = hidden.broadcast_mul(&mask)?.sum(1)?;
            let mean = sum.broadcast_div(&mask.sum(1)?.clamp(1.0, f64::MAX)?)?;
            let norm = mean.sqr()?.sum_keepdim(1)?.sqrt()?.clamp(1e-12, f64::MAX)?;
            mean.broadcast_div(&norm)?.to_vec2::<f32>()
        })();
        pooled.map_err(|e| e.to_string())
    }
}

/// The dot product of two vectors (their cosine similarity when both have length 1).
pub fn similarity(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

fn model_id(parts: &[&[u8]]) -> String {
    let mut hash = Sha256::new();
    for part in parts {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part);
    }
    format!("{:x}", hash.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_the_weights_is_named_with_the_missing_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("config.json"), "{}").expect("write");
        std::fs::write(dir.path().join("tokenizer.json"), "{}").expect("write");
        let err = Embedder::load(dir.path()).expect_err("no weights");
        let text = err.to_string();
        assert!(text.contains("model.safetensors"), "{text}");
        assert!(text.contains(&dir.path().display().to_string()), "{text}");
        assert!(text.contains("search.embeddings.model"), "{text}");
    }

    #[test]
    fn similarity_is_the_dot_product() {
        assert!((similarity(&[0.6, 0.8], &[0.6, 0.8]) - 1.0).abs() < 1e-6);
        assert_eq!(similarity(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
    }
}
