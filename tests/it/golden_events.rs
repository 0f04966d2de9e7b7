//! The events the program writes, held against a record: runs of `workflow` (with a model and a
//! web search, a 429, a failed task, a budget, the review; offline over a corpus; a planner that
//! cannot plan), `batch` and `thinkon` against the mocks, and for every event the name and
//! each set of keys it was written with. `tests/golden/events.json` is the record: a change to
//! what any event carries must change it too, on purpose
//! (`RESEARCHFLOW_UPDATE_GOLDEN=1 cargo test --test it golden_events::` rewrites it).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::{offline, root};
use crate::support::scenario::{
    Agent, Setup, agent, one_search_then_final, plan_answer, read_ndjson, scripted,
    searches_then_final,
};
use crate::support::{Fault, MockLlm, MockSearch, Reply, SearchKind};

/// Event name -> the sets of keys it was written with.
type Shapes = BTreeMap<String, BTreeSet<Vec<String>>>;

fn add_shapes(shapes: &mut Shapes, events: &[Value]) {
    for event in events {
        let name = event["event"].as_str().expect("every event is named");
        let mut keys: Vec<String> = event
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default();
        keys.sort();
        shapes.entry(name.to_string()).or_default().insert(keys);
    }
}

/// Every `*.events.ndjson` under `dir`, and `dir/.thinkon/events.ndjson`.
fn logs_under(dir: &Path) -> Vec<Vec<Value>> {
    let mut logs = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)
            .expect("read dir")
            .filter_map(Result::ok)
        {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() && name != "index" {
                stack.push(path);
            } else if name.ends_with("events.ndjson") {
                logs.push(read_ndjson(&path));
            }
        }
    }
    logs
}

async fn workflow_with_a_model() -> Shapes {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    // Two tasks of one title: the plan review drops the second.
    let mut rounds = one_search_then_final();
    rounds[0] = plan_answer(
        false,
        json!([
            {"title": "Only search", "type": "search", "p_node": "a:info"},
            {"title": "Only search", "type": "search", "p_node": "a:info"}
        ]),
        json!(["NEW1:summary"]),
    );
    scripted(&llm, rounds);
    llm.push(Reply::fault(Fault::rate_limited_ms(10)));
    let s = Setup::with_config(&llm, Some(&search), json!({"review": {"enabled": true}}));
    s.query("Q?").run().await.success();
    let mut shapes = Shapes::new();
    add_shapes(&mut shapes, &s.events());
    shapes
}

async fn workflow_failing_and_cut() -> Shapes {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["First", "Second", "Third"])),
        Agent::Final => Reply::content("Report written."),
        _ if support::scenario::task_title(req) == "First" => {
            Reply::fault(Fault::server_error(500))
        }
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?")
        .args(["--max-tokens", "20", "--concurrency", "1"])
        .run()
        .await;
    let mut shapes = Shapes::new();
    add_shapes(&mut shapes, &s.events());
    shapes
}

async fn workflow_without_a_plan() -> Shapes {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::content("I cannot plan this."),
        _ => Reply::content("A report from the question alone."),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").args(["--max-rounds", "3"]).run().await;
    let mut shapes = Shapes::new();
    add_shapes(&mut shapes, &s.events());
    shapes
}

async fn offline_workflow() -> Shapes {
    let dir = tempfile::tempdir().expect("tempdir");
    offline(dir.path(), &["workflow"])
        .args([
            "--query",
            "How do solid-state batteries compare with lithium-ion?",
        ])
        .args(["--out", "offline.json"])
        .run()
        .await
        .success();
    let mut shapes = Shapes::new();
    for log in logs_under(dir.path()) {
        add_shapes(&mut shapes, &log);
    }
    shapes
}

async fn batch() -> Shapes {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Only"])),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("q.txt"), "First?\nSecond?\n").expect("questions");
    s.cmd()
        .args(["batch", "q.txt", "--out-dir", "out", "--jobs", "2"])
        .timeout(Duration::from_secs(60))
        .run()
        .await
        .success();
    let mut shapes = Shapes::new();
    for log in logs_under(&s.path().join("out")) {
        add_shapes(&mut shapes, &log);
    }
    shapes
}

async fn thinkon() -> Shapes {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| {
        let system = req.system_prompt().unwrap_or_default();
        if system.contains("reflection step of Thinkon") {
            Reply::json(&json!({
                "completion": "Done.", "deliverables": "d", "metric": "m", "constraints": "c"
            }))
        } else {
            Reply::json(&json!({
                "type": "plan-next", "plan_type": "EXECUTE",
                "new_block": {"goal": "Say hello", "plan": [], "done": []},
                "executor_call": {
                    "command": "shell: echo hello", "inputs": {},
                    "expected_observations": ["hello"]
                }
            }))
        }
    });
    let s = Setup::new(&llm, None);
    s.cmd()
        .args(["thinkon", "--goal", "Say hello", "--allow-shell"])
        .timeout(Duration::from_secs(30))
        .run()
        .await
        .success();
    let mut shapes = Shapes::new();
    add_shapes(
        &mut shapes,
        &read_ndjson(&s.path().join(".thinkon/events.ndjson")),
    );
    shapes
}

fn as_json(runs: &BTreeMap<&str, Shapes>) -> Value {
    serde_json::to_value(runs).expect("shapes serialise")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_keeps_its_name_and_keys() {
    let mut runs: BTreeMap<&str, Shapes> = BTreeMap::new();
    runs.insert("workflow", workflow_with_a_model().await);
    runs.insert("workflow_failing_and_cut", workflow_failing_and_cut().await);
    runs.insert("workflow_without_a_plan", workflow_without_a_plan().await);
    runs.insert("offline", offline_workflow().await);
    runs.insert("batch", batch().await);
    runs.insert("thinkon", thinkon().await);
    let written = as_json(&runs);
    let path = root().join("tests/golden/events.json");
    if std::env::var_os("RESEARCHFLOW_UPDATE_GOLDEN").is_some() {
        let text = serde_json::to_string_pretty(&written).expect("json");
        std::fs::create_dir_all(path.parent().expect("folder")).expect("golden folder");
        std::fs::write(&path, text + "\n").expect("write the record");
        return;
    }
    let recorded: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("tests/golden/events.json"))
            .expect("the record is JSON");
    for (run, shapes) in written.as_object().expect("runs") {
        assert_eq!(
            Some(shapes),
            recorded.get(run),
            "run `{run}`: the events written (left) differ from the record (right)"
        );
    }
    assert_eq!(written, recorded);
}
