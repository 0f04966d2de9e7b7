//! How a run ended: its status, the totals it reports, and the summary the command prints.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::llm::Usage;
use crate::plan::StoreError;
use crate::review::ReviewSummary;

/// Counts reported at the end of a run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Totals {
    pub rounds: u32,
    pub tasks_completed: u32,
    pub tasks_failed: u32,
    /// Tasks the budget kept from starting, or cut.
    #[serde(skip_serializing_if = "is_zero")]
    pub tasks_not_run: u32,
    pub retries: u64,
    /// The final report's sentences that cite sources, and how many of them their sources
    /// support (`agents::claims`).
    pub claims_cited: usize,
    pub claims_supported: usize,
    /// `prompt_tokens`, `completion_tokens` and `total_tokens` of every call of the run.
    #[serde(flatten)]
    pub tokens: Usage,
    pub seconds: f64,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The final summary ran over research that happened, and the report is written.
    Completed,
    /// The final summary ran, but no research task completed (every planning round failed,
    /// or every task did): the report says so at its top.
    Degraded,
    /// A budget (`--max-tokens`, `--max-time`) was reached: the final summary ran over the
    /// research done by then; the report says so at its top. The user asked for the limit.
    Partial,
    /// The final summary failed.
    FinalFailed,
    /// Stopped by a signal.
    Interrupted,
    /// Stopped by an error of its own: the plan file or the report could not be written.
    Failed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Completed => "completed",
            RunStatus::Degraded => "degraded",
            RunStatus::Partial => "partial",
            RunStatus::FinalFailed => "final_failed",
            RunStatus::Interrupted => "interrupted",
            RunStatus::Failed => "failed",
        }
    }
}

/// What a run reports at its end, whatever happened.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub status: RunStatus,
    pub final_node: Option<String>,
    pub report: Option<PathBuf>,
    /// Why the run ended short of `completed`.
    pub reason: Option<String>,
    /// Whether its report answers the question ([`super::finish::answered`]); `None` without
    /// a report.
    pub answered: Option<bool>,
    pub totals: Totals,
    /// The error that stopped a `failed` run.
    #[serde(skip)]
    pub failure: Option<EngineError>,
    /// The review of the report; `None` when the review is off.
    pub review: Option<ReviewSummary>,
}

/// Why a run stopped on an error of its own, or on an endpoint it cannot use.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An endpoint cannot be used as configured: every further round or task would fail the
    /// same way, so the run stops (exit 2).
    #[error("{0}")]
    Unusable(String),
    /// A replay asked what its transcript does not hold: the run stops (exit 1), naming the
    /// call.
    #[error("{0}")]
    Diverged(String),
    #[error("cannot write the report `{path}`: {source}")]
    Report {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Which limit stopped a run, its value, and what was used when it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BudgetStop {
    /// `max_tokens` or `max_time`.
    pub limit: &'static str,
    /// Tokens, or seconds.
    pub value: u64,
    pub used: u64,
}

impl BudgetStop {
    /// The stop in plain words, for the reason and the report's notice.
    pub fn describe(&self) -> String {
        match self.limit {
            "max_tokens" => format!(
                "the token budget ({} tokens) was reached after {} tokens",
                self.value, self.used
            ),
            _ => format!(
                "the time budget ({} s) was reached after {} s",
                self.value, self.used
            ),
        }
    }
}
