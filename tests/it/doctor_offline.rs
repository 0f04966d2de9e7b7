//! `doctor` for research without a model (issue 58, item 7): with no model configured and a
//! corpus given, it checks the corpus, its index and the embedding model instead of
//! endpoints, and its exit code says whether offline research will work.

use crate::support::bin::researchflow;
use crate::support::fixtures::{copy_corpus, embedding_model};

/// A corpus of three documents, a picture and an empty file; no config file.
fn corpus(dir: &std::path::Path) -> std::path::PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus");
    std::fs::write(corpus.join("a.md"), "# Cells\n\nLFP cells last long.\n").expect("a.md");
    std::fs::write(corpus.join("b.txt"), "Sodium-ion cells are cheap.\n").expect("b.txt");
    std::fs::write(
        corpus.join("c.html"),
        "<title>C</title><p>Cobalt is mined.</p>",
    )
    .expect("c");
    std::fs::write(corpus.join("empty.md"), "").expect("empty.md");
    std::fs::write(corpus.join("photo.png"), b"\x89PNG\r\n").expect("png");
    corpus
}

fn doctor(dir: &std::path::Path, args: &[&str]) -> crate::support::bin::Cmd {
    researchflow()
        .current_dir(dir)
        .arg("doctor")
        .args(args)
        .args(["--corpus", "corpus", "--index-dir", "index"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_without_a_model_checks_the_corpus_and_brings_its_index_up_to_date() {
    let dir = tempfile::tempdir().expect("tempdir");
    corpus(dir.path());
    let out = doctor(dir.path(), &[]).run().await;
    out.success()
        .stdout_contains("4 document(s) (.html 1, .md 2, .txt 1)")
        .stdout_contains("passed over (not a kind researchflow reads): 1 file(s) (.png 1)")
        .stdout_contains("3 document(s) indexed; built now")
        .stdout_contains("empty.md`: it is empty")
        .stdout_contains("offline research will work");
    assert!(
        !out.stdout.contains("endpoint"),
        "no endpoint probed: {}",
        out.stdout
    );

    let again = doctor(dir.path(), &[]).run().await;
    again
        .success()
        .stdout_contains("3 document(s) indexed; it was current");

    std::fs::write(dir.path().join("corpus/d.md"), "# D\n\nNew text.\n").expect("d.md");
    std::fs::remove_file(dir.path().join("corpus/b.txt")).expect("rm b.txt");
    let json = doctor(dir.path(), &["--json"]).run().await;
    json.success();
    let report = json.stdout_json();
    assert_eq!(report["ok"], true);
    assert_eq!(report["endpoints"], serde_json::json!([]));
    let before = &report["corpus"]["index_before"];
    assert_eq!(
        (before["to_read"].as_u64(), before["gone"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(report["corpus"]["inspection"]["index"]["indexed"], 3);
    assert_eq!(report["corpus"]["model"], serde_json::Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_offline_fails_when_no_file_has_text_or_the_corpus_is_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus");
    std::fs::write(corpus.join("empty.md"), "").expect("empty.md");
    std::fs::write(corpus.join("zeros.txt"), [0u8; 64]).expect("zeros");
    doctor(dir.path(), &["--offline"])
        .run()
        .await
        .code(1)
        .stdout_contains("none of the 2 file(s)")
        .stdout_contains("offline research will not work");

    std::fs::remove_dir_all(&corpus).expect("rm corpus");
    let out = doctor(dir.path(), &["--json"]).run().await;
    out.code(1);
    let report = out.stdout_json();
    assert_eq!(report["ok"], false);
    let error = report["corpus"]["error"].as_str().expect("error");
    assert!(error.contains("corpus"), "{error}");

    // Neither a model nor a corpus: nothing to check, exit 2 as before.
    researchflow()
        .current_dir(dir.path())
        .arg("doctor")
        .run()
        .await
        .code(2)
        .stderr_contains("no model is configured");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_offline_loads_the_embedding_model_and_says_whose_vectors_the_index_has() {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_corpus(&dir.path().join("corpus"));
    let model = embedding_model();
    let config = serde_json::json!({"search": {"embeddings": {"model": model}}});
    std::fs::write(dir.path().join("agent.config.json"), config.to_string()).expect("config");
    doctor(dir.path(), &[])
        .run()
        .await
        .success()
        .stdout_contains("loads, 384 dimensions; no vectors yet");

    let broken = serde_json::json!({"search": {"embeddings": {"model": dir.path()}}});
    std::fs::write(dir.path().join("broken.json"), broken.to_string()).expect("broken");
    researchflow()
        .current_dir(dir.path())
        .args(["--config", "broken.json", "doctor", "--corpus", "corpus"])
        .args(["--index-dir", "index"])
        .run()
        .await
        .code(1)
        .stdout_contains("has no `config.json`")
        .stdout_contains("offline research will not work");
}
