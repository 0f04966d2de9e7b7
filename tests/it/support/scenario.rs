//! Whole-workflow scenarios shared by the test modules: which agent a mock LLM request
//! comes from, scripted planners, and a temporary folder with a config pointing at the mocks.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::{MockLlm, MockSearch, Recorded, Reply, SearchKind, researchflow};

pub const KEY: &str = "sk-test-SECRET-7777";
pub const SEARCH_KEY: &str = "search-SECRET-8888";

/// Which agent a request comes from, told by its system prompt.
#[derive(Debug, PartialEq, Eq)]
pub enum Agent {
    Planner,
    Queries,
    Analysis,
    Summary,
    Final,
    Review,
    SecondOpinion,
    Verifier,
}

pub fn agent(req: &Recorded) -> Agent {
    let system = req.system_prompt().unwrap_or_default();
    if system.contains("You are the reviewer of a research report") {
        Agent::Review
    } else if system.contains("You give a second opinion on a research report") {
        Agent::SecondOpinion
    } else if system.contains("planning agent") {
        Agent::Planner
    } else if system.contains("web search queries") {
        Agent::Queries
    } else if system.contains("working on one search task") {
        Agent::Analysis
    } else if system.contains("synthesises the results") {
        Agent::Summary
    } else if system.contains("You check claims against their sources") {
        Agent::Verifier
    } else if system.contains("final report") {
        Agent::Final
    } else {
        panic!("unknown agent for system prompt: {system}")
    }
}

/// The chat requests `who` made, in order.
pub fn requests_of(llm: &MockLlm, who: Agent) -> Vec<Recorded> {
    llm.chat_requests()
        .into_iter()
        .filter(|r| agent(r) == who)
        .collect()
}

/// The task title in a sub-agent's user prompt.
pub fn task_title(req: &Recorded) -> String {
    req.user_prompt()
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("Task: ").map(str::to_string))
        .unwrap_or_default()
}

pub fn plan_answer(is_final: bool, tasks: Value, next: Value) -> Value {
    json!({"is_final": is_final, "tasks": tasks, "next_check_list": next})
}

/// A planner round of one search over the question (`a:info`) for each of `titles`, with
/// the summary of each new node to check next.
pub fn searches_round(titles: &[impl AsRef<str>]) -> Value {
    let tasks: Vec<Value> = titles
        .iter()
        .map(|t| json!({"title": t.as_ref(), "type": "search", "p_node": "a:info"}))
        .collect();
    let next: Vec<String> = (1..=titles.len())
        .map(|i| format!("NEW{i}:summary"))
        .collect();
    plan_answer(false, json!(tasks), json!(next))
}

/// The last planner round: the final summary, titled `Final`, over `refs`.
pub fn final_over(refs: &str) -> Value {
    plan_answer(
        true,
        json!([{"title": "Final", "type": "summary", "p_node": refs}]),
        json!([]),
    )
}

/// A mock LLM whose planner answers come from `rounds` (in order; the last one repeats) and
/// whose sub-agents answer from the task title; the review's roles answer within their
/// contracts (verdict `ok`).
pub fn scripted(llm: &MockLlm, rounds: Vec<Value>) -> Arc<AtomicUsize> {
    scripted_reviewed(
        llm,
        rounds,
        |_| Reply::json(&review_answer()),
        |_| Reply::json(&second_opinion_answer("ok")),
    )
}

/// [`scripted`], with the review's two roles answered by `review` and `second_opinion`.
pub fn scripted_reviewed(
    llm: &MockLlm,
    rounds: Vec<Value>,
    review: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    second_opinion: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
) -> Arc<AtomicUsize> {
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            Reply::json(&rounds[n.min(rounds.len() - 1)])
        }
        Agent::Queries | Agent::Analysis | Agent::Summary => from_title(req),
        Agent::Final => Reply::content(&format!(
            "{} An invented source [99] must go.\n\n## Details\nText.",
            backed_report(req)
        )),
        Agent::Review => review(req),
        Agent::SecondOpinion => second_opinion(req),
        // Asked only when `roles.verifier` is configured: it finds nothing to change.
        Agent::Verifier => Reply::content("{\"verdicts\": []}"),
    });
    calls
}

