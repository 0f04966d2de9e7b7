//! How a run ends: its status and reason ([`crate::workflow::ending`], plain functions of what
//! the run knows), the report (with a notice when degraded or partial), the outcome recorded
//! in the plan, and the closing `run_finished` event, which is written whatever happened.

use std::path::PathBuf;

use super::ending::{self, Facts};
use super::engine::Engine;
use crate::agents::TaskRunner;
use crate::clock;
use crate::events::catalogue::RunFinished;
use crate::events::{Event, RunStatus};
use crate::plan::Outcome;
use crate::planner::PlanRound;
use crate::report;
use crate::run::budget;
use crate::workflow::{EngineError, RunSummary};

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// Turns the loop's result into the run's summary, recording it in the plan file and the
    /// report; [`Self::close`] writes `run_finished` once the review has run.
    pub(super) fn finish_run(&mut self, result: Result<RunStatus, EngineError>) -> RunSummary {
        let mut status = ending::status(&result, &self.facts());
        let mut failure = result.err();
        let reason = ending::reason(status, &self.facts(), failure.as_ref());
        let mut report = None;
        if matches!(
            status,
            RunStatus::Completed | RunStatus::Degraded | RunStatus::Partial
        ) {
            let researched = ending::researched(self.run.ledger.plan());
            let notice = reason
                .as_deref()
                .map(|why| ending::notice(status, why, researched));
            match self.write_report(notice.as_deref()) {
                Ok(path) => report = path,
                Err(e) => {
                    status = RunStatus::Failed;
                    failure = Some(e);
                }
            }
        }
        let reason = if failure.is_some() {
            ending::reason(status, &self.facts(), failure.as_ref())
        } else {
            reason
        };
        let elapsed = self.state.started.elapsed();
        let answered = report
            .is_some()
            .then(|| ending::answered(self.run.ledger.plan()))
            .flatten();
        let outcome = Outcome {
            status: status.as_str().to_string(),
            finished_at: clock::now(),
            reason: reason.clone(),
            budget: budget::record(
                &self.run.options.budget,
                self.state.stopped,
                self.run.ledger.totals().tokens.total_tokens,
                elapsed,
            ),
            answered,
        };
        if let Err(e) = self
            .run
            .ledger
            .edit("run finished", |plan| plan.outcome = Some(outcome))
        {
            tracing::warn!("cannot record the run's outcome in the plan file: {e}");
            if failure.is_none() {
                status = RunStatus::Failed;
                failure = Some(e);
            }
        }
        RunSummary {
            status,
            final_node: self
                .run
                .ledger
                .plan()
                .final_node()
                .map(|n| n.node_id.to_string()),
            report,
            reason,
            answered,
            totals: self.run.ledger.close_totals(elapsed),
            failure,
            review: None,
        }
    }

    /// What the run knows of itself, for its status and reason.
    fn facts(&self) -> Facts<'_> {
        Facts {
            plan: self.run.ledger.plan(),
            stopped: self.state.stopped,
            planning_errors: &self.state.planning_errors,
            round_limit_finalised: self.state.round_limit_finalised,
            rounds: self.run.ledger.totals().rounds,
            max_rounds: self.run.options.max_rounds,
            tasks_not_run: self.run.ledger.totals().tasks_not_run,
            could_search: self.run.could_search,
        }
    }

    /// Closes the event log with `run_finished`: the status, the totals and the review.
    pub(super) fn close(&self, summary: &RunSummary) {
        self.run
            .ledger
            .emit(Event::RunFinished(RunFinished::Workflow {
                status: summary.status,
                final_node: summary.final_node.clone(),
                report: summary.report.as_ref().map(|p| p.display().to_string()),
                reason: summary.reason.clone(),
                error: summary.failure.as_ref().map(ToString::to_string),
                totals: summary.totals.clone(),
                review: summary.review.clone(),
            }));
    }

    /// Writes the report of a run whose final summary ran, with a notice when it is degraded or
    /// partial.
    fn write_report(&self, notice: Option<&str>) -> Result<Option<PathBuf>, EngineError> {
        let plan = self.run.ledger.plan();
        let Some(node) = plan.final_node() else {
            return Ok(None);
        };
        let path = &self.run.files.report;
        let plan_file = self.run.ledger.name().display().to_string();
        // A `file://` source is a link only into the corpus the run searched.
        let corpus = self.run.corpus_url.as_deref();
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
