//! The engine's running side: every pending node runs as a spawned task, at most
//! `concurrency` at once. The engine itself starts each task when a slot is free, so that it
//! alone decides what starts: once a budget is spent, nothing new does. The final node runs
//! only after every other pending node has finished.
//!
//! Time: the research runs until the time budget is spent, then its running tasks get a grace
//! and are cut. The final summary is what the budget buys, so that budget never cuts it: under
//! a time budget it has a bound of its own from its start (`--final-time`).
//!
//! Tasks report back through their join handles; only the engine touches the plan. A task
//! that panics is recorded as a failed task, so the planner hears of it like any other
//! failure. On shutdown, results that already finished are recorded before the rest is
//! abandoned (started tasks stay `running`, queued ones `planned`, for resume), so no
//! finished work is paid for twice.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::task::{JoinError, JoinSet};
use tracing::Instrument;

use super::engine::Engine;
use crate::agents::{TaskError, TaskInput, TaskOutput, TaskRunner, task_input};
use crate::kernel::EngineError;
use crate::kernel::Event;
use crate::plan::{FINAL_BATCH, NodeId};
use crate::planner::PlanRound;

/// What a spawned task hands back.
type Finished = (NodeId, Result<TaskOutput, TaskError>, Duration);

/// The two passes over pending nodes: the research, then the final summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Research,
    Final,
}

