//! researchflow's side of the embedding benchmark (`scripts/bench-embed.sh`):
//! `cargo run --release --example bench_embed -- CORPUS_DIR MODEL_DIR OUT_DIR [QUERIES]`.
//!
//! The question it answers: how fast does the index embed a corpus, next to ONNX Runtime run
//! from Python on the very same texts (`scripts/bench/embed_reference.py`)? So it measures the
//! real index build, not a copy of it:
//!
//! 1. builds the corpus's index by words (in a temporary folder; not timed), and writes the
//!    chunks of its documents, cut as the index cuts them for its vectors (the stored text of
//!    each document, in path order, through `chunks::cut`), to `OUT_DIR/chunks.jsonl`, one
//!    JSON string a line, in the order of the vectors' rows;
//! 2. opens the same index again with the model (loaded first, not timed): nothing is read
//!    again, every chunk is embedded and the vectors written, as `search.embeddings.model`
//!    does. That open is timed (wall): `researchflow: N chunks in S s, R chunks/s`. The vectors
//!    file is copied to `OUT_DIR/vectors.safetensors`, so the reference can check that both
//!    sides give the same vectors;
//! 3. times QUERIES (default 200) short queries by meaning, each one embedded alone and the
//!    documents ranked by their nearest chunk (dot products, top 10):
//!    `query by meaning: p50 X ms, p99 Y ms`;
//! 4. prints the process's peak memory (VmHWM).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use researchflow::embed::Embedder;
use researchflow::search::local::chunks::cut;
use researchflow::search::local::extract::Reading;
use researchflow::search::local::vectors::{FILE_NAME, Vectors};
use researchflow::search::local::{LocalIndex, LocalSearchError};

type Error = Box<dyn std::error::Error>;

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [corpus, model, out, rest @ ..] = args.as_slice() else {
        return Err("usage: bench_embed CORPUS_DIR MODEL_DIR OUT_DIR [QUERIES]".into());
    };
    let queries: usize = rest.first().map_or(Ok(200), |q| q.parse())?;
    let (corpus, out) = (Path::new(corpus), PathBuf::from(out));
    std::fs::create_dir_all(&out)?;
    let tmp = tempfile::tempdir()?;
    let index_dir = tmp.path().join("index");

    let chunks = chunks_by_words(corpus, &index_dir)?;
    if chunks.is_empty() {
        return Err("the corpus's documents hold no text to embed".into());
    }
    write_jsonl(&out.join("chunks.jsonl"), &chunks)?;
    let embedder = Arc::new(Embedder::load(Path::new(model))?);
    let build = build_with_vectors(corpus, &index_dir, &embedder, chunks.len())?;
    println!(
        "researchflow: {} chunks in {:.2} s, {:.1} chunks/s",
        chunks.len(),
        build.as_secs_f64(),
        chunks.len() as f64 / build.as_secs_f64()
    );
    std::fs::copy(index_dir.join(FILE_NAME), out.join("vectors.safetensors"))?;

    let vectors = Vectors::load(&index_dir, &embedder);
    let mut latencies = query_latencies(&embedder, &vectors, &chunks, queries)?;
    latencies.sort();
    println!(
        "query by meaning: p50 {:.2} ms, p99 {:.2} ms ({queries} queries, top 10)",
        millis(percentile(&latencies, 0.50)),
        millis(percentile(&latencies, 0.99))
    );
    match peak_memory_kb() {
        Some(kb) => println!("peak memory (VmHWM): {:.0} MB", kb as f64 / 1024.0),
        None => println!("peak memory: unknown (no /proc/self/status)"),
    }
    Ok(())
}

/// Builds the index of `corpus` by words in `index_dir`, and returns the chunks its vectors
/// will have, in row order: its documents' stored texts, in path order, cut.
fn chunks_by_words(corpus: &Path, index_dir: &Path) -> Result<Vec<String>, LocalSearchError> {
    let reading = Reading::in_process();
    let (index, report) = LocalIndex::open_with(corpus, Some(index_dir), None, &reading)?;
    let documents = index.documents()?;
    let chunks: Vec<String> = documents.iter().flat_map(|d| cut(&d.text)).collect();
    println!(
        "corpus: {} documents ({} warnings), {} chunks",
        report.documents,
        report.warnings.len(),
        chunks.len()
    );
    Ok(chunks)
}

/// Opens the index in `index_dir` again with `embedder`, which embeds every chunk and writes
/// the vectors; returns the wall time of that open, once it is known to have embedded
/// `chunks` chunks.
fn build_with_vectors(
    corpus: &Path,
    index_dir: &Path,
    embedder: &Arc<Embedder>,
    chunks: usize,
) -> Result<Duration, Error> {
    let reading = Reading::in_process();
    let start = Instant::now();
    let (_, report) =
        LocalIndex::open_with(corpus, Some(index_dir), Some(embedder.clone()), &reading)?;
    let wall = start.elapsed();
    let embedded = report.embedded.map_or(0, |e| e.chunks);
    if embedded != chunks {
        return Err(format!("the index embedded {embedded} chunks, not {chunks}").into());
    }
    Ok(wall)
}

/// The time of each of `count` queries by meaning: a short query (the first words of a chunk)
/// embedded alone, then the 10 documents whose nearest chunk is nearest it.
fn query_latencies(
    embedder: &Embedder,
    vectors: &Vectors,
    chunks: &[String],
    count: usize,
) -> Result<Vec<Duration>, Error> {
    let mut latencies = Vec::with_capacity(count);
    for i in 0..count {
        let chunk = &chunks[(i * 7919) % chunks.len().max(1)];
        let query: Vec<&str> = chunk.split_whitespace().take(3 + i % 4).collect();
        let start = Instant::now();
        let vector = embedder.embed(&[&query.join(" ")])?.remove(0);
        std::hint::black_box(vectors.nearest(&vector, 10));
        latencies.push(start.elapsed());
    }
    Ok(latencies)
}

/// `texts` as one JSON string a line.
fn write_jsonl(path: &Path, texts: &[String]) -> Result<(), Error> {
    let mut file = std::io::BufWriter::new(std::fs::File::create(path)?);
    for text in texts {
        writeln!(file, "{}", serde_json::to_string(text)?)?;
    }
    file.flush()?;
    Ok(())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn peak_memory_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
