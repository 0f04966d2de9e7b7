//! One plan-next call: the planner prompt (`thinkon.planner.md`) and the Context JSON, the
//! answer asked for as structured output ([`super::schema::PLAN_NEXT_SCHEMA`]), and the answer
//! checked by the same logic as `validate plan-next` with the context and the executors (depth
//! rules, no repeat of a failed attempt, declared executors only). On a violation the findings
//! are sent back (`planner.repairAttempts` times, through [`crate::llm::checked`] as the
//! workflow's planner does); then the call fails. Each repair is a `planner_repair` event.
//!
//! The answer may be wrapped in `<think>` blocks or a code fence: the JSON object is taken out
//! ([`crate::llm::extract_json`]) before the check. A `null` optional field is an absent one
//! ([`super::schema::drop_nulls`]).

use serde_json::Value;

use super::answer::PlanNext;
use super::context::rules_of;
use super::schema::{PLAN_NEXT_SCHEMA, drop_nulls};
use crate::diagnostics::{Diagnostics, Finding};
use crate::events::{Event, Observer};
use crate::llm::checked::{Checked, CheckedError, Contract, ask_checked};
use crate::llm::{LlmClient, LlmError, Message, Want};
use crate::settings::Prompt;
use crate::transcript::Site;
use crate::usage::Usage;
use crate::validate::{Executors, PlanNextContext, validate_plan_next};

/// Token limit of a plan-next answer, unless the planning role sets `maxTokens`.
pub const PLAN_NEXT_MAX_TOKENS: u32 = Prompt::ThinkonPlanner.max_tokens();

// `--compact-prompt`'s planner prompt is asked with the same limit.
const _: () = assert!(Prompt::ThinkonPlannerCompact.max_tokens() == PLAN_NEXT_MAX_TOKENS);

/// What the LLM calls of a run cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    pub calls: u32,
    pub usage: Usage,
}

impl Spent {
    pub fn add(&mut self, usage: Usage) {
        self.add_calls(1, usage);
    }

    /// `calls` calls that cost `usage` together.
    pub fn add_calls(&mut self, calls: u32, usage: Usage) {
        self.calls += calls;
        self.usage.add(usage);
    }

    /// Counts what an [`ask_checked`] cost, whatever its outcome, and hands the outcome on.
    pub fn count<T>(&mut self, asked: Result<Checked<T>, CheckedError>) -> Result<T, CheckedError> {
        let (calls, usage) = match &asked {
            Ok(checked) => (checked.calls, checked.usage),
            Err(CheckedError::Llm { calls, usage, .. }) => (*calls, *usage),
            Err(CheckedError::Contract {
                attempts, usage, ..
            }) => (*attempts, *usage),
        };
        self.add_calls(calls, usage);
        asked.map(|checked| checked.answer)
    }
}

/// Asks the planner for a block's next step.
pub struct BlockPlanner<'a> {
    pub llm: &'a LlmClient,
    pub system_prompt: &'a str,
    pub executors: &'a Executors,
    pub repair_attempts: u32,
}

/// A valid answer and the warnings the check left.
#[derive(Debug, Clone)]
pub struct Planned {
    pub answer: PlanNext,
    pub warnings: Vec<Finding>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the planner call failed: {0}")]
    Llm(#[from] LlmError),
    #[error("the planner's answer broke the plan-next protocol after {attempts} attempt(s):\n{}", .diagnostics.to_text().trim_end())]
    Contract {
        diagnostics: Diagnostics,
        attempts: u32,
    },
}

impl From<CheckedError> for PlanError {
    fn from(e: CheckedError) -> Self {
        match e {
            CheckedError::Llm { error, .. } => PlanError::Llm(error),
            CheckedError::Contract {
                diagnostics,
                attempts,
                ..
            } => PlanError::Contract {
                diagnostics,
                attempts,
            },
        }
    }
}

impl BlockPlanner<'_> {
    /// Asks for the next step under `context`; every call's cost goes into `spent`.
    pub async fn plan(
        &self,
        site: &Site,
        context: &Value,
        spent: &mut Spent,
        observer: &Observer<'_>,
    ) -> Result<Planned, PlanError> {
        let rules = rules_of(context);
        let text = serde_json::to_string_pretty(context).unwrap_or_else(|_| context.to_string());
        let messages = vec![
            Message::system(self.system_prompt),
            Message::user(format!("Context JSON:\n{text}")),
        ];
        let check = |value: &Value| self.judge(value, &rules, &text);
        let on_repair = |d: &Diagnostics| {
            let codes: Vec<&str> = d.errors.iter().map(|f| f.code.as_str()).collect();
            observer.emit(Event::PlannerRepair {
                node: observer.node().to_string(),
                errors: codes.iter().map(ToString::to_string).collect(),
            });
        };
        let contract = Contract {
            who: "thinkon",
            check: &check,
            shape: ANSWER_SHAPE,
            repair_attempts: self.repair_attempts,
            on_repair: Some(&on_repair),
        };
        let want = Want::Json(&PLAN_NEXT_SCHEMA);
        let asked = ask_checked(messages, &contract, |messages| async move {
            self.llm
                .chat(site, &messages, want, PLAN_NEXT_MAX_TOKENS, observer)
                .await
        })
        .await;
        Ok(spent.count(asked)?)
    }

