//! The workflow engine driven through the library with a test [`TaskRunner`], for the cases a
//! real sub-agent cannot be made to produce on demand: a task that panics, and a result that
//! finishes at the very moment the run is told to stop. The planner still talks HTTP to the
//! mock LLM.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use researchflow::agents::{TaskError, TaskInput, TaskOutput, TaskRunner};
use researchflow::events::{EventLog, RunStatus};
use researchflow::http::Gates;
use researchflow::llm::{CallObserver, LlmClient, Negotiator};
use researchflow::plan::{Beside, Info, Node, NodeId, NodeStatus, NodeType, PlanFile, PlanStore};
use researchflow::planner::{LogOptions, Planner};
use researchflow::run::Shutdown;
use researchflow::settings::{ConfigFile, Role, RunOptions, Settings};
use researchflow::workflow::Ledger;
use researchflow::workflow::{Engine, ReviewStep, RunParts};
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::scenario::read_ndjson;
use crate::support::{MockLlm, Reply};

/// Answers by task title: `explode` panics, `slow` never finishes, anything else completes
/// at once (and `fast` rings `done` just before it returns).
struct ScriptedRunner {
    done: Arc<Notify>,
}

impl TaskRunner for ScriptedRunner {
    async fn run(
        &self,
        input: &TaskInput,
        _observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        match input.title.as_str() {
            "explode" => panic!("scripted panic in task {}", input.node_id),
            "slow" => std::future::pending().await,
            title => {
                if title == "fast" {
                    self.done.notify_one();
                }
                let mut info = Info::default();
                info.set("llm", format!("analysis of {title}"));
                Ok(TaskOutput {
                    summary: format!("summary of {title}"),
                    info,
                    sources: Vec::new(),
                    usage: Default::default(),
                    truncated: false,
                    ..Default::default()
                })
            }
        }
    }
}

fn settings(base_url: &str) -> Settings {
    let text = json!({
        "baseURL": base_url,
        "model": "test-model",
        "timeouts": {"llmMs": 3000},
        "retry": {"maxRetries": 0, "baseDelayMs": 10, "maxDelayMs": 10},
    })
    .to_string();
    let file = ConfigFile::parse("test.json", &text).expect("config parses");
    Settings::resolve(Path::new("test.json"), file, &|_| None).expect("settings")
}

/// A plan with the question and one planned search per title, in batch 2.
fn plan_with(titles: &[&str]) -> PlanFile {
    let mut plan = PlanFile::new("Q?", "wf-test".into(), "t".into());
    let mut id = NodeId::FIRST;
    for title in titles {
        id = id.next();
        plan.nodes.push(
            Node::new(id, *title, NodeType::Search, 2, NodeStatus::Planned).with_p_node("a:info"),
        );
    }
    plan.check_list.latest_id = Some(id);
    plan.check_list.latest_batch = Some(2);
    plan.check_list.refs = vec!["b:summary".into()];
    plan
}

struct Run {
    dir: tempfile::TempDir,
    status: RunStatus,
}

impl Run {
    fn plan(&self) -> Value {
        let text = std::fs::read_to_string(self.dir.path().join("plan.json")).expect("plan");
        serde_json::from_str(&text).expect("plan is JSON")
    }

