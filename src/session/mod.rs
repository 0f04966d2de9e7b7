//! [`Session`]: the one place where runs are wired. Built once from the resolved settings, it
//! holds the process's services (HTTP pool, gates, negotiation, prompts, search client, the
//! replayed transcript) and makes, for each run, the role clients, the tape and the event log
//! it needs. It offers the runs: a workflow (`workflow.rs`, through
//! [`crate::workflow::RunWorkflow`]), one planning round (`plan_round.rs`), the review of a
//! report (`review.rs`), a Thinkon goal (`thinkon.rs`), and a batch's questions as either
//! (`crate::batch::RunQuestion`: every workflow runner, and [`ThinkonQuestions`]; `batch.rs`
//! runs them in a batch's folder). Every
//! command is parse -> session -> render; `batch`, `eval`, `worker` and `mcp` use the same
//! session. What a run's status does to an exit code is `exit.rs`'s.

pub mod batch;
pub mod exit;
pub mod plan_round;
pub mod review;
pub mod thinkon;
pub mod workflow;

use std::path::Path;
use std::sync::Arc;

use crate::cli::RunArgs;
use crate::http::Gates;
use crate::planner::LogOptions;
use crate::progress::ProgressDisplay;
use crate::run::{Services, SetupError};
use crate::settings::{RunSettings, Settings};
use crate::transcript::Replayer;

pub use thinkon::{ThinkonFinished, ThinkonGoal, ThinkonQuestions};

/// The services of one process, and how much of the planner's work the log shows.
#[derive(Clone)]
pub struct Session {
    services: Arc<Services>,
    log: LogOptions,
}

impl Session {
    /// A session for runs that search: the search client is built (a local index opened,
    /// built or brought up to date) before any run starts; `replay` answers every call.
    pub async fn open(
        settings: Settings,
        replay: Option<Arc<Replayer>>,
    ) -> Result<Session, SetupError> {
        let display = ProgressDisplay::for_terminal();
        let steps = display.as_ref().map(ProgressDisplay::index_steps);
        let services = Services::new(settings, replay, steps.unwrap_or_default()).await;
        if let Some(display) = display {
            display.index_done();
        }
        Ok(Session::of(services?))
    }

    /// A session whose runs only call models (a review, a planning round with a model, a
    /// server that builds each run's search client itself): no corpus is indexed for nothing.
    pub fn models_only(settings: Settings) -> Result<Session, SetupError> {
        Ok(Session::of(Services::bare(settings)?))
    }

    /// [`Session::open`] with `gates` as every endpoint's rate budget (a queue worker's,
    /// shared with the other workers).
    pub async fn with_gates(settings: Settings, gates: Gates) -> Result<Session, SetupError> {
        let display = ProgressDisplay::for_terminal();
        let steps = display.as_ref().map(ProgressDisplay::index_steps);
        let services = Services::with_gates(settings, None, gates, steps.unwrap_or_default()).await;
        if let Some(display) = display {
            display.index_done();
        }
        Ok(Session::of(services?))
    }

    /// A session for another run's settings (another corpus, offline) sharing this one's HTTP
    /// pool, rate budgets and negotiation, with a search client of its own.
    pub async fn for_settings(&self, settings: Settings) -> Result<Session, SetupError> {
        let services = self.services.with_settings(settings).await?;
        Ok(Session {
            services: Arc::new(services),
            log: self.log,
        })
    }

    /// The same session, its planner's input and output logged as `log` says.
    pub fn logging(mut self, log: LogOptions) -> Session {
        self.log = log;
        self
    }

    pub fn settings(&self) -> &Settings {
        &self.services.settings
    }

    fn of(services: Services) -> Session {
        Session {
            services: Arc::new(services),
            log: LogOptions::default(),
        }
    }
}

/// A run's settings from the config file, the environment and its flags (`recorded_rounds`:
/// the round limit a replayed transcript recorded).
pub fn run_settings(
    config: Option<&Path>,
    args: &RunArgs,
    recorded_rounds: Option<u32>,
) -> Result<RunSettings, SetupError> {
    RunSettings::resolve(config, args, recorded_rounds).map_err(SetupError::config)
}

/// A transcript to replay (`--replay`), read whole.
pub fn replay(path: &Path) -> Result<Arc<Replayer>, SetupError> {
    Ok(Arc::new(Replayer::load(path).map_err(SetupError::config)?))
}
