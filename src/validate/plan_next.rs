//! `validate plan-next`: a planner's plan-next answer (docs/SPEC.md, "Plan-next answers
//! (Thinkon)").
//!
//! The answer is checked against its JSON Schema ([`super::plan_next_schema`], code
//! `SCHEMA`, reported only at paths where, and below which, no semantic rule below already
//! reported an error) and
//! against every semantic rule of the contract:
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
//! | `PLACEHOLDER_COMMAND` | error | the command's argument is not a usage placeholder copied as it is (`search: <query>`, `shell: <command>`) | `executor_call.command` |
//! | `UNKNOWN_EXECUTOR` | error | `command` names a declared executor or uses `shell: ...`; with no executors file at all, only `shell: ...` | `executor_call.command` |
//! | `INVALID_UPDATE_PLAN` | error | `update_plan`, when present, is a list of strings | `update_plan[i]` |
//! | `DEPTH_REQUIRES_EXECUTE` | error | with a context: `len(path) >= max_depth` requires EXECUTE | `plan_type` |
//! | `DEPTH_NEAR_LIMIT` | warning | with a context: `len(path) >= max_depth - 1` and a PLAN_* type | `plan_type` |
//! | `REPEATS_FAILED_ATTEMPT` | error | with a context: no plan list, command, or (for EXECUTE) goal identical to a failed attempt in `think.done` | `new_block.plan`, `executor_call.command`, `new_block.goal` |
//!
//! Decisions where the contract is silent: `shell: ...` is always accepted; without any
//! executors file (the command layer reads `.thinkon/executors/executors.yaml` of the working
//! folder when `--executors` is not given), it is the only valid form (no invented tools, the
//! generic form where capabilities are missing). A string `done` entry that mentions a failure
//! and contains the new command verbatim counts as the same command (see
//! [`super::plan_next_context`] for what a failed attempt is). Plan items and commands are
//! compared after trimming white space. An EXECUTE whose goal equals a failed attempt's goal is
//! a repeat: the planner is to split it into steps instead.
//!
//! This file runs the checks and merges the schema's findings; the checks themselves are in
//! `plan_next_shape` (one field at a time) and `plan_next_rules` (what the plan type, the
//! executors and the context require). It only checks values; reading files is the command
//! layer's job.

use serde_json::Value;

use super::answer::parse_answer;
use super::executors::Executors;
use super::plan_next_context::PlanNextContext;
use super::plan_next_rules::{check_command, check_depth, check_plan_type_rules, check_repeats};
use super::plan_next_schema;
use super::plan_next_shape::{
    check_new_block, check_type_fields, check_update_plan, forbidden_fields,
};
use crate::diagnostics::Diagnostics;

pub use super::plan_next_shape::FORBIDDEN_KEYS;

/// Checks raw answer text: it must be one JSON object with nothing around it.
pub fn validate_plan_next_text(
    text: &str,
    executors: Option<&Executors>,
    context: Option<&PlanNextContext>,
) -> Diagnostics {
    match parse_answer(text) {
        Ok(doc) => validate_plan_next(&doc, executors, context),
        Err(d) => d,
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
            check_depth(plan_type, ctx, &mut d);
            check_repeats(root, plan_type, plan.as_deref(), ctx, &mut d);
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
