//! What runs one question of a batch ([`RunQuestion`]): a question asked ([`Ask`]) in, how its
//! run ended ([`Ran`]) out, kept at its place in the batch folder. Every workflow runner
//! ([`RunWorkflow`]) is one, its place the question's plan file; a Thinkon goal per question
//! is another (`crate::session`'s, its place a folder).

use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Question;
use crate::events::{RunStatus, Totals};
use crate::exit::CommandError;
use crate::plan::{PlanFile, PlanStore};
use crate::review::ReviewSummary;
use crate::run::Shutdown;
use crate::settings::RunOptions;
use crate::transcript::Replayer;
use crate::workflow::plan_file::open_valid;
use crate::workflow::{EngineError, RunRequest, RunWorkflow};

/// One question to run: where it is kept, what is asked, how it is bounded and stopped.
pub struct Ask {
    /// Its place in the batch folder ([`RunQuestion::place`]).
    pub place: PathBuf,
    pub query: String,
    pub options: RunOptions,
    pub shutdown: Shutdown,
    /// An earlier batch's transcript of the same question, answering instead of the servers.
    pub replay: Option<PathBuf>,
}

/// How a question's run ended, as the manifest records it.
#[derive(Debug)]
pub struct Ran {
    pub status: RunStatus,
    pub report: Option<PathBuf>,
    pub totals: Totals,
    /// Why it ended short of `completed`.
    pub reason: Option<String>,
    pub review: Option<ReviewSummary>,
    /// Whether its report answers the question; `None` when that is not known.
    pub answered: Option<bool>,
    /// An endpoint could not be used: no further question should start.
    pub unusable: bool,
}

/// Runs one question of a batch to its end.
pub trait RunQuestion: Send + Sync + 'static {
    /// Where the question's run is kept in the batch folder `dir`.
    fn place(&self, dir: &Path, question: &Question) -> PathBuf;

    /// Runs it. The error is the set-up's: that question fails, not the batch.
    fn run_question(&self, ask: Ask) -> impl Future<Output = Result<Ran, CommandError>> + Send;
}

/// A workflow per question, over its plan file `DIR/<name>.json` (resumed when it exists).
impl<W: RunWorkflow + 'static> RunQuestion for W {
    fn place(&self, dir: &Path, question: &Question) -> PathBuf {
        dir.join(format!("{}.json", question.name))
    }

    async fn run_question(&self, ask: Ask) -> Result<Ran, CommandError> {
        let replay = match ask.replay {
            Some(path) => Some(Arc::new(
                Replayer::load(&path).map_err(CommandError::usage)?,
            )),
            None => None,
        };
        let (store, plan) = open_or_create(&ask.place, &ask.query)?;
        let request = RunRequest {
            store,
            plan,
            options: ask.options,
            shutdown: ask.shutdown,
            listener: None,
            replay,
            mirror: None,
        };
        let summary = self.run(request).await?.summary;
        Ok(Ran {
            unusable: summary.status == RunStatus::Failed
                && matches!(summary.failure, Some(EngineError::Unusable(_))),
            status: summary.status,
            report: summary.report,
            totals: summary.totals,
            reason: summary.reason,
            review: summary.review,
            answered: summary.answered,
        })
    }
}

/// The question's plan, resumed when its file exists, else created.
fn open_or_create(path: &Path, query: &str) -> Result<(PlanStore, PlanFile), CommandError> {
    if path.exists() {
        return open_valid(path);
    }
    let plan = PlanFile::new(query, crate::plan::workflow_id(), crate::clock::now());
    PlanStore::create(path, &plan)
        .map(|store| (store, plan))
        .map_err(CommandError::usage)
}
