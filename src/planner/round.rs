//! One planning round: build the input, ask the model, check the contract (with repair
//! rounds), and apply the answer to the plan in memory.
//!
//! The plan is changed only when a valid answer was applied; on any error it is as it was, so
//! the caller can leave the file byte-identical. Prints the `[planning]` log lines.

use std::future::Future;

use serde_json::Value;

use super::apply::{Applied, apply};
use super::contract::{ANSWER_SHAPE, PlanAnswer, check};
use super::input::{PlannerInput, RoundNotes, build, build_within};
use super::schema::{Stage, answer_schema};
use crate::diagnostics::Diagnostics;
use crate::llm::CallObserver;
use crate::llm::fit::fitted;
use crate::llm::{
    ChatAnswer, CheckedError, Contract, LlmClient, LlmError, Message, Want, ask_checked,
};
use crate::logging;
use crate::plan::{FINAL_BATCH, NodeStatus, NodeType, PlanFile};
use crate::settings::Prompt;
use crate::text::truncate;
use crate::transcript::Site;
use crate::usage::Usage;

/// How many characters of input and output the log shows without `--log-full`.
const LOG_MAX_CHARS: usize = 1500;

/// Token limit of a planner answer, unless the planning role sets `maxTokens`.
pub const PLANNER_MAX_TOKENS: u32 = Prompt::Planning.max_tokens();

/// How much of the planner's input and output the `[planning]` lines show.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogOptions {
    /// Print the `USER_INPUT` / `MODEL_OUTPUT` lines at all (else they go to the debug log).
    pub echo: bool,
    /// Print input and output in full instead of truncated.
    pub full: bool,
    /// Also print the system prompt.
    pub show_instructions: bool,
}

/// What plans a round: the LLM planning agent ([`Planner`]) or another that writes the same
/// answers (the offline engine's). Each changes `plan` only on success.
pub trait PlanRound: Send + Sync {
    fn plan_round(
        &self,
        plan: &mut PlanFile,
        notes: &RoundNotes,
        observer: &dyn CallObserver,
    ) -> impl Future<Output = Result<RoundOutcome, RoundError>> + Send;
}

/// The planning agent.
pub struct Planner {
    pub llm: LlmClient,
    /// The system prompt of a round that may plan research or finish.
    pub system_prompt: String,
    /// The system prompt of a round that must finish: the final summary's task alone, in about
    /// a third of the words (the last round of a run at `--max-rounds`).
    pub finalise_prompt: String,
    pub repair_attempts: u32,
    pub log: LogOptions,
}

impl PlanRound for Planner {
    async fn plan_round(
        &self,
        plan: &mut PlanFile,
        notes: &RoundNotes,
        observer: &dyn CallObserver,
    ) -> Result<RoundOutcome, RoundError> {
        self.run(plan, notes, observer).await
    }
}

