//! Honest outcomes: a run's status and exit code say what really happened (`completed` only
//! over research that happened, `degraded` otherwise; endpoints that cannot be used exit 2 at
//! once), a failed final summary is finished on resume, and output files never collide or
//! get two writers, whatever path leads to them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::fixture;
use crate::support::scenario::{
    Agent, Setup, agent, events_of, final_over, node, one_search_then_final, read_json, scripted,
    searches_round, searches_then_final,
};
use crate::support::{Fault, MockLlm, Reply, RunOutput};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_planning_round_failing_is_degraded_not_completed() {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::content("I cannot plan this."),
        Agent::Final => Reply::content("A report made up from the question alone."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::with_config(&llm, None, json!({"review": {"enabled": true}}));
    let out = s.query("Q?").run().await;
    out.code(1);
    assert_eq!(out.run_status(), "degraded");
    let reason = out.stdout_json()["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        reason.contains("no research task completed") && reason.contains("planning round"),
        "{reason}"
    );
    assert!(out.stderr.contains("degraded run"), "{}", out.stderr);
    let plan = s.plan();
    assert_eq!(plan["outcome"]["status"], "degraded");
    let report = s.report();
    assert!(
        report.starts_with("# Q?\n\n> **Degraded run: no research task completed"),
        "{report}"
    );
    let events = s.events();
    let last = events.last().expect("events");
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["status"], "degraded");
    // A report that disowns itself is not reviewed: no call is spent on it.
    assert_eq!(out.stdout_json()["review"]["status"], "skipped");
    assert!(events.iter().any(|e| e["event"] == "review_skipped"));
    let reviewed = llm
        .chat_requests()
        .iter()
        .filter(|r| matches!(agent(r), Agent::Review | Agent::SecondOpinion))
        .count();
    assert_eq!(reviewed, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_task_failing_is_degraded() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let failing = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&failing);
    let rounds = one_search_then_final();
    let planner = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&rounds[planner.fetch_add(1, Ordering::SeqCst).min(1)]),
        Agent::Analysis => {
            counter.fetch_add(1, Ordering::SeqCst);
            Reply::fault(Fault::server_error(503))
        }
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").run().await;
    out.code(1);
    assert_eq!(out.run_status(), "degraded");
    assert_eq!(
        failing.load(Ordering::SeqCst),
        4,
        "one try and three retries"
    );
    let reason = s.plan()["outcome"]["reason"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(reason.contains("task b (Only search) failed"), "{reason}");
}

