//! Integration tests of `researchflow plan`: the real binary against the mock LLM server.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures;
use crate::support::scenario::{node, plan_answer};
use crate::support::{Fault, MockLlm, Reply, researchflow};

const KEY: &str = "sk-test-SECRET-4242";

/// A temporary folder with a config pointing at the mock and a copy of one fixture stage.
struct Setup {
    dir: tempfile::TempDir,
    plan: PathBuf,
}

impl Setup {
    fn new(llm: &MockLlm, stage: u8) -> Setup {
        Setup::with_config(llm, stage, json!({}))
    }

    fn with_config(llm: &MockLlm, stage: u8, extra: Value) -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut config = json!({
            "baseURL": llm.base_url(),
            "model": "test-model",
            "apiKey": KEY,
            "timeouts": {"llmMs": 3000, "searchMs": 3000},
            "retry": {"maxRetries": 3, "baseDelayMs": 10, "maxDelayMs": 40, "maxRetryAfterMs": 1000}
        });
        if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                c.insert(k.clone(), v.clone());
            }
        }
        std::fs::write(dir.path().join("agent.config.json"), config.to_string()).expect("config");
        let plan = dir.path().join(format!("plan_stage{stage}.json"));
        std::fs::copy(fixture(stage), &plan).expect("copy fixture");
        Setup { dir, plan }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn plan_json(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(&self.plan).expect("read plan"))
            .expect("json")
    }

    fn plan_bytes(&self) -> Vec<u8> {
        std::fs::read(&self.plan).expect("read plan")
    }

    fn cmd(&self) -> support::bin::Cmd {
        researchflow()
            .current_dir(self.path())
            .arg("plan")
            .arg(&self.plan)
    }
}

fn fixture(stage: u8) -> PathBuf {
    fixtures::fixture(&format!("plan_stage{stage}.json"))
}

fn answer(is_final: bool, tasks: Value, next: Value) -> Reply {
    Reply::json(&plan_answer(is_final, tasks, next))
}

/// A round of one search `T` over the question, with nothing to check next.
fn one_search() -> Reply {
    answer(
        false,
        json!([{"title": "T", "type": "search", "p_node": "a:info"}]),
        json!([]),
    )
}

