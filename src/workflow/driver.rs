//! One workflow run as the drivers of many runs see it: a [`RunRequest`] in, a [`Finished`]
//! out, through [`RunWorkflow`]. A batch (and a queue worker, or a server) drives runs through
//! this trait alone, so it never needs the workflow engine itself; `session::Session` is the
//! implementation that wires the engine.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;

use super::ledger::Mirror;
use super::outcome::RunSummary;
use crate::events::{Event, EventListener};
use crate::exit::CommandError;
use crate::plan::{PlanFile, PlanStore};
use crate::run::{SetupError, Shutdown};
use crate::settings::RunOptions;
use crate::transcript::Replayer;

/// A run to start: its plan, opened and locked, how it is bounded, what stops it, who
/// watches its events, and who keeps its checkpoints besides the plan file (a queue worker's
/// database; `None` for a run on files alone).
pub struct RunRequest {
    pub store: PlanStore,
    pub plan: PlanFile,
    pub options: RunOptions,
    pub shutdown: Shutdown,
    pub listener: Option<Arc<dyn EventListener<Event>>>,
    /// The transcript this run is answered from instead of the servers; `None`: the
    /// services' (`--replay`), if any.
    pub replay: Option<Arc<Replayer>>,
    /// Who keeps this run's checkpoints besides the plan file (a queue worker's database).
    pub mirror: Option<Box<dyn Mirror>>,
}

/// A run that ended, and where its files are.
pub struct Finished {
    pub summary: RunSummary,
    pub plan_path: PathBuf,
    pub report_path: PathBuf,
    pub events_path: PathBuf,
    pub transcript_path: PathBuf,
    /// The run's HTML view, when one was written.
    pub html_path: Option<PathBuf>,
}

/// Runs one workflow to its end. The error is the set-up's (a file that cannot be opened, an
/// endpoint that cannot be built): nothing of the run happened; how the run itself ended is in
/// [`Finished::summary`].
pub trait RunWorkflow: Send + Sync {
    fn run(&self, request: RunRequest)
    -> impl Future<Output = Result<Finished, SetupError>> + Send;
}

/// A run that could not be set up, as a command's error: a setting, file or endpoint to fix is
/// a usage error (exit 2), the machine's failure exit 1.
impl From<SetupError> for CommandError {
    fn from(error: SetupError) -> CommandError {
        match error {
            SetupError::Config(e) => CommandError::usage(e),
            SetupError::Failure(e) => CommandError::failure(e),
        }
    }
}
