//! `researchflow batch`: many questions in one process against the mock LLM: the manifest
//! and its journal, resume without touching what is done (after a signal, and after SIGKILL),
//! interruption, per-question budgets, the folder lock, and what changed since an earlier
//! batch.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::scenario::{Agent, Setup, agent, read_json, searches_then_final, stateless};
use crate::support::{MockLlm, Reply};

fn questions(dir: &Path, n: usize) -> std::path::PathBuf {
    let mut text = String::from("# questions for the test\n\n");
    for i in 0..n {
        text.push_str(&format!("Question number {i}?\n"));
    }
    let path = dir.join("questions.txt");
    std::fs::write(&path, text).expect("questions");
    path
}

fn batch(s: &Setup, args: &[&str]) -> support::bin::Cmd {
    s.cmd()
        .args(["batch", "questions.txt", "--out-dir", "out"])
        .args(args)
}

fn manifest(s: &Setup) -> Value {
    read_json(&s.path().join("out/batch.json"))
}

/// Every file of the batch folder but the manifest, its journal and the lock, with its bytes.
fn question_files(s: &Setup) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(s.path().join("out"))
        .expect("out/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            !["batch.json", "batch.lock", "batch.journal.ndjson"]
                .iter()
                .any(|name| p.ends_with(name))
        })
        .map(|p| (p.display().to_string(), std::fs::read(&p).expect("read")))
        .collect();
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_questions_at_four_jobs_fill_the_manifest_and_a_rerun_touches_nothing() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), 20);
    let out = batch(&s, &["--jobs", "4"])
        .timeout(Duration::from_secs(60))
        .run()
        .await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["questions"], 20);
    assert_eq!(printed["counts"]["completed"], 20);
    let m = manifest(&s);
    let items = m["items"].as_array().expect("items");
    assert_eq!(items.len(), 20);
    for item in items {
        assert_eq!(item["status"], "completed", "{item}");
        let plan = item["plan_file"].as_str().expect("plan file");
        assert!(Path::new(plan).exists(), "{plan}");
        let report = item["report"].as_str().expect("report");
        assert!(
            std::fs::read_to_string(report)
                .expect("report")
                .contains("Report written.")
        );
        assert!(
            item["totals"]["tokens"].is_null() || item["totals"]["total_tokens"].as_u64() > Some(0)
        );
    }
    // Names are stable and distinct.
    let names: std::collections::BTreeSet<&str> = items
        .iter()
        .filter_map(|i| i["plan_file"].as_str())
        .collect();
    assert_eq!(names.len(), 20);

    let requests = llm.chat_requests().len();
    let before = question_files(&s);
    batch(&s, &["--jobs", "4"]).run().await.success();
    assert_eq!(
        llm.chat_requests().len(),
        requests,
        "nothing is asked again"
    );
    assert_eq!(
        question_files(&s),
        before,
        "the questions' files are not touched"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_mid_batch_exits_130_and_the_rerun_finishes() {
    let llm = MockLlm::start().await;
    let slow = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&slow);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Search"])),
        Agent::Analysis if flag.load(Ordering::SeqCst) => {
            Reply::json(&json!({"summary": "S", "analysis": "A"})).delay(Duration::from_secs(30))
        }
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    questions(s.path(), 5);
    let manifest_path = s.path().join("out/batch.json");
    let watched = manifest_path.clone();
    let out = batch(&s, &["--jobs", "2"])
        .signal_when("TERM", move || {
            std::fs::read_to_string(&watched)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|m| {
                    m["items"]
                        .as_array()
                        .is_some_and(|i| i.iter().filter(|i| i["status"] == "running").count() == 2)
                })
        })
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.code(130);
    let m = read_json(&manifest_path);
    let statuses: Vec<&str> = m["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|i| i["status"].as_str())
        .collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == "interrupted").count(),
        2,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == "pending").count(),
        3,
        "{statuses:?}"
    );

    slow.store(false, Ordering::SeqCst);
    let out = batch(&s, &["--jobs", "2"])
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.success();
    assert_eq!(out.stdout_json()["counts"]["completed"], 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn budgets_apply_per_question_and_partial_is_success() {
    let llm = MockLlm::start().await;
    stateless(&llm, 3, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), 3);
    let out = batch(
        &s,
        &["--jobs", "3", "--max-tokens", "40", "--concurrency", "1"],
    )
    .run()
    .await;
    out.success();
    assert_eq!(out.stdout_json()["counts"]["partial"], 3);
    for item in manifest(&s)["items"].as_array().expect("items") {
        assert_eq!(item["status"], "partial");
        let report =
            std::fs::read_to_string(item["report"].as_str().expect("report")).expect("read");
        assert!(
            report.contains("> **Partial run: the token budget (40 tokens)"),
            "{report}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_batch_per_folder_and_bad_questions_are_named() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), 1);
    std::fs::create_dir_all(s.path().join("out")).expect("mkdir");
    let held = researchflow::batch::manifest::lock(&s.path().join("out")).expect("lock");
    let out = batch(&s, &[]).run().await;
    out.code(2);
    assert!(out.stderr.contains("in use"), "{}", out.stderr);
    drop(held);

    std::fs::write(s.path().join("questions.txt"), "fine?\n{\"query\": }\n").expect("write");
    let out = batch(&s, &[]).run().await;
    out.code(2);
    assert!(
        out.stderr.contains("questions.txt` line 2"),
        "{}",
        out.stderr
    );
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn previous_writes_what_changed_for_every_question_answered_twice() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "Old finding.");
    let s = Setup::new(&llm, None);
    questions(s.path(), 2);
    batch(&s, &[]).run().await.success();
    std::fs::rename(s.path().join("out"), s.path().join("last-week")).expect("rename");

    stateless(&llm, 1, "New finding.");
    batch(&s, &["--previous", "last-week"])
        .run()
        .await
        .success();
    let changes: Vec<_> = std::fs::read_dir(s.path().join("out"))
        .expect("out/")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".changes.md"))
        .collect();
    assert_eq!(changes.len(), 2, "{changes:?}");
    let text = std::fs::read_to_string(&changes[0]).expect("read");
    assert!(
        text.contains("Old finding.") && text.contains("New finding."),
        "{text}"
    );
}

