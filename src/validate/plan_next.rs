//! `validate plan-next`: a planner's plan-next answer (Thinkon protocol, seeds 000/001).
//!
//! The answer is checked against seed 000's JSON Schema ([`super::plan_next_schema`], code
//! `SCHEMA`, reported only at paths where, and below which, no semantic rule below already
//! reported an error) and
//! against every semantic rule of the seeds:
//!
//! | code | severity | rule | path |
//! |------|----------|------|------|
//! | `INVALID_JSON` | error | the answer is exactly one JSON object, no text or code fence around it | `` |
//! | `FORBIDDEN_FIELD` | error | no `id`, `new_id`, `current_id`, `path`, `children` key at any depth (even inside `executor_call.inputs`) | the key |
//! | `WRONG_TYPE` | error | `type` is `plan-next` (`plan-return` belongs to the execution phase) | `type` |
//! | `INVALID_PLAN_TYPE` | error | `plan_type` is PLAN_PROBES, PLAN_STEPS or EXECUTE | `plan_type` |
//! | `INVALID_NEW_BLOCK` | error | `new_block` exists and is an object | `new_block` |
//! | `NEW_BLOCK_EXTRA_FIELD` | error | `new_block` holds only `goal`, `plan`, `done` | `new_block.<key>` |
//! | `INVALID_GOAL` | error | goal is a non-empty string or a Core4 object whose intent/deliverable/metric/constraint are non-empty strings | `new_block.goal[.field]` |
//! | `INVALID_PLAN` | error | `plan` is a list of non-empty strings | `new_block.plan[i]` |
//! | `DONE_NOT_EMPTY` | error | `done` is `[]` | `new_block.done` |
//! | `EXECUTE_PLAN_NOT_EMPTY` | error | EXECUTE has `plan: []` | `new_block.plan` |
//! | `MISSING_EXECUTOR_CALL` | error | EXECUTE has an `executor_call` | `executor_call` |
//! | `INVALID_EXECUTOR_CALL` | error | `executor_call` has a non-empty string `command` (and `shell:` is followed by a command), an object `inputs`, a list of strings `expected_observations` | `executor_call.<field>` |
//! | `UNEXPECTED_EXECUTOR_CALL` | warning | PLAN_PROBES / PLAN_STEPS carry no `executor_call` | `executor_call` |
//! | `PLAN_ITEM_COUNT` | error | PLAN_PROBES / PLAN_STEPS have 3 to 7 items | `new_block.plan` |
//! | `MISSING_SUCCESS_SIGNAL` | warning | PLAN_PROBES / PLAN_STEPS have a non-empty `success_signal` | `success_signal` |
//! | `ORDERING_WORD_IN_PROBE` | error | hypotheses hold no ordering word ([`super::words`]) | `new_block.plan[i]` |
//! | `GUESSING_WORD_IN_STEP` | error | steps hold no guessing word | `new_block.plan[i]` |
//! | `UNKNOWN_EXECUTOR` | error | `command` names a declared executor or uses `shell: ...` | `executor_call.command` |
//! | `EXECUTORS_NOT_CHECKED` | warning | without `--executors`, a command other than `shell: ...` cannot be checked | `executor_call.command` |
//! | `INVALID_UPDATE_PLAN` | error | `update_plan`, when present, is a list of strings | `update_plan[i]` |
//! | `DEPTH_REQUIRES_EXECUTE` | error | with a context: `len(path) >= max_depth` requires EXECUTE | `plan_type` |
//! | `DEPTH_NEAR_LIMIT` | warning | with a context: `len(path) >= max_depth - 1` and a PLAN_* type | `plan_type` |
//! | `REPEATS_FAILED_ATTEMPT` | error | with a context: no plan list, command, or (for EXECUTE) goal identical to a failed attempt in `think.done` | `new_block.plan`, `executor_call.command`, `new_block.goal` |
//!
//! Decisions where the seeds are silent: without `--executors`, any non-empty command is
//! accepted with the `EXECUTORS_NOT_CHECKED` warning, and `shell: ...` is always accepted. A
//! string `done` entry that mentions a failure and contains the new command verbatim counts as
//! the same command (see [`super::plan_next_context`] for what a failed attempt is). Plan items
//! and commands are compared after trimming white space. An EXECUTE whose goal equals a failed
//! attempt's goal is a repeat: seed 001 asks for a split into steps instead. This module only
//! checks values; reading files is the command layer's job.

use serde_json::{Map, Value};

use super::describe::{kind, kind_or_missing, require_string_items};
use super::executors::{self, Executors};
use super::json_path;
use super::plan_next_context::PlanNextContext;
use super::plan_next_schema;
use super::words;
use crate::diagnostics::Diagnostics;