/// The configurations no round can mend: exit 2 at once, with the endpoint and the fix named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unusable_endpoints_exit_2_at_once_without_futile_rounds() {
    let cases = [
        (
            Fault::status(401, r#"{"error":{"message":"bad key"}}"#),
            "apiKey",
        ),
        (
            Fault::status(404, r#"{"error":{"message":"no such model"}}"#),
            "model",
        ),
        (Fault::insufficient_quota(), "quota"),
    ];
    for (fault, fix) in cases {
        let llm = MockLlm::start().await;
        llm.set_handler(move |_| Reply::fault(fault.clone()));
        let s = Setup::new(&llm, None);
        let out = s.query("Q?").run().await;
        out.code(2);
        assert_eq!(
            llm.chat_requests().len(),
            1,
            "{fix}: one request, no retry, no round"
        );
        assert!(
            out.stderr.contains(&llm.base_url()),
            "{fix}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(fix), "{fix}: {}", out.stderr);
        assert_eq!(out.run_status(), "failed");
        let events = s.events();
        assert!(
            events_of(&events, "final_forced").is_empty(),
            "{fix}: no forced final"
        );
        assert_eq!(events.last().expect("events")["status"], "failed");
        assert_eq!(s.plan()["outcome"]["status"], "failed");
    }

    // Nothing listening at all.
    let llm = MockLlm::start().await;
    let s = Setup::with_config(
        &llm,
        None,
        json!({"baseURL": "http://127.0.0.1:9/v1", "retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 10}}),
    );
    let out = s.query("Q?").run().await;
    out.code(2);
    assert!(
        out.stderr
            .contains("cannot reach the planning model server"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("baseURL"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_search_key_stops_the_run_and_the_task_runs_again_later() {
    let llm = MockLlm::start().await;
    let search = support::MockSearch::start(support::SearchKind::Tavily).await;
    search.require_key("the-right-key");
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("Q?").run().await;
    out.code(2);
    assert!(out.stderr.contains("search.apiKey"), "{}", out.stderr);
    let b = node(&s.plan(), "b").clone();
    assert_eq!(
        b["status"], "planned",
        "not the task's fault: it runs again on resume"
    );
    assert!(
        b["errors"][0]
            .as_str()
            .unwrap_or_default()
            .contains("refused the API key")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_final_summary_runs_again_on_resume() {
    let llm = MockLlm::start().await;
    let final_fails = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let fails = Arc::clone(&final_fails);
    let rounds = one_search_then_final();
    let planner = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&rounds[planner.fetch_add(1, Ordering::SeqCst).min(1)]),
        Agent::Final if fails.load(Ordering::SeqCst) => Reply::fault(Fault::server_error(500)),
        Agent::Final => Reply::content("The report, at last."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").run().await;
    out.code(1);
    assert_eq!(out.run_status(), "final_failed");
    assert!(out.stderr.contains("--plan"), "{}", out.stderr);

    // `plan` knows the final summary is there, and says how to run it again.
    let planned = s.cmd().arg("plan").arg(s.out()).run().await;
    planned.success();
    assert!(
        planned.stderr.contains("runs it (again)"),
        "{}",
        planned.stderr
    );

    final_fails.store(false, Ordering::SeqCst);
    let before = llm.chat_requests().len();
    let resumed = s.resume(&s.out()).await;
    resumed.success();
    assert_eq!(resumed.run_status(), "completed");
    let fin = node(&s.plan(), "c").clone();
    assert_eq!(fin["status"], "completed");
    assert_eq!(fin["attempts"], 2);
    let new_requests: Vec<_> = llm.chat_requests().into_iter().skip(before).collect();
    assert_eq!(new_requests.len(), 1, "only the final summary runs again");
    assert!(s.report().contains("The report, at last."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn out_must_be_a_json_file_and_default_names_never_collide() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let out = s
        .cmd()
        .args(["workflow", "--query", "Q?", "--out", "x.txt"])
        .run()
        .await;
    out.code(2);
    assert!(out.stderr.contains("`.json`"), "{}", out.stderr);
    assert!(llm.requests().is_empty());

    // Two runs started together, without --out: two plans, each with its own outputs.
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Only search"])),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let run = || s.cmd().args(["workflow", "--query", "Same second?"]).run();
    let (a, b) = tokio::join!(run(), run());
    a.success();
    b.success();
    let (pa, pb) = (
        a.stdout_json()["plan_file"].clone(),
        b.stdout_json()["plan_file"].clone(),
    );
    assert_ne!(pa, pb);
    let runs: Vec<String> = std::fs::read_dir(s.path().join("runs"))
        .expect("runs/")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json") && !n.ends_with(".plan-review.json"))
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_reached_through_a_symlink_shares_its_lock_and_stays_one_file() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let real = s.path().join("real.json");
    std::fs::copy(fixture("plan_stage1.json"), &real).expect("copy");
    let link = s.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    // The planner answers slowly, so the first process holds the lock for a while.
    llm.set_handler(|req| match agent(req) {
        Agent::Planner if !req.user_prompt().unwrap_or_default().contains("### b:") => {
            Reply::json(&searches_round(&["One search"])).delay(Duration::from_millis(1500))
        }
        Agent::Planner => Reply::json(&final_over("b:summary")),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let first = s.cmd().args(["workflow", "--plan", "real.json"]).run();
    let second = async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        s.cmd()
            .args(["workflow", "--plan", "link.json"])
            .run()
            .await
    };
    let (first, second) = tokio::join!(first, second);
    first.success();
    second.code(2);
    assert!(second.stderr.contains("in use"), "{}", second.stderr);

    // Resuming through the link writes the file itself and keeps the link a link.
    let again = s
        .cmd()
        .args(["workflow", "--plan", "link.json"])
        .run()
        .await;
    again.success();
    let meta = std::fs::symlink_metadata(&link).expect("link");
    assert!(meta.file_type().is_symlink());
    assert_eq!(read_json(&real)["outcome"]["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn structurally_invalid_plans_are_refused_and_left_untouched() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| Reply::content("never asked"));
    let s = Setup::new(&llm, None);
    let start =
        json!({"node_id": "a", "title": "Q?", "batch": 1, "type": "start", "status": "completed"});
    let search =
        json!({"node_id": "b", "title": "S", "batch": 2, "type": "search", "status": "planned"});
    let cases = [
        (
            "duplicate.json",
            json!({"nodes": [start, search, search]}),
            "DUPLICATE_NODE_ID",
        ),
        (
            "two_starts.json",
            json!({"nodes": [start, start.clone().as_object().map(|o| {
            let mut o = o.clone(); o.insert("node_id".into(), json!("c")); Value::Object(o)
        }).unwrap_or_default()]}),
            "MULTIPLE_START_NODES",
        ),
        ("empty.json", json!({"nodes": []}), "NO_START_NODE"),
    ];
    for (name, plan, code) in cases {
        let path = s.path().join(name);
        let text = serde_json::to_string_pretty(&plan).expect("json");
        std::fs::write(&path, &text).expect("write");
        for args in [vec!["plan", name], vec!["workflow", "--plan", name]] {
            let out = s.cmd().args(&args).run().await;
            out.code(2);
            assert!(out.stderr.contains(code), "{args:?}: {}", out.stderr);
            assert_eq!(
                std::fs::read_to_string(&path).expect("read"),
                text,
                "{args:?}"
            );
        }
    }
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompts_dir_that_does_not_exist_is_an_error() {
    let llm = MockLlm::start().await;
    let s = Setup::with_config(&llm, None, json!({"promptsDir": "my-prompts"}));
    let out = s.query("Q?").run().await;
    out.code(2);
    assert!(
        out.stderr.contains("`promptsDir`") && out.stderr.contains("no such folder"),
        "{}",
        out.stderr
    );
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_error_says_each_cause_once() {
    let llm = MockLlm::start().await;
    let s = Setup::with_config(
        &llm,
        None,
        json!({"baseURL": "http://127.0.0.1:9/v1", "retry": {"maxRetries": 0}}),
    );
    std::fs::copy(fixture("plan_stage1.json"), s.path().join("p.json")).expect("copy");
    let out = s.cmd().args(["plan", "p.json"]).run().await;
    out.code(2);
    let line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_default();
    assert_eq!(line.matches("cannot reach").count(), 1, "{line}");
}

/// Round 1: three searches; then the final over them.
fn three_searches_then_final() -> Vec<Value> {
    vec![
        searches_round(&["First", "Second", "Third"]),
        final_over("b:summary, c:summary"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_budget_ends_the_run_partial_with_a_notice() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches_then_final());
    let s = Setup::new(&llm, None);
    // Every call costs 18 tokens: the planner (18), then one search at a time (36, 54).
    let out = s
        .query("Q?")
        .args(["--max-tokens", "40", "--concurrency", "1"])
        .run()
        .await;
    out.success();
    assert_eq!(out.run_status(), "partial");
    assert!(out.stderr.contains("partial run"), "{}", out.stderr);
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(node(&plan, "c")["status"], "completed");
    let d = node(&plan, "d");
    assert_eq!(d["status"], "failed");
    assert!(
        d["errors"][0]
            .as_str()
            .unwrap_or_default()
            .starts_with("not run"),
        "{d}"
    );
    let fin = node(&plan, "e");
    assert_eq!(
        (fin["batch"].clone(), fin["status"].clone()),
        (json!(-1), json!("completed"))
    );
    let budget = &plan["outcome"]["budget"];
    assert_eq!(budget["max_tokens"], 40);
    assert_eq!(budget["stopped_by"], "max_tokens");
    assert_eq!(plan["outcome"]["status"], "partial");
    let events = s.events();
    let reached = events_of(&events, "budget_reached");
    assert_eq!(reached.len(), 1);
    assert_eq!(reached[0]["limit"], "max_tokens");
    assert_eq!(reached[0]["used"], 54);
    let report = s.report();
    assert!(
        report.starts_with("# Q?\n\n> **Partial run: the token budget (40 tokens) was reached after 54 tokens; 1 task(s) did not run"),
        "{report}"
    );
}

/// `workflow --max-time 1`, which must end soon after: the grace is short.
async fn within_a_second(s: &Setup) -> RunOutput {
    let started = std::time::Instant::now();
    let out = s
        .query("Q?")
        .args(["--max-time", "1"])
        .timeout(Duration::from_secs(20))
        .run()
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "the grace is short"
    );
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_budget_cuts_running_tasks_after_a_grace() {
    let llm = MockLlm::start().await;
    let rounds = three_searches_then_final();
    let planner = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&rounds[planner.fetch_add(1, Ordering::SeqCst).min(1)]),
        Agent::Analysis => {
            Reply::json(&json!({"summary": "S", "analysis": "A"})).delay(Duration::from_secs(30))
        }
        Agent::Final => Reply::content("Report from nothing much."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let out = within_a_second(&s).await;
    // Nothing was researched before the cut: the run is degraded, and says why.
    out.code(1);
    assert_eq!(out.run_status(), "degraded");
    let plan = s.plan();
    for id in ["b", "c", "d"] {
        let n = node(&plan, id);
        assert_eq!(n["status"], "failed", "{n}");
        assert!(
            n["errors"][0].as_str().unwrap_or_default().contains("cut"),
            "{n}"
        );
    }
    assert_eq!(plan["outcome"]["budget"]["stopped_by"], "max_time");
    assert!(s.report().contains("the time budget (1 s) was reached"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_budget_reached_after_some_research_ends_partial_with_a_notice() {
    let llm = MockLlm::start().await;
    let rounds = three_searches_then_final();
    let planner = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&rounds[planner.fetch_add(1, Ordering::SeqCst).min(1)]),
        // The first search answers at once, the two others would take 30 s.
        Agent::Analysis if req.user_prompt().unwrap_or_default().contains("First") => {
            Reply::json(&json!({"summary": "Found it.", "analysis": "A"}))
        }
        Agent::Analysis => {
            Reply::json(&json!({"summary": "S", "analysis": "A"})).delay(Duration::from_secs(30))
        }
        Agent::Final => Reply::content("Report from the first search."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let out = within_a_second(&s).await;
    // The user asked for the limit and some research was done: partial, exit 0.
    out.success();
    assert_eq!(out.run_status(), "partial");
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    for id in ["c", "d"] {
        let n = node(&plan, id);
        assert_eq!(n["status"], "failed", "{n}");
        assert!(
            n["errors"][0].as_str().unwrap_or_default().contains("cut"),
            "{n}"
        );
    }
    let fin = node(&plan, "e");
    assert_eq!(
        (fin["batch"].clone(), fin["status"].clone()),
        (json!(-1), json!("completed"))
    );
    assert_eq!(plan["outcome"]["status"], "partial");
    assert_eq!(plan["outcome"]["budget"]["stopped_by"], "max_time");
    let events = s.events();
    let reached = events_of(&events, "budget_reached");
    assert_eq!(reached.len(), 1);
    assert_eq!(reached[0]["limit"], "max_time");
    let report = s.report();
    assert!(
        report.starts_with("# Q?\n\n> **Partial run: the time budget (1 s) was reached"),
        "{report}"
    );
    assert!(report.contains("Report from the first search."), "{report}");
}
