//! The workflow loop: plan a round, run the planned tasks with bounded concurrency, persist
//! every result as it completes, repeat until the final summary (batch -1) has run.
//!
//! - One writer: spawned tasks never touch the plan; they report to this loop, which updates
//!   the plan in memory and saves it atomically after every change (node order stays plan
//!   order). A crash therefore loses at most the tasks in flight, which stay `running` and are
//!   run again on resume. Running tasks is in `batch.rs`, planning rounds in `rounds.rs`,
//!   writing results into nodes in `results.rs`.
//! - Termination: at most `max_rounds` planning rounds per invocation. The last round, and any
//!   round after two rounds in a row with zero tasks (or failed planning), tells the planner it
//!   must finalise; if it still does not, its tasks are discarded and the orchestrator adds the
//!   final summary over every completed node itself. Every run that is not killed ends with a
//!   final summary.
//! - Shutdown: the `shutdown` future (Ctrl-C, SIGTERM) stops the run: results that have
//!   already finished are recorded, tasks still in flight are abandoned (their nodes stay
//!   `running` for resume), the plan is saved, and the run reports `interrupted`.
//! - The event log always closes with `run_finished`, also when the run fails on its own
//!   error (a plan file that cannot be saved). The review of the report (`review_step.rs`)
//!   comes just before it, once the outcome is saved.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crate::agents::TaskRunner;
use crate::kernel::event::RunStarted;
use crate::kernel::{
    BudgetStop, EngineError, Event, EventLog, RunStatus, RunSummary, Shutdown, Totals,
};
use crate::plan::{NodeStatus, PlanFile, PlanStore};
use crate::planner::{PlanRound, RoundNotes};
use crate::review::{ReviewPaths, Reviewer};
use crate::settings::Budget;

/// How a workflow run is bounded.
#[derive(Debug, Clone, Copy)]
pub struct WorkflowOptions {
    pub max_rounds: u32,
    pub concurrency: usize,
    /// What the run may spend (`budget.rs`).
    pub budget: Budget,
}

/// What happens after the report.
pub enum ReviewStep {
    /// No review (`--no-review`, `review.enabled: false`).
    Off,
    /// No review, with the note saying why (the offline engine has no model).
    Skip(String),
    /// The review, by these roles, into these files.
    Run {
        reviewer: Box<Reviewer>,
        paths: ReviewPaths,
    },
}

/// Everything an engine is built from.
pub struct EngineParts<R, P> {
    pub store: PlanStore,
    pub plan: PlanFile,
    pub events: Arc<EventLog>,
    pub runner: Arc<R>,
    pub planner: P,
    pub options: WorkflowOptions,
    pub report_path: PathBuf,
    /// The `file://` URL of the corpus folder (ending in `/`) whose documents the report may
    /// link to; `None` without a local corpus.
    pub corpus_url: Option<String>,
    pub shutdown: Shutdown,
    /// What happens after the report (`review_step.rs`).
    pub review: ReviewStep,
}