    fn node(&self, id: &str) -> Value {
        self.plan()["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["node_id"] == id).cloned())
            .unwrap_or_else(|| panic!("no node {id}"))
    }

    fn events(&self, kind: &str) -> Vec<Value> {
        read_ndjson(&self.dir.path().join("plan.events.ndjson"))
            .into_iter()
            .filter(|e| e["event"] == kind)
            .collect()
    }
}

async fn run(plan: PlanFile, base_url: &str, done: Arc<Notify>, shutdown: Shutdown) -> Run {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = PlanStore::create(&dir.path().join("plan.json"), &plan).expect("create plan");
    let events = EventLog::open(&dir.path().join("plan.events.ndjson")).expect("events");
    let http = researchflow::http::client().expect("http client");
    let settings = settings(base_url);
    let run = RunParts {
        ledger: Ledger::new(Box::new(store), plan, Arc::new(events)),
        options: RunOptions {
            max_rounds: 3,
            concurrency: 2,
            budget: Default::default(),
        },
        shutdown,
        files: Beside::of(&dir.path().join("plan.json")),
        corpus_url: None,
        review: ReviewStep::Off,
        could_search: false,
    };
    let planner = Planner {
        llm: LlmClient::new(
            http,
            &settings,
            Role::Planning,
            Arc::new(Negotiator::new(settings.structured_output)),
            &Gates::new(),
        )
        .expect("a model is configured"),
        system_prompt: "You are the planning agent.".into(),
        finalise_prompt: "You are the planning agent: finish.".into(),
        repair_attempts: 0,
        log: LogOptions::default(),
    };
    let engine = Engine::new(run, ScriptedRunner { done }, planner);
    let summary = engine.run().await;
    assert!(summary.failure.is_none(), "{:?}", summary.failure);
    Run {
        dir,
        status: summary.status,
    }
}

/// regression: a task that panicked stayed `running` and was run again after the next round
/// without the planner hearing of it.
#[tokio::test]
async fn a_panicked_task_is_a_failed_task_and_the_planner_is_told() {
    let llm = MockLlm::start().await;
    llm.push(Reply::json(&json!({
        "is_final": true,
        "tasks": [{"title": "Final", "type": "summary", "p_node": "c:summary"}],
        "next_check_list": []
    })));
    let run = run(
        plan_with(&["explode", "fine"]),
        &llm.base_url(),
        Arc::new(Notify::new()),
        Box::pin(std::future::pending()),
    )
    .await;

    assert_eq!(run.status, RunStatus::Completed);
    let b = run.node("b");
    assert_eq!(b["status"], "failed");
    assert_eq!(b["attempts"], 1, "the panicked attempt is counted once");
    let error = b["errors"][0].as_str().expect("an error is recorded");
    assert!(
        error.contains("internal error") && error.contains("scripted panic in task b"),
        "{error}"
    );
    assert_eq!(run.node("c")["status"], "completed");
    let failed = run.events("task_failed");
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["node"], "b");

    let planner = llm.chat_requests();
    assert_eq!(planner.len(), 1, "one planning round, then the final");
    let input = planner[0].user_prompt().unwrap_or_default();
    assert!(
        input.contains("### Failed tasks") && input.contains("- node b: explode"),
        "{input}"
    );
    assert_eq!(run.node("d")["status"], "completed", "the final ran");
}

/// regression: on SIGTERM, results that had finished but were not yet joined were thrown away
/// and paid for again on resume.
#[test]
fn finished_results_are_saved_before_an_interrupted_run_stops() {
    // One thread: the fast task runs to its end in one poll, so its result is finished but not
    // joined when the engine sees the shutdown, which the fast task itself triggered.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let done = Arc::new(Notify::new());
        let signal = Arc::clone(&done);
        let shutdown: Shutdown = Box::pin(async move { signal.notified().await });
        // No planner call may happen: the base URL is a closed port.
        let run = run(
            plan_with(&["fast", "slow"]),
            "http://127.0.0.1:9/v1",
            done,
            shutdown,
        );
        let run = tokio::time::timeout(Duration::from_secs(20), run)
            .await
            .expect("the run stops");

        assert_eq!(run.status, RunStatus::Interrupted);
        let fast = run.node("b");
        assert_eq!(fast["status"], "completed", "{fast:#}");
        assert_eq!(fast["summary"], "summary of fast");
        let slow = run.node("c");
        assert_eq!(slow["status"], "running", "in flight: run again on resume");
        assert_eq!(slow["attempts"], 1);
        assert_eq!(run.events("task_completed").len(), 1);
        let finished = run.events("run_finished");
        assert_eq!(finished.len(), 1);
        assert_eq!(finished[0]["status"], "interrupted");
    });
}
