//! How a run ends: its status and reason ([`crate::workflow::ending`], plain functions of what
//! the run knows), the report (with a notice when degraded or partial), the outcome recorded
//! in the plan, and the closing `run_finished` event, which is written whatever happened.

use std::path::PathBuf;

use super::ending::{self, Facts};
use super::ledger::Ledger;
use super::spending::Spending;
use crate::clock;
use crate::events::catalogue::RunFinished;
use crate::events::{Event, RunStatus};
use crate::plan::Outcome;
use crate::report;
use crate::settings::RunOptions;
use crate::workflow::{EngineError, RunSummary};

/// What the end of a run needs besides the ledger: where the report goes, the corpus its
/// documents may link to, and whether there was anything to search.
pub(super) struct Ending {
    report: PathBuf,
    /// The `file://` URL of the corpus folder (ending in `/`); `None` without a corpus.
    corpus_url: Option<String>,
    /// A run that never searched although it could is `degraded` (`ending::junk`).
    could_search: bool,
}

/// What the rest of the run tells its end.
pub(super) struct Told<'a> {
    pub(super) options: &'a RunOptions,
    pub(super) spending: &'a Spending,
    /// Why planning rounds of this invocation failed.
    pub(super) planning_errors: &'a [String],
    /// Whether the round limit made a round finalise.
    pub(super) round_limit_finalised: bool,
}

impl Ending {
    pub(super) fn new(report: PathBuf, corpus_url: Option<String>, could_search: bool) -> Ending {
        Ending {
            report,
            corpus_url,
            could_search,
        }
    }

    /// The run's status, reason and report from how its loop ended (`result`), the outcome
    /// recorded in the plan; a report or outcome that cannot be written fails the run.
    pub(super) fn finish(
        &self,
        ledger: &mut Ledger,
        told: &Told<'_>,
        result: Result<RunStatus, EngineError>,
    ) -> RunSummary {
        let mut status = ending::status(&result, &self.facts(ledger, told));
        let mut failure = result.err();
        let reason = ending::reason(status, &self.facts(ledger, told), failure.as_ref());
        let mut report = None;
        if matches!(
            status,
            RunStatus::Completed | RunStatus::Degraded | RunStatus::Partial
        ) {
            let researched = ending::researched(ledger.plan());
            let notice = reason
                .as_deref()
                .map(|why| ending::notice(status, why, researched));
            match self.write_report(ledger, notice.as_deref()) {
                Ok(path) => report = path,
                Err(e) => {
                    status = RunStatus::Failed;
                    failure = Some(e);
                }
            }
        }
        let reason = if failure.is_some() {
            ending::reason(status, &self.facts(ledger, told), failure.as_ref())
        } else {
            reason
        };
        let elapsed = told.spending.elapsed();
        let answered = report
            .is_some()
            .then(|| ending::answered(ledger.plan()))
            .flatten();
        let outcome = Outcome {
            status: status.as_str().to_string(),
            finished_at: clock::now(),
            reason: reason.clone(),
            budget: told.spending.record(ledger),
            answered,
        };
        if let Err(e) = ledger.edit("run finished", |plan| plan.outcome = Some(outcome)) {
            tracing::warn!("cannot record the run's outcome in the plan file: {e}");
            if failure.is_none() {
                status = RunStatus::Failed;
                failure = Some(e);
            }
        }
        RunSummary {
            status,
            final_node: ledger.plan().final_node().map(|n| n.node_id.to_string()),
            report,
            reason,
            answered,
            totals: ledger.close_totals(elapsed),
            failure,
            review: None,
        }
    }

    fn facts<'a>(&self, ledger: &'a Ledger, told: &Told<'a>) -> Facts<'a> {
        Facts {
            plan: ledger.plan(),
            stopped: told.spending.stopped(),
            planning_errors: told.planning_errors,
            round_limit_finalised: told.round_limit_finalised,
            rounds: ledger.totals().rounds,
            max_rounds: told.options.max_rounds,
            tasks_not_run: ledger.totals().tasks_not_run,
            could_search: self.could_search,
        }
    }

    fn write_report(
        &self,
        ledger: &Ledger,
        notice: Option<&str>,
    ) -> Result<Option<PathBuf>, EngineError> {
        let plan = ledger.plan();
        let Some(node) = plan.final_node() else {
            return Ok(None);
        };
        let path = &self.report;
        let plan_file = ledger.name().display().to_string();
        let corpus = self.corpus_url.as_deref();
        let in_corpus = |url: &str| corpus.is_some_and(|c| url.starts_with(c));
        report::write(path, plan, node, &plan_file, notice, &in_corpus).map_err(|source| {
            EngineError::Report {
                path: path.clone(),
                source,
            }
        })?;
        Ok(Some(path.clone()))
    }
}

/// The closing `run_finished` event, written whatever happened.
pub(super) fn close(ledger: &Ledger, summary: &RunSummary) {
    ledger.emit(Event::RunFinished(RunFinished::Workflow {
        status: summary.status,
        final_node: summary.final_node.clone(),
        report: summary.report.as_ref().map(|p| p.display().to_string()),
        reason: summary.reason.clone(),
        error: summary.failure.as_ref().map(ToString::to_string),
        totals: summary.totals.clone(),
        review: summary.review.clone(),
    }));
}
