//! Sentence embeddings in process: a BERT-family model in the sentence-transformers layout
//! (`config.json`, `tokenizer.json` in one folder, such as all-MiniLM-L6-v2) with its graph as
//! `model.onnx`, run on the CPU by ONNX Runtime, which is loaded at run time from the folder's
//! `libonnxruntime.so` (`scripts/setup/embedding-model.sh` puts both there). A text becomes the
//! mean of its tokens' last hidden states, scaled to length 1, so the dot product of two
//! vectors is their cosine similarity. Texts longer than [`MAX_TOKENS`] tokens are cut there.
//!
//! Pure computation on a loaded model: no index, no network. Loading names the folder and the
//! file that is missing or unreadable.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use ort::environment::Environment;
use ort::session::{Session, SessionInputValue};
use ort::value::Tensor;
use sha2::{Digest, Sha256};
use tokenizers::{Tokenizer, TruncationParams};

/// The most tokens of one text the model reads (all-MiniLM-L6-v2 was trained on 128; 256 is
/// its limit).
pub const MAX_TOKENS: usize = 256;

/// The files a model folder must hold.
pub const MODEL_FILES: [&str; 4] = ["config.json", "tokenizer.json", "model.onnx", RUNTIME];

/// ONNX Runtime's library, loaded from the model folder.
pub const RUNTIME: &str = "libonnxruntime.so";

/// How a user gets a folder that has every file.
const SETUP: &str = "scripts/setup/embedding-model.sh DIR";

/// Why a model could not be loaded or run.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(
        "the embedding model folder `{dir}` has no `{file}` (a model folder holds config.json, \
         tokenizer.json, model.onnx and libonnxruntime.so; `{SETUP}` from a clone of \
         researchflow makes one, and `search.embeddings.model` or `--meaning` names it)"
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
    session: Mutex<Session>,
    /// The graph's inputs, in its order: `input_ids`, `attention_mask`, `token_type_ids`.
    inputs: Vec<Input>,
    tokenizer: Tokenizer,
    dims: usize,
    id: String,
}