/// One workflow run over one plan file.
pub struct Engine<R, P> {
    pub(super) store: PlanStore,
    pub(super) plan: PlanFile,
    pub(super) events: Arc<EventLog>,
    pub(super) runner: Arc<R>,
    pub(super) planner: P,
    pub(super) options: WorkflowOptions,
    pub(super) report_path: PathBuf,
    pub(super) corpus_url: Option<String>,
    pub(super) shutdown: Shutdown,
    pub(super) interrupted: bool,
    pub(super) totals: Totals,
    /// Why planning rounds of this invocation failed, for a degraded run's notice.
    pub(super) planning_errors: Vec<String>,
    /// Whether the round limit (`max_rounds`) made a round finalise, for a degraded run's
    /// notice: with nothing researched, that limit is why.
    pub(super) round_limit_finalised: bool,
    /// When this invocation started (the time budget counts from here).
    pub(super) started: Instant,
    /// Which limit stopped the run.
    pub(super) stopped: Option<BudgetStop>,
    /// What the next planning round must hear of: failed tasks, tasks the plan review dropped.
    pub(super) notes: RoundNotes,
    pub(super) review: ReviewStep,
}

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    pub fn new(parts: EngineParts<R, P>) -> Engine<R, P> {
        Engine {
            store: parts.store,
            plan: parts.plan,
            events: parts.events,
            runner: parts.runner,
            planner: parts.planner,
            options: parts.options,
            report_path: parts.report_path,
            corpus_url: parts.corpus_url,
            shutdown: parts.shutdown,
            interrupted: false,
            totals: Totals::default(),
            planning_errors: Vec::new(),
            round_limit_finalised: false,
            started: Instant::now(),
            stopped: None,
            notes: RoundNotes::default(),
            review: parts.review,
        }
    }

    pub(super) fn save(&mut self, why: &str) -> Result<(), EngineError> {
        self.store.save(&self.plan)?;
        self.events.emit(Event::FileWritten {
            path: self.store.path().display().to_string(),
            why: why.to_string(),
        });
        Ok(())
    }

    /// Runs the workflow to its final summary, then the review of its report. Whatever
    /// happens, the plan file records the outcome and the event log ends with `run_finished`
    /// (see `finish.rs`); the review comes after the outcome and cannot change it.
    pub async fn run(mut self) -> RunSummary {
        self.started = Instant::now();
        let started = self.started;
        self.events.emit(Event::RunStarted(RunStarted::Workflow {
            plan_file: self.store.path().display().to_string(),
            workflow_id: self.plan.workflow_id.clone(),
            max_rounds: self.options.max_rounds,
            concurrency: self.options.concurrency,
            round: self.plan.rounds + 1,
        }));
        let result = self.drive().await;
        let mut summary = self.finish_run(result, started);
        summary.review = self.review(&summary).await;
        self.close(&summary);
        summary
    }

    /// The loop of rounds and tasks, up to the run's end status.
    async fn drive(&mut self) -> Result<RunStatus, EngineError> {
        self.reopen_failed_final()?;
        let mut zero_streak = 0u32;
        loop {
            if self.run_pending().await? {
                return Ok(RunStatus::Interrupted);
            }
            if let Some(done) = self.plan.final_node().filter(|n| !n.is_pending()) {
                return Ok(match done.status {
                    NodeStatus::Completed => RunStatus::Completed,
                    _ => RunStatus::FinalFailed,
                });
            }
            if self.plan.final_node().is_some() {
                // A final node of a type that cannot run (`start`/`end`): nothing more to do.
                return Ok(RunStatus::FinalFailed);
            }
            // `max_rounds` bounds this invocation's rounds, not the plan's.
            if self.totals.rounds >= self.options.max_rounds {
                self.round_limit_finalised = true;
                self.add_final("the round limit was reached")?;
                continue;
            }
            if self.budget_spent() {
                self.add_final("the budget was reached")?;
                continue;
            }
            let last_round = self.totals.rounds + 1 >= self.options.max_rounds;
            self.round_limit_finalised |= last_round;
            let must_finalise = last_round || zero_streak >= 2;
            let planned_any = self.plan_round(must_finalise).await?;
            if self.interrupted {
                return Ok(RunStatus::Interrupted);
            }
            zero_streak = if planned_any { 0 } else { zero_streak + 1 };
        }
    }

    /// A final summary that failed in an earlier invocation runs again: resuming is how a run
    /// whose final summary failed once is finished.
    fn reopen_failed_final(&mut self) -> Result<(), EngineError> {
        let Some(id) = self
            .plan
            .final_node()
            .filter(|n| n.status == NodeStatus::Failed)
            .map(|n| n.node_id)
        else {
            return Ok(());
        };
        if let Some(node) = self.plan.node_mut(id) {
            node.status = NodeStatus::Planned;
        }
        tracing::info!("the final summary `{id}` failed before: running it again");
        self.save("final summary reopened")
    }
}
