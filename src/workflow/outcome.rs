//! How a run ended: its status, the totals it reports, and the summary the command prints.

use std::path::PathBuf;

use serde::Serialize;

use crate::llm::Usage;

/// Counts reported at the end of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub rounds: u32,
    pub tasks_completed: u32,
    pub tasks_failed: u32,
    pub retries: u64,
    /// `prompt_tokens`, `completion_tokens` and `total_tokens` of every call of the run.
    #[serde(flatten)]
    pub tokens: Usage,
    pub seconds: f64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The final summary ran and the report is written.
    Completed,
    /// The final summary failed.
    FinalFailed,
    /// Stopped by a signal.
    Interrupted,
    /// Stopped by an error of its own: the plan file or the report could not be written.
    Failed,
}

/// What a run that did not fail reports.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub status: RunStatus,
    pub final_node: Option<String>,
    pub report: Option<PathBuf>,
    pub totals: Totals,
}
