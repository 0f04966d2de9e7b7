//! The engine's running side: every pending node runs on the run layer's scheduler, at most
//! `concurrency` at once, first every research task, then the final summary. The engine
//! alone decides what starts (once a budget is spent, no research task does) and writes what
//! ends through the ledger; a task that panics is recorded as a failed task, so the planner
//! hears of it like any other failure. On shutdown, results that already finished are
//! recorded before the rest is abandoned (started tasks stay `running`, queued ones
//! `planned`, for resume), so no finished work is paid for twice.
//!
//! Time: the research runs until the time budget is spent, then its running tasks get a grace
//! and are cut. The final summary is what the budget buys, so that budget never cuts it: under
//! a time budget it has a bound of its own from its start (`--final-time`).

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument;

use super::ledger::{Ended, Ledger};
use super::spending::Spending;
use crate::agents::{TaskError, TaskOutput, TaskRunner, task_input};
use crate::events::Event;
use crate::plan::{FINAL_BATCH, NodeId};
use crate::planner::FailedTask;
use crate::run::Shutdown;
use crate::run::scheduler::{Admit, Done, Scheduler};
use crate::workflow::EngineError;

/// The two passes over pending nodes: the research, then the final summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Research,
    Final,
}

type Queue = Scheduler<NodeId, Result<TaskOutput, TaskError>>;

/// The running side of a run: its task runner, how many tasks run at once, and the tasks that
/// failed since the planner last heard of them.
pub(super) struct Tasks<R> {
    runner: Arc<R>,
    concurrency: usize,
    failed: Vec<FailedTask>,
}

/// What a pass over the pending nodes works with: the run's ledger, its spending, and the
/// failures it collects.
struct Pass<'a> {
    ledger: &'a mut Ledger,
    spending: &'a mut Spending,
    failed: &'a mut Vec<FailedTask>,
}

impl<R: TaskRunner> Tasks<R> {
    pub(super) fn new(runner: R, concurrency: usize) -> Tasks<R> {
        Tasks {
            runner: Arc::new(runner),
            concurrency,
            failed: Vec::new(),
        }
    }

    /// The tasks that failed since the last call, for the next planning round.
    pub(super) fn take_failed(&mut self) -> Vec<FailedTask> {
        std::mem::take(&mut self.failed)
    }

