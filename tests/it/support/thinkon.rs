//! A mock model that plays Thinkon's roles: it tells which prompt a request comes from
//! ([`kind`]), reads the planner's Context JSON ([`context`]) and answers the planner with a
//! script ([`scripted`]), the other roles plainly.

use serde_json::{Value, json};

use super::scenario::task_title;
use super::server::Recorded;
use super::{MockLlm, Reply};

/// Which prompt a request comes from.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    Planner,
    Reflect,
    Analysis,
    Summary,
}

pub fn kind(req: &Recorded) -> Kind {
    let system = req.system_prompt().unwrap_or_default();
    if system.contains("规划处理器（Planner）") || system.contains("You are the planner of Thinkon")
    {
        Kind::Planner
    } else if system.contains("reflection step of Thinkon") {
        Kind::Reflect
    } else if system.contains("working on one search task") {
        Kind::Analysis
    } else if system.contains("synthesises the results") {
        Kind::Summary
    } else {
        panic!("unknown prompt: {system}")
    }
}

/// The Context JSON of a planner request (its first user message).
pub fn context(req: &Recorded) -> Value {
    let first = req
        .messages()
        .into_iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str().map(str::to_string))
        .unwrap_or_default();
    let text = first
        .strip_prefix("Context JSON:\n")
        .expect("context prefix");
    serde_json::from_str(text).expect("context is JSON")
}

/// The first remaining plan item of the block being planned, or "" for a fresh root.
pub fn item(ctx: &Value) -> String {
    ctx["think"]["plan"][0]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

pub fn steps(goal: &str, items: &[&str]) -> Value {
    json!({
        "type": "plan-next", "plan_type": "PLAN_STEPS",
        "new_block": {"goal": goal, "plan": items, "done": []},
        "success_signal": "every step has a result"
    })
}

pub fn execute(goal: &str, command: &str) -> Value {
    json!({
        "type": "plan-next", "plan_type": "EXECUTE",
        "new_block": {"goal": goal, "plan": [], "done": []},
        "executor_call": {"command": command, "inputs": {}, "expected_observations": ["an answer"]}
    })
}

/// A mock whose planner answers `planner(context, request)` and whose other prompts answer
/// plainly: analyses name their query, reflections say done.
pub fn scripted(
    llm: &MockLlm,
    planner: impl Fn(&Value, &Recorded) -> Value + Send + Sync + 'static,
) {
    llm.set_handler(move |req| match kind(req) {
        Kind::Planner => Reply::json(&planner(&context(req), req)),
        _ => plain(req),
    });
}

/// The answer of every role but the planner: analyses name their query, reflections say done.
pub fn plain(req: &Recorded) -> Reply {
    match kind(req) {
        Kind::Reflect => Reply::json(&json!({
            "completion": "Done.", "deliverables": "The findings.",
            "metric": "Met.", "constraints": "Kept."
        })),
        Kind::Analysis => Reply::json(&json!({
            "summary": format!("Found for {}", task_title(req)), "analysis": "Details."
        })),
        Kind::Summary => Reply::json(&json!({"summary": "Synthesis.", "analysis": "All of it."})),
        Kind::Planner => panic!("the planner's answer is the script's"),
    }
}

/// A root planned as three steps, each executed with a search.
pub fn three_searches(ctx: &Value, _: &Recorded) -> Value {
    match item(ctx).as_str() {
        "" => steps(
            "Research G",
            &["Collect data", "Compare sources", "Write findings"],
        ),
        step => execute(step, &format!("search: {step}")),
    }
}
