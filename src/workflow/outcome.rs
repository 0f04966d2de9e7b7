//! What a workflow run reports at its end ([`RunSummary`]), and the errors of its own that stop
//! it ([`EngineError`]).

use std::path::PathBuf;

use serde::Serialize;

use crate::events::{RunStatus, Totals};
use crate::plan::StoreError;
use crate::review::ReviewSummary;

/// What a run reports at its end, whatever happened.
#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub status: RunStatus,
    pub final_node: Option<String>,
    pub report: Option<PathBuf>,
    /// Why the run ended short of `completed`.
    pub reason: Option<String>,
    /// Whether its report answers the question ([`super::ending::answered`]); `None` without
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
