//! The run record and its replay: `<out>.transcript.jsonl` holds every LLM exchange and search
//! call of a run and no secret; `--replay` reproduces the run with every server stopped, and
//! stops with exit 1 at the first call the transcript does not hold.

use serde_json::{Value, json};

use crate::support::fixtures::{fixture, root};
use crate::support::scenario::{
    KEY, SEARCH_KEY, Setup, essence, node, one_search_then_final, read_json, read_ndjson, scripted,
};
use crate::support::{Fault, MockLlm, MockSearch, Reply, SearchKind};

fn of_kind<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == kind).collect()
}

/// A recorded run: one search with a web search, the planner's first request refused once
/// with a 429.
async fn recorded() -> (MockLlm, MockSearch, Setup) {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    scripted(&llm, one_search_then_final());
    llm.push(Reply::fault(Fault::rate_limited_ms(10)));
    let s = Setup::new(&llm, Some(&search));
    let out = s
        .query("How do solid-state batteries compare?")
        .arg("-vv")
        .run()
        .await;
    out.success();
    for secret in [KEY, SEARCH_KEY] {
        assert!(
            !out.stderr.contains(secret),
            "stderr at trace level holds a key"
        );
    }
    (llm, search, s)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_transcript_holds_every_request_the_mocks_saw_and_no_secret() {
    let (llm, search, s) = recorded().await;
    let path = s.path().join("out/plan.transcript.jsonl");
    let text = std::fs::read_to_string(&path).expect("transcript");
    for secret in [KEY, SEARCH_KEY, "Bearer", "authorization"] {
        assert!(!text.contains(secret), "the transcript holds `{secret}`");
    }
    let lines = read_ndjson(&path);
    assert_eq!(lines[0]["kind"], "session");
    assert_eq!(lines[0]["session"], 1);
    assert_eq!(lines[0]["query"], "How do solid-state batteries compare?");
    let llm_lines = of_kind(&lines, "llm");
    assert_eq!(
        llm_lines.len(),
        llm.chat_requests().len(),
        "one line per chat request"
    );
    // The planner's first call: refused, then answered, as two attempts of call 0.
    let first: Vec<&&Value> = llm_lines
        .iter()
        .filter(|l| l["role"] == "planning" && l["round"] == 1)
        .collect();
    assert_eq!(first.len(), 2);
    assert_eq!(
        (
            first[0]["call"].clone(),
            first[0]["attempt"].clone(),
            first[0]["status"].clone()
        ),
        (json!(0), json!(1), json!(429))
    );
    assert!(
        first[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("429"))
    );
    assert_eq!(
        (
            first[1]["call"].clone(),
            first[1]["attempt"].clone(),
            first[1]["status"].clone()
        ),
        (json!(0), json!(2), json!(200))
    );
    assert!(
        first[1]["content"]
            .as_str()
            .is_some_and(|c| c.contains("Only search"))
    );
    assert_eq!(first[1]["messages"][0]["role"], "system");
    assert!(first[1]["response_format"].is_object());
    assert!(first[1]["usage"]["total_tokens"].as_u64().is_some());
    assert!(first[1]["latency_ms"].as_u64().is_some());
    assert_eq!(first[1]["model"], "test-model");
    // The search task: its two LLM calls and its search, under node b.
    let b: Vec<&&Value> = llm_lines.iter().filter(|l| l["node"] == "b").collect();
    assert_eq!(b.len(), 2);
    assert_eq!(
        (b[0]["role"].clone(), b[0]["call"].clone()),
        (json!("search"), json!(0))
    );
    assert_eq!(
        (b[1]["role"].clone(), b[1]["call"].clone()),
        (json!("search"), json!(1))
    );
    let searches = of_kind(&lines, "search");
    assert_eq!(
        searches.len(),
        search.requests().len(),
        "one line per search"
    );
    assert_eq!(searches[0]["node"], "b");
    assert_eq!(searches[0]["provider"], "searxng");
    assert_eq!(searches[0]["query"], "q Only search");
    assert_eq!(
        searches[0]["results"].as_array().map(Vec::len),
        Some(3),
        "the hits, as the task saw them"
    );
    // The final summary's call is its node's.
    assert!(
        llm_lines
            .iter()
            .any(|l| l["node"] == "c" && l["role"] == "summary")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_with_every_server_stopped_reproduces_the_plan() {
    let (llm, search, s) = recorded().await;
    drop((llm, search));
    let out = s.replay().await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed", "{}", out.stderr);
    let (was, is) = (s.plan(), read_json(&s.path().join("replay.json")));
    assert_eq!(was["nodes"][0]["title"], is["nodes"][0]["title"]);
    assert_eq!(essence(&was), essence(&is));
    assert_ne!(was["workflow_id"], is["workflow_id"], "a new run");
    // The replay has its own transcript, every answer marked replayed.
    let replayed = read_ndjson(&s.path().join("replay.transcript.jsonl"));
    assert!(
        replayed[0]["replay_of"]
            .as_str()
            .is_some_and(|p| p.ends_with("plan.transcript.jsonl"))
    );
    let calls = of_kind(&replayed, "llm");
    assert_eq!(
        calls.len(),
        5,
        "one line per call (2 planner, 2 search agent, 1 final), none for the refused attempt"
    );
    assert!(calls.iter().all(|l| l["replayed"] == true));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_prompt_makes_the_replay_stop_at_the_diverging_call() {
    let (llm, search, s) = recorded().await;
    drop((llm, search));
    let prompts = s.path().join("changed-prompts");
    std::fs::create_dir_all(&prompts).expect("mkdir");
    for entry in std::fs::read_dir(root().join("prompts")).expect("prompts") {
        let entry = entry.expect("entry");
        std::fs::copy(entry.path(), prompts.join(entry.file_name())).expect("copy");
    }
    let analysis = prompts.join("search.analysis.md");
    let text = std::fs::read_to_string(&analysis).expect("read");
    std::fs::write(&analysis, format!("Be terse.\n{text}")).expect("write");
    let mut config = read_json(&s.path().join("agent.config.json"));
    config["promptsDir"] = json!("changed-prompts");
    std::fs::write(s.path().join("changed.json"), config.to_string()).expect("config");

    let out = s
        .cmd()
        .args([
            "--config",
            "changed.json",
            "workflow",
            "--replay",
            "out/plan.transcript.jsonl",
        ])
        .args(["--out", "replay.json"])
        .run()
        .await;
    out.code(1);
    assert!(
        out.stderr.contains(
            "the replay diverged at the search LLM call #2 of node b: message 1 (system) differs from character 1: the transcript has «"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("the run sends «Be terse."),
        "{}",
        out.stderr
    );
    let plan = read_json(&s.path().join("replay.json"));
    assert_eq!(
        node(&plan, "b")["status"],
        "planned",
        "not run: it runs again once fixed"
    );
    assert_eq!(plan["outcome"]["status"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_replays_a_round_from_its_transcript() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let stage1 = fixture("plan_stage1.json");
    std::fs::copy(&stage1, s.path().join("stage.json")).expect("copy");
    let plan = |file: &str| s.cmd().args(["plan", file]);
    plan("stage.json").run().await.success();
    assert_eq!(llm.chat_requests().len(), 1);
    drop(llm);
    std::fs::copy(&stage1, s.path().join("again.json")).expect("copy");
    let out = plan("again.json")
        .args(["--replay", "stage.transcript.jsonl"])
        .run()
        .await;
    out.success();
    let (was, is) = (
        read_json(&s.path().join("stage.json")),
        read_json(&s.path().join("again.json")),
    );
    assert_eq!(essence(&was), essence(&is));
    assert_eq!(was["check_list"], is["check_list"]);
    // A plan the transcript never saw: its round diverges.
    std::fs::copy(fixture("plan_stage2.json"), s.path().join("other.json")).expect("copy");
    let out = plan("other.json")
        .args(["--replay", "stage.transcript.jsonl"])
        .run()
        .await;
    out.code(1);
    assert!(
        out.stderr
            .contains("the replay diverged at the planning LLM call #1 of round 1"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_reproduces_the_review_of_the_report() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::with_config(&llm, None, json!({"review": {"enabled": true}}));
    let out = s.query("Q?").run().await;
    out.success();
    assert_eq!(out.stdout_json()["review"]["status"], "completed");
    drop(llm);
    // Another plan file, another workflow id: neither may reach what the review is sent.
    let out = s
        .cmd()
        .args(["workflow", "--replay", "out/plan.transcript.jsonl"])
        .args(["--out", "elsewhere/replay.json"])
        .run()
        .await;
    out.success();
    let review = &out.stdout_json()["review"];
    assert_eq!(review["status"], "completed", "{review} {}", out.stderr);
    assert_eq!(review["verdict"], "ok");
    let record = read_json(&s.path().join("elsewhere/replay.review.json"));
    let was = read_json(&s.path().join("out/plan.review.json"));
    assert_eq!(record["verdict"], was["verdict"]);
    // The report still names its own plan file and run.
    let report = std::fs::read_to_string(s.path().join("elsewhere/replay.report.md"))
        .expect("the replay's report");
    assert!(report.contains("replay.json"), "{report}");
}
