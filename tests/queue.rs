//! Batches on PostgreSQL: `queue migrate`, `batch FILE --queue`, `worker`, `batch status` and
//! `batch export`, against a real PostgreSQL server the test starts on loopback (one per test
//! binary, a database per test; a server of its own for the test that restarts it) and the
//! mock LLM: several workers at once, a worker killed mid-question, the server restarted
//! mid-batch, a poison question, idempotent submission, and the password kept out of
//! everything.

mod support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use support::postgres::{PASSWORD, Postgres};
use support::scenario::{Agent, Setup, agent, read_json, searches_then_final, task_title};
use support::{MockLlm, Recorded, Reply, RunOutput, researchflow};

/// A planner for any number of workflows at once: `searches` searches, then the final summary.
fn stateless(llm: &MockLlm, searches: usize) {
    llm.set_handler(move |req| answer(req, searches));
}

fn answer(req: &Recorded, searches: usize) -> Reply {
    match agent(req) {
        Agent::Planner => {
            let titles: Vec<String> = (0..searches).map(|i| format!("Search {i}")).collect();
            Reply::json(&searches_then_final(req, &titles))
        }
        Agent::Final => Reply::content("Report."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    }
}

fn questions(dir: &Path, file: &str, lines: &[String]) {
    std::fs::write(dir.join(file), lines.join("\n")).expect("questions");
}

fn numbered(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("Question number {i}?")).collect()
}

fn rf(s: &Setup) -> support::Cmd {
    researchflow().current_dir(s.path())
}

async fn migrated(s: &Setup) -> String {
    let url = Postgres::shared().database();
    rf(s).args(["queue", "migrate", "--queue", &url]).run().await.success();
    url
}

async fn submit(s: &Setup, url: &str, file: &str, batch: &str) -> Value {
    let out = rf(s)
        .args(["batch", file, "--queue", url, "--batch", batch])
        .run()
        .await;
    out.success();
    out.stdout_json()
}

fn worker(s: &Setup, url: &str, batch: &str, more: &[&str]) -> support::Cmd {
    rf(s)
        .args(["worker", "--queue", url, "--batch", batch])
        .args(more)
        .timeout(Duration::from_secs(120))
}

async fn status(s: &Setup, url: &str, batch: &str) -> Value {
    let out = rf(s)
        .args(["batch", "status", "--queue", url, "--batch", batch, "--json"])
        .run()
        .await;
    out.success();
    out.stdout_json()
}

fn counted(status: &Value, what: &str) -> u64 {
    status["counts"][what].as_u64().unwrap_or(u64::MAX)
}

/// The files of a batch folder, but the locks.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    names.sort();
    names
}

