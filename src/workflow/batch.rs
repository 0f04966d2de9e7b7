//! The engine's running side: every pending node runs as a spawned task, at most
//! `concurrency` at once (a semaphore with owned permits moved into the tasks). The final node
//! runs only after every other pending node has finished.
//!
//! Tasks report back over a channel (started) and their join handles (finished); only the
//! engine touches the plan. A task that panics is recorded as a failed task, so the planner
//! hears of it like any other failure. On shutdown, results that already finished are
//! recorded before the rest is abandoned, so no finished work is paid for twice.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{Semaphore, mpsc};
use tokio::task::{JoinError, JoinSet};
use tracing::Instrument;

use super::engine::{Engine, EngineError};
use crate::agents::{TaskError, TaskOutput, TaskRunner, task_input};
use crate::plan::{FINAL_BATCH, NodeId};
use crate::planner::PlanRound;

/// What a spawned task hands back.
type Finished = (NodeId, Result<TaskOutput, TaskError>, Duration);

/// The tasks of one batch in flight, and which node each task runs.
struct InFlight {
    tasks: JoinSet<Finished>,
    nodes: HashMap<tokio::task::Id, (NodeId, Instant)>,
    started: mpsc::UnboundedReceiver<NodeId>,
    started_open: bool,
}

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// Runs every pending node: first all but the final one, then the final one. Returns
    /// whether the run was interrupted.
    pub(super) async fn run_pending(&mut self) -> Result<bool, EngineError> {
        for final_phase in [false, true] {
            let ids: Vec<NodeId> = self
                .plan
                .nodes
                .iter()
                .filter(|n| n.is_pending() && (n.batch == FINAL_BATCH) == final_phase)
                .map(|n| n.node_id)
                .collect();
            if !ids.is_empty() && self.run_batch(ids).await? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    async fn run_batch(&mut self, ids: Vec<NodeId>) -> Result<bool, EngineError> {
        let mut flight = self.spawn_all(ids);
        loop {
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
                msg = flight.started.recv(), if flight.started_open => match msg {
                    Some(id) => self.mark_started(id)?,
                    None => flight.started_open = false,
                },
                joined = flight.tasks.join_next_with_id() => match joined {
                    Some(joined) => {
                        if let Err(e) = self.joined(&mut flight, joined) {
                            // Keep what already finished, abandon the rest (it stays `running`
                            // and runs again on resume).
                            let _ = self.drain(&mut flight);
                            flight.tasks.abort_all();
                            return Err(e);
                        }
                    }
                    None => break,
                },
            }
        }
        Ok(false)
    }

    fn spawn_all(&self, ids: Vec<NodeId>) -> InFlight {
        let semaphore = Arc::new(Semaphore::new(self.options.concurrency.max(1)));
        let (started_tx, started) = mpsc::unbounded_channel::<NodeId>();
        let mut flight = InFlight {
            tasks: JoinSet::new(),
            nodes: HashMap::new(),
            started,
            started_open: true,
        };
        for id in ids {
            let Some((input, notes)) = task_input(&self.plan, id) else {
                continue;
            };
            for w in &notes.warnings {
                tracing::warn!("task {id}: {w}");
            }
            for c in &notes.cuts {
                self.events.emit(
                    "input_cut",
                    serde_json::json!({"node": id.to_string(), "what": c.what, "chars": c.chars, "kept": c.kept}),
                );
            }
            let runner = Arc::clone(&self.runner);
            let events = Arc::clone(&self.events);
            let semaphore = Arc::clone(&semaphore);
            let started_tx = started_tx.clone();
            // Log lines from inside the task (retries) name its node.
            let span = tracing::info_span!("task", node = %id);
            let handle = flight.tasks.spawn(
                async move {
                    // The semaphore is never closed, so this waits for a permit and gets one.
                    let _permit = semaphore.acquire_owned().await;
                    let _ = started_tx.send(id);
                    let clock = Instant::now();
                    let observer = events.observer(&id.to_string());
                    let result = runner.run(&input, &observer).await;
                    (id, result, clock.elapsed())
                }
                .instrument(span),
            );
            flight.nodes.insert(handle.id(), (id, Instant::now()));
        }
        flight
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
                // Its start message was sent before the panic; record it first so the node's
                // attempts stay right.
                while let Ok(started) = flight.started.try_recv() {
                    self.mark_started(started)?;
                }
                let message = panic_message(err);
                tracing::error!("task {id} panicked: {message}");
                self.finish(id, Err(TaskError::Panicked(message)), spawned.elapsed())
            }
        }
    }

    /// Records every start message and every finished task that is already there, without
    /// waiting for anything.
    fn drain(&mut self, flight: &mut InFlight) -> Result<(), EngineError> {
        while let Ok(id) = flight.started.try_recv() {
            self.mark_started(id)?;
        }
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