fn assert_no_secret(texts: &[&str]) {
    for t in texts {
        assert!(!t.contains(KEY), "the API key leaked into: {t}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_round_bootstraps_and_plans_searches() {
    let llm = MockLlm::start().await;
    llm.push(answer(
        false,
        json!([
            {"title": "Energy density of solid-state cells", "type": "search", "p_node": "a:info"},
            {"title": "Safety record of solid-state cells", "type": "search", "p_node": "A : INFO"}
        ]),
        json!(["NEW1:summary", "NEW2:summary", "NEW3:summary"]),
    ));
    let s = Setup::new(&llm, 1);
    let out = s.cmd().run().await;
    out.success();

    let plan = s.plan_json();
    for (id, title) in [
        ("b", "Energy density of solid-state cells"),
        ("c", "Safety record of solid-state cells"),
    ] {
        let n = node(&plan, id);
        assert_eq!(n["title"], title);
        assert_eq!(n["batch"], 2);
        assert_eq!(n["status"], "planned");
        assert_eq!(n["type"], "search");
        assert_eq!(n["summary"], "");
        assert_eq!(n["info"], "");
        assert_eq!(n["p_node"], "a:info");
    }
    assert_eq!(plan["nodes"].as_array().map(Vec::len), Some(3));
    assert_eq!(plan["check_list"]["latest_id"], "c");
    assert_eq!(plan["check_list"]["latest_batch"], 2);
    assert_eq!(
        plan["check_list"]["refs"],
        json!(["b:summary", "c:summary"]),
        "NEW3 has no task and is dropped"
    );

    // The planner input: the question line first, then the bootstrapped ref with its fallback.
    let req = &llm.requests()[0];
    let user = req.user_prompt().expect("user prompt");
    let question = plan["nodes"][0]["title"].as_str().expect("title");
    assert!(
        user.starts_with(&format!("用户问题: {question}\n")),
        "{user}"
    );
    assert!(user.contains("### a:info\n"), "{user}");
    assert!(
        user.contains(&format!("\n{question}\n")),
        "info falls back to the title: {user}"
    );
    assert_eq!(
        req.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert_eq!(req.body["model"], "test-model");
    assert_eq!(req.body["response_format"]["type"], "json_schema");

    let stdout = out.stdout_json();
    assert_eq!(stdout["planned"].as_array().map(Vec::len), Some(2));
    assert_eq!(stdout["planned"][0]["node_id"], "b");
    assert_eq!(
        stdout["next_check_list"]["raw"],
        json!(["NEW1:summary", "NEW2:summary", "NEW3:summary"])
    );
    assert_eq!(
        stdout["next_check_list"]["resolved"],
        json!(["b:summary", "c:summary"])
    );
    for line in [
        "[planning] plan file: ",
        "[planning] USER_INPUT ->",
        "[planning] MODEL_OUTPUT (parsed) ->",
        "with 2 task(s).",
        "AGENT_STATUS {\"agent\":\"planning\",\"status\":\"completed\"",
    ] {
        assert!(
            out.stderr.contains(line),
            "missing `{line}` in stderr:\n{}",
            out.stderr
        );
    }
    assert!(
        !out.stderr.contains("SYSTEM_PROMPT"),
        "the system prompt is hidden by default"
    );
    assert_no_secret(&[
        &out.stdout,
        &out.stderr,
        &String::from_utf8_lossy(&s.plan_bytes()),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_round_sanitises_refs_and_reads_each_ref_with_its_content() {
    let llm = MockLlm::start().await;
    llm.push(answer(
        false,
        json!([{"title": "Supply chain of sulfide electrolytes", "type": "search",
                "p_node": "B:Title, c:summary, zz:summary, NEW1:summary"}]),
        json!([
            "b:summary",
            "c:title",
            "NEW1:summary",
            "qq:summary",
            "not a ref"
        ]),
    ));
    let s = Setup::new(&llm, 2);
    let mut before = s.plan_json();
    before["check_list"]["refs"] = json!([
        "b:summary",
        "c:info[llm]",
        "d:info[search]",
        "zz:summary",
        "b:bogus"
    ]);
    std::fs::write(&s.plan, before.to_string()).expect("write");

    let out = s.cmd().run().await;
    out.success();
    let plan = s.plan_json();
    let e = node(&plan, "e");
    assert_eq!(e["p_node"], "b:summary, c:summary");
    assert_eq!(e["batch"], 3);
    assert_eq!(plan["check_list"]["latest_id"], "e");
    assert_eq!(plan["check_list"]["latest_batch"], 3);
    assert_eq!(
        plan["check_list"]["refs"],
        json!(["b:summary", "c:summary", "e:summary"])
    );
    // Nodes written by the fixture are untouched.
    assert_eq!(node(&plan, "b"), node(&before, "b"));

    let user = llm.requests()[0].user_prompt().expect("user prompt");
    let b_summary = node(&before, "b")["summary"].as_str().expect("summary");
    assert!(user.contains("### b:summary\nnode b (search, completed): "));
    assert!(
        user.contains(b_summary.trim()),
        "b's summary is in the input"
    );
    assert!(user.contains("### c:info[llm]") && user.contains("### d:info[search]"));
    assert!(
        !user.contains("zz:summary") && !user.contains("bogus"),
        "unknown refs are skipped"
    );
    // info[search] is unescaped for the model.
    let d_info = node(&before, "d")["info"].as_str().expect("info");
    if d_info.contains("&amp;") {
        assert!(
            !user
                .split("### d:info[search]")
                .nth(1)
                .unwrap_or("")
                .contains("&amp;")
        );
    }
    assert!(
        out.stderr.contains("zz"),
        "skipped refs are warned about: {}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_task_is_dropped_and_the_review_is_written_beside_the_plan() {
    let llm = MockLlm::start().await;
    llm.push(answer(
        false,
        json!([
            {"title": "energy density and performance of solid-state versus lithium-ion EV cells in 2025/2026 prototypes and pilot data!",
             "type": "search", "p_node": "a:info"},
            {"title": "Recycling of solid-state cells", "type": "search", "p_node": "a:info"}
        ]),
        json!(["NEW1:summary", "NEW2:summary"]),
    ));
    let s = Setup::new(&llm, 2);
    let out = s.cmd().run().await;
    out.success();
    let plan = s.plan_json();
    let e = node(&plan, "e");
    assert_eq!(e["title"], "Recycling of solid-state cells");
    assert_eq!(plan["nodes"].as_array().map(Vec::len), Some(5));
    assert_eq!(
        plan["check_list"]["refs"],
        json!(["b:summary", "e:summary"]),
        "the repeat's placeholder stands for the node it repeats"
    );

    let round = plan["rounds"].as_u64().expect("rounds");
    let stdout = out.stdout_json();
    let dropped = &stdout["dropped"][0];
    assert_eq!(dropped["type"], "DUPLICATE_TASK");
    assert_eq!(dropped["repeats"], "b");
    assert_eq!(dropped["issue"], format!("R{round}-1"));
    let review: Value = serde_json::from_str(
        &std::fs::read_to_string(s.path().join("plan_stage2.plan-review.json"))
            .expect("the review beside the plan"),
    )
    .expect("json");
    assert_eq!(review, stdout["plan_review"]);
    assert_eq!(review["round"], round);
    assert_eq!(review["ok"], false);
    assert_eq!(review["issues"].as_array().map(Vec::len), Some(1));
    let issue = &review["issues"][0];
    assert_eq!(issue["type"], "DUPLICATE_TASK");
    assert_eq!(issue["severity"], "block");
    assert_eq!(issue["path"], "tasks[0]");
    assert!(
        issue["message"]
            .as_str()
            .unwrap_or_default()
            .contains("repeats node b"),
        "{issue}"
    );
    assert!(out.stderr.contains("DUPLICATE_TASK"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn final_answer_gets_batch_minus_one() {
    let llm = MockLlm::start().await;
    llm.push(answer(
        true,
        json!([{"title": "Final report", "type": "summary", "p_node": "e:summary, f:summary"}]),
        json!(["NEW1:summary"]),
    ));
    let s = Setup::new(&llm, 3);
    s.cmd().run().await.success();
    let plan = s.plan_json();
    let g = node(&plan, "g");
    assert_eq!(g["batch"], -1);
    assert_eq!(g["type"], "summary");
    assert_eq!(g["p_node"], "e:summary, f:summary");
    assert_eq!(plan["check_list"]["latest_batch"], -1);
    assert_eq!(plan["check_list"]["latest_id"], "g");
    assert_eq!(plan["check_list"]["refs"], json!(["g:summary"]));

    // Planning again on a final plan does nothing and calls no model.
    let out = s.cmd().run().await;
    out.success();
    assert_eq!(llm.requests().len(), 1);
    assert_eq!(s.plan_json(), plan);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_tasks_leave_latest_fields_unchanged() {
    let llm = MockLlm::start().await;
    llm.push(answer(
        false,
        json!([]),
        json!(["b:summary", "NEW1:summary"]),
    ));
    let s = Setup::new(&llm, 2);
    let out = s.cmd().run().await;
    out.success();
    let plan = s.plan_json();
    assert_eq!(plan["check_list"]["latest_id"], "d");
    assert_eq!(plan["check_list"]["latest_batch"], 2);
    assert_eq!(plan["check_list"]["refs"], json!(["b:summary"]));
    assert!(out.stderr.contains("with 0 task(s)."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fenced_answer_after_think_block_parses() {
    let llm = MockLlm::start().await;
    llm.push(Reply::content(
        "<think>Maybe {\"is_final\": true}? No.</think>\nHere you go:\n```json\n{\"is_final\": false, \"tasks\": [{\"title\": \"T\", \"type\": \"search\", \"p_node\": \"a:info\"}], \"next_check_list\": [\"NEW1:summary\"]}\n```",
    ));
    let s = Setup::new(&llm, 1);
    s.cmd().run().await.success();
    assert_eq!(node(&s.plan_json(), "b")["title"], "T");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn contract_violation_is_repaired_once() {
    let llm = MockLlm::start().await;
    llm.push(answer(true, json!([]), json!([])));
    llm.push(answer(
        true,
        json!([{"title": "Report", "type": "summary", "p_node": "b:summary"}]),
        json!([]),
    ));
    let s = Setup::new(&llm, 2);
    s.cmd().run().await.success();
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    let repair = reqs[1].user_prompt().expect("repair prompt");
    assert!(
        repair.contains("FINAL_NEEDS_ONE_SUMMARY at tasks"),
        "{repair}"
    );
    let messages = reqs[1].body["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        4,
        "system, user, the bad answer, the repair request"
    );
    assert_eq!(messages[2]["role"], "assistant");
    assert_eq!(node(&s.plan_json(), "e")["batch"], -1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_violation_exits_1_and_leaves_the_file_byte_identical() {
    let llm = MockLlm::start().await;
    llm.push(Reply::content("I think you should search more."));
    llm.push(answer(
        false,
        json!([{"title": "T", "type": "browse", "p_node": "a:info"}]),
        json!([]),
    ));
    let s = Setup::new(&llm, 1);
    let before = s.plan_bytes();
    let out = s.cmd().run().await;
    out.code(1);
    assert!(
        out.stderr.contains("INVALID_TASK_TYPE at tasks[0].type"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("\"status\":\"failed\""));
    assert_eq!(s.plan_bytes(), before);
    assert_eq!(llm.requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_and_server_errors_are_retried_honouring_retry_after() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::rate_limited_ms(300)));
    llm.push(Reply::fault(Fault::rate_limited(Some("0"))));
    llm.push(Reply::fault(Fault::server_error(503)));
    llm.push(answer(false, json!([]), json!([])));
    let s = Setup::new(&llm, 2);
    let out = s.cmd().run().await;
    out.success();
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 4);
    let gap = reqs[1].received_at.duration_since(reqs[0].received_at);
    assert!(
        gap >= Duration::from_millis(300),
        "retry-after-ms was not honoured: {gap:?}"
    );
    assert!(
        out.stderr.contains("retry 1/3"),
        "retries are logged: {}",
        out.stderr
    );
    assert!(out.stderr.contains("HTTP 503"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn insufficient_quota_is_not_retried() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::insufficient_quota()));
    let s = Setup::new(&llm, 1);
    let before = s.plan_bytes();
    let out = s.cmd().run().await;
    out.code(2);
    assert_eq!(llm.requests().len(), 1);
    assert!(out.stderr.contains("quota"), "{}", out.stderr);
    assert_eq!(s.plan_bytes(), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_schema_falls_back_to_json_object_once() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::status(
        400,
        r#"{"error":{"message":"response_format json_schema is not supported by this model"}}"#,
    )));
    llm.push(answer(false, json!([]), json!([])));
    let s = Setup::new(&llm, 2);
    s.cmd().run().await.success();
    let reqs = llm.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].body["response_format"]["type"], "json_schema");
    assert_eq!(reqs[1].body["response_format"]["type"], "json_object");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_key_never_appears_even_when_the_server_echoes_it() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::status(
        401,
        &format!(r#"{{"error":{{"message":"Incorrect API key provided: {KEY}"}}}}"#),
    )));
    let s = Setup::new(&llm, 1);
    let out = s.cmd().arg("-v").run().await;
    out.code(2);
    assert!(out.stderr.contains("401"), "{}", out.stderr);
    let mut files = String::new();
    for entry in std::fs::read_dir(s.path()).expect("dir").flatten() {
        if entry
            .path()
            .file_name()
            .is_some_and(|n| n != "agent.config.json")
        {
            files.push_str(&String::from_utf8_lossy(
                &std::fs::read(entry.path()).unwrap_or_default(),
            ));
        }
    }
    assert_no_secret(&[&out.stdout, &out.stderr, &files]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_copy_plans_on_a_copy_beside_the_file() {
    let llm = MockLlm::start().await;
    llm.push(one_search());
    let s = Setup::new(&llm, 1);
    let before = s.plan_bytes();
    s.cmd().arg("--on-copy").run().await.success();
    assert_eq!(s.plan_bytes(), before, "the original is untouched");
    let copy = s.path().join("plan_stage1.copy.json");
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(copy).expect("copy")).expect("json");
    assert_eq!(node(&plan, "b")["title"], "T");
}

/// `x.copy.json` holding other work than `x.json`: stage 2's four nodes beside stage 1.
fn copy_with_other_work(s: &Setup) -> (PathBuf, Vec<u8>) {
    let copy = s.path().join("plan_stage1.copy.json");
    std::fs::copy(fixture(2), &copy).expect("copy stage 2");
    let bytes = std::fs::read(&copy).expect("read copy");
    (copy, bytes)
}

/// Whether the file at `path` still holds `bytes` (compared without printing either).
fn holds(path: &Path, bytes: &[u8]) -> bool {
    std::fs::read(path).expect("read") == bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_copy_leaves_a_copy_in_use_byte_identical() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| one_search());
    let s = Setup::new(&llm, 1);
    let (copy, before) = copy_with_other_work(&s);
    // What a `workflow --plan x.copy.json` holds while it runs.
    let real = std::fs::canonicalize(&copy).expect("real path");
    let held = std::fs::File::create(format!("{}.lock", real.display())).expect("lock file");
    held.try_lock().expect("lock");
    for flags in [vec!["--on-copy"], vec!["--on-copy", "--overwrite-copy"]] {
        let out = s.cmd().args(&flags).run().await;
        out.code(2).stderr_contains("in use");
        assert!(
            holds(&copy, &before),
            "{flags:?}: the copy in use is untouched"
        );
    }
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_copy_replaces_an_existing_copy_only_with_overwrite_copy() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| one_search());
    let s = Setup::new(&llm, 1);
    let original = s.plan_bytes();
    let (copy, before) = copy_with_other_work(&s);
    let out = s.cmd().arg("--on-copy").run().await;
    out.code(2)
        .stderr_contains("plan_stage1.copy.json")
        .stderr_contains("--overwrite-copy");
    assert!(holds(&copy, &before), "not replaced");
    assert!(llm.requests().is_empty(), "nothing planned");

    s.cmd()
        .args(["--on-copy", "--overwrite-copy"])
        .run()
        .await
        .success();
    let plan: Value =
        serde_json::from_str(&std::fs::read_to_string(&copy).expect("copy")).expect("json");
    let ids: Vec<&str> = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["node_id"].as_str())
        .collect();
    assert_eq!(ids, ["a", "b"], "stage 1 again, and the round's task");
    assert_eq!(node(&plan, "b")["title"], "T");
    assert!(holds(&s.plan, &original), "the original is untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_path_comes_from_env_or_the_default_file() {
    let llm = MockLlm::start().await;
    // Stage 1 has nothing researched yet, so the round must plan a task (later runs repeat it
    // and it is dropped, which is still a successful round).
    llm.set_handler(|_| one_search());
    let s = Setup::new(&llm, 1);
    let out = researchflow()
        .current_dir(s.path())
        .arg("plan")
        .env("PLAN_PATH", &s.plan)
        .run()
        .await;
    out.success();
    assert!(out.stderr.contains("plan_stage1.json"));

    let out = researchflow()
        .current_dir(s.path())
        .arg("plan")
        .env("PLAN_FILE", &s.plan)
        .run()
        .await;
    out.success();

    let out = researchflow().current_dir(s.path()).arg("plan").run().await;
    out.code(2);
    assert!(out.stderr.contains("plan_test.json"), "{}", out.stderr);
    std::fs::copy(fixture(1), s.path().join("plan_test.json")).expect("copy");
    researchflow()
        .current_dir(s.path())
        .arg("plan")
        .run()
        .await
        .success();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_instructions_and_full_logs() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| answer(false, json!([]), json!([])));
    let s = Setup::new(&llm, 2);
    let out = s.cmd().env("PLANNING_LOG_SHOW_INSTR", "1").run().await;
    out.success();
    assert!(out.stderr.contains("[planning] SYSTEM_PROMPT ->"));
    assert!(
        out.stderr.contains("more bytes]"),
        "input is truncated by default"
    );
    let out = s.cmd().env("PLANNING_LOG_FULL", "1").run().await;
    out.success();
    assert!(
        !out.stderr.contains("more bytes]"),
        "PLANNING_LOG_FULL shows everything"
    );
}

/// Our variables are `RESEARCHFLOW_...`: the plan file, the config file and the planning
/// log's are read by their new names; their old names (`PLAN_PATH`, then `PLAN_FILE`,
/// `AGENT_CONFIG`, `PLANNING_LOG_*`) are still read, and a new name wins over an old one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_variables_are_read_by_their_new_names_before_their_old_ones() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| answer(false, json!([]), json!([])));
    let s = Setup::new(&llm, 2);
    let plan = || researchflow().current_dir(s.path()).arg("plan");
    let missing = "missing.json";
    plan()
        .env("RESEARCHFLOW_PLAN_FILE", &s.plan)
        .run()
        .await
        .success();
    let both = plan().env("RESEARCHFLOW_PLAN_FILE", &s.plan);
    both.env("PLAN_PATH", missing).run().await.success();
    let olds = plan().env("PLAN_PATH", &s.plan).env("PLAN_FILE", missing);
    olds.run().await.success();
    let out = plan().env("PLAN_FILE", missing).run().await;
    out.code(2);
    assert!(out.stderr.contains(missing), "{}", out.stderr);

    std::fs::write(s.path().join("typo.json"), r#"{"retyr": {}}"#).expect("write");
    let out = s.cmd().env("RESEARCHFLOW_CONFIG", "typo.json").run().await;
    out.code(2);
    assert!(out.stderr.contains("`retyr`"), "{}", out.stderr);
    let both = s.cmd().env("RESEARCHFLOW_CONFIG", "agent.config.json");
    both.env("AGENT_CONFIG", "typo.json").run().await.success();

    // A round empties the check list, and with it the input that a log would cut: each of
    // these runs on a fresh plan.
    let cut = "more bytes]";
    let (new, both) = (Setup::new(&llm, 2), Setup::new(&llm, 2));
    let out = new.cmd().env("RESEARCHFLOW_LOG_FULL", "1").run().await;
    assert!(!out.stderr.contains(cut), "{}", out.stderr);
    let both = both.cmd().env("RESEARCHFLOW_LOG_FULL", "0");
    let out = both.env("PLANNING_LOG_FULL", "1").run().await;
    assert!(
        out.stderr.contains(cut),
        "the new name wins: {}",
        out.stderr
    );

    let prompt = "[planning] SYSTEM_PROMPT ->";
    let out = s
        .cmd()
        .env("RESEARCHFLOW_LOG_SHOW_INSTRUCTIONS", "1")
        .run()
        .await;
    assert!(out.stderr.contains(prompt), "{}", out.stderr);
    let both = s.cmd().env("RESEARCHFLOW_LOG_SHOW_INSTRUCTIONS", "0");
    let out = both.env("PLANNING_LOG_SHOW_INSTR", "1").run().await;
    assert!(
        !out.stderr.contains(prompt),
        "the new name wins: {}",
        out.stderr
    );
}

// Bad input: a one-line error naming the file or setting, exit 2, nothing written.

async fn bad_input(s: &Setup, cmd: support::bin::Cmd, expect: &[&str]) {
    let before = std::fs::read(&s.plan).ok();
    let out = cmd.run().await;
    out.code(2);
    let err_line = out
        .stderr
        .lines()
        .find(|l| l.starts_with("error: "))
        .unwrap_or_else(|| panic!("no error line in {}", out.stderr));
    for e in expect {
        assert!(err_line.contains(e), "`{e}` missing from: {err_line}");
    }
    assert_eq!(std::fs::read(&s.plan).ok(), before, "nothing written");
    assert!(out.stdout.is_empty(), "no data on stdout: {}", out.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_invalid_and_foreign_plan_files() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, 1);
    let cmd = researchflow()
        .current_dir(s.path())
        .args(["plan", "nope.json"]);
    bad_input(&s, cmd, &["`nope.json`", "does not exist"]).await;

    std::fs::write(s.path().join("broken.json"), "{\"nodes\": [").expect("write");
    let cmd = researchflow()
        .current_dir(s.path())
        .args(["plan", "broken.json"]);
    bad_input(&s, cmd, &["`broken.json`", "not valid JSON", "line 1"]).await;

    std::fs::write(
        s.path().join("other.json"),
        r#"{"name": "package", "version": "1.0.0"}"#,
    )
    .expect("write");
    let cmd = researchflow()
        .current_dir(s.path())
        .args(["plan", "other.json"]);
    bad_input(
        &s,
        cmd,
        &["`other.json`", "not a researchflow plan file", "nodes"],
    )
    .await;

    let cmd = researchflow()
        .current_dir(s.path())
        .args(["plan", "notes.txt"]);
    bad_input(&s, cmd, &["`notes.txt`", ".json"]).await;
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_and_invalid_config() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, 1);
    let cmd = s.cmd().arg("--config").arg("missing.json");
    bad_input(&s, cmd, &["`missing.json`", "agent.config.example.json"]).await;

    std::fs::write(
        s.path().join("typo.json"),
        r#"{"baseURL": "http://127.0.0.1:1/v1", "model": "m", "retyr": {}}"#,
    )
    .expect("write");
    let cmd = s.cmd().env("AGENT_CONFIG", "typo.json");
    bad_input(&s, cmd, &["`typo.json`", "`retyr`"]).await;

    std::fs::write(
        s.path().join("nomodel.json"),
        r#"{"baseURL": "http://127.0.0.1:1/v1"}"#,
    )
    .expect("write");
    let cmd = s.cmd().args(["--config", "nomodel.json"]);
    bad_input(&s, cmd, &["`nomodel.json`", "`model`", "OPENAI_MODEL"]).await;

    std::fs::write(s.path().join("badjson.json"), "{baseURL:").expect("write");
    let cmd = s.cmd().args(["--config", "badjson.json"]);
    bad_input(&s, cmd, &["`badjson.json`", "not valid JSON"]).await;
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_server_exits_2_after_retries() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, 1);
    let config = json!({
        "baseURL": format!("http://127.0.0.1:{port}/v1"), "model": "m", "apiKey": KEY,
        "retry": {"maxRetries": 2, "baseDelayMs": 5, "maxDelayMs": 10}
    });
    std::fs::write(s.path().join("agent.config.json"), config.to_string()).expect("config");
    let cmd = s.cmd();
    bad_input(&s, cmd, &[&format!("127.0.0.1:{port}"), "cannot reach"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lock_held_by_another_process_exits_2_at_once() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, 1);
    let lock_path = s.path().join("plan_stage1.json.lock");
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        .expect("lock file");
    lock.lock().expect("lock");
    let cmd = s.cmd().timeout(Duration::from_secs(20));
    bad_input(
        &s,
        cmd,
        &["plan_stage1.json", "in use by another researchflow process"],
    )
    .await;
    drop(lock);
    assert!(llm.requests().is_empty());
}