/// Keys that control the block tree or file paths and must not appear in an answer.
pub const FORBIDDEN_KEYS: &[&str] = &["id", "new_id", "current_id", "path", "children"];

const CORE4: [&str; 4] = ["intent", "deliverable", "metric", "constraint"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PlanType {
    Probes,
    Steps,
    Execute,
}

/// Checks raw answer text: it must be one JSON object with nothing around it.
pub fn validate_plan_next_text(
    text: &str,
    executors: Option<&Executors>,
    context: Option<&PlanNextContext>,
) -> Diagnostics {
    match serde_json::from_str::<Value>(text) {
        Ok(doc) => validate_plan_next(&doc, executors, context),
        Err(err) => {
            let mut d = Diagnostics::new();
            let hint = if text.trim_start().starts_with("```") {
                "remove the Markdown code fence"
            } else {
                "output exactly one JSON object with no text before or after it"
            };
            d.error(
                "INVALID_JSON",
                "",
                format!("the answer is not one JSON object ({err}): {hint}"),
            );
            d
        }
    }
}

/// Checks a parsed answer.
pub fn validate_plan_next(
    doc: &Value,
    executors: Option<&Executors>,
    context: Option<&PlanNextContext>,
) -> Diagnostics {
    let mut d = Diagnostics::new();
    forbidden_fields(doc, "", &mut d);
    if let Some(root) = doc.as_object() {
        let plan_type = check_type_fields(root, &mut d);
        let plan = check_new_block(root.get("new_block"), &mut d);
        check_plan_type_rules(root, plan_type, plan.as_deref(), &mut d);
        check_command(root, executors, &mut d);
        check_update_plan(root.get("update_plan"), &mut d);
        if let Some(ctx) = context {
            check_context(root, plan_type, plan.as_deref(), ctx, &mut d);
        }
    }
    // A schema error at a path where (or below which) a semantic rule already spoke would only
    // repeat it less clearly. The root is never covered: its schema error is the main one.
    for (path, message) in plan_next_schema::violations(doc) {
        let covered = !path.is_empty()
            && d.errors.iter().any(|f| {
                f.path
                    .strip_prefix(path.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
            });
        if !covered {
            d.error("SCHEMA", path, message);
        }
    }
    d
}

fn forbidden_fields(v: &Value, path: &str, d: &mut Diagnostics) {
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

fn check_type_fields(root: &Map<String, Value>, d: &mut Diagnostics) -> Option<PlanType> {
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
fn check_new_block(block: Option<&Value>, d: &mut Diagnostics) -> Option<Vec<String>> {
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
    match block.get("done") {
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
    let plan = match block.get("plan") {
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

fn check_plan_type_rules(
    root: &Map<String, Value>,
    plan_type: Option<PlanType>,
    plan: Option<&[String]>,
    d: &mut Diagnostics,
) {
    let Some(plan_type) = plan_type else { return };
    let call = root.get("executor_call");
    if plan_type == PlanType::Execute {
        if let Some(items) = plan
            && !items.is_empty()
        {
            d.error(
                "EXECUTE_PLAN_NOT_EMPTY",
                "new_block.plan",
                format!(
                    "EXECUTE has {} plan item(s): set `plan: []` or use PLAN_STEPS",
                    items.len()
                ),
            );
        }
        match call {
            None => {
                d.error(
                    "MISSING_EXECUTOR_CALL",
                    "executor_call",
                    "EXECUTE needs an `executor_call` with `command`, `inputs` and `expected_observations`: add it",
                );
            }
            Some(call) => check_executor_call(call, d),
        }
        return;
    }
    if let Some(call) = call {
        d.warn(
            "UNEXPECTED_EXECUTOR_CALL",
            "executor_call",
            "`executor_call` is only used with EXECUTE: drop it or switch to EXECUTE",
        );
        check_executor_call(call, d);
    }
    if let Some(items) = plan {
        if !(3..=7).contains(&items.len()) {
            d.error(
                "PLAN_ITEM_COUNT",
                "new_block.plan",
                format!("PLAN_PROBES and PLAN_STEPS need 3 to 7 plan items, not `{}`: merge or split items", items.len()),
            );
        }
        for (i, item) in items.iter().enumerate() {
            let path = json_path::index("new_block.plan", i);
            match plan_type {
                PlanType::Probes => {
                    if let Some(w) = words::ordering_word(item) {
                        d.error(
                            "ORDERING_WORD_IN_PROBE",
                            path,
                            format!("hypothesis uses the ordering word `{w}`: state a falsifiable claim, not a sequence"),
                        );
                    }
                }
                PlanType::Steps => {
                    if let Some(w) = words::guessing_word(item) {
                        d.error(
                            "GUESSING_WORD_IN_STEP",
                            path,
                            format!("step uses the guessing word `{w}`: steps must not guess (use PLAN_PROBES to gather evidence first)"),
                        );
                    }
                }
                PlanType::Execute => {}
            }
        }
    }
    let has_signal = root
        .get("success_signal")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty());
    if !has_signal && !matches!(root.get("success_signal"), Some(v) if !v.is_string()) {
        d.warn(
            "MISSING_SUCCESS_SIGNAL",
            "success_signal",
            "PLAN_PROBES and PLAN_STEPS should say which signal means the next step can start: add `success_signal`",
        );
    }
}

fn check_executor_call(call: &Value, d: &mut Diagnostics) {
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

fn command_of(root: &Map<String, Value>) -> Option<&str> {
    root.get("executor_call")
        .and_then(|c| c.get("command"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

fn check_command(root: &Map<String, Value>, executors: Option<&Executors>, d: &mut Diagnostics) {
    let Some(command) = command_of(root) else {
        return;
    };
    if executors::shell_command(command).is_some() {
        return;
    }
    match executors {
        Some(set) if set.matching(command).is_none() => {
            d.error(
                "UNKNOWN_EXECUTOR",
                "executor_call.command",
                format!(
                    "`{}` names no declared executor: use one of [{}] or the generic `shell: <command>`",
                    crate::text::truncate(command, 60),
                    set.ids().join(", ")
                ),
            );
        }
        Some(_) => {}
        None => {
            d.warn(
                "EXECUTORS_NOT_CHECKED",
                "executor_call.command",
                format!(
                    "`{}` was not checked against executors.yaml: pass `--executors` to check it",
                    crate::text::truncate(command, 60)
                ),
            );
        }
    }
}

fn check_update_plan(update: Option<&Value>, d: &mut Diagnostics) {
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

fn check_context(
    root: &Map<String, Value>,
    plan_type: Option<PlanType>,
    plan: Option<&[String]>,
    ctx: &PlanNextContext,
    d: &mut Diagnostics,
) {
    if let (Some(max), Some(pt)) = (ctx.max_depth, plan_type) {
        let depth = ctx.depth as u64;
        if depth >= max && pt != PlanType::Execute {
            d.error(
                "DEPTH_REQUIRES_EXECUTE",
                "plan_type",
                format!(
                    "depth `{depth}` reached max_depth `{max}`: answer with EXECUTE and `plan: []`"
                ),
            );
        } else if depth + 1 >= max && pt != PlanType::Execute {
            d.warn(
                "DEPTH_NEAR_LIMIT",
                "plan_type",
                format!("depth `{depth}` is one below max_depth `{max}`: prefer EXECUTE over further splitting"),
            );
        }
    }
    let trimmed: Option<Vec<&str>> = plan.map(|p| p.iter().map(|s| s.trim()).collect());
    let command = command_of(root);
    let goal = root.get("new_block").and_then(|b| b.get("goal"));
    let (mut plan_done, mut command_done, mut goal_done) = (false, false, false);
    for failed in &ctx.failed {
        if !plan_done
            && let (Some(new), Some(old)) = (&trimmed, &failed.plan)
            && !new.is_empty()
            && new.iter().copied().eq(old.iter().map(String::as_str))
        {
            plan_done = true;
            d.error(
                "REPEATS_FAILED_ATTEMPT",
                "new_block.plan",
                format!("this plan repeats the failed attempt `think.done[{}]`: split it finer or try new hypotheses", failed.index),
            );
        }
        if !command_done && let Some(c) = command {
            let same = failed.command.as_deref() == Some(c)
                || failed.text.as_deref().is_some_and(|t| t.contains(c));
            if same {
                command_done = true;
                d.error(
                    "REPEATS_FAILED_ATTEMPT",
                    "executor_call.command",
                    format!("command `{}` already failed (`think.done[{}]`): change the command or split the goal into steps", crate::text::truncate(c, 60), failed.index),
                );
            }
        }
        if !goal_done
            && plan_type == Some(PlanType::Execute)
            && let (Some(new), Some(old)) = (goal, &failed.goal)
            && same_goal(new, old)
        {
            goal_done = true;
            d.error(
                "REPEATS_FAILED_ATTEMPT",
                "new_block.goal",
                format!("executing the goal of the failed attempt `think.done[{}]` again: split it into PLAN_STEPS or gather evidence with PLAN_PROBES", failed.index),
            );
        }
    }
}

fn same_goal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.trim() == b.trim(),
        _ => a == b,
    }
}
