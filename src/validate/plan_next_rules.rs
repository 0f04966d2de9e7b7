//! The rules of a plan-next answer that weigh one part against another or against outside
//! facts: what each plan type requires (EXECUTE's empty plan and executor call; 3 to 7 plan
//! items free of ordering or guessing words and a success signal otherwise), whether the command
//! names a declared executor, and the context's depth and no-repeat rules. Type errors belong to
//! `plan_next_shape`, whose checks these rules call for the fields a plan type brings in; a rule
//! here must not report one itself, nor read a value of the wrong type as if it were absent.

use serde_json::{Map, Value};

use super::executors::{self, Executors};
use super::json_path;
use super::plan_next_context::PlanNextContext;
use super::plan_next_shape::{PlanType, check_executor_call};
use super::words;
use crate::diagnostics::Diagnostics;

/// What the plan type requires of the plan items and the executor call.
pub(super) fn check_plan_type_rules(
    root: &Map<String, Value>,
    plan_type: Option<PlanType>,
    plan: Option<&[String]>,
    d: &mut Diagnostics,
) {
    match plan_type {
        None => {}
        Some(PlanType::Execute) => check_execute(root, plan, d),
        Some(planning) => check_planning(root, planning, plan, d),
    }
}

fn check_execute(root: &Map<String, Value>, plan: Option<&[String]>, d: &mut Diagnostics) {
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
    match root.get("executor_call") {
        None => {
            d.error(
                "MISSING_EXECUTOR_CALL",
                "executor_call",
                "EXECUTE needs an `executor_call` with `command`, `inputs` and `expected_observations`: add it",
            );
        }
        Some(call) => check_executor_call(call, d),
    }
}

/// PLAN_PROBES and PLAN_STEPS.
fn check_planning(
    root: &Map<String, Value>,
    plan_type: PlanType,
    plan: Option<&[String]>,
    d: &mut Diagnostics,
) {
    if let Some(call) = root.get("executor_call") {
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
        check_plan_words(plan_type, items, d);
    }
    let has_signal = root
        .get("success_signal")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.trim().is_empty());
    // A `success_signal` of another type is the schema's finding; warning too would say it twice.
    if !has_signal && !matches!(root.get("success_signal"), Some(v) if !v.is_string()) {
        d.warn(
            "MISSING_SUCCESS_SIGNAL",
            "success_signal",
            "PLAN_PROBES and PLAN_STEPS should say which signal means the next step can start: add `success_signal`",
        );
    }
}

/// Hypotheses are claims, not a sequence; steps act on what is known, they do not guess.
fn check_plan_words(plan_type: PlanType, items: &[String], d: &mut Diagnostics) {
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

fn command_of(root: &Map<String, Value>) -> Option<&str> {
    root.get("executor_call")
        .and_then(|c| c.get("command"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

pub(super) fn check_command(
    root: &Map<String, Value>,
    executors: Option<&Executors>,
    d: &mut Diagnostics,
) {
    let Some(command) = command_of(root) else {
        return;
    };
    if let Some(argument) = placeholder_argument(command) {
        d.error(
            "PLACEHOLDER_COMMAND",
            "executor_call.command",
            format!(
                "`{argument}` is the usage's placeholder, not an argument: write the real {}",
                argument.trim_matches(['<', '>'])
            ),
        );
    }
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
        // No invented tools; where capabilities are missing, the generic form.
        None => {
            d.error(
                "UNKNOWN_EXECUTOR",
                "executor_call.command",
                format!(
                    "`{}` names a tool, but no executors file declares any (`--executors`, or `.thinkon/executors/executors.yaml` in the working folder): use the generic `shell: <command>`, or declare the tool there",
                    crate::text::truncate(command, 60)
                ),
            );
        }
    }
}

/// The argument of `<id>: <argument>` when it is a usage line's placeholder copied as it is
/// (`search: <query>`, `shell: <command>`): one `<...>` and nothing else. SmolLM2 135M sent
/// `search: <query>`, copied from the executors' usage, and it was searched for.
fn placeholder_argument(command: &str) -> Option<&str> {
    let (_, argument) = command.split_once(':')?;
    let argument = argument.trim();
    let inner = argument.strip_prefix('<')?.strip_suffix('>')?;
    (!inner.contains(['<', '>'])).then_some(argument)
}

/// With a context: the depth limit.
pub(super) fn check_depth(plan_type: Option<PlanType>, ctx: &PlanNextContext, d: &mut Diagnostics) {
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
}

/// With a context: no repeat of a failed attempt.
pub(super) fn check_repeats(
    root: &Map<String, Value>,
    plan_type: Option<PlanType>,
    plan: Option<&[String]>,
    ctx: &PlanNextContext,
    d: &mut Diagnostics,
) {
    let trimmed: Option<Vec<&str>> = plan.map(|p| p.iter().map(|s| s.trim()).collect());
    let command = command_of(root);
    let goal = root.get("new_block").and_then(|b| b.get("goal"));
    // Each part is reported once, naming the first failed attempt it repeats: more findings
    // would say nothing new.
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