/// A final report its sources back, as a model that reads them writes it: one sentence for
/// each of the first three sources the final summary's prompt numbers (`[n] title — url`),
/// restating its title and citing it, so the claim check finds every cited word in the source
/// cited. `Report written.` when the prompt numbers no source.
pub fn backed_report(req: &Recorded) -> String {
    let prompt = req.user_prompt().unwrap_or_default();
    let list = prompt
        .split_once("\nNumbered sources:\n")
        .map_or("", |(_, list)| list);
    let said: Vec<String> = list
        .lines()
        .filter_map(|line| {
            let (n, rest) = line.strip_prefix('[')?.split_once("] ")?;
            let n: usize = n.parse().ok()?;
            // A title may hold a dash itself; the URL after the last one does not.
            let (title, _url) = rest.rsplit_once(" — ")?;
            Some(format!("{} [{n}].", title.trim_end_matches(['.', ' '])))
        })
        .take(3)
        .collect();
    match said.is_empty() {
        true => "Report written.".into(),
        false => said.join(" "),
    }
}

/// What a search task's sub-agents answer from its title: a query, or a summary and an
/// analysis citing `[1]`.
pub fn from_title(req: &Recorded) -> Reply {
    let title = task_title(req);
    if agent(req) == Agent::Queries {
        return Reply::json(&json!({"queries": [format!("q {title}")]}));
    }
    Reply::json(&json!({
        "summary": format!("Summary of {title}"),
        "analysis": format!("Analysis of {title} citing [1]"),
    }))
}

/// A review answer within its contract: the report holds, with one risk and one suggestion.
pub fn review_answer() -> Value {
    json!({
        "ok": true,
        "summary": "The report answers the question from its sources.",
        "risks": ["Source [2] is a vendor page"],
        "gaps": [],
        "suggestions": ["Add an independent survey"]
    })
}

/// A second opinion within its contract with `verdict` (`ok` is false only for `block`).
pub fn second_opinion_answer(verdict: &str) -> Value {
    json!({"ok": verdict != "block", "verdict": verdict, "notes": format!("Verdict {verdict}: reasons.")})
}

pub struct Setup {
    pub dir: tempfile::TempDir,
}

impl Setup {
    pub fn new(llm: &MockLlm, search: Option<&MockSearch>) -> Setup {
        Setup::with_config(llm, search, json!({}))
    }