/// What one round produced.
#[derive(Debug, Clone)]
pub struct RoundOutcome {
    pub answer: PlanAnswer,
    pub applied: Applied,
    pub usage: Usage,
    /// LLM calls made (1 plus repair rounds).
    pub calls: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum RoundError {
    #[error("the planner call failed: {0}")]
    Llm(#[from] LlmError),
    #[error("the planner's answer broke the output contract after {attempts} attempt(s):\n{}", .diagnostics.to_text().trim_end())]
    Contract {
        diagnostics: Diagnostics,
        attempts: u32,
    },
    /// A planner without a model failed (its corpus, say).
    #[error("the planner failed: {0}")]
    Other(String),
}

/// What this round may answer: the final summary when the workflow says it must finalise;
/// work, not the report, while no task has completed; else anything.
pub fn stage_of(plan: &PlanFile, notes: &RoundNotes) -> Stage {
    let researched = plan.nodes.iter().any(|n| {
        matches!(n.kind, NodeType::Search | NodeType::Summary)
            && n.status == NodeStatus::Completed
            && n.batch != FINAL_BATCH
    });
    match (notes.must_finalise, researched) {
        (true, _) => Stage::Finalise,
        (false, false) => Stage::Research,
        (false, true) => Stage::Open,
    }
}

/// Logs the refs the input skipped (at debug level: a ref only reaches the check list
/// unknown from the plan file, which was warned about when it was opened) and reports what
/// it cut (`input_cut` notes).
fn report_input(input: &PlannerInput, observer: &dyn CallObserver) {
    for w in &input.warnings {
        tracing::debug!("[planning] {w}");
    }
    for c in &input.cuts {
        tracing::debug!(
            "[planning] cut {} from {} to {} characters",
            c.what,
            c.chars,
            c.kept
        );
        observer.on_input_cut(c);
    }
}

/// A round's failure, from its checked call's.
fn round_error(e: CheckedError) -> RoundError {
    match e {
        CheckedError::Llm { error, .. } => RoundError::Llm(error),
        CheckedError::Contract {
            diagnostics,
            attempts,
            ..
        } => RoundError::Contract {
            diagnostics,
            attempts,
        },
    }
}

impl Planner {
    /// Runs one round on `plan`, which is changed only on success.
    pub async fn run(
        &self,
        plan: &mut PlanFile,
        notes: &RoundNotes,
        observer: &dyn CallObserver,
    ) -> Result<RoundOutcome, RoundError> {
        let stage = stage_of(plan, notes);
        let system = match stage {
            Stage::Finalise => &self.finalise_prompt,
            Stage::Research | Stage::Open => &self.system_prompt,
        };
        if self.log.show_instructions {
            self.echo(&format!("[planning] SYSTEM_PROMPT ->\n{system}"));
        }
        let check = |value: &Value| check(value, stage);
        let contract = Contract {
            who: "planning",
            check: &check,
            shape: ANSWER_SHAPE,
            repair_attempts: self.repair_attempts,
            on_repair: None,
        };
        // Round numbers continue across resumes: this round's is one more than the plan's.
        let site = Site::round(plan.rounds + 1);
        let ask = |user: String| {
            self.echo(&format!("[planning] USER_INPUT ->\n{}", self.clip(&user)));
            let messages = vec![Message::system(system.clone()), Message::user(user)];
            ask_checked(messages, &contract, |messages| {
                self.call(&site, messages, stage, observer)
            })
        };
        let input_of = |share| {
            let input = build_within(plan, notes, share);
            (input.text.clone(), input)
        };
        let (checked, _, input) =
            match fitted((system, PLANNER_MAX_TOKENS), input_of, ask, observer).await {
                Ok(fitted) => fitted,
                Err(e) => {
                    report_input(&build(plan, notes), observer);
                    return Err(round_error(e));
                }
            };
        report_input(&input, observer);
        self.log_output(&checked.value);
        let (answer, usage, calls) = (checked.answer, checked.usage, checked.calls);

        let applied = apply(plan, &answer, &crate::clock::now());
        for w in &applied.warnings {
            tracing::warn!("[planning] {w}");
        }
        Ok(RoundOutcome {
            answer,
            applied,
            usage,
            calls,
        })
    }

    /// The planner's one call to its model.
    async fn call(
        &self,
        site: &Site,
        messages: Vec<Message>,
        stage: Stage,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let want = Want::Json(answer_schema(stage));
        self.llm
            .chat(site, &messages, want, PLANNER_MAX_TOKENS, observer)
            .await
    }

    fn log_output(&self, value: &Value) {
        let text = serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string());
        self.echo(&format!(
            "[planning] MODEL_OUTPUT (parsed) ->\n{}",
            self.clip(&text)
        ));
    }

    fn echo(&self, text: &str) {
        if self.log.echo {
            logging::line(text);
        } else {
            tracing::debug!("{text}");
        }
    }

    fn clip(&self, text: &str) -> String {
        if self.log.full {
            text.to_string()
        } else {
            truncate(text, LOG_MAX_CHARS)
        }
    }
}