/// The tasks of one batch: those waiting for a slot, and those running.
struct InFlight {
    queue: VecDeque<(NodeId, TaskInput)>,
    tasks: JoinSet<Finished>,
    nodes: HashMap<tokio::task::Id, (NodeId, Instant)>,
}

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// Runs every pending node: first all but the final one, then the final one. Returns
    /// whether the run was interrupted.
    pub(super) async fn run_pending(&mut self) -> Result<bool, EngineError> {
        for phase in [Phase::Research, Phase::Final] {
            let ids: Vec<NodeId> = self
                .plan
                .nodes
                .iter()
                .filter(|n| n.is_pending() && (n.batch == FINAL_BATCH) == (phase == Phase::Final))
                .map(|n| n.node_id)
                .collect();
            if !ids.is_empty() && self.run_batch(ids, phase).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn run_batch(&mut self, ids: Vec<NodeId>, phase: Phase) -> Result<bool, EngineError> {
        let mut flight = InFlight {
            queue: self.prepare(ids),
            tasks: JoinSet::new(),
            nodes: HashMap::new(),
        };
        let now = tokio::time::Instant::now();
        let far = now + Duration::from_secs(365 * 24 * 3600);
        let budget = self.options.budget;
        // The research ends at the budget's deadline; the final summary has its own bound.
        let (deadline, mut cut_at) = match phase {
            Phase::Research => (self.deadline(), None),
            Phase::Final => {
                // A limit passed while the last round was planned still makes the run partial.
                self.budget_spent();
                (None, budget.final_bound().map(|bound| now + bound))
            }
        };
        loop {
            self.start_tasks(&mut flight)?;
            if flight.tasks.is_empty() {
                break;
            }
            // Once the budget is spent, running research gets until `cut_at` to finish.
            if phase == Phase::Research && cut_at.is_none() && self.stopped.is_some() {
                cut_at = Some(tokio::time::Instant::now() + budget.grace());
            }
            tokio::select! {
                biased;
                _ = &mut self.shutdown, if !self.interrupted => {
                    self.interrupted = true;
                    self.drain(&mut flight)?;
                    flight.tasks.abort_all();
                    tracing::warn!("interrupted: stopping; tasks in flight stay `running` and run again on resume");
                    self.save("interrupted")?;
                    return Ok(true);
                }
                _ = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() && self.stopped.is_none() => {
                    self.budget_spent();
                }
                _ = tokio::time::sleep_until(cut_at.unwrap_or(far)), if cut_at.is_some() => {
                    self.drain(&mut flight)?;
                    self.cut(&mut flight, phase)?;
                }
                joined = flight.tasks.join_next_with_id() => {
                    if let Some(joined) = joined
                        && let Err(e) = self.joined(&mut flight, joined)
                    {
                        // Keep what already finished, abandon the rest (it stays `running`
                        // and runs again on resume).
                        let _ = self.drain(&mut flight);
                        flight.tasks.abort_all();
                        return Err(e);
                    }
                    // The budget bounds the research; what the final summary spends is
                    // recorded, and does not make a finished run partial.
                    if phase == Phase::Research {
                        self.budget_spent();
                    }
                }
            }
        }
        Ok(false)
    }

    /// The inputs of the nodes to run, in plan order; what their assembly skipped or cut is
    /// logged and recorded.
    fn prepare(&self, ids: Vec<NodeId>) -> VecDeque<(NodeId, TaskInput)> {
        let mut queue = VecDeque::new();
        for id in ids {
            let Some((input, notes)) = task_input(&self.plan, id) else {
                continue;
            };
            // A bad `p_node` ref comes only from the plan file, which was warned about when it
            // was opened (the planner's refs are checked as they are written).
            for w in &notes.warnings {
                tracing::debug!("task {id}: {w}");
            }
            for c in &notes.cuts {
                self.events.emit(Event::InputCut {
                    node: id.to_string(),
                    what: c.what.clone(),
                    chars: c.chars,
                    kept: c.kept,
                });
            }
            queue.push_back((id, input));
        }
        queue
    }

    /// Starts queued tasks while slots are free. Once the budget is spent, a queued task
    /// other than the final summary (which is what the budget buys) does not start.
    fn start_tasks(&mut self, flight: &mut InFlight) -> Result<(), EngineError> {
        let slots = self.options.concurrency.max(1);
        while flight.tasks.len() < slots {
            let Some((id, input)) = flight.queue.pop_front() else {
                break;
            };
            if self.stopped.is_some() && input.final_sources.is_none() {
                let why = "the budget was spent before it started".to_string();
                self.finish(id, Err(TaskError::NotRun(why)), Duration::ZERO)?;
                continue;
            }
            self.mark_started(id)?;
            let runner = Arc::clone(&self.runner);
            let events = Arc::clone(&self.events);
            // Log lines from inside the task (retries) name its node.
            let span = tracing::info_span!("task", node = %id);
            let handle = flight.tasks.spawn(
                async move {
                    let clock = Instant::now();
                    let observer = events.observer(&id.to_string());
                    let result = runner.run(&input, &observer).await;
                    (id, result, clock.elapsed())
                }
                .instrument(span),
            );
            flight.nodes.insert(handle.id(), (id, Instant::now()));
        }
        Ok(())
    }

    /// Records one joined task: its result, or a panic as a failure of its node.
    fn joined(
        &mut self,
        flight: &mut InFlight,
        joined: Result<(tokio::task::Id, Finished), JoinError>,
    ) -> Result<(), EngineError> {
        match joined {
            Ok((task, (id, result, took))) => {
                flight.nodes.remove(&task);
                self.finish(id, result, took)
            }
            Err(err) => {
                let Some((id, spawned)) = flight.nodes.remove(&err.id()) else {
                    return Ok(());
                };
                if err.is_cancelled() {
                    return Ok(());
                }
                let message = panic_message(err);
                tracing::error!("task {id} panicked: {message}");
                self.finish(id, Err(TaskError::Panicked(message)), spawned.elapsed())
            }
        }
    }

    /// The grace after a spent budget is over, or the final summary's own bound: every task
    /// still running is cut, and every queued one recorded as not run.
    fn cut(&mut self, flight: &mut InFlight, phase: Phase) -> Result<(), EngineError> {
        flight.tasks.abort_all();
        let running: Vec<(NodeId, Instant)> = flight.nodes.drain().map(|(_, n)| n).collect();
        let bound = self.options.budget.final_bound().unwrap_or_default();
        for (id, started) in running {
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
            self.finish(id, Err(error), started.elapsed())?;
        }
        while let Some((id, _)) = flight.queue.pop_front() {
            let why = "the budget was spent before it started".to_string();
            self.finish(id, Err(TaskError::NotRun(why)), Duration::ZERO)?;
        }
        Ok(())
    }

    /// Records every task that already finished, without waiting for anything.
    fn drain(&mut self, flight: &mut InFlight) -> Result<(), EngineError> {
        while let Some(joined) = flight.tasks.try_join_next_with_id() {
            self.joined(flight, joined)?;
        }
        Ok(())
    }
}

fn panic_message(err: JoinError) -> String {
    match err.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".into()),
        Err(err) => err.to_string(),
    }
}
