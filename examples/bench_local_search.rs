//! The local-search benchmark for `scripts/bench-local-search.sh`:
//! `cargo run --release --example bench_local_search -- [DOCS] [QUERIES] [WORK_DIR]` writes DOCS
//! synthetic documents (default 10,000; Markdown, text and HTML, a few KB each, word-varied)
//! into WORK_DIR/corpus (default: a temporary folder), builds the index in WORK_DIR/index, runs
//! QUERIES free-text queries (default 1,000), and prints the build rate, the query latency
//! percentiles, the index's size on disk and the peak memory (VmHWM). Deterministic: the same
//! arguments give the same corpus and queries. With `RESEARCHFLOW_BENCH_EMBEDDINGS=DIR` (a
//! sentence-embedding model, as `search.embeddings.model` names one), the index also embeds
//! every chunk and the queries rank by words and meaning.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use researchflow::embed::Embedder;
use researchflow::search::local::LocalIndex;

/// A small LCG keeps the output reproducible without a dependency.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }

    /// Skewed towards small values, like word frequencies in real text.
    fn skewed(&mut self, n: usize) -> usize {
        let a = self.below(n);
        self.below(a + 1)
    }
}

/// 20,000 pronounceable words from syllables (`bakeru`, `tosami`, ...).
fn vocabulary() -> Vec<String> {
    const SYLLABLES: &[&str] = &[
        "ba", "ke", "ru", "to", "sa", "mi", "lo", "ne", "vi", "da", "po", "ga", "li", "fu", "re",
        "zo", "ta", "mo", "si", "ku", "pe", "na", "do", "he", "wi", "ja", "bo", "ce", "ly", "qu",
    ];
    let mut rng = Rng(7);
    (0..20_000)
        .map(|i| {
            let len = 2 + rng.below(3);
            let word: String = (0..len)
                .map(|_| SYLLABLES[rng.below(SYLLABLES.len())])
                .collect();
            format!("{word}{}", if i % 7 == 0 { "s" } else { "" })
        })
        .collect()
}

fn sentence(rng: &mut Rng, words: &[String]) -> String {
    let n = 8 + rng.below(14);
    let mut s: Vec<&str> = (0..n)
        .map(|_| words[rng.skewed(words.len())].as_str())
        .collect();
    s[0] = words[rng.below(words.len())].as_str();
    let mut s = s.join(" ");
    if let Some(first) = s.get(..1) {
        s.replace_range(..1, &first.to_uppercase());
    }
    s.push('.');
    s
}

fn write_corpus(dir: &Path, docs: usize, words: &[String]) -> std::io::Result<u64> {
    let mut rng = Rng(42);
    let mut bytes = 0;
    for i in 0..docs {
        let sub = dir.join(format!("part{:03}", i / 500));
        std::fs::create_dir_all(&sub)?;
        let title = format!(
            "{} {} {}",
            words[rng.below(words.len())],
            words[rng.below(words.len())],
            i
        );
        let paragraphs: Vec<String> = (0..4 + rng.below(4))
            .map(|_| {
                (0..4 + rng.below(4))
                    .map(|_| sentence(&mut rng, words))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let (name, text) = match i % 10 {
            0..=5 => (
                format!("doc{i}.md"),
                format!("# {title}\n\n{}\n", paragraphs.join("\n\n")),
            ),
            6..=8 => (
                format!("doc{i}.txt"),
                format!("{title}\n\n{}\n", paragraphs.join("\n\n")),
            ),
            _ => (
                format!("doc{i}.html"),
                format!(
                    "<html><head><title>{title}</title></head><body><p>{}</p></body></html>",
                    paragraphs.join("</p><p>")
                ),
            ),
        };
        bytes += text.len() as u64;
        std::fs::write(sub.join(name), text)?;
    }
    Ok(bytes)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let at = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(at).copied().unwrap_or_default()
}

/// The bytes of the files under `dir`.
fn folder_bytes(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => folder_bytes(&e.path()),
            _ => e.metadata().map_or(0, |m| m.len()),
        })
        .sum()
}

fn peak_memory_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let docs: usize = args.next().as_deref().unwrap_or("10000").parse()?;
    let queries: usize = args.next().as_deref().unwrap_or("1000").parse()?;
    let tmp = tempfile::tempdir()?;
    let work = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| tmp.path().to_path_buf());
    let (corpus, index_dir) = (work.join("corpus"), work.join("index"));
    let words = vocabulary();

    let bytes = write_corpus(&corpus, docs, &words)?;
    println!("corpus: {docs} documents, {:.1} MB", bytes as f64 / 1e6);

    let embedder = match std::env::var_os("RESEARCHFLOW_BENCH_EMBEDDINGS") {
        Some(dir) => Some(Arc::new(Embedder::load(Path::new(&dir))?)),
        None => None,
    };
    let reading = researchflow::search::local::extract::Reading::in_process();
    let open = || LocalIndex::open_with(&corpus, Some(&index_dir), embedder.clone(), &reading);
    let start = Instant::now();
    let (index, report) = open()?;
    let build = start.elapsed();
    println!(
        "build: {:.2} s, {:.0} documents/s ({} indexed, {} warnings)",
        build.as_secs_f64(),
        report.documents as f64 / build.as_secs_f64(),
        report.documents,
        report.warnings.len()
    );
    match &report.embedded {
        Some(embedded) => println!(
            "embeddings: {} chunks ({:.1} chunks/s over the whole build)",
            embedded.chunks,
            embedded.chunks as f64 / build.as_secs_f64()
        ),
        None => println!("embeddings: none (words only)"),
    }
    println!(
        "index size: {:.1} MB",
        folder_bytes(&index_dir) as f64 / 1e6
    );
    drop(index);
    let start = Instant::now();
    let (index, report) = open()?;
    println!(
        "reopen, nothing changed: {:.0} ms ({} read)",
        start.elapsed().as_secs_f64() * 1e3,
        report.read
    );

    let mut rng = Rng(99);
    let mut latencies = Vec::with_capacity(queries);
    let mut hits = 0;
    for _ in 0..queries {
        let n = 2 + rng.below(4);
        let query: Vec<&str> = (0..n)
            .map(|_| words[rng.skewed(words.len())].as_str())
            .collect();
        let query = query.join(" ");
        let start = Instant::now();
        hits += index.search(&query, 5)?.len();
        latencies.push(start.elapsed());
    }
    latencies.sort();
    let mean = latencies.iter().sum::<Duration>() / latencies.len().max(1) as u32;
    println!(
        "queries: {queries} (limit 5, {hits} hits): p50 {:.2} ms, p99 {:.2} ms, mean {:.2} ms",
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        mean.as_secs_f64() * 1e3
    );
    match peak_memory_kb() {
        Some(kb) => println!("peak memory (VmHWM): {:.0} MB", kb as f64 / 1024.0),
        None => println!("peak memory: unknown (no /proc/self/status)"),
    }
    Ok(())
}
