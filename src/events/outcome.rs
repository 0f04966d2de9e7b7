//! How a run ended, as its `run_finished` event and every summary of it say: its status
//! ([`RunStatus`]) and the counts it reports ([`Totals`]).

use serde::{Deserialize, Serialize};

use crate::usage::Usage;

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
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
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
        self.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events store these names: they must never change.
    #[test]
    fn every_run_status_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<RunStatus>(),
            "completed degraded partial final_failed interrupted failed"
        );
    }
}