    /// Runs every pending node: first all but the final one, then the final one. Returns
    /// whether `shutdown` interrupted the run.
    pub(super) async fn run_pending(
        &mut self,
        ledger: &mut Ledger,
        spending: &mut Spending,
        shutdown: &mut Shutdown,
    ) -> Result<bool, EngineError> {
        for phase in [Phase::Research, Phase::Final] {
            let ids: Vec<NodeId> = ledger
                .plan()
                .nodes
                .iter()
                .filter(|n| n.is_pending() && (n.batch == FINAL_BATCH) == (phase == Phase::Final))
                .map(|n| n.node_id)
                .collect();
            if ids.is_empty() {
                continue;
            }
            let queue = self.queue(ledger, ids);
            let mut pass = Pass {
                ledger: &mut *ledger,
                spending: &mut *spending,
                failed: &mut self.failed,
            };
            if pass.run(queue, phase, shutdown).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The nodes to run, queued in plan order; what the assembly of their inputs skipped or
    /// cut is logged and recorded.
    fn queue(&self, ledger: &Ledger, ids: Vec<NodeId>) -> Queue {
        let mut tasks = Scheduler::new(self.concurrency);
        for id in ids {
            let Some((input, notes)) = task_input(ledger.plan(), id) else {
                continue;
            };
            for w in &notes.warnings {
                tracing::debug!("task {id}: {w}");
            }
            for c in &notes.cuts {
                ledger.emit(Event::InputCut {
                    node: id.to_string(),
                    what: c.what.clone(),
                    chars: c.chars,
                    kept: c.kept,
                });
            }
            let runner = Arc::clone(&self.runner);
            let events = Arc::clone(ledger.events());
            // Log lines from inside the task (retries) name its node.
            let span = tracing::info_span!("task", node = %id);
            tasks.queue(id, move || {
                async move {
                    let observer = events.observer(&id.to_string());
                    runner.run(&input, &observer).await
                }
                .instrument(span)
            });
        }
        tasks
    }
}

impl Pass<'_> {
    /// Runs the queued tasks of one phase to their end; whether `shutdown` interrupted them.
    async fn run(
        &mut self,
        mut tasks: Queue,
        phase: Phase,
        shutdown: &mut Shutdown,
    ) -> Result<bool, EngineError> {
        let now = tokio::time::Instant::now();
        let far = crate::clock::deadline(now, crate::clock::LONGEST);
        let budget = *self.spending.budget();
        // The research ends at the budget's deadline; the final summary has its own bound.
        let (deadline, mut cut_at) = match phase {
            Phase::Research => (self.spending.deadline(), None),
            Phase::Final => {
                // A limit passed while the last round was planned still makes the run partial.
                self.spending.spent(self.ledger);
                (
                    None,
                    budget
                        .final_bound()
                        .map(|bound| crate::clock::deadline(now, bound)),
                )
            }
        };
        loop {
            self.start(&mut tasks)?;
            if tasks.is_idle() {
                break;
            }
            // Once the budget is spent, running research gets until `cut_at` to finish.
            if phase == Phase::Research && cut_at.is_none() && self.spending.stopped().is_some() {
                cut_at = Some(crate::clock::deadline(
                    tokio::time::Instant::now(),
                    budget.grace(),
                ));
            }
            tokio::select! {
                biased;
                _ = &mut *shutdown => {
                    self.drain(&mut tasks)?;
                    tasks.abort_all();
                    tracing::warn!("interrupted: stopping; tasks in flight stay `running` and run again on resume");
                    self.ledger.save("interrupted")?;
                    return Ok(true);
                }
                _ = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() && self.spending.stopped().is_none() => {
                    self.spending.spent(self.ledger);
                }
                _ = tokio::time::sleep_until(cut_at.unwrap_or(far)), if cut_at.is_some() => {
                    self.drain(&mut tasks)?;
                    self.cut(&mut tasks, phase)?;
                }
                done = tasks.next() => {
                    if let Some(done) = done
                        && let Err(e) = self.ended(done)
                    {
                        // Keep what already finished, abandon the rest (it stays `running`
                        // and runs again on resume).
                        let _ = self.drain(&mut tasks);
                        tasks.abort_all();
                        return Err(e);
                    }
                    // The budget bounds the research; what the final summary spends is
                    // recorded, and does not make a finished run partial.
                    if phase == Phase::Research {
                        self.spending.spent(self.ledger);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Starts queued tasks while slots are free. Once the budget is spent, a research task
    /// does not start (the final summary, which is what the budget buys, does). The starts
    /// are checkpointed once, after the tasks are under way (with the round that planned
    /// them, when it is not saved yet): no task waits for that fsync.
    fn start(&mut self, tasks: &mut Queue) -> Result<(), EngineError> {
        let stopped = self.spending.stopped().is_some();
        let ledger = &mut *self.ledger;
        let mut started = false;
        tasks.start(|&id| -> Result<Admit, EngineError> {
            let is_final = ledger
                .plan()
                .node(id)
                .is_some_and(|n| n.batch == FINAL_BATCH);
            if stopped && !is_final {
                let why = "the budget was spent before it started".to_string();
                ledger.task_ended(id, Err(TaskError::NotRun(why)), Duration::ZERO)?;
                return Ok(Admit::Skip);
            }
            ledger.task_started(id)?;
            started = true;
            Ok(Admit::Run)
        })?;
        if started {
            self.ledger.save("task started")?;
        }
        Ok(())
    }

    /// Records one ended task: its result, or a panic as a failure of its node.
    fn ended(
        &mut self,
        done: Done<NodeId, Result<TaskOutput, TaskError>>,
    ) -> Result<(), EngineError> {
        let result = done.outcome.unwrap_or_else(|panic| {
            tracing::error!("task {} panicked: {panic}", done.key);
            Err(TaskError::Panicked(panic))
        });
        if let Ended::Failed(failed) = self.ledger.task_ended(done.key, result, done.took)? {
            self.failed.push(failed);
        }
        Ok(())
    }

    /// The grace after a spent budget is over, or the final summary's own bound: every task
    /// still running is cut, and every queued one recorded as not run.
    fn cut(&mut self, tasks: &mut Queue, phase: Phase) -> Result<(), EngineError> {
        let (running, queued) = tasks.abort_all();
        let bound = self.spending.budget().final_bound().unwrap_or_default();
        for (id, took) in running {
            let error = match phase {
                Phase::Final => TaskError::TimedOut(format!(
                    "the final summary's own time bound ({} s, `--final-time` or \
                     `budget.finalSeconds`) ran out before the model answered; the model is \
                     slower than that: raise the bound, or resume with `--plan` to run the final \
                     summary again",
                    bound.as_secs()
                )),
                Phase::Research => {
                    TaskError::NotRun("cut: the budget was spent and its grace ran out".into())
                }
            };
            self.ended(Done {
                key: id,
                outcome: Ok(Err(error)),
                took,
            })?;
        }
        for id in queued {
            let why = "the budget was spent before it started".to_string();
            self.ledger
                .task_ended(id, Err(TaskError::NotRun(why)), Duration::ZERO)?;
        }
        Ok(())
    }

    /// Records every task that already ended, without waiting for anything.
    fn drain(&mut self, tasks: &mut Queue) -> Result<(), EngineError> {
        while let Some(done) = tasks.try_next() {
            self.ended(done)?;
        }
        Ok(())
    }
}