/// What the graph takes under one of its input names.
#[derive(Debug, Clone, Copy)]
enum Input {
    Ids,
    Mask,
    Kinds,
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
        let dims = hidden_size(&config_text).map_err(|e| unreadable("config.json", e))?;
        let tokenizer_text = std::fs::read(dir.join("tokenizer.json"))
            .map_err(|e| unreadable("tokenizer.json", e.to_string()))?;
        let tokenizer = tokenizer(&tokenizer_text).map_err(|e| unreadable("tokenizer.json", e))?;
        let runtime = runtime(&dir.join(RUNTIME)).map_err(|e| unreadable(RUNTIME, e))?;
        let graph = dir.join("model.onnx");
        let session = session(&runtime, &graph).map_err(|e| unreadable("model.onnx", e))?;
        let inputs = session
            .inputs()
            .iter()
            .map(|input| input_of(input.name()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| unreadable("model.onnx", e))?;
        let id = model_id(&[
            format!("mean of up to {MAX_TOKENS} tokens").as_bytes(),
            config_text.as_bytes(),
            &tokenizer_text,
            &graph_sample(&graph).map_err(|e| unreadable("model.onnx", e.to_string()))?,
        ]);
        Ok(Embedder {
            dir: dir.to_path_buf(),
            session: Mutex::new(session),
            inputs,
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

    /// What names this model's vectors: a SHA-256 of how a text becomes a vector (pooling,
    /// tokens read), the model's config, its tokenizer, and its graph's size, first and last 64
    /// KiB (the graph's nodes, the ends of its weights), so that vectors of another model, or
    /// made another way, are never mixed with these.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The vector of each text, in order, each of length 1.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        self.embed_counted(texts, &|_| {})
    }

    /// [`Embedder::embed`], telling `counted` of each text embedded as it ends.
    ///
    /// Each text runs through the graph alone, on every core: batches would pad the shorter
    /// texts of a batch to the longest, and on 2 cores (`scripts/bench-embed.sh`, the Debian
    /// corpus) one text at a time embedded 35 chunks/s in 191 MB, batches of 4 31.7 in 238 MB,
    /// of 16 27.2 in 383 MB, of 64 22.7 in 1.2 GB.
    pub fn embed_counted(
        &self,
        texts: &[&str],
        counted: &dyn Fn(usize),
    ) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts
            .iter()
            .map(|text| {
                let vector = self.embed_one(text).map_err(|cause| EmbedError::Failed {
                    dir: self.dir.clone(),
                    cause,
                });
                counted(1);
                vector
            })
            .collect()
    }

    fn embed_one(&self, text: &str) -> Result<Vec<f32>, String> {
        let encoding = self
            .tokenizer
            .encode(text, true)
            .map_err(|e| e.to_string())?;
        let ids: Vec<i64> = encoding.get_ids().iter().map(|&v| i64::from(v)).collect();
        let shape = [1, ids.len()];
        let mut feed: Vec<(Cow<str>, SessionInputValue)> = Vec::new();
        let mut session = self.session.lock().unwrap_or_else(|p| p.into_inner());
        for (input, outlet) in self.inputs.iter().zip(session.inputs()) {
            let values = match input {
                Input::Ids => ids.clone(),
                Input::Mask => vec![1; ids.len()],
                Input::Kinds => vec![0; ids.len()],
            };
            let tensor = Tensor::from_array((shape, values)).map_err(|e| e.to_string())?;
            feed.push((outlet.name().to_string().into(), tensor.into()));
        }
        let outputs = session.run(feed).map_err(|e| e.to_string())?;
        let (dims, hidden) = outputs[0]
            .try_extract_tensor::<f32>()
            .map_err(|e| e.to_string())?;
        if dims.len() != 3 || dims[2] as usize != self.dims {
            return Err(format!(
                "the graph's first output has shape {dims:?}, not [batch, sequence, {}]",
                self.dims
            ));
        }
        Ok(mean_of_tokens(hidden, self.dims))
    }
}

/// The mean of the token vectors of `hidden` (each `dims` long), scaled to length 1.
fn mean_of_tokens(hidden: &[f32], dims: usize) -> Vec<f32> {
    let mut sum = vec![0.0f32; dims];
    for token in hidden.chunks_exact(dims) {
        for (s, v) in sum.iter_mut().zip(token) {
            *s += v;
        }
    }
    let norm = sum.iter().map(|v| v * v).sum::<f32>().sqrt().max(1e-12);
    sum.iter().map(|v| v / norm).collect()
}

fn hidden_size(config: &str) -> Result<usize, String> {
    let value: serde_json::Value = serde_json::from_str(config).map_err(|e| e.to_string())?;
    value["hidden_size"]
        .as_u64()
        .map(|n| n as usize)
        .ok_or_else(|| "no `hidden_size` (the length of the model's vectors)".to_string())
}

fn tokenizer(text: &[u8]) -> Result<Tokenizer, String> {
    let mut tokenizer = Tokenizer::from_bytes(text).map_err(|e| e.to_string())?;
    // A text runs alone: padding (all-MiniLM-L6-v2's tokenizer pads to 128) would be averaged in.
    tokenizer.with_padding(None);
    tokenizer
        .with_truncation(Some(TruncationParams {
            max_length: MAX_TOKENS,
            ..Default::default()
        }))
        .map_err(|e| e.to_string())?;
    Ok(tokenizer)
}

/// ONNX Runtime loaded from `library`, once a process: the first model folder's library serves
/// every later one.
fn runtime(library: &Path) -> Result<Environment, String> {
    static STARTED: OnceLock<Result<Environment, String>> = OnceLock::new();
    STARTED
        .get_or_init(|| {
            let builder = ort::init_from(library).map_err(|e| e.to_string())?;
            builder.build().map_err(|e| e.to_string())
        })
        .clone()
}

/// A session on every core, with ONNX Runtime's graph optimisations.
fn session(runtime: &Environment, graph: &Path) -> Result<Session, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let builder = Session::builder(runtime).map_err(|e| e.to_string())?;
    let mut builder = builder
        .with_intra_threads(cores)
        .map_err(|e| e.to_string())?;
    builder.commit_from_file(graph).map_err(|e| e.to_string())
}

fn input_of(name: &str) -> Result<Input, String> {
    match name {
        "input_ids" => Ok(Input::Ids),
        "attention_mask" => Ok(Input::Mask),
        "token_type_ids" => Ok(Input::Kinds),
        other => Err(format!(
            "the graph takes an input `{other}`; a BERT-family graph takes input_ids, \
             attention_mask and token_type_ids"
        )),
    }
}

/// The graph file's size and its first and last 64 KiB.
fn graph_sample(graph: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    const PART: u64 = 64 * 1024;
    let mut file = std::fs::File::open(graph)?;
    let size = file.metadata()?.len();
    let mut sample = size.to_le_bytes().to_vec();
    (&mut file).take(PART).read_to_end(&mut sample)?;
    file.seek(SeekFrom::Start(size.saturating_sub(PART)))?;
    file.take(PART).read_to_end(&mut sample)?;
    Ok(sample)
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
        assert!(text.contains("model.onnx"), "{text}");
        assert!(text.contains("embedding-model.sh"), "{text}");
        assert!(text.contains(&dir.path().display().to_string()), "{text}");
        assert!(text.contains("search.embeddings.model"), "{text}");
    }

    #[test]
    fn a_vector_is_the_mean_of_its_tokens_scaled_to_length_one() {
        // Three tokens of two dimensions: their mean is (1, 4/3), of length 5/3.
        let vector = mean_of_tokens(&[1.0, 0.0, 0.0, 2.0, 2.0, 2.0], 2);
        assert!((vector[0] - 0.6).abs() < 1e-6 && (vector[1] - 0.8).abs() < 1e-6);
    }

    #[test]
    fn similarity_is_the_dot_product() {
        assert!((similarity(&[0.6, 0.8], &[0.6, 0.8]) - 1.0).abs() < 1e-6);
        assert_eq!(similarity(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
    }
}
