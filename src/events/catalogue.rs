//! [`Event`]: every event researchflow writes, one variant per kind, in one enum. An event log line
//! is `{"ts": ..., "event": "<kind>", <fields>}`: the kind is the variant's name in snake_case, the
//! fields are the variant's. [`super::EventLog`] takes nothing else, so no event can be written
//! that this file does not list, and the book's catalogue (`docs/src/event-log.md`) is checked
//! against [`Event::VARIANTS`] (`tests/it/events_catalogue.rs`).
//!
//! Some kinds are written by more than one driver with fields of their own (`run_started` of a
//! workflow and of a Thinkon run); those carry an untagged enum of their shapes. A field that
//! is `null` when unknown is an `Option`; one that is left out when it does not apply says so
//! with `skip_serializing_if`.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use super::attempt::LlmAttemptFailed;
use super::outcome::{RunStatus, Totals};
use super::watch::{Notification, WatchFinished, WatchStarted};
use crate::plan::NodeType;
use crate::planner::Issue;
use crate::review::{ReviewFiles, ReviewSummary};
use crate::run::LogEvent;
use crate::search::local::IndexReport;
use crate::validate::Verdict;

/// One line of an event log, without its `ts`.
#[derive(Debug, Clone, Serialize, strum::IntoStaticStr, strum::VariantNames)]
#[serde(tag = "event", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Event {
    // A run, whatever drives it.
    RunStarted(RunStarted),
    RunFinished(RunFinished),
    /// A limit of the run's budget was reached: `max_tokens`, `max_time`, or (Thinkon)
    /// `max_blocks`; `value` is the limit, `used` what was spent.
    BudgetReached {
        limit: &'static str,
        value: u64,
        used: u64,
    },
    /// The plan file was saved, and why.
    FileWritten {
        path: String,
        why: String,
    },
    /// What opening the local corpus index found and did.
    LocalIndex {
        documents: usize,
        read: usize,
        added: usize,
        updated: usize,
        removed: usize,
        unchanged: usize,
        /// The files not indexed, counted by type (`.png`: 5).
        skipped: BTreeMap<String, usize>,
        warnings: Vec<String>,
        /// Ranking by meaning: the model's folder, the documents embedded by this open and
        /// the chunks with vectors; null when no model is configured (words only).
        embeddings: Option<serde_json::Value>,
    },

    // The planning rounds of a workflow.
    /// The plan review of a round: its verdict and its issues.
    #[serde(rename = "plan_review")]
    #[strum(serialize = "plan_review")]
    PlanReview {
        round: u32,
        ok: bool,
        issues: Vec<Issue>,
    },
    RoundPlanned(RoundPlanned),
    PlanningFailed(PlanningFailed),
    /// The orchestrator added the final summary itself, and why.
    FinalForced {
        node: String,
        reason: String,
        p_node: String,
    },
    /// The plan review dropped a task the planner asked for.
    TaskDropped {
        round: u32,
        title: String,
        /// The issue's id.
        issue: String,
        /// The rule.
        reason: String,
        message: String,
        /// The node a duplicate repeats.
        #[serde(skip_serializing_if = "Option::is_none")]
        repeats: Option<String>,
    },

    // The tasks of a workflow.
    TaskStarted {
        node: String,
        #[serde(rename = "type")]
        kind: NodeType,
        title: String,
        attempt: Option<u32>,
        /// Whether it is the final summary.
        #[serde(rename = "final")]
        is_final: bool,
    },
    TaskCompleted {
        node: String,
        seconds: f64,
        tokens: u64,
        sources: usize,
        truncated: bool,
    },
    TaskFailed {
        node: String,
        seconds: f64,
        error: String,
    },
    /// A task the budget kept from starting, or cut.
    TaskNotRun {
        node: String,
        why: String,
    },
    /// An input of a model call cut to fit: a segment, a snippet, a source list.
    InputCut {
        node: String,
        what: String,
        chars: usize,
        kept: usize,
    },
    /// A page behind a search result, read for the task.
    PageRead {
        node: String,
        url: String,
        kind: &'static str,
        chars: usize,
        #[serde(skip_serializing_if = "Option::is_none")]
        cut: Option<String>,
        passages: usize,
        from: &'static str,
    },
    /// A page not read: its snippet stands in.
    PageUnread {
        node: String,
        url: String,
        cause: String,
    },

    // The calls of any run: `node` is the task, `planner`, `review` or a Thinkon block.
    HttpRetry {
        node: String,
        what: String,
        retry: usize,
        delay_ms: u64,
        cause: String,
        /// Whether the delay is the server's `Retry-After`.
        retry_after: bool,
    },
    /// A wait of over a second at an endpoint's rate budget.
    RateLimited {
        node: String,
        endpoint: String,
        wait_ms: u64,
        reason: &'static str,
    },
    /// A form or parameter a model's server refused, and what replaces it from now on.
    LlmNegotiated {
        node: String,
        role: &'static str,
        model: String,
        url: String,
        refused: &'static str,
        from: String,
        to: String,
        status: u16,
    },
    /// A model answer that was streamed, once complete: how long its first token took and
    /// how fast the rest came (one event a call, never one a token).
    LlmStreamed {
        node: String,
        role: &'static str,
        model: String,
        /// From the request to the first token.
        first_token_ms: Option<u64>,
        /// The answer's tokens (as the server reported them).
        tokens: u64,
        /// From the first token to the last.
        tokens_per_second: Option<f64>,
        /// From the request to the end of the answer.
        ms: u64,
    },
    /// A streamed attempt that broke after part of its answer: the tokens billed for it.
    LlmAttemptFailed(LlmAttemptFailed),

    // The review of the report.
    ReviewFinished {
        node: String,
        verdict: Option<Verdict>,
        complete: bool,
        files: ReviewFiles,
        tokens: u64,
    },
    ReviewFailed(ReviewFailed),
    ReviewSkipped {
        node: String,
        reason: String,
    },

    // A Thinkon run.
    BlockStarted {
        block: String,
        attempts: u32,
    },
    BlockPlanned(BlockShape),
    BlockExecuted {
        block: String,
        command: String,
    },
    BlockFailed(BlockFailed),
    BlockCompleted {
        block: String,
    },
    /// The planner's answer broke the plan-next protocol: the codes sent back for repair.
    PlannerRepair {
        node: String,
        errors: Vec<String>,
    },
    PlannerWarning {
        block: String,
        code: String,
        path: String,
        message: String,
    },
    /// A block completed with its work listed, unreviewed: its reflection failed.
    ReflectionFailed {
        block: String,
        error: String,
    },
    /// A child returned and the parent's plan moved on to its next item.
    PlanAdvanced {
        block: String,
        child: String,
    },
    /// A child returned with `update_plan`: the parent's plan replaced.
    PlanUpdated {
        block: String,
        child: String,
        plan: Vec<String>,
    },
    /// An item given up after its children failed.
    ItemAbandoned {
        block: String,
        item: Option<String>,
        failures: u32,
    },

    // A watch run, in its folder's own log (`watch.events.ndjson`).
    WatchStarted(WatchStarted),
    Notification(Notification),
    WatchFinished(WatchFinished),
}

