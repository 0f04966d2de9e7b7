//! The shape of a plan-next answer, whatever its plan type: the structural keys it must not
//! hold, `type` and `plan_type`, `new_block` (goal, plan, done), `executor_call` and
//! `update_plan`. Each check here looks at one field and reports what is wrong with it, so that a
//! type error is said once, by the field it belongs to. It must not weigh one field against
//! another, nor read the executors or the context: those rules live in `plan_next_rules`.

use serde_json::{Map, Value};

use super::describe::{kind, kind_or_missing, require_string_items};
use super::executors;
use super::json_path;
use crate::diagnostics::Diagnostics;

/// Keys that control the block tree or file paths and must not appear in an answer.
pub const FORBIDDEN_KEYS: &[&str] = &["id", "new_id", "current_id", "path", "children"];

const CORE4: [&str; 4] = ["intent", "deliverable", "metric", "constraint"];

/// A `plan_type` the protocol knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PlanType {
    Probes,
    Steps,
    Execute,
}

pub(super) fn forbidden_fields(v: &Value, path: &str, d: &mut Diagnostics) {
    match v {
        Value::Object(map) => {
            for (k, child) in map {
                let p = json_path::key(path, k);
                if FORBIDDEN_KEYS.contains(&k.as_str()) {
                    d.error(
                        "FORBIDDEN_FIELD",
                        p.clone(),
                        format!("structural field `{k}` must not appear in a plan-next answer: remove it (the runtime assigns ids and paths)"),
                    );
                }
                forbidden_fields(child, &p, d);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                forbidden_fields(item, &json_path::index(path, i), d);
            }
        }
        _ => {}
    }
}

pub(super) fn check_type_fields(
    root: &Map<String, Value>,
    d: &mut Diagnostics,
) -> Option<PlanType> {
    match root.get("type") {
        Some(Value::String(t)) if t == "plan-next" => {}
        Some(Value::String(t)) if t == "plan-return" => {
            d.error(
                "WRONG_TYPE",
                "type",
                "`plan-return` is only accepted in the execution phase: answer with `type: plan-next`",
            );
        }
        None => {
            d.error(
                "WRONG_TYPE",
                "type",
                "`type` is missing: set it to `plan-next`",
            );
        }
        Some(other) => {
            d.error(
                "WRONG_TYPE",
                "type",
                format!("`type` is {}: set it to `plan-next`", kind(other)),
            );
        }
    }
    match root.get("plan_type").and_then(Value::as_str) {
        Some("PLAN_PROBES") => Some(PlanType::Probes),
        Some("PLAN_STEPS") => Some(PlanType::Steps),
        Some("EXECUTE") => Some(PlanType::Execute),
        _ => {
            let what = kind_or_missing(root.get("plan_type"));
            d.error(
                "INVALID_PLAN_TYPE",
                "plan_type",
                format!("`plan_type` is {what}: use `PLAN_PROBES`, `PLAN_STEPS` or `EXECUTE`"),
            );
            None
        }
    }
}

/// Checks `new_block`; returns its plan items when `plan` is a list of strings.
pub(super) fn check_new_block(block: Option<&Value>, d: &mut Diagnostics) -> Option<Vec<String>> {
    let block = match block {
        Some(Value::Object(b)) => b,
        other => {
            let what = kind_or_missing(other);
            d.error(
                "INVALID_NEW_BLOCK",
                "new_block",
                format!("`new_block` is {what}: write an object with `goal`, `plan` and `done`"),
            );
            return None;
        }
    };
    for key in block.keys() {
        if !matches!(key.as_str(), "goal" | "plan" | "done")
            && !FORBIDDEN_KEYS.contains(&key.as_str())
        {
            d.error(
                "NEW_BLOCK_EXTRA_FIELD",
                json_path::key("new_block", key),
                format!(
                    "`new_block` may hold only `goal`, `plan` and `done`, not `{key}`: remove it"
                ),
            );
        }
    }
    check_goal(block.get("goal"), d);
    check_done(block.get("done"), d);
    check_plan(block.get("plan"), d)
}

fn check_done(done: Option<&Value>, d: &mut Diagnostics) {
    match done {
        Some(Value::Array(items)) if items.is_empty() => {}
        other => {
            let what = match other {
                Some(Value::Array(items)) => format!("a list of {} entries", items.len()),
                other => kind_or_missing(other),
            };
            d.error(
                "DONE_NOT_EMPTY",
                "new_block.done",
                format!("`done` is {what}: a new block starts with `done: []`"),
            );
        }
    }
}