/// Twenty workflows at eight jobs against a server that admits 20 requests a second, with
/// `maxRetries` at 1: without one gate shared by every workflow of the batch, their retries
/// would collide and tasks would fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_shares_one_rate_budget_and_no_question_fails_at_the_servers_limit() {
    let llm = MockLlm::start().await;
    llm.admit_per_second(20);
    stateless(&llm, 2, "S");
    let s = Setup::with_config(&llm, None, support::one_retry(json!({})));
    questions(s.path(), 20);
    let out = batch(&s, &["--jobs", "8"])
        .timeout(Duration::from_secs(90))
        .run()
        .await;
    out.success();
    assert_eq!(
        out.stdout_json()["counts"]["completed"],
        20,
        "{}",
        out.stdout
    );
    let (requests, refused) = (llm.chat_requests().len(), llm.rate_refused());
    assert!(
        refused > 0,
        "the test must meet the limit: {requests} requests"
    );
    assert_eq!(
        requests - refused,
        20 * 5,
        "per question: two planner rounds, two analyses, one final"
    );
    // One gate per workflow instead of one per endpoint is refused about a quarter of the
    // time here; the shared gate about a tenth.
    assert!(
        refused * 100 <= requests * 18,
        "{refused} of {requests} requests refused: the workflows do not share the budget"
    );
    for item in manifest(&s)["items"].as_array().expect("items") {
        let events = std::fs::read_to_string(
            Path::new(item["plan_file"].as_str().expect("plan")).with_extension("events.ndjson"),
        )
        .expect("events");
        assert!(!events.contains("\"task_failed\""), "{}", item["id"]);
    }
}

