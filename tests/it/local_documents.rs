//! Local documents as a system ships them, through the real binary without a model: what a
//! Debian system installs under `/usr/share/doc` (gzip-compressed text, copyright files that
//! open with header fields, HTML manuals whose headings stand above their first sentence), and
//! a corpus that moves between two runs of a recurring batch.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::copy_corpus;
use crate::support::researchflow;
use crate::support::scenario::{events_of, final_report as report, read_json, read_ndjson};

const QUESTION: &str = "Is libffi thread-safe?";

/// A Debian copyright file: header fields from its first line to its last.
const COPYRIGHT: &str = "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: libffi
Source: https://github.com/libffi/libffi

Files: *
Copyright: 1996-2019  Anthony Green, Red Hat, Inc and others.
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining
 a copy of this software to deal in it without restriction, thread safety included.
";

/// The manual's section on threads, a heading over a sentence that starts in lower case.
const MANUAL: &str = "<html><head><title>libffi manual</title></head><body>\
     <h2>2.7 Thread Safety</h2><p>libffi is not completely thread-safe, but closures may be \
     made by several threads at once.</p>\
     <p>Closures need writable and executable memory for each thread.</p></body></html>";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

/// `/usr/share/doc/libffi8/` as a Debian system installs it, with a library and two images
/// beside it.
fn debian_doc(root: &Path) -> PathBuf {
    let dir = root.join("doc/libffi8");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).expect("write");
    write("copyright", COPYRIGHT.as_bytes());
    write("manual.html", MANUAL.as_bytes());
    write(
        "changelog.Debian.gz",
        &gzip(
            b"libffi (3.4.6-1) unstable; urgency=medium\n\n  * Closures allocated by one \
              thread are freed safely by another.\n\n -- Maintainer <m@example.org>  Mon, 01 \
              Jan 2024 00:00:00 +0000\n",
        ),
    );
    write(
        "README.md.gz",
        &gzip(b"# Portable calls\n\nA foreign function interface lets compiled code call any function at run time.\n"),
    );
    write(
        "NEWS.html.gz",
        &gzip(b"<html><head><title>News</title></head><body><p>Trampolines are now allocated per thread.</p></body></html>"),
    );
    write("logo.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write("banner.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    write("libffi.so.8", b"\x7fELF\x02\x01\x01\0\0\0\0\0");
    root.join("doc")
}

/// A working folder whose runs keep their index in it.
struct Work {
    dir: tempfile::TempDir,
}

impl Work {
    fn new() -> Work {
        Work {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn workflow(&self, corpus: &Path, question: &str) -> support::bin::Cmd {
        researchflow()
            .current_dir(self.path())
            .args(["workflow", "--offline", "--corpus"])
            .arg(corpus)
            .arg("--index-dir")
            .arg(self.path().join("index"))
            .args(["--query", question, "--out", "p.json"])
    }

    fn plan(&self) -> Value {
        read_json(&self.path().join("p.json"))
    }

    fn events(&self) -> Vec<Value> {
        read_ndjson(&self.path().join("p.events.ndjson"))
    }

    /// The queries the run searched, in the order of its transcript.
    fn queries(&self) -> Vec<String> {
        std::fs::read_to_string(self.path().join("p.transcript.jsonl"))
            .expect("transcript")
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["kind"] == "search")
            .filter_map(|l| l["query"].as_str().map(str::to_string))
            .collect()
    }
}

fn source_urls(plan: &Value) -> Vec<String> {
    plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .flat_map(|n| n["sources"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["url"].as_str().map(str::to_string))
        .collect()
}

/// `.gz` documents are read as the kind their name says without `.gz`; what is not read is
/// named by type with a count, in the `local_index` event and in the line that says how many
/// documents the index holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gzip_documents_are_read_and_every_skipped_type_is_counted() {
    let w = Work::new();
    let corpus = debian_doc(w.path());
    let out = w.workflow(&corpus, QUESTION).run().await;
    out.success();
    let events = w.events();
    let index = events_of(&events, "local_index")[0];
    assert_eq!(index["documents"], 5, "{index}");
    assert_eq!(index["skipped"], json!({".png": 2, ".so": 1}), "{index}");
    out.stderr_contains("5 document(s)")
        .stderr_contains("skipped: 2 .png, 1 .so");
    let urls = source_urls(&w.plan());
    assert!(
        urls.iter().any(|u| u.ends_with("/changelog.Debian.gz")),
        "{urls:?}"
    );
    let (found, _) =
        researchflow::search::local::LocalIndex::open(&corpus, Some(&w.path().join("index")))
            .expect("index");
    let readme = found
        .document(&corpus.join("libffi8/README.md.gz").display().to_string())
        .expect("README.md.gz is indexed");
    assert_eq!(readme.title, "Portable calls", "read as Markdown");
    let news = found
        .document(&corpus.join("libffi8/NEWS.html.gz").display().to_string())
        .expect("NEWS.html.gz is indexed");
    assert_eq!(news.title, "News", "read as HTML");
    assert!(!news.text.contains('<'), "{}", news.text);
}

/// Decompressed text is bounded as a file's size is: a small `.gz` that inflates past the cap
/// is indexed in part with a warning that says so, and one that is not gzip is skipped with a
/// warning, counted with the other skipped files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gzip_bomb_is_read_in_part_and_a_broken_gzip_is_skipped() {
    let w = Work::new();
    let corpus = debian_doc(w.path());
    let dir = corpus.join("libffi8");
    let big = "Threads share one closure table. ".repeat(200_000);
    std::fs::write(dir.join("big.txt.gz"), gzip(big.as_bytes())).expect("write");
    assert!(
        std::fs::metadata(dir.join("big.txt.gz"))
            .expect("size")
            .len()
            < 100_000
    );
    std::fs::write(dir.join("broken.txt.gz"), b"\x1f\x8b\x08\0not gzip at all").expect("write");
    let out = w.workflow(&corpus, QUESTION).run().await;
    out.success();
    let events = w.events();
    let index = events_of(&events, "local_index")[0];
    let warnings = index["warnings"].to_string();
    assert!(
        warnings.contains("big.txt.gz") && warnings.contains("only its beginning is indexed"),
        "{warnings}"
    );
    assert!(
        warnings.contains("broken.txt.gz") && warnings.contains("gzip"),
        "{warnings}"
    );
    assert_eq!(index["documents"], 6, "{index}");
    assert_eq!(index["skipped"][".txt.gz"], 1, "{index}");
}

