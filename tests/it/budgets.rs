//! The time budget against a slow model: the research stops at `--max-time`, running tasks
//! get a grace (`--grace`), and the final summary, which is what the budget buys, is never cut
//! by that budget: it has its own bound (`--final-time`), and a model too slow even for that
//! is named in the status and the reason.

use std::time::Duration;

use serde_json::json;

use crate::support;
use crate::support::fixtures;
use crate::support::scenario::{Agent, Setup, agent, events_of, node, searches_then_final};
use crate::support::{MockLlm, Reply};

/// Every call takes `call`; the final summary takes `last`. The planner keeps no state, so
/// the same handler serves a batch of questions.
fn slow_model(llm: &MockLlm, call: Duration, last: Duration) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["First", "Second"])).delay(call),
        Agent::Final => Reply::content("The report, written from what exists.").delay(last),
        _ => Reply::json(&json!({"summary": "Found.", "analysis": "A"})).delay(call),
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_final_summary_is_not_cut_by_the_spent_time_budget() {
    let llm = MockLlm::start().await;
    // The searches end before the budget, the planner's second round after it; the final
    // summary then takes longer than the research's grace (a quarter of 1 s: 1 s).
    slow_model(
        &llm,
        Duration::from_millis(400),
        Duration::from_millis(1600),
    );
    let s = Setup::new(&llm, None);
    let out = s
        .query("Q?")
        .args(["--max-time", "1", "--no-review"])
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.success();
    assert_eq!(out.run_status(), "partial", "{}", out.stderr);
    assert!(
        out.reason()
            .starts_with("the time budget (1 s) was reached"),
        "{}",
        out.reason()
    );
    let plan = s.plan();
    let fin = plan["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["batch"] == -1))
        .cloned()
        .expect("a final node");
    assert_eq!(fin["status"], "completed", "{fin}");
    assert_eq!(plan["outcome"]["status"], "partial");
    assert_eq!(plan["outcome"]["budget"]["stopped_by"], "max_time");
    let report = s.report();
    assert!(
        report.starts_with("# Q?\n\n> **Partial run: the time budget (1 s) was reached"),
        "{report}"
    );
    assert!(
        report.contains("The report, written from what exists."),
        "{report}"
    );
    assert_eq!(events_of(&s.events(), "budget_reached").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_summary_slower_than_its_own_bound_says_so_and_resumes() {
    let llm = MockLlm::start().await;
    slow_model(&llm, Duration::ZERO, Duration::from_secs(20));
    let s = Setup::new(&llm, None);
    let started = std::time::Instant::now();
    let out = s
        .query("Q?")
        .args(["--max-time", "1", "--final-time", "1", "--no-review"])
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the bound holds"
    );
    out.code(1);
    assert_eq!(out.run_status(), "final_failed");
    let why = out.reason();
    assert!(
        why.contains("the final summary's own time bound (1 s, `--final-time`")
            && why.contains("resume with `--plan`"),
        "{why}"
    );
    let plan = s.plan();
    assert_eq!(plan["outcome"]["reason"], json!(why));
    let fin = node(&plan, "d");
    assert_eq!(
        (fin["batch"].clone(), fin["status"].clone()),
        (json!(-1), json!("failed"))
    );
    // The research it was written from is kept; a resume with a patient model finishes it.
    assert_eq!(node(&plan, "b")["status"], "completed");
    slow_model(&llm, Duration::ZERO, Duration::ZERO);
    let out = s.resume(&s.out()).await;
    out.success();
    assert_eq!(out.run_status(), "completed");
    assert_eq!(node(&s.plan(), "d")["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grace_is_configurable_by_flag_and_config() {
    let llm = MockLlm::start().await;
    // Searches take 2.5 s: past the default grace of a 1 s budget (1 s), within 5 s.
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["First"])),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "Found.", "analysis": "A"}))
            .delay(Duration::from_millis(2500)),
    });
    let by_flag = Setup::new(&llm, None);
    let out = by_flag
        .query("Q?")
        .args(["--max-time", "1", "--grace", "5"])
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.success();
    assert_eq!(out.run_status(), "partial");
    assert_eq!(node(&by_flag.plan(), "b")["status"], "completed");

    let by_config = Setup::with_config(
        &llm,
        None,
        json!({"budget": {"maxSeconds": 1, "graceSeconds": 5, "finalSeconds": 60}}),
    );
    let out = by_config
        .query("Q?")
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.success();
    assert_eq!(node(&by_config.plan(), "b")["status"], "completed");

    // Without it, the same search is cut after the default grace.
    let default = Setup::new(&llm, None);
    let out = default
        .query("Q?")
        .args(["--max-time", "1"])
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.code(1);
    assert_eq!(out.run_status(), "degraded");
    let plan = default.plan();
    let b = node(&plan, "b");
    assert!(
        b["errors"][0].as_str().unwrap_or_default().contains("cut"),
        "{b}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zero_final_bound_in_the_config_is_refused_naming_the_key() {
    let llm = MockLlm::start().await;
    let s = Setup::with_config(&llm, None, json!({"budget": {"finalSeconds": 0}}));
    let out = s.query("Q?").run().await;
    out.code(2);
    assert!(out.stderr.contains("budget.finalSeconds"), "{}", out.stderr);
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_question_of_a_batch_under_a_time_budget_gets_its_report() {
    let llm = MockLlm::start().await;
    // 1 s a call, 3 s budget: each question's final summary starts after its budget. (The
    // second question's first call waits up to a second for the first one's answer, which
    // may announce the server's budget: it starts a second late.)
    slow_model(&llm, Duration::from_secs(1), Duration::from_secs(1));
    let s = Setup::new(&llm, None);
    std::fs::write(
        s.path().join("questions.txt"),
        "First question?\nSecond question?\n",
    )
    .expect("questions");
    let out = s
        .cmd()
        .args(["batch", "questions.txt", "--out-dir", "out", "--jobs", "2"])
        .args(["--max-time", "3", "--no-review"])
        .timeout(Duration::from_secs(60))
        .run()
        .await;
    out.success();
    let manifest = support::scenario::read_json(&s.path().join("out/batch.json"));
    let items = manifest["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), 2);
    for item in items {
        assert!(
            matches!(item["status"].as_str(), Some("partial" | "completed")),
            "{item}"
        );
        let report = std::fs::read_to_string(item["report"].as_str().expect("a report"))
            .expect("the report file");
        assert!(
            report.contains("The report, written from what exists."),
            "{report}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_flags_come_from_the_environment_for_workflow_and_batch_alike() {
    let llm = MockLlm::start().await;
    // Every call costs 18 tokens: a budget of 20 stops the research after the planner and
    // one search, at one task at a time.
    slow_model(&llm, Duration::ZERO, Duration::ZERO);
    let s = Setup::new(&llm, None);
    let out = s
        .query("Q?")
        .env("RESEARCHFLOW_MAX_TOKENS", "20")
        .env("WORKFLOW_CONCURRENCY", "1")
        .run()
        .await;
    out.success();
    assert_eq!(out.run_status(), "partial", "{}", out.stderr);
    assert_eq!(s.plan()["outcome"]["budget"]["max_tokens"], 20);

    std::fs::write(s.path().join("questions.txt"), "First question?\n").expect("questions");
    let out = s
        .cmd()
        .args(["batch", "questions.txt", "--out-dir", "batch"])
        .env("RESEARCHFLOW_MAX_TOKENS", "20")
        .env("WORKFLOW_CONCURRENCY", "1")
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.success();
    let manifest = support::scenario::read_json(&s.path().join("batch/batch.json"));
    assert_eq!(manifest["items"][0]["status"], "partial", "{manifest}");
    // A flag wins over its variable.
    let out = s
        .cmd()
        .args(["workflow", "--query", "Q again?", "--out", "flag.json"])
        .args(["--max-tokens", "1000"])
        .env("RESEARCHFLOW_MAX_TOKENS", "20")
        .run()
        .await;
    out.success();
    assert_eq!(out.run_status(), "completed", "{}", out.stderr);
}

/// A time budget of `i64::MAX` seconds once panicked (exit 101) where its deadline was added
/// to an instant. Every duration (flag, variable, config key) is bounded at 30 days: a longer
/// one is refused with exit 2, naming it, before any file is written; the longest accepted
/// runs to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_time_budget_is_refused_by_name_and_the_longest_one_runs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let offline = |out: &str| {
        fixtures::offline(dir.path(), &["workflow"]).args([
            "--query",
            "How do batteries age?",
            "--out",
            out,
        ])
    };
    let (i64_max, u64_max) = ("9223372036854775807", "18446744073709551615");
    let flags = [
        ("--max-time", i64_max),
        ("--final-time", u64_max),
        ("--grace", i64_max),
    ];
    let by_flag = flags.map(|(flag, v)| (flag, offline("huge.json").args([flag, v])));
    let by_variable = (
        "--max-time",
        offline("huge.json").env("RESEARCHFLOW_MAX_TIME", i64_max),
    );
    for (named, cmd) in by_flag.into_iter().chain([by_variable]) {
        let out = cmd.run().await;
        out.code(2)
            .stderr_contains(named)
            .stderr_contains("2592000");
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(!dir.path().join("huge.json").exists(), "{named}");
    }
    std::fs::write(
        dir.path().join("agent.config.json"),
        r#"{"budget": {"maxSeconds": 9223372036854775807}}"#,
    )
    .expect("config");
    let out = offline("huge.json").run().await;
    out.code(2)
        .stderr_contains("budget.maxSeconds")
        .stderr_contains("30 days");
    std::fs::remove_file(dir.path().join("agent.config.json")).expect("rm config");

    let longest = "2592000";
    let out = offline("longest.json")
        .args(["--max-time", longest, "--final-time", longest])
        .args(["--grace", longest])
        .run()
        .await;
    out.success();
    assert_eq!(out.run_status(), "completed", "{}", out.stderr);
}