/// One question whose final summary fails every try: the others complete, the manifest says
/// which one failed, and the batch exits 1; a rerun runs only that question again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_question_makes_the_batch_exit_1_and_only_it_runs_again() {
    let llm = MockLlm::start().await;
    let broken = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&broken);
    llm.set_handler(move |req| {
        let prompt = req.user_prompt().unwrap_or_default();
        match agent(req) {
            Agent::Final
                if prompt.contains("Question number 1?") && flag.load(Ordering::SeqCst) =>
            {
                Reply::raw(500, r#"{"error": {"message": "boom"}}"#)
            }
            Agent::Planner => Reply::json(&searches_then_final(req, &["Search"])),
            Agent::Final => Reply::content("Report written."),
            _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
        }
    });
    let s = Setup::with_config(
        &llm,
        None,
        json!({"retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 20, "maxRetryAfterMs": 100}}),
    );
    questions(s.path(), 3);
    let out = batch(&s, &["--jobs", "3"]).run().await;
    out.code(1);
    let counts = &out.stdout_json()["counts"];
    assert_eq!(
        (counts["completed"].clone(), counts["final_failed"].clone()),
        (json!(2), json!(1)),
        "{}",
        out.stdout
    );
    let items = manifest(&s)["items"].clone();
    let failed: Vec<&Value> = items
        .as_array()
        .expect("items")
        .iter()
        .filter(|i| i["status"] != "completed")
        .collect();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["query"], "Question number 1?");
    assert_eq!(failed[0]["status"], "final_failed");

    broken.store(false, Ordering::SeqCst);
    let before = llm.chat_requests().len();
    let out = batch(&s, &["--jobs", "3"]).run().await;
    out.success();
    assert_eq!(out.stdout_json()["counts"]["completed"], 3);
    let asked: Vec<String> = llm.chat_requests()[before..]
        .iter()
        .map(|r| r.user_prompt().unwrap_or_default())
        .collect();
    assert_eq!(asked.len(), 1, "only the failed final runs again");
    assert!(asked[0].contains("Question number 1?"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_previous_folder_that_does_not_exist_exits_2_before_any_question_runs() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), 1);
    let out = batch(&s, &["--previous", "no-such-folder"]).run().await;
    out.code(2)
        .stderr_contains("`no-such-folder`")
        .stderr_contains("--previous");
    assert!(llm.requests().is_empty(), "no question ran");
    assert!(!s.path().join("out/batch.json").exists(), "no manifest");

    std::fs::write(s.path().join("a-file"), "x").expect("write");
    batch(&s, &["--previous", "a-file"])
        .run()
        .await
        .code(2)
        .stderr_contains("`a-file` is not a folder");
    assert!(llm.requests().is_empty(), "no question ran");
}

/// A question whose id would name the folder's own files (`batch.json`, `index.html`) is
/// refused before anything runs: it would read the manifest as its plan, or lose its view.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_named_after_the_folders_own_files_exits_2_before_any_question_runs() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    for id in ["batch", "index"] {
        let line = format!("Why?\n{{\"id\": \"{id}\", \"query\": \"Why not?\"}}\n");
        std::fs::write(s.path().join("questions.txt"), line).expect("write");
        batch(&s, &[])
            .run()
            .await
            .code(2)
            .stderr_contains("line 2")
            .stderr_contains(&format!("`{id}`"))
            .stderr_contains("give the question another id");
    }
    assert!(llm.requests().is_empty(), "no question ran");
    assert!(!s.path().join("out/batch.json").exists(), "no manifest");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_manifest_writes_every_key_of_an_item_even_when_it_is_null() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), 1);
    batch(&s, &["--no-review"]).run().await.success();
    let m = manifest(&s);
    let item = m["items"][0].as_object().expect("an item");
    let keys: Vec<&str> = item.keys().map(String::as_str).collect();
    for key in [
        "id",
        "query",
        "status",
        "plan_file",
        "report",
        "totals",
        "reason",
        "review",
    ] {
        assert!(keys.contains(&key), "`{key}` is missing from {item:?}");
    }
    assert_eq!(
        (&item["reason"], &item["review"]),
        (&Value::Null, &Value::Null)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bom_at_the_start_of_the_questions_file_is_not_part_of_the_first_question() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    let items = |dir: &str| -> Vec<(String, String, String)> {
        read_json(&s.path().join(dir).join("batch.json"))["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                let plan = Path::new(i["plan_file"].as_str().expect("plan file"));
                let name = plan.file_name().expect("name").to_string_lossy();
                (
                    i["id"].as_str().expect("id").to_string(),
                    i["query"].as_str().expect("query").to_string(),
                    name.into_owned(),
                )
            })
            .collect()
    };
    let text = "Question number 0?\n{\"id\": \"second\", \"query\": \"Q two?\"}\n";
    std::fs::write(s.path().join("plain.txt"), text).expect("write");
    std::fs::write(s.path().join("bom.txt"), format!("\u{feff}{text}")).expect("write");
    let run = |file: &str, dir: &str| s.cmd().args(["batch", file, "--out-dir", dir]).run();
    run("plain.txt", "plain").await.success();
    run("bom.txt", "bom").await.success();
    let (plain, bom) = (items("plain"), items("bom"));
    assert_eq!(bom, plain, "the BOM changes no id, query or file name");
    assert_eq!(bom[0].1, "Question number 0?");

    // Before a JSON line, too: the line is read as JSON, not as a question of text.
    let json = "{\"id\": \"first\", \"query\": \"Q one?\"}\n";
    std::fs::write(s.path().join("bom.jsonl"), format!("\u{feff}{json}")).expect("write");
    run("bom.jsonl", "jsonl").await.success();
    let first = &items("jsonl")[0];
    assert_eq!(
        (first.0.as_str(), first.1.as_str(), first.2.as_str()),
        ("first", "Q one?", "first.json")
    );
}

