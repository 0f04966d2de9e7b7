//! Documents built to take a reader down, read by the real binary (issue 56, items 1-3): web
//! pages and corpus files are parsed in a parser process with limits, so a page whose nesting
//! hides from the estimate, a PDF whose form draws itself (a stack overflow), a decompression
//! bomb, pages that share one huge content stream, a document past the memory cap and one
//! past its time cost their own read, with the cause recorded, never the run; and SIGTERM
//! during a long parse ends the run and its parser at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::hostile_docs::{
    HostileSite, busy_pdf, divs_in_an_svg_title, inflating_pdf, parsers_of_marked, running,
    self_closed_divs, self_drawing_pdf, shared_content_pdf, text_pdf,
};
use crate::support::scenario::{
    Agent, Setup, agent, events_of, final_over, node, read_ndjson, searches_round,
};
use crate::support::{MockLlm, MockSearch, Reply, SearchHit, SearchKind, researchflow};

const MB: usize = 1024 * 1024;
const PDF: &str = "application/pdf";
const HTML: &str = "text/html";

/// A run whose one search task finds the pages of `site` at `paths` and reads them, with
/// `extra` config (`documents`, `search.read` keys) on top.
struct Reading {
    s: Setup,
    site: HostileSite,
    _search: MockSearch,
    _llm: MockLlm,
}

async fn reading(
    pages: Vec<(&'static str, &'static str, Vec<u8>)>,
    read: Value,
    extra: Value,
) -> Reading {
    let paths: Vec<&'static str> = pages.iter().map(|(path, _, _)| *path).collect();
    let site = HostileSite::start(pages).await;
    let hits = paths
        .iter()
        .map(|path| SearchHit {
            title: format!("Page {path}"),
            url: site.url(path),
            // What the report says, so that it stands whatever the reader makes of the page.
            snippet: "Sodium cells last about 3000 cycles.".into(),
        })
        .collect();
    let search = MockSearch::with_results(SearchKind::Searxng, hits).await;
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("### b:") => {
            Reply::json(&final_over("b:summary"))
        }
        Agent::Planner => Reply::json(&searches_round(&["Battery cycles"])),
        Agent::Queries => Reply::json(&json!({"queries": ["sodium cycles"]})),
        Agent::Final => Reply::content("Sodium cells last about 3000 cycles [1]."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let mut read_config = json!({"allowPrivate": true, "pages": paths.len(), "timeoutMs": 20000});
    if let (Some(config), Some(more)) = (read_config.as_object_mut(), read.as_object()) {
        config.extend(more.clone());
    }
    let mut config = json!({"search": {
        "provider": "searxng", "baseURL": search.base_url(), "maxResults": 10, "read": read_config
    }});
    if let (Some(config), Some(more)) = (config.as_object_mut(), extra.as_object()) {
        config.extend(more.clone());
    }
    let s = Setup::with_config(&llm, Some(&search), config);
    Reading {
        s,
        site,
        _search: search,
        _llm: llm,
    }
}

impl Reading {
    /// The `page_unread` cause of `path`, or "" when it was read.
    fn cause(&self, path: &str) -> String {
        let events = self.s.events();
        events_of(&events, "page_unread")
            .iter()
            .find(|e| e["url"] == self.site.url(path))
            .and_then(|e| e["cause"].as_str())
            .unwrap_or_default()
            .to_string()
    }

    fn read(&self, path: &str) -> bool {
        let events = self.s.events();
        events_of(&events, "page_read")
            .iter()
            .any(|e| e["url"] == self.site.url(path))
    }
}

/// `<div/>` thirty thousand times, and as many `<div>`s in an SVG `<title>`, fooled the nesting
/// estimate: Readability recursed until the stack overflowed and the whole process died
/// (SIGABRT, exit 134), leaving the plan `running`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_whose_nesting_hides_are_read_whole_and_the_run_completes() {
    let r = reading(
        vec![
            (
                "/self-closed.html",
                HTML,
                self_closed_divs(30_000).into_bytes(),
            ),
            (
                "/svg-title.html",
                HTML,
                divs_in_an_svg_title(30_000).into_bytes(),
            ),
        ],
        json!({}),
        json!({}),
    )
    .await;
    let out =
        r.s.query("How many cycles do sodium-ion cells last?")
            .run()
            .await;
    out.success();
    for path in ["/self-closed.html", "/svg-title.html"] {
        assert!(r.read(path), "{path}: {}", r.cause(path));
    }
    assert_eq!(node(&r.s.plan(), "b")["status"], "completed");
}

/// A form that draws itself recurses in the PDF reader until its stack overflows: in a parser
/// process, that page alone is lost, with its cause, and the page beside it is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pdf_that_overflows_its_parser_is_unread_with_the_cause_and_the_run_goes_on() {
    let r = reading(
        vec![
            ("/loop.pdf", PDF, self_drawing_pdf()),
            (
                "/fine.pdf",
                PDF,
                text_pdf("Sodium cells last about 3000 cycles"),
            ),
        ],
        json!({}),
        json!({}),
    )
    .await;
    r.s.query("How many cycles?").run().await.success();
    assert!(
        r.cause("/loop.pdf").contains("nests too deeply"),
        "{}",
        r.cause("/loop.pdf")
    );
    assert!(r.read("/fine.pdf"), "{}", r.cause("/fine.pdf"));
}

/// A 1 MB PDF whose page inflated to 1 GiB reached 2.19 GB; 2,000 pages sharing one content
/// stream ran for minutes. Each is refused at its cap before the text is read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pdf_bombs_are_refused_naming_their_cap() {
    let r = reading(
        vec![
            ("/inflates.pdf", PDF, inflating_pdf(129 * MB)),
            ("/shared.pdf", PDF, shared_content_pdf(3, 50 * MB)),
        ],
        json!({}),
        json!({}),
    )
    .await;
    r.s.query("How many cycles?").run().await.success();
    let inflates = r.cause("/inflates.pdf");
    assert!(inflates.contains("inflate to over 128 MB"), "{inflates}");
    let shared = r.cause("/shared.pdf");
    assert!(shared.contains("over 128 MB of content"), "{shared}");
}