/// A heading ends a sentence: the manual's first sentence is quoted without the heading above
/// it, in HTML and in Markdown.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_heading_is_not_glued_onto_the_sentence_under_it() {
    for (name, text) in [
        ("manual.html", MANUAL.to_string()),
        (
            "manual.md",
            "# libffi manual\n\n## 2.7 Thread Safety\n\nlibffi is not completely thread-safe, \
             but closures may be made by several threads at once.\n\n\
             Closures need writable and executable memory for each thread.\n"
                .to_string(),
        ),
    ] {
        let w = Work::new();
        let corpus = w.path().join("corpus");
        std::fs::create_dir_all(&corpus).expect("mkdir");
        std::fs::write(corpus.join(name), text).expect("write");
        w.workflow(&corpus, QUESTION).run().await.success();
        let report = report(&w.plan());
        assert!(
            report.contains("libffi is not completely thread-safe, but closures"),
            "{name}: {report}"
        );
        assert!(!report.contains("Safety libffi"), "{name}: {report}");
    }
}

/// The first search task is the question itself: it searches the question once, not twice;
/// the other tasks search their title and the question.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_titled_as_the_question_searches_the_question_once() {
    let w = Work::new();
    let corpus = debian_doc(w.path());
    w.workflow(&corpus, QUESTION).run().await.success();
    let queries = w.queries();
    assert!(queries.iter().any(|q| q == QUESTION), "{queries:?}");
    for q in &queries {
        assert_eq!(q.matches(QUESTION).count(), 1, "{queries:?}");
    }
}

/// Header fields, addresses and copyright notices open files by convention; they are not
/// titles, so no search task is named after them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn header_lines_do_not_become_task_titles() {
    let w = Work::new();
    let corpus = debian_doc(w.path());
    w.workflow(&corpus, QUESTION).run().await.success();
    let plan = w.plan();
    let titles: Vec<&str> = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter(|n| n["type"] == "search")
        .filter_map(|n| n["title"].as_str())
        .collect();
    assert!(titles.len() > 1, "{titles:?}");
    for title in &titles {
        assert!(
            !title.contains("Format:") && !title.contains("://"),
            "{titles:?}"
        );
    }
}

/// The corpus of a recurring batch is copied elsewhere between two runs: its documents are
/// the same sources and its findings the same findings, so the digest says nothing changed,
/// and `diff` agrees.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corpus_copied_elsewhere_compares_equal() {
    let w = Work::new();
    let (a, b) = (w.path().join("a/corpus"), w.path().join("b/corpus-moved"));
    for dir in [&a, &b] {
        copy_corpus(dir);
    }
    std::fs::write(
        w.path().join("questions.txt"),
        "What triggers thermal runaway?\nHow are batteries recycled?\n",
    )
    .expect("questions");
    let batch = |corpus: &Path, out: &str| {
        researchflow()
            .current_dir(w.path())
            .args(["batch", "questions.txt", "--offline", "--corpus"])
            .arg(corpus)
            .arg("--index-dir")
            .arg(w.path().join(format!("index-{out}")))
            .args(["--out-dir", out])
    };
    batch(&a, "first").run().await.success();
    batch(&b, "second")
        .args(["--previous", "first"])
        .run()
        .await
        .success();
    let digests: Vec<PathBuf> = std::fs::read_dir(w.path().join("second"))
        .expect("second/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".changes.md"))
        .collect();
    assert_eq!(digests.len(), 2, "{digests:?}");
    for digest in &digests {
        let text = std::fs::read_to_string(digest).expect("digest");
        assert!(text.contains("\nNo change.\n"), "{text}");
        let name = digest.file_name().expect("name").to_string_lossy();
        let plan = name.replace(".changes.md", ".json");
        let out = researchflow()
            .current_dir(w.path())
            .args(["diff", "--json"])
            .arg(Path::new("first").join(&plan))
            .arg(Path::new("second").join(&plan))
            .run()
            .await;
        out.success();
        let diff = out.stdout_json();
        for list in [
            "sources_new",
            "sources_gone",
            "changed",
            "nodes_new",
            "nodes_gone",
        ] {
            assert_eq!(diff[list], json!([]), "{list}: {diff:#}");
        }
        let sources = read_json(&w.path().join("second").join(&plan));
        assert!(
            source_urls(&sources)
                .iter()
                .all(|u| u.contains("/corpus-moved/")),
            "the URLs still say where the documents are now"
        );
    }
}
