//! How a run ends, told honestly: the status (a final summary over no research is `degraded`,
//! not `completed`), the reason for anything short of `completed`, the report (with a notice
//! when degraded), the outcome recorded in the plan file, and the closing `run_finished`
//! event, which is written whatever happened.

use std::path::PathBuf;
use std::time::Instant;

use super::engine::Engine;
use crate::report;
use crate::agents::TaskRunner;
use crate::clock;
use crate::kernel::EngineError;
use crate::kernel::event::RunFinished;
use crate::kernel::{Event, RunStatus, RunSummary};
use crate::plan::{BudgetRecord, FINAL_BATCH, NodeStatus, NodeType, Outcome};
use crate::planner::PlanRound;

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// Turns the loop's result into the run's summary, recording it in the plan file and the
    /// report; [`Self::close`] writes `run_finished` once the review has run.
    pub(super) fn finish_run(
        &mut self,
        result: Result<RunStatus, EngineError>,
        started: Instant,
    ) -> RunSummary {
        let (mut status, mut failure) = match result {
            Ok(RunStatus::Completed) if !self.researched() => (RunStatus::Degraded, None),
            Ok(RunStatus::Completed) if self.stopped.is_some() => (RunStatus::Partial, None),
            Ok(status) => (status, None),
            Err(e) => (RunStatus::Failed, Some(e)),
        };
        let reason = self.reason(status, failure.as_ref());
        let mut report = None;
        if matches!(
            status,
            RunStatus::Completed | RunStatus::Degraded | RunStatus::Partial
        ) {
            let notice = reason.as_deref().map(|why| notice(status, why));
            match self.write_report(notice.as_deref()) {
                Ok(path) => report = path,
                Err(e) => {
                    status = RunStatus::Failed;
                    failure = Some(e);
                }
            }
        }
        let reason = if failure.is_some() {
            self.reason(status, failure.as_ref())
        } else {
            reason
        };
        self.plan.outcome = Some(Outcome {
            status: status.as_str().to_string(),
            finished_at: clock::now(),
            reason: reason.clone(),
            budget: self.budget_record(started),
        });
        if let Err(e) = self.save("run finished") {
            tracing::warn!("cannot record the run's outcome in the plan file: {e}");
            if failure.is_none() {
                status = RunStatus::Failed;
                failure = Some(e);
            }
        }
        self.totals.retries = self.events.retries();
        self.totals.seconds = started.elapsed().as_secs_f64();
        RunSummary {
            status,
            final_node: self.plan.final_node().map(|n| n.node_id.to_string()),
            report,
            reason,
            totals: self.totals.clone(),
            failure,
            review: None,
        }
    }

    /// Closes the event log with `run_finished`: the status, the totals and the review.
    pub(super) fn close(&self, summary: &RunSummary) {
        self.events.emit(Event::RunFinished(RunFinished::Workflow {
            status: summary.status,
            final_node: summary.final_node.clone(),
            report: summary.report.as_ref().map(|p| p.display().to_string()),
            reason: summary.reason.clone(),
            error: summary.failure.as_ref().map(ToString::to_string),
            totals: summary.totals.clone(),
            review: summary.review.clone(),
        }));
    }

    /// The budget and its use, when the run had one.
    fn budget_record(&self, started: Instant) -> Option<BudgetRecord> {
        let budget = self.options.budget;
        (budget.max_tokens.is_some() || budget.max_time.is_some()).then(|| BudgetRecord {
            max_tokens: budget.max_tokens,
            max_seconds: budget.max_time.map(|t| t.as_secs()),
            stopped_by: self.stopped.map(|s| s.limit.to_string()),
            used_tokens: self.totals.tokens.total_tokens,
            used_seconds: started.elapsed().as_secs(),
        })
    }

    /// Whether any research task (a search or summary before the final one) completed.
    fn researched(&self) -> bool {
        self.plan.nodes.iter().any(|n| {
            matches!(n.kind, NodeType::Search | NodeType::Summary)
                && n.batch != FINAL_BATCH
                && n.status == NodeStatus::Completed
        })
    }

    /// Why the run ended short of `completed`, in plain words; `None` when it completed. It
    /// goes to stdout, the plan and the event log: a URL's password someone quoted is masked.
    fn reason(&self, status: RunStatus, failure: Option<&EngineError>) -> Option<String> {
        let reason = self.reason_text(status, failure)?;
        Some(crate::text::without_url_passwords(&reason).into_owned())
    }

    fn reason_text(&self, status: RunStatus, failure: Option<&EngineError>) -> Option<String> {
        match status {
            RunStatus::Completed => None,
            RunStatus::Degraded => Some(match self.stopped {
                Some(stop) => format!("{}; {}", stop.describe(), self.degraded_reason()),
                None => self.degraded_reason(),
            }),
            RunStatus::Partial => self.stopped.map(|stop| {
                let not_run = self.totals.tasks_not_run;
                format!(
                    "{}; {not_run} task(s) did not run or were cut",
                    stop.describe()
                )
            }),
            RunStatus::FinalFailed => {
                let failed = match self.plan.final_node() {
                    Some(n) => format!(
                        "the final summary `{}` failed: {}",
                        n.node_id,
                        n.errors.last().map_or("no error recorded", String::as_str)
                    ),
                    None => "the final summary failed".into(),
                };
                // A budget that ended the research is part of the story.
                Some(match self.stopped {
                    Some(stop) => format!("{}; {failed}", stop.describe()),
                    None => failed,
                })
            }
            RunStatus::Interrupted => {
                Some("stopped by a signal; resume with `--plan` to finish".into())
            }
            RunStatus::Failed => failure.map(ToString::to_string),
        }
    }

    fn degraded_reason(&self) -> String {
        let failed: Vec<String> = self
            .plan
            .nodes
            .iter()
            .filter(|n| n.batch != FINAL_BATCH && n.status == NodeStatus::Failed)
            .map(|n| {
                let error = n.errors.last().map_or("no error recorded", String::as_str);
                format!("task {} ({}) failed: {error}", n.node_id, n.title.trim())
            })
            .collect();
        let mut why = String::from("no research task completed");
        if !self.planning_errors.is_empty() {
            why.push_str(&format!(
                "; {} planning round(s) failed, the last with: {}",
                self.planning_errors.len(),
                self.planning_errors.last().map_or("", String::as_str)
            ));
        }
        if failed.is_empty()
            && self.planning_errors.is_empty()
            && let Some(nothing) = self.nothing_planned()
        {
            why.push_str("; ");
            why.push_str(&nothing);
        }
        for f in failed {
            why.push_str("; ");
            why.push_str(&f);
        }
        why
    }

    /// Why no research task was planned, when none was (and no round or task failed): the
    /// round limit, when it made a round finalise before any research, else the planner.
    fn nothing_planned(&self) -> Option<String> {
        let planned = self.plan.nodes.iter().any(|n| {
            matches!(n.kind, NodeType::Search | NodeType::Summary) && n.batch != FINAL_BATCH
        });
        if planned {
            return None;
        }
        let max = self.options.max_rounds;
        let raise = "raise `--max-rounds` (or `WORKFLOW_MAX_ROUNDS`) to 2 or more to research";
        Some(match (self.round_limit_finalised, self.totals.rounds) {
            (true, 0 | 1) => format!(
                "the round limit (`--max-rounds {max}`) left no round for research: its only \
                 planning round had to plan the final summary, so no search ran; {raise}"
            ),
            (true, rounds) => format!(
                "the planner planned no research task in {} round(s), then the round limit \
                 (`--max-rounds {max}`) left no round for research and required the final \
                 summary, so no search ran; raise `--max-rounds` to give it more rounds",
                rounds - 1
            ),
            (false, _) => "the planner planned no research task, so no search ran".to_string(),
        })
    }

    /// Writes the report of a run whose final summary ran, with a notice when it is degraded or
    /// partial.
    fn write_report(&self, notice: Option<&str>) -> Result<Option<PathBuf>, EngineError> {
        let Some(node) = self.plan.final_node() else {
            return Ok(None);
        };
        let plan_file = self.store.path().display().to_string();
        // A `file://` source is a link only into the corpus the run searched.
        let corpus = self.corpus_url.as_deref();
        let in_corpus = |url: &str| corpus.is_some_and(|c| url.starts_with(c));
        report::write(
            &self.report_path,
            &self.plan,
            node,
            &plan_file,
            notice,
            &in_corpus,
        )
        .map_err(|source| EngineError::Report {
            path: self.report_path.clone(),
            source,
        })?;
        Ok(Some(self.report_path.clone()))
    }
}

/// The notice that opens the report of a run short of `completed`.
fn notice(status: RunStatus, why: &str) -> String {
    match status {
        RunStatus::Partial => format!(
            "> **Partial run: {why}.** The report is written from what was researched by then."
        ),
        _ => format!(
            "> **Degraded run: {why}.** What follows was written without research results and \
             must not be taken as researched."
        ),
    }
}
