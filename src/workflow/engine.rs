//! The workflow loop: plan a round, run the planned tasks with bounded concurrency, record
//! every result as it completes, repeat until the final summary (batch -1) has run.
//!
//! The engine drives; its parts do one job each: the [`Ledger`] is the only writer of
//! the plan, its checkpoints, totals and events (so a crash loses at most the tasks in flight,
//! which stay `running` and run again on resume); a [`crate::run::scheduler::Scheduler`]
//! runs the tasks (`tasks.rs`); the budget check and the finish are plain functions
//! ([`crate::run::budget`], [`crate::workflow::ending`]). Planning rounds are in `rounds.rs`,
//! the end in `finish.rs`, the review after the report in `review_step.rs`.
//!
//! - Termination: at most `max_rounds` planning rounds per invocation. The last round, and any
//!   round after two rounds in a row with zero tasks (or failed planning), tells the planner it
//!   must finalise; if it still does not, its tasks are discarded and the orchestrator adds the
//!   final summary over every completed node itself. Every run that is not killed ends with a
//!   final summary.
//! - Shutdown: the `shutdown` future (Ctrl-C, SIGTERM) stops the run: results that have
//!   already finished are recorded, tasks still in flight are abandoned (their nodes stay
//!   `running` for resume), the plan is saved, and the run reports `interrupted`.
//! - The event log always closes with `run_finished`, also when the run fails on its own
//!   error (a plan file that cannot be saved).

use std::sync::Arc;
use std::time::Instant;

use crate::agents::TaskRunner;
use crate::events::catalogue::RunStarted;
use crate::events::{Event, RunStatus};
use crate::plan::{Beside, NodeStatus};
use crate::planner::{PlanRound, RoundNotes};
use crate::review::{ReviewPaths, Reviewer};
use crate::run::{BudgetStop, Shutdown};
use crate::settings::RunOptions;
use crate::workflow::{EngineError, Ledger, RunSummary};

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

/// What a workflow run is given, whichever engine plans it and runs its tasks.
pub struct RunParts {
    pub ledger: Ledger,
    pub options: RunOptions,
    pub shutdown: Shutdown,
    /// The files beside the plan: the report, the gate's verdict.
    pub files: Beside,
    /// The `file://` URL of the corpus folder (ending in `/`) whose documents the report may
    /// link to; `None` without a local corpus.
    pub corpus_url: Option<String>,
    /// What happens after the report (`review_step.rs`).
    pub review: ReviewStep,
    /// Whether a search provider or a corpus is there to search: a run that never searched
    /// although it could is `degraded` (`ending::junk`).
    pub could_search: bool,
}

/// What the run learns of itself as it goes, for its end.
pub(super) struct RunState {
    pub(super) interrupted: bool,
    /// Why planning rounds of this invocation failed, for a degraded run's notice.
    pub(super) planning_errors: Vec<String>,
    /// Whether the round limit made a round finalise: with nothing researched, that is why.
    pub(super) round_limit_finalised: bool,
    /// When this invocation started (the time budget counts from here).
    pub(super) started: Instant,
    /// Which limit stopped the research.
    pub(super) stopped: Option<BudgetStop>,
    /// What the next planning round must hear of: failed tasks, tasks the plan gate dropped.
    pub(super) notes: RoundNotes,
}

/// One workflow run over one plan.
pub struct Engine<R, P> {
    pub(super) run: RunParts,
    pub(super) runner: Arc<R>,
    pub(super) planner: P,
    pub(super) state: RunState,
}

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    pub fn new(run: RunParts, runner: R, planner: P) -> Engine<R, P> {
        Engine {
            run,
            runner: Arc::new(runner),
            planner,
            state: RunState {
                interrupted: false,
                planning_errors: Vec::new(),
                round_limit_finalised: false,
                started: Instant::now(),
                stopped: None,
                notes: RoundNotes::default(),
            },
        }
    }

    /// Runs the workflow to its final summary, then the review of its report. Whatever
    /// happens, the plan file records the outcome and the event log ends with `run_finished`
    /// (see `finish.rs`); the review comes after the outcome and cannot change it.
    pub async fn run(mut self) -> RunSummary {
        self.state.started = Instant::now();
        let ledger = &self.run.ledger;
        ledger.emit(Event::RunStarted(RunStarted::Workflow {
            plan_file: ledger.name().display().to_string(),
            workflow_id: ledger.plan().workflow_id.clone(),
            max_rounds: self.run.options.max_rounds,
            concurrency: self.run.options.concurrency,
            round: ledger.plan().rounds + 1,
        }));
        let result = self.drive().await;
        let mut summary = self.finish_run(result);
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
            let plan = self.run.ledger.plan();
            if let Some(done) = plan.final_node().filter(|n| !n.is_pending()) {
                return Ok(match done.status {
                    NodeStatus::Completed => RunStatus::Completed,
                    _ => RunStatus::FinalFailed,
                });
            }
            if plan.final_node().is_some() {
                // A final node of a type that cannot run (`start`/`end`): nothing more to do.
                return Ok(RunStatus::FinalFailed);
            }
            // `max_rounds` bounds this invocation's rounds, not the plan's.
            let rounds = self.run.ledger.totals().rounds;
            let max_rounds = self.run.options.max_rounds;
            if rounds >= max_rounds {
                self.state.round_limit_finalised = true;
                self.add_final("the round limit was reached")?;
                continue;
            }
            if self.budget_spent() {
                self.add_final("the budget was reached")?;
                continue;
            }
            let last_round = rounds + 1 >= max_rounds;
            self.state.round_limit_finalised |= last_round;
            let must_finalise = last_round || zero_streak >= 2;
            let planned_any = self.plan_round(must_finalise).await?;
            if self.state.interrupted {
                return Ok(RunStatus::Interrupted);
            }
            zero_streak = if planned_any { 0 } else { zero_streak + 1 };
        }
    }

    /// A final summary that failed in an earlier invocation runs again: resuming is how a run
    /// whose final summary failed once is finished.
    fn reopen_failed_final(&mut self) -> Result<(), EngineError> {
        let Some(id) = self
            .run
            .ledger
            .plan()
            .final_node()
            .filter(|n| n.status == NodeStatus::Failed)
            .map(|n| n.node_id)
        else {
            return Ok(());
        };
        tracing::info!("the final summary `{id}` failed before: running it again");
        self.run.ledger.edit("final summary reopened", |plan| {
            if let Some(node) = plan.node_mut(id) {
                node.status = NodeStatus::Planned;
            }
        })
    }
}
