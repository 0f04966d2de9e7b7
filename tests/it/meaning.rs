//! Search by meaning (`search.embeddings.model`, a real all-MiniLM-L6-v2 run in process): a
//! question asked in other words than its document's finds it; the vectors are kept beside
//! the index and only new or changed texts are embedded again; a model folder that lacks a
//! file stops the run naming it; without a model the index says it ranks by words only.

use std::path::Path;
use std::sync::Arc;

use researchflow::embed::Embedder;
use researchflow::search::local::{LocalHit, LocalIndex};

use serde_json::{Value, json};

use crate::support::fixtures::{embedding_model, offline_here};
use crate::support::scenario::{events_of, node, read_json, read_ndjson};

/// The document that answers, in words the question does not use, among documents that share
/// the question's words but not its meaning.
fn write_corpus(dir: &Path) {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus");
    let files = [
        (
            "market-2022.md",
            "# Market notes\n\nDuring 2022 the cost of battery-grade carbonate climbed to a record, \
             roughly six times its level of two years before, before easing in the spring of \
             2023.\n",
        ),
        (
            "spike-protection.md",
            "# Surge protection\n\nA voltage spike on the mains can damage the charger. Fit a \
             surge arrester to protect the wall box and its price tag stays small.\n",
        ),
        (
            "lithium-chemistry.md",
            "# Lithium chemistry\n\nLithium is the lightest metal. Its atoms give up an electron \
             easily, which is why lithium makes good anodes and cathodes in cells.\n",
        ),
        (
            "gardening.md",
            "# Tomatoes\n\nTomatoes need six hours of sun a day and steady watering in July.\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(corpus.join(name), text).expect("document");
    }
}

fn with_model(dir: &Path, model: &Path) {
    let config = json!({"search": {"embeddings": {"model": model}}});
    std::fs::write(dir.join("agent.config.json"), config.to_string()).expect("config");
}

async fn run(dir: &Path, question: &str, out: &str) -> Vec<Value> {
    offline_here(dir, &["workflow"])
        .args(["--query", question, "--out", out])
        .run()
        .await
        .success();
    read_ndjson(&dir.join(out.replace(".json", ".events.ndjson")))
}

fn sources(dir: &Path, out: &str) -> Vec<String> {
    let plan = read_json(&dir.join(out));
    node(&plan, "b")["sources"]
        .as_array()
        .map(|s| {
            s.iter()
                .filter_map(|s| s["url"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_paraphrased_question_finds_its_document_and_vectors_are_kept_and_refreshed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_corpus(dir.path());
    with_model(dir.path(), &embedding_model());
    let question = "When did the lithium price spike?";

    let events = run(dir.path(), question, "first.json").await;
    let index = events_of(&events, "local_index")[0];
    assert_eq!(index["embeddings"]["documents"], 4, "{index}");
    assert!(
        index["embeddings"]["chunks"].as_u64().unwrap_or(0) >= 4,
        "{index}"
    );
    assert!(dir.path().join("index/vectors.safetensors").is_file());
    let found = sources(dir.path(), "first.json");
    assert!(
        found.iter().any(|u| u.ends_with("market-2022.md")),
        "the document that says it in other words is among the sources (the index-level test \
         holds that words alone miss it): {found:?}"
    );

    // Nothing changed: nothing is embedded again.
    let events = run(dir.path(), question, "second.json").await;
    assert_eq!(
        events_of(&events, "local_index")[0]["embeddings"]["documents"],
        0
    );

    // One document changed, one added: those two are embedded.
    std::fs::write(
        dir.path().join("corpus/gardening.md"),
        "# Tomatoes\n\nTomatoes need eight hours of sun.\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("corpus/new.md"),
        "# Storage\n\nKeep cells cool.\n",
    )
    .expect("write");
    let events = run(dir.path(), question, "third.json").await;
    assert_eq!(
        events_of(&events, "local_index")[0]["embeddings"]["documents"],
        2
    );
}

/// The index itself: asked for two documents, words alone give the two that share the
/// question's words; with the model, the one that answers in other words is among them.
#[test]
fn the_index_finds_by_meaning_what_words_miss() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_corpus(dir.path());
    let corpus = dir.path().join("corpus");
    let question = "When did the lithium price spike?";
    let names = |hits: Vec<LocalHit>| -> Vec<String> {
        hits.iter()
            .filter_map(|h| h.path.file_name().map(|n| n.to_string_lossy().into_owned()))
            .collect()
    };
    let (words, _) = LocalIndex::open(&corpus, Some(&dir.path().join("words"))).expect("index");
    let by_words = names(words.search(question, 2).expect("search"));
    assert!(
        !by_words.contains(&"market-2022.md".to_string()),
        "{by_words:?}"
    );
    let embedder = Arc::new(Embedder::load(&embedding_model()).expect("model"));
    let reading = researchflow::search::local::extract::Reading::in_process();
    let (meaning, report) = LocalIndex::open_with(
        &corpus,
        Some(&dir.path().join("meaning")),
        Some(embedder),
        &reading,
    )
    .expect("index");
    assert_eq!(report.embedded.map(|e| e.documents), Some(4));
    let by_meaning = names(meaning.search(question, 2).expect("search"));
    assert!(
        by_meaning.contains(&"market-2022.md".to_string()),
        "{by_meaning:?}"
    );
}

#[tokio::test]
async fn without_a_model_the_index_ranks_by_words_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_corpus(dir.path());
    let out = offline_here(dir.path(), &["workflow"])
        .args([
            "--query",
            "When did the lithium price spike?",
            "--out",
            "plan.json",
        ])
        .run()
        .await;
    out.success()
        .stderr_contains("ranked by words only")
        .stderr_contains("search.embeddings.model");

    let events = read_ndjson(&dir.path().join("plan.events.ndjson"));
    assert_eq!(
        events_of(&events, "local_index")[0]["embeddings"],
        Value::Null
    );
    assert!(!dir.path().join("index/vectors.safetensors").exists());
}

/// A model folder in `dir/model` holding only `files` of the shipped model (linked), named in
/// `dir`'s config.
fn model_with(dir: &Path, files: &[&str]) -> std::path::PathBuf {
    let model = dir.join("model");
    std::fs::create_dir_all(&model).expect("model");
    for file in files {
        std::os::unix::fs::symlink(embedding_model().join(file), model.join(file)).expect("link");
    }
    with_model(dir, &model);
    model
}

#[tokio::test]
async fn a_model_folder_without_its_weights_stops_the_run_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_corpus(dir.path());
    model_with(dir.path(), &["config.json", "tokenizer.json"]);
    offline_here(dir.path(), &["workflow"])
        .args([
            "--query",
            "When did the lithium price spike?",
            "--out",
            "plan.json",
        ])
        .run()
        .await
        .code(2)
        .stderr_contains("model.onnx")
        .stderr_contains("scripts/setup/embedding-model.sh")
        .stderr_contains("search.embeddings.model")
        .stderr_contains("agent.config.json");
    assert!(
        !dir.path().join("plan.json").exists(),
        "no run without its model"
    );
}

/// The vectors are the model's: cosine similarities of all-MiniLM-L6-v2 as a reference
/// pipeline computes them (Python `tokenizers` and ONNX Runtime, padded batch, mean over the
/// attention mask; candle's vectors agreed with it to 0.9999999), so nothing of the
/// tokenizer's own padding or truncation settings leaks into a vector.
#[test]
fn vectors_are_the_models_as_a_reference_pipeline_computes_them() {
    let embedder = Embedder::load(&embedding_model()).expect("model");
    let texts = [
        "The cat sits on the mat.",
        "A feline rests on a rug.",
        "Stock markets fell sharply today.",
    ];
    let vectors = embedder.embed(&texts).expect("embed");
    let near = researchflow::embed::similarity(&vectors[0], &vectors[1]);
    let far = researchflow::embed::similarity(&vectors[0], &vectors[2]);
    assert!((near - 0.5584).abs() < 1e-3, "cat and feline: {near}");
    assert!((far - 0.0462).abs() < 1e-3, "cat and markets: {far}");
    assert_eq!(embedder.dims(), 384);
}

/// ONNX Runtime is loaded at run time from the model folder: a file there that is no such
/// library stops the run with its name, before any research, and the process does not crash.
#[tokio::test]
async fn a_runtime_library_that_is_not_one_stops_the_run_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_corpus(dir.path());
    let model = model_with(dir.path(), &["config.json", "tokenizer.json", "model.onnx"]);
    std::fs::write(model.join("libonnxruntime.so"), "not a library").expect("write");
    offline_here(dir.path(), &["workflow"])
        .args(["--query", "When did the lithium price spike?"])
        .args(["--out", "plan.json"])
        .run()
        .await
        .code(2)
        .stderr_contains("libonnxruntime.so")
        .stderr_contains(&model.display().to_string());
    assert!(
        !dir.path().join("plan.json").exists(),
        "no run without its runtime"
    );
}

/// Issue 58 item 6: meaning turned on from the command line or the environment, no config
/// file, and the index's summary line says it ranks by meaning.
#[tokio::test]
async fn the_meaning_flag_and_its_variable_turn_meaning_on_without_a_config_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_corpus(dir.path());
    let model = embedding_model();
    let question = ["--query", "When did the lithium price spike?"];
    let by_flag = offline_here(dir.path(), &["workflow"])
        .args(question)
        .args(["--out", "flag.json", "--meaning"])
        .arg(&model)
        .run()
        .await;
    by_flag
        .success()
        .stderr_contains("ranked by words and meaning")
        .stderr_contains("4 document(s) embedded now");
    let by_variable = offline_here(dir.path(), &["workflow"])
        .args(question)
        .args(["--out", "variable.json"])
        .env("RESEARCHFLOW_EMBEDDINGS", &model)
        .run()
        .await;
    by_variable
        .success()
        .stderr_contains("ranked by words and meaning")
        .stderr_contains("0 document(s) embedded now");
    assert!(dir.path().join("index/vectors.safetensors").is_file());
}
