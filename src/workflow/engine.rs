//! The workflow loop: plan a round, run the planned tasks with bounded concurrency, record
//! every result as it completes, repeat until the final summary (batch -1) has run.
//!
//! The engine drives; its parts each own their state and do one job: the [`Ledger`] is the
//! only writer of the plan, its checkpoints, totals and events (so a crash loses at most the
//! tasks in flight, which stay `running` and run again on resume); `tasks.rs` ([`Tasks`]) runs
//! the pending nodes on the run layer's scheduler and keeps the failures for the planner;
//! `rounds.rs` ([`Rounds`]) plans and keeps what the next round must hear of; `spending.rs`
//! ([`Spending`]) watches the budget; `finish.rs` ([`Ending`]) ends the run, its status and
//! reason plain functions ([`crate::workflow::ending`]); `review_step.rs` ([`ReviewStep`])
//! reviews the report. They share nothing but what the engine hands them.
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

use super::finish::{self, Ending, Told};
use super::review_step::ReviewStep;
use super::rounds::{self, Planned, Rounds};
use super::spending::Spending;
use super::tasks::Tasks;
use crate::agents::TaskRunner;
use crate::events::catalogue::RunStarted;
use crate::events::{Event, RunStatus};
use crate::plan::{Beside, NodeStatus};
use crate::planner::PlanRound;
use crate::run::Shutdown;
use crate::settings::RunOptions;
use crate::workflow::{EngineError, Ledger, RunSummary};

/// What a workflow run is given, whichever engine plans it and runs its tasks.
pub struct RunParts {
    pub ledger: Ledger,
    pub options: RunOptions,
    pub shutdown: Shutdown,
    /// The files beside the plan: the report, the plan review.
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

/// One workflow run over one plan.
pub struct Engine<R, P> {
    ledger: Ledger,
    options: RunOptions,
    shutdown: Shutdown,
    spending: Spending,
    tasks: Tasks<R>,
    rounds: Rounds<P>,
    ending: Ending,
    review: ReviewStep,
}

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    pub fn new(run: RunParts, runner: R, planner: P) -> Engine<R, P> {
        Engine {
            spending: Spending::new(run.options.budget),
            tasks: Tasks::new(runner, run.options.concurrency),
            rounds: Rounds::new(planner, run.files.plan_review),
            ending: Ending::new(run.files.report, run.corpus_url, run.could_search),
            review: run.review,
            ledger: run.ledger,
            options: run.options,
            shutdown: run.shutdown,
        }
    }

    /// Runs the workflow to its final summary, then the review of its report. Whatever
    /// happens, the plan file records the outcome and the event log ends with `run_finished`
    /// (see `finish.rs`); the review comes after the outcome and cannot change it.
    pub async fn run(mut self) -> RunSummary {
        self.spending.restart();
        let ledger = &self.ledger;
        ledger.emit(Event::RunStarted(RunStarted::Workflow {
            plan_file: ledger.name().display().to_string(),
            workflow_id: ledger.plan().workflow_id.clone(),
            max_rounds: self.options.max_rounds,
            concurrency: self.options.concurrency,
            round: ledger.plan().rounds + 1,
        }));
        let result = self.drive().await;
        self.rounds.settle().await;
        let interrupted = matches!(result, Ok(RunStatus::Interrupted));
        let told = Told {
            options: &self.options,
            spending: &self.spending,
            planning_errors: self.rounds.errors(),
            round_limit_finalised: self.rounds.limit_finalised(),
        };
        let mut summary = self.ending.finish(&mut self.ledger, &told, result);
        let review = std::mem::replace(&mut self.review, ReviewStep::Off);
        summary.review = review
            .run(&mut self.ledger, &mut self.shutdown, &summary, interrupted)
            .await;
        finish::close(&self.ledger, &summary);
        summary
    }

    /// The loop of rounds and tasks, up to the run's end status.
    async fn drive(&mut self) -> Result<RunStatus, EngineError> {
        reopen_failed_final(&mut self.ledger)?;
        loop {
            let interrupted = self
                .tasks
                .run_pending(&mut self.ledger, &mut self.spending, &mut self.shutdown)
                .await?;
            self.rounds.hear(self.tasks.take_failed());
            if interrupted {
                return Ok(RunStatus::Interrupted);
            }
            let plan = self.ledger.plan();
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
            let rounds = self.ledger.totals().rounds;
            let max_rounds = self.options.max_rounds;
            if rounds >= max_rounds {
                self.rounds.limit_reached();
                rounds::add_final(&mut self.ledger, "the round limit was reached");
                continue;
            }
            if self.spending.spent(&self.ledger) {
                rounds::add_final(&mut self.ledger, "the budget was reached");
                continue;
            }
            // A round that started no task is saved before the next one is planned.
            self.ledger.save_owed()?;
            let last = rounds + 1 >= max_rounds;
            let planned = self
                .rounds
                .next(&mut self.ledger, &mut self.shutdown, last)
                .await?;
            if let Planned::Interrupted = planned {
                return Ok(RunStatus::Interrupted);
            }
        }
    }
}

/// A final summary that failed in an earlier invocation runs again: resuming is how a run
/// whose final summary failed once is finished.
fn reopen_failed_final(ledger: &mut Ledger) -> Result<(), EngineError> {
    let Some(id) = ledger
        .plan()
        .final_node()
        .filter(|n| n.status == NodeStatus::Failed)
        .map(|n| n.node_id)
    else {
        return Ok(());
    };
    tracing::info!("the final summary `{id}` failed before: running it again");
    ledger.edit("final summary reopened", |plan| {
        if let Some(node) = plan.node_mut(id) {
            node.status = NodeStatus::Planned;
        }
    })
}