    /// Like [`Setup::new`], with the top-level keys of `extra` added to (or replacing those
    /// of) the config.
    pub fn with_config(llm: &MockLlm, search: Option<&MockSearch>, extra: Value) -> Setup {
        let dir = tempfile::tempdir().expect("tempdir");
        let search_cfg = match search {
            Some(s) => json!({
                "provider": match s.kind() {
                    SearchKind::Searxng => "searxng",
                    SearchKind::Tavily => "tavily",
                    SearchKind::Brave => "brave",
                },
                "baseURL": s.base_url(),
                "apiKey": SEARCH_KEY,
                "maxResults": 3,
                // Off unless a test turns it on (`read.rs`): the mock's result URLs lead nowhere.
                "read": {"pages": 0}
            }),
            None => json!({"provider": "none"}),
        };
        let mut config = json!({
            "baseURL": llm.base_url(),
            "model": "test-model",
            "apiKey": KEY,
            "timeouts": {"llmMs": 3000, "searchMs": 3000},
            "retry": {"maxRetries": 3, "baseDelayMs": 10, "maxDelayMs": 40, "maxRetryAfterMs": 1000},
            "search": search_cfg,
            // Off unless a test turns it on: the tests that count requests count research.
            "review": {"enabled": false}
        });
        if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
            config.extend(extra.clone());
        }
        std::fs::write(dir.path().join("agent.config.json"), config.to_string()).expect("config");
        Setup { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn out(&self) -> PathBuf {
        self.path().join("out/plan.json")
    }

    /// `researchflow`, run in the setup's folder.
    pub fn cmd(&self) -> super::bin::Cmd {
        researchflow().current_dir(self.path())
    }

    pub fn query(&self, q: &str) -> super::bin::Cmd {
        self.cmd()
            .args(["workflow", "--query", q, "--out"])
            .arg(self.out())
    }

    /// `workflow --plan PATH`, run in the setup's folder.
    pub async fn resume(&self, plan: &Path) -> super::bin::RunOutput {
        self.cmd()
            .args(["workflow", "--plan"])
            .arg(plan)
            .run()
            .await
    }

    /// `workflow --replay` of the run's transcript (`out/plan.transcript.jsonl`) into
    /// `replay.json`, with every server it asked gone or not.
    pub async fn replay(&self) -> super::bin::RunOutput {
        self.cmd()
            .args(["workflow", "--replay", "out/plan.transcript.jsonl"])
            .args(["--out", "replay.json"])
            .run()
            .await
    }

    pub fn plan(&self) -> Value {
        read_json(&self.out())
    }

    pub fn events(&self) -> Vec<Value> {
        read_ndjson(&self.path().join("out/plan.events.ndjson"))
    }

    pub fn report(&self) -> String {
        std::fs::read_to_string(self.path().join("out/plan.report.md")).expect("report file")
    }
}

/// The lines of an NDJSON file (an event log, a transcript), each parsed.
pub fn read_ndjson(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read `{}`: {e}", path.display()))
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// The text of a plan's final report (its node of batch -1).
pub fn final_report(plan: &Value) -> String {
    plan["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["batch"] == -1))
        .and_then(|n| n["summary"].as_str())
        .expect("a final summary")
        .to_string()
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("read")).expect("json")
}

pub fn node<'a>(plan: &'a Value, id: &str) -> &'a Value {
    plan["nodes"]
        .as_array()
        .and_then(|nodes| nodes.iter().find(|n| n["node_id"] == id))
        .unwrap_or_else(|| panic!("no node {id} in {plan:#}"))
}

/// The titles of a plan's nodes, in order.
pub fn titles(plan: &Value) -> Vec<&str> {
    plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter_map(|n| n["title"].as_str())
        .collect()
}

pub fn events_of<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == kind).collect()
}

/// What a planner that keeps no state answers, so that it serves any number of runs at once:
/// while the input holds no node `b`, a round of searches titled `titles` on the question;
/// then the final summary over `b`.
pub fn searches_then_final(req: &Recorded, titles: &[impl AsRef<str>]) -> Value {
    if req.user_prompt().unwrap_or_default().contains("### b:") {
        return final_over("b:summary");
    }
    let tasks: Vec<Value> = titles
        .iter()
        .map(|t| json!({"title": t.as_ref(), "type": "search", "p_node": "a:info"}))
        .collect();
    plan_answer(false, json!(tasks), json!(["NEW1:summary"]))
}

/// What a planner that keeps no state answers, so that one mock serves any number of runs at
/// once: `searches` searches titled `Search 0`, `Search 1`, ... ([`searches_then_final`]),
/// the final report `Report written.`, and `{"summary": summary, "analysis": "A"}` from every other
/// agent.
pub fn stateless_answer(req: &Recorded, searches: usize, summary: &str) -> Reply {
    match agent(req) {
        Agent::Planner => {
            let titles: Vec<String> = (0..searches).map(|i| format!("Search {i}")).collect();
            Reply::json(&searches_then_final(req, &titles))
        }
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": summary, "analysis": "A"})),
    }
}

/// A mock LLM that answers every request with [`stateless_answer`].
pub fn stateless(llm: &MockLlm, searches: usize, summary: &'static str) {
    llm.set_handler(move |req| stateless_answer(req, searches, summary));
}

/// Round 1: one search `b`; round 2: the final summary over it.
pub fn one_search_then_final() -> Vec<Value> {
    vec![searches_round(&["Only search"]), final_over("b:summary")]
}

/// The fields of a node a replay must reproduce.
pub fn essence(plan: &Value) -> Vec<Value> {
    plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| {
            json!({
                "node_id": n["node_id"], "title": n["title"], "summary": n["summary"],
                "info": n["info"], "p_node": n["p_node"], "batch": n["batch"],
                "type": n["type"], "status": n["status"], "sources": n["sources"],
            })
        })
        .collect()
}