/// The plan items when every one is a string (an empty one is reported but left out).
fn check_plan(plan: Option<&Value>, d: &mut Diagnostics) -> Option<Vec<String>> {
    let plan = match plan {
        Some(Value::Array(items)) => items,
        other => {
            let what = kind_or_missing(other);
            d.error(
                "INVALID_PLAN",
                "new_block.plan",
                format!("`plan` is {what}: write a list of strings (`[]` for EXECUTE)"),
            );
            return None;
        }
    };
    let mut strings = Vec::with_capacity(plan.len());
    let mut all_strings = true;
    for (i, item) in plan.iter().enumerate() {
        let path = json_path::index("new_block.plan", i);
        match item {
            Value::String(s) if s.trim().is_empty() => {
                d.error(
                    "INVALID_PLAN",
                    path,
                    "plan item is empty: write what it is about",
                );
            }
            Value::String(s) => strings.push(s.clone()),
            other => {
                all_strings = false;
                d.error(
                    "INVALID_PLAN",
                    path,
                    format!("plan item is {}: write a string", kind(other)),
                );
            }
        }
    }
    all_strings.then_some(strings)
}

fn check_goal(goal: Option<&Value>, d: &mut Diagnostics) {
    const PATH: &str = "new_block.goal";
    match goal {
        Some(Value::String(s)) if !s.trim().is_empty() => {}
        Some(Value::String(_)) => {
            d.error(
                "INVALID_GOAL",
                PATH,
                "`goal` is empty: state the goal or write a Core4 object",
            );
        }
        Some(Value::Object(o)) => {
            for field in CORE4 {
                let path = json_path::key(PATH, field);
                match o.get(field) {
                    Some(Value::String(s)) if !s.trim().is_empty() => {}
                    Some(Value::String(_)) => {
                        d.error(
                            "INVALID_GOAL",
                            path,
                            format!("Core4 `{field}` is empty: fill it in"),
                        );
                    }
                    None => {
                        d.error(
                            "INVALID_GOAL",
                            path,
                            format!("Core4 goal lacks `{field}`: a Core4 goal has intent, deliverable, metric and constraint"),
                        );
                    }
                    Some(other) => {
                        d.error(
                            "INVALID_GOAL",
                            path,
                            format!("Core4 `{field}` is {}: write a string", kind(other)),
                        );
                    }
                }
            }
        }
        other => {
            let what = kind_or_missing(other);
            d.error(
                "INVALID_GOAL",
                PATH,
                format!("`goal` is {what}: write a non-empty string or a Core4 object"),
            );
        }
    }
}

pub(super) fn check_executor_call(call: &Value, d: &mut Diagnostics) {
    let Some(call) = call.as_object() else {
        d.error(
            "INVALID_EXECUTOR_CALL",
            "executor_call",
            format!("`executor_call` is {}: write an object with `command`, `inputs` and `expected_observations`", kind(call)),
        );
        return;
    };
    match call.get("command") {
        Some(Value::String(c)) if executors::shell_command(c) == Some("") => {
            d.error(
                "INVALID_EXECUTOR_CALL",
                "executor_call.command",
                "`shell:` is followed by no command: write `shell: <command>`",
            );
        }
        Some(Value::String(c)) if !c.trim().is_empty() => {}
        other => {
            let what = kind_or_missing(other);
            d.error(
                "INVALID_EXECUTOR_CALL",
                "executor_call.command",
                format!(
                    "`command` is {what}: name a declared executor or write `shell: <command>`"
                ),
            );
        }
    }
    if !matches!(call.get("inputs"), Some(Value::Object(_))) {
        let what = kind_or_missing(call.get("inputs"));
        d.error(
            "INVALID_EXECUTOR_CALL",
            "executor_call.inputs",
            format!("`inputs` is {what}: write an object (`{{}}` when there is none)"),
        );
    }
    match call.get("expected_observations") {
        Some(Value::Array(items)) => require_string_items(
            items,
            "executor_call.expected_observations",
            "INVALID_EXECUTOR_CALL",
            "observation",
            d,
        ),
        other => {
            let what = kind_or_missing(other);
            d.error(
                "INVALID_EXECUTOR_CALL",
                "executor_call.expected_observations",
                format!("`expected_observations` is {what}: list what should be observed (exit code, files, log lines)"),
            );
        }
    }
}

pub(super) fn check_update_plan(update: Option<&Value>, d: &mut Diagnostics) {
    match update {
        None => {}
        Some(Value::Array(items)) => require_string_items(
            items,
            "update_plan",
            "INVALID_UPDATE_PLAN",
            "`update_plan` item",
            d,
        ),
        Some(other) => {
            d.error(
                "INVALID_UPDATE_PLAN",
                "update_plan",
                format!(
                    "`update_plan` is {}: write the full new plan as a list of strings, or omit it",
                    kind(other)
                ),
            );
        }
    }
}