fn analyses_of(llm: &MockLlm, title: &str) -> usize {
    llm.chat_requests()
        .iter()
        .filter(|r| agent(r) == Agent::Analysis && task_title(r) == title)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_complete_thirty_questions_and_export_what_a_local_batch_writes() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1);
    let s = Setup::new(&llm, None);
    questions(s.path(), "nightly.txt", &numbered(30));
    let url = migrated(&s).await;
    let submitted = submit(&s, &url, "nightly.txt", "nightly").await;
    assert_eq!(
        submitted,
        json!({"batch": "nightly", "submitted": 30, "already_queued": 0, "already_done": 0})
    );
    let workers: Vec<_> = (0..3)
        .map(|_| worker(&s, &url, "nightly", &["--drain", "--jobs", "4"]).run())
        .collect();
    let mut ran = 0;
    for out in futures_util::future::join_all(workers).await {
        out.success();
        ran += out.stdout_json()["ran"].as_u64().expect("ran");
    }
    assert_eq!(ran, 30, "each question ran once");
    let st = status(&s, &url, "nightly").await;
    assert_eq!(counted(&st, "completed"), 30, "{st}");
    assert_eq!(st["running"], json!([]));

    let exported = rf(&s)
        .args(["batch", "export", "--queue", &url, "--batch", "nightly", "--out-dir", "queued"])
        .run()
        .await;
    exported.success();
    assert_eq!(exported.stdout_json()["ended"], 30);
    rf(&s)
        .args(["batch", "nightly.txt", "--out-dir", "local"])
        .run()
        .await
        .success();
    let (queued, local) = (s.path().join("queued"), s.path().join("local"));
    assert_eq!(names(&queued), names(&local), "the same files");
    let manifest = |dir: &Path| -> Vec<(String, String, bool)> {
        let m = read_json(&dir.join("batch.json"));
        let mut items: Vec<(String, String, bool)> = m["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                let report = std::fs::read_to_string(i["report"].as_str().expect("report"))
                    .expect("report file");
                (
                    i["id"].as_str().expect("id").to_string(),
                    i["status"].as_str().expect("status").to_string(),
                    report.contains("Report."),
                )
            })
            .collect();
        items.sort();
        items
    };
    assert_eq!(manifest(&queued), manifest(&local));
    assert_eq!(manifest(&queued).len(), 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submitting_twice_adds_nothing_and_two_batches_keep_apart() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1);
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(5));
    let url = migrated(&s).await;
    assert_eq!(submit(&s, &url, "q.txt", "a").await["submitted"], 5);
    let again = submit(&s, &url, "q.txt", "a").await;
    assert_eq!((again["submitted"].as_u64(), again["already_queued"].as_u64()), (Some(0), Some(5)));
    assert_eq!(submit(&s, &url, "q.txt", "b").await["submitted"], 5, "another batch");

    worker(&s, &url, "a", &["--drain"]).run().await.success();
    assert_eq!(counted(&status(&s, &url, "a").await, "completed"), 5);
    let b = status(&s, &url, "b").await;
    assert_eq!((counted(&b, "pending"), counted(&b, "completed")), (5, 0), "{b}");
    let requests = llm.chat_requests().len();
    let done = submit(&s, &url, "q.txt", "a").await;
    assert_eq!((done["submitted"].as_u64(), done["already_done"].as_u64()), (Some(0), Some(5)));
    worker(&s, &url, "a", &["--drain"]).run().await.success();
    assert_eq!(llm.chat_requests().len(), requests, "nothing of batch `a` runs again");

    // The batch's name defaults to the file's stem.
    let out = rf(&s).args(["batch", "q.txt", "--queue", &url]).run().await;
    out.success();
    assert_eq!(out.stdout_json()["batch"], "q");
}

/// The plan file of the only question exported into `dir`.
fn only_plan(dir: &Path) -> Value {
    let name = names(dir)
        .into_iter()
        .find(|n| n.ends_with(".json") && n != "batch.json" && n.matches('.').count() == 1)
        .expect("a plan file");
    read_json(&dir.join(name))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_question_is_taken_over_and_no_completed_node_runs_again() {
    let llm = MockLlm::start().await;
    let hang = Arc::new(AtomicBool::new(true));
    let reached = Arc::new(AtomicBool::new(false));
    let (hanging, reaching) = (Arc::clone(&hang), Arc::clone(&reached));
    llm.set_handler(move |req| {
        if agent(req) == Agent::Analysis
            && task_title(req) == "Search 1"
            && hanging.load(Ordering::SeqCst)
        {
            reaching.store(true, Ordering::SeqCst);
            return answer(req, 2).delay(Duration::from_secs(60));
        }
        answer(req, 2)
    });
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &["Only question?".to_string()]);
    let url = migrated(&s).await;
    submit(&s, &url, "q.txt", "q").await;
    let killed = worker(&s, &url, "q", &["--lease", "2", "--concurrency", "1"])
        .signal_when("KILL", move || reached.load(Ordering::SeqCst))
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed: {}", killed.stderr);
    assert_eq!(analyses_of(&llm, "Search 0"), 1);
    let st = status(&s, &url, "q").await;
    assert_eq!(st["running"][0]["attempt"], 1, "{st}");
    hang.store(false, Ordering::SeqCst);

    worker(&s, &url, "q", &["--drain", "--lease", "2", "--concurrency", "1"])
        .run()
        .await
        .success();
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 1);
    assert_eq!(analyses_of(&llm, "Search 0"), 1, "node b completed before the kill: never again");
    assert_eq!(analyses_of(&llm, "Search 1"), 2, "node c was running: once more");
    rf(&s)
        .args(["batch", "export", "--queue", &url, "--batch", "q", "--out-dir", "out"])
        .run()
        .await
        .success();
    let plan = only_plan(&s.path().join("out"));
    let attempts: Vec<(String, u64)> = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .skip(1)
        .map(|n| {
            assert_eq!(n["status"], "completed", "{n}");
            (n["node_id"].as_str().unwrap_or("").to_string(), n["attempts"].as_u64().unwrap_or(0))
        })
        .collect();
    assert_eq!(attempts, [("b".to_string(), 1), ("c".to_string(), 2), ("d".to_string(), 1)]);
}