/// The batch folder's state as every reader sees it: `batch.json` with its journal folded in.
fn state(s: &Setup) -> researchflow::batch::Manifest {
    researchflow::batch::Manifest::load(&s.path().join("out")).expect("the manifest")
}

fn count(m: &researchflow::batch::Manifest, status: &str) -> usize {
    m.items
        .iter()
        .filter(|i| i.status.as_str() == status)
        .count()
}

/// SIGKILL with two questions done and two waiting for the model: `batch.json` may lag by
/// seconds, the journal does not; a line the kill cut short is ignored. The rerun folds the
/// journal in, asks nothing for the two done questions (their files untouched), resumes the
/// others, and `batch.json` ends listing every question once, with no journal left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_killed_mid_run_resumes_from_its_journal_and_runs_no_done_question_again() {
    let llm = MockLlm::start().await;
    let slow = Arc::new(AtomicBool::new(true));
    let flag = Arc::clone(&slow);
    let early = |req: &support::server::Recorded| {
        let prompt = req.user_prompt().unwrap_or_default();
        prompt.contains("Question number 0?") || prompt.contains("Question number 1?")
    };
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Search"])),
        Agent::Analysis if !early(req) && flag.load(Ordering::SeqCst) => {
            Reply::json(&json!({"summary": "S", "analysis": "A"})).delay(Duration::from_secs(30))
        }
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    questions(s.path(), 6);
    let out_dir = s.path().join("out");
    let watched = out_dir.clone();
    let killed = batch(&s, &["--jobs", "2"])
        .signal_when("KILL", move || {
            researchflow::batch::Manifest::load(&watched)
                .is_ok_and(|m| count(&m, "completed") == 2 && count(&m, "running") == 2)
        })
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed by the signal: {}", killed.stderr);
    let journal = out_dir.join("batch.journal.ndjson");
    assert!(journal.exists(), "a killed batch leaves its journal");
    let m = state(&s);
    assert_eq!(
        (
            count(&m, "completed"),
            count(&m, "running"),
            count(&m, "pending")
        ),
        (2, 2, 2),
        "{m:?}"
    );
    let done: Vec<String> = m
        .items
        .iter()
        .filter(|i| i.is_done())
        .map(|i| i.plan_file.trim_end_matches(".json").to_string())
        .collect();
    let done_files = || -> Vec<(String, Vec<u8>)> {
        question_files(&s)
            .into_iter()
            .filter(|(path, _)| {
                done.iter()
                    .any(|stem| path.starts_with(&format!("{stem}.")))
            })
            .collect()
    };
    let before = done_files();
    assert!(
        before.len() >= 4,
        "plans and reports of the done: {before:?}"
    );
    // An append the kill cut short: a done question said to be running, without its end.
    let first = &m.items[0];
    let torn = format!(
        r#"{{"id": "{}", "query": "{}", "status": "running", "pl"#,
        first.id, first.query
    );
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&journal)
        .expect("journal");
    std::io::Write::write_all(&mut file, torn.as_bytes()).expect("torn line");
    drop(file);

    slow.store(false, Ordering::SeqCst);
    let asked_before = llm.chat_requests().len();
    let out = batch(&s, &["--jobs", "2"])
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.success();
    assert_eq!(
        out.stdout_json()["counts"]["completed"],
        6,
        "{}",
        out.stdout
    );
    let asked: Vec<String> = llm.chat_requests()[asked_before..]
        .iter()
        .map(|r| r.user_prompt().unwrap_or_default())
        .collect();
    assert!(!asked.is_empty());
    for prompt in &asked {
        assert!(
            !prompt.contains("Question number 0?") && !prompt.contains("Question number 1?"),
            "a done question was asked again: {prompt}"
        );
    }
    assert_eq!(
        done_files(),
        before,
        "the done questions' files are not touched"
    );
    let items = manifest(&s)["items"].as_array().expect("items").clone();
    let ids: std::collections::BTreeSet<&str> =
        items.iter().filter_map(|i| i["id"].as_str()).collect();
    assert_eq!(
        (items.len(), ids.len()),
        (6, 6),
        "every question once: {items:?}"
    );
    assert!(
        items.iter().all(|i| i["status"] == "completed"),
        "{items:?}"
    );
    assert!(!journal.exists(), "folded into batch.json and removed");
}

/// Forty questions, eighty starts and ends: each is a line of the journal, and `batch.json`
/// is written when the batch opens, when it ends, and at most once per 2 s between (before,
/// at every start and end: 81 times, 1.5 GB for a batch of 1,000).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_json_is_not_rewritten_per_question_but_each_start_and_end_is_journaled() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), 40);
    let clock = Instant::now();
    let out = batch(&s, &["--jobs", "8", "-v"])
        .timeout(Duration::from_secs(90))
        .run()
        .await;
    let took = clock.elapsed();
    out.success();
    let line = out
        .stderr
        .lines()
        .find(|l| l.contains("batch record:"))
        .unwrap_or_else(|| panic!("no record line: {}", out.stderr));
    let numbers: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    let (lines, files) = match numbers[..] {
        [.., lines, files] => (lines, files),
        _ => panic!("{line}"),
    };
    assert_eq!(lines, 80, "{line}");
    let bound = (took.as_secs_f64() / 2.0).floor() as usize + 2;
    assert!(
        (2..=bound).contains(&files),
        "`batch.json` written {files} times in {took:?} (at most {bound}): {line}"
    );
    assert_eq!(count(&state(&s), "completed"), 40);
    assert!(!s.path().join("out/batch.journal.ndjson").exists());
}
