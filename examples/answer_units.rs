//! For `scripts/bench-answer-ceiling.sh`: what the offline engine could answer at best by
//! ranking its own sentences by meaning. Not part of researchflow.
//!
//! `answer_units units CORPUS_DIR INDEX_DIR`: the quotable units of every document of the
//! corpus, as the offline engine reads (its index's text) and splits them, one JSON line each
//! (`{"doc": FILE_NAME, "text": TEXT}`).
//! `answer_units terms`: the content terms of each line of standard input (stemmed, stopwords
//! left out, as the engine weighs a question's words), one JSON array each.
//! `answer_units embed MODEL_DIR`: the embedding of each line of standard input, one line of
//! numbers each, by the model the engine uses (`search.embeddings.model`).

use std::io::{BufRead, Write};
use std::path::Path;

use researchflow::embed::Embedder;
use researchflow::offline::units::units;
use researchflow::search::local::LocalIndex;
use researchflow::text::analyzer::content_terms;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut out = std::io::stdout().lock();
    match args.as_slice() {
        [mode, corpus, index] if mode == "units" => {
            let (index, _) = LocalIndex::open(Path::new(corpus), Some(Path::new(index)))?;
            for document in index.documents()? {
                let doc = document
                    .path
                    .file_name()
                    .unwrap_or_default()
                    .to_string_lossy();
                for unit in units(&document.text) {
                    let text = researchflow::text::collapsed(&document.text[unit.at]);
                    let line = serde_json::json!({"doc": doc, "text": text});
                    writeln!(out, "{line}")?;
                }
            }
        }
        [mode] if mode == "terms" => {
            for line in std::io::stdin().lock().lines() {
                writeln!(out, "{}", serde_json::json!(content_terms(&line?)))?;
            }
        }
        [mode, model] if mode == "embed" => {
            let embedder = Embedder::load(Path::new(model))?;
            let lines: Vec<String> = std::io::stdin().lock().lines().collect::<Result<_, _>>()?;
            let texts: Vec<&str> = lines.iter().map(String::as_str).collect();
            // One call: the embedder batches texts of about the same length together.
            for vector in embedder.embed(&texts)? {
                let numbers: Vec<String> = vector.iter().map(|x| format!("{x:.5}")).collect();
                writeln!(out, "{}", numbers.join(" "))?;
            }
        }
        _ => {
            return Err(
                "usage: answer_units units CORPUS_DIR INDEX_DIR | terms | embed MODEL_DIR".into(),
            );
        }
    }
    Ok(())
}