/// `documents.memoryMb` caps what one document may take: past it, the parser's allocation
/// fails, and the page is unread with that cause.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_document_past_the_memory_cap_is_unread_with_the_cap_named() {
    let r = reading(
        vec![("/big.pdf", PDF, inflating_pdf(120 * MB))],
        json!({}),
        json!({"documents": {"memoryMb": 64}}),
    )
    .await;
    r.s.query("How many cycles?").run().await.success();
    let cause = r.cause("/big.pdf");
    assert!(cause.contains("memory cap (64 MB"), "{cause}");
}

/// The page's reading counts inside `search.read.timeoutMs`: a page whose parse would take
/// far longer is stopped at its time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_reading_outlasts_its_time_is_stopped_there() {
    let r = reading(
        vec![("/busy.pdf", PDF, busy_pdf(50_000, 200))],
        json!({"timeoutMs": 1500}),
        json!({}),
    )
    .await;
    r.s.query("How many cycles?").run().await.success();
    let cause = r.cause("/busy.pdf");
    assert!(cause.contains("took longer than"), "{cause}");
}

/// SIGTERM while a page's parse runs (one that would take far longer than the test allows):
/// the run ends interrupted at once, and its parser with it. Before, the process burned a core
/// for 90 s more, holding `watch.lock`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_during_a_long_parse_ends_the_run_and_its_parser() {
    let r = reading(
        vec![("/busy.pdf", PDF, busy_pdf(200_000, 400))],
        json!({"timeoutMs": 120_000}),
        json!({}),
    )
    .await;
    let mark = format!("RESEARCHFLOW_TEST_MARK=sigterm-{}", std::process::id());
    let parser = Arc::new(AtomicU32::new(0));
    let seen = Arc::clone(&parser);
    let watched = mark.clone();
    let out =
        r.s.query("How many cycles?")
            .env(
                "RESEARCHFLOW_TEST_MARK",
                mark.trim_start_matches("RESEARCHFLOW_TEST_MARK="),
            )
            .signal_when("TERM", move || match parsers_of_marked(&watched).first() {
                Some(pid) => {
                    seen.store(*pid, Ordering::SeqCst);
                    true
                }
                None => false,
            })
            .timeout(Duration::from_secs(30))
            .run()
            .await;
    assert_eq!(out.status, 130, "{}", out.stderr);
    let pid = parser.load(Ordering::SeqCst);
    assert_ne!(pid, 0, "a parser was seen");
    for _ in 0..50 {
        if !running(pid) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!running(pid), "parser {pid} outlived its run");
    assert_eq!(r.site.requests("/busy.pdf"), 1);
}

/// An offline run over `files`, with `config` as its config file: the `local_index` event.
async fn index_of(files: Vec<(&str, Vec<u8>)>, config: Value) -> Value {
    let work = tempfile::tempdir().expect("tempdir");
    let corpus = work.path().join("corpus");
    std::fs::create_dir(&corpus).expect("corpus");
    let sodium = b"# Sodium-ion cells\n\nSodium-ion cells last about 3000 cycles.\n";
    std::fs::write(corpus.join("sodium.md"), sodium).expect("write");
    for (name, bytes) in files {
        std::fs::write(corpus.join(name), bytes).expect("write");
    }
    std::fs::write(work.path().join("agent.config.json"), config.to_string()).expect("config");
    let out = researchflow()
        .current_dir(work.path())
        .args(["workflow", "--offline", "--corpus"])
        .arg(&corpus)
        .arg("--index-dir")
        .arg(work.path().join("index"))
        .args([
            "--query",
            "How many cycles do sodium-ion cells last?",
            "--out",
            "p.json",
        ])
        .run()
        .await;
    out.success();
    let events = read_ndjson(&work.path().join("p.events.ndjson"));
    events_of(&events, "local_index")[0].clone()
}

/// Whether the `local_index` event's warning about `file` names `cause`.
fn skipped_for(index: &Value, file: &str, cause: &str) -> bool {
    let warnings = index["warnings"].as_array().cloned().unwrap_or_default();
    warnings
        .iter()
        .filter_map(Value::as_str)
        .any(|w| w.contains(&format!("/{file}`")) && w.contains(cause))
}

/// A corpus file is read in a parser process too: one whose form draws itself (before, a
/// stack overflow that ended the whole run) and a bomb are skipped with their causes, and the
/// run answers from the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_corpus_files_are_skipped_with_their_causes() {
    let files = vec![
        ("loop.pdf", self_drawing_pdf()),
        ("inflates.pdf", inflating_pdf(129 * MB)),
    ];
    let index = index_of(files, json!({})).await;
    assert_eq!(index["documents"], 1, "{index}");
    assert!(
        skipped_for(&index, "loop.pdf", "nests too deeply"),
        "{index}"
    );
    assert!(
        skipped_for(&index, "inflates.pdf", "inflate to over 128 MB"),
        "{index}"
    );
}

/// `documents.timeoutMs` bounds one corpus file's reading.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corpus_file_past_its_time_is_skipped_with_the_cause() {
    let files = vec![("busy.pdf", busy_pdf(200_000, 400))];
    let index = index_of(files, json!({"documents": {"timeoutMs": 500}})).await;
    assert_eq!(index["documents"], 1, "{index}");
    assert!(
        skipped_for(&index, "busy.pdf", "took longer than 500 ms"),
        "{index}"
    );
}