    /// The answer if the validator accepts it (the JSON object already taken out of the
    /// model's text, an answer cut off at the token limit already refused).
    fn judge(
        &self,
        value: &Value,
        rules: &PlanNextContext,
        context: &str,
    ) -> Result<Planned, Diagnostics> {
        let mut value = value.clone();
        drop_nulls(&mut value);
        let found = validate_plan_next(&value, Some(self.executors), Some(rules));
        if !found.is_valid() {
            return Err(found);
        }
        let (copied, written) = copied_from_prompt(&value, self.system_prompt, context);
        if is_a_copy(copied.len(), written) {
            let mut d = Diagnostics::new();
            for (path, text) in copied {
                d.error(
                    "COPIED_FROM_PROMPT",
                    path,
                    format!(
                        "`{}` is the prompt's example, not this block's: plan for the goal in the Context JSON",
                        crate::text::one_line(&text, 80)
                    ),
                );
            }
            return Err(d);
        }
        let Some(answer) = PlanNext::read(&value) else {
            let mut d = Diagnostics::new();
            d.error("SCHEMA", "", "the answer does not have the plan-next shape");
            return Err(d);
        };
        Ok(Planned {
            answer,
            warnings: found.warnings,
        })
    }
}

/// Strings of an answer copied from the prompt's examples from which the answer is refused, when
/// they are also at least half of what it wrote: one may be a coincidence, and a long plan may
/// share a generic step or two with a user's own examples.
const COPIED_AT_LEAST: usize = 2;

/// Whether `copied` strings of the `written` ones make the answer a copy of the prompt.
fn is_a_copy(copied: usize, written: usize) -> bool {
    copied >= COPIED_AT_LEAST && copied * 2 >= written
}

/// The goal, plan items and command of `answer` (with their paths) that the prompt holds as
/// whole JSON strings and the context does not: what a small model copies from the prompt's
/// examples instead of planning (Gemma 3 270M answered the prompt's example A, word for word,
/// whatever the goal); and how many strings of 4 characters or more it wrote (shorter ones are
/// never counted).
pub fn copied_from_prompt(
    answer: &Value,
    prompt: &str,
    context: &str,
) -> (Vec<(String, String)>, usize) {
    let mut texts: Vec<(String, &str)> = Vec::new();
    let block = answer.get("new_block");
    match block.and_then(|b| b.get("goal")) {
        Some(Value::String(goal)) => texts.push(("new_block.goal".into(), goal)),
        Some(Value::Object(goal)) => texts.extend(
            goal.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (format!("new_block.goal.{k}"), s))),
        ),
        _ => {}
    }
    if let Some(plan) = block.and_then(|b| b.get("plan")).and_then(Value::as_array) {
        texts.extend(
            plan.iter()
                .enumerate()
                .filter_map(|(i, v)| v.as_str().map(|s| (format!("new_block.plan[{i}]"), s))),
        );
    }
    if let Some(command) = answer
        .pointer("/executor_call/command")
        .and_then(Value::as_str)
    {
        texts.push(("executor_call.command".into(), command));
    }
    texts.retain(|(_, text)| text.trim().chars().count() >= 4);
    let written = texts.len();
    let copied = texts
        .into_iter()
        .filter(|(_, text)| {
            let quoted = serde_json::to_string(text).unwrap_or_default();
            prompt.contains(&quoted) && !context.contains(&quoted)
        })
        .map(|(path, text)| (path, text.to_string()))
        .collect();
    (copied, written)
}

/// The shape of a plan-next answer, quoted at the end of a repair message.
const ANSWER_SHAPE: &str = "{\"type\": \"plan-next\", \"plan_type\", \"new_block\": {\"goal\", \"plan\", \"done\": []}, \
     and `success_signal`, `executor_call` or `update_plan` as the protocol says}";

/// The findings, quoted back to the planner.
pub fn repair_message(diag: &Diagnostics) -> String {
    crate::llm::checked::repair_message(diag, "plan-next protocol", ANSWER_SHAPE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_repair_message_quotes_each_finding() {
        let mut d = Diagnostics::new();
        d.error(
            "REPEATS_FAILED_ATTEMPT",
            "executor_call.command",
            "already failed",
        );
        d.error("INVALID_JSON", "", "no object");
        let text = repair_message(&d);
        assert!(
            text.contains("- REPEATS_FAILED_ATTEMPT at executor_call.command: already failed\n")
        );
        assert!(text.contains("- INVALID_JSON at (answer): no object\n"));
    }

    #[test]
    fn the_prompts_example_copied_is_found_and_what_the_context_holds_is_not() {
        let prompt = include_str!("../../prompts/thinkon.planner.md");
        let example = serde_json::json!({"type": "plan-next", "plan_type": "PLAN_PROBES",
            "new_block": {"goal": {"intent": "定位登录报错原因", "deliverable": "根因分析报告"},
                "plan": ["假设：前端请求参数格式错误", "Check the cycle life data"], "done": []}});
        let context = serde_json::to_string_pretty(&serde_json::json!({"think": {
            "goal": "How do solid-state batteries compare with lithium-ion?",
            "plan": ["Check the cycle life data"], "done": []}}))
        .expect("json");
        let (copied, written) = copied_from_prompt(&example, prompt, &context);
        assert_eq!(written, 4);
        let copied: Vec<String> = copied.into_iter().map(|(path, _)| path).collect();
        assert_eq!(
            copied,
            [
                "new_block.goal.intent",
                "new_block.goal.deliverable",
                "new_block.plan[0]"
            ]
        );
        // The same strings are the block's own when its context holds them.
        let own = serde_json::to_string(&example).expect("json");
        assert!(copied_from_prompt(&example, prompt, &own).0.is_empty());
        let fresh = serde_json::json!({"new_block": {"goal": "Compare energy density",
            "plan": ["search: solid-state energy density"]}});
        assert!(copied_from_prompt(&fresh, prompt, &context).0.is_empty());
        // Example A copied whole is a copy; two generic steps among seven written are not.
        assert!(is_a_copy(8, 8) && is_a_copy(2, 4));
        assert!(!is_a_copy(1, 1) && !is_a_copy(2, 7));
    }
}