impl Event {
    /// The kind, as written in the `event` field.
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// What opening the local index did, as the first event of a run's log.
    pub fn local_index(report: &IndexReport) -> Event {
        Event::LocalIndex {
            documents: report.documents,
            read: report.read,
            added: report.added,
            updated: report.updated,
            removed: report.removed,
            unchanged: report.unchanged,
            skipped: report.skipped.clone(),
            warnings: report.warnings.clone(),
            embeddings: report.embedded.as_ref().map(|e| {
                serde_json::json!({"model": e.model, "documents": e.documents, "chunks": e.chunks})
            }),
        }
    }

    /// Every kind there is, in the order of the enum.
    pub fn kinds() -> &'static [&'static str] {
        <Event as strum::VariantNames>::VARIANTS
    }
}

/// `run_started`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunStarted {
    Workflow {
        plan_file: String,
        workflow_id: String,
        max_rounds: u32,
        concurrency: usize,
        /// The round the run continues from (1 for a new plan).
        round: u32,
    },
    Thinkon {
        goal: String,
        blocks: usize,
        max_depth: u32,
    },
}

/// `run_finished`: the last line of every run's log.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunFinished {
    Workflow {
        status: RunStatus,
        final_node: Option<String>,
        report: Option<String>,
        reason: Option<String>,
        /// The run's own error, when it failed on one.
        error: Option<String>,
        totals: Totals,
        review: Option<ReviewSummary>,
    },
    Thinkon {
        status: &'static str,
        reason: Option<String>,
        blocks: BlockCounts,
        calls: u32,
        tokens: u64,
        seconds: f64,
    },
}

/// How many blocks of a Thinkon tree are in each state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BlockCounts {
    pub total: usize,
    pub completed: usize,
    pub failed: usize,
    /// Planned or running.
    pub open: usize,
}

/// `round_planned`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RoundPlanned {
    Applied {
        round: u32,
        tasks: Vec<String>,
        is_final: bool,
        /// The check list's refs after the round.
        refs: Vec<String>,
        calls: u32,
        tokens: u64,
    },
    /// The last round did not finalise: its tasks were taken out again.
    Discarded {
        round: u32,
        tasks: Vec<String>,
        is_final: bool,
        discarded: bool,
    },
}

/// `planning_failed`: a workflow's round, or a Thinkon block's plan-next call.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum PlanningFailed {
    Round { round: u32, error: String },
    Block { block: String, error: String },
}

/// `review_failed`: one role of the review, or the whole review.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum ReviewFailed {
    Role {
        node: String,
        role: String,
        error: String,
        /// The finding codes of its last broken answer.
        codes: Vec<String>,
    },
    Review {
        node: String,
        error: String,
    },
}

/// A Thinkon block as planned: `block_planned`, and `block_failed` of a block that failed as
/// it was made.
#[derive(Debug, Clone, Serialize)]
pub struct BlockShape {
    pub block: String,
    pub parent: Option<String>,
    pub depth: u32,
    pub plan_type: Option<&'static str>,
    pub goal: String,
    pub plan: Vec<String>,
    pub command: Option<String>,
    pub forced: bool,
}

/// `block_failed`.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum BlockFailed {
    /// It failed as it was made.
    Made(BlockShape),
    /// Its executor call failed.
    Executed { block: String, command: String },
    /// It returned without a result.
    Returned { block: String },
}

impl BlockFailed {
    /// The block that failed.
    pub fn block(&self) -> &str {
        match self {
            BlockFailed::Made(shape) => &shape.block,
            BlockFailed::Executed { block, .. } | BlockFailed::Returned { block } => block,
        }
    }
}

/// Serialises `event` to its fields, `event` included; a variant that cannot be serialised
/// (none can: every field is plain data) gives an object with its kind alone.
impl LogEvent for Event {
    fn name(&self) -> &'static str {
        Event::name(self)
    }

    fn fields(&self) -> serde_json::Map<String, Value> {
        to_fields(self)
    }
}

pub fn to_fields(event: &Event) -> serde_json::Map<String, Value> {
    match serde_json::to_value(event) {
        Ok(Value::Object(fields)) => fields,
        _ => {
            let mut fields = serde_json::Map::new();
            fields.insert("event".into(), Value::from(event.name()));
            fields
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::VariantNames;

    #[test]
    fn the_kind_is_the_variant_name_and_the_fields_follow() {
        let event = Event::TaskNotRun {
            node: "b".into(),
            why: "the budget was spent".into(),
        };
        assert_eq!(event.name(), "task_not_run");
        let fields = to_fields(&event);
        assert_eq!(fields["event"], "task_not_run");
        assert_eq!(fields["node"], "b");
        assert!(Event::VARIANTS.contains(&"task_not_run"));
    }

    #[test]
    fn shapes_of_one_kind_serialise_with_their_own_fields() {
        let workflow = to_fields(&Event::PlanningFailed(PlanningFailed::Round {
            round: 2,
            error: "e".into(),
        }));
        let thinkon = to_fields(&Event::PlanningFailed(PlanningFailed::Block {
            block: "a".into(),
            error: "e".into(),
        }));
        let keys = |m: &serde_json::Map<String, Value>| m.keys().cloned().collect::<Vec<_>>();
        assert_eq!(keys(&workflow), ["event", "round", "error"]);
        assert_eq!(keys(&thinkon), ["event", "block", "error"]);
    }

    #[test]
    fn an_absent_repeat_is_left_out_and_an_unknown_attempt_is_null() {
        let dropped = to_fields(&Event::TaskDropped {
            round: 1,
            title: "t".into(),
            issue: "R1-T1".into(),
            reason: "EMPTY_TITLE".into(),
            message: "m".into(),
            repeats: None,
        });
        assert!(!dropped.contains_key("repeats"));
        let started = to_fields(&Event::TaskStarted {
            node: "b".into(),
            kind: NodeType::Search,
            title: "t".into(),
            attempt: None,
            is_final: false,
        });
        assert_eq!(started["attempt"], Value::Null);
        assert_eq!(started["type"], "search");
        assert_eq!(started["final"], false);
    }
}
