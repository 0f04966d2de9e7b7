//! Writing task lifecycle into the plan: a node's start (status `running`, one more attempt)
//! and its end (the sub-agent's output, or the error), each saved at once and recorded as an
//! event. Failures are kept for the next planner input.

use std::time::Duration;

use super::engine::Engine;
use crate::agents::{TaskError, TaskOutput, TaskRunner};
use crate::clock;
use crate::kernel::EngineError;
use crate::kernel::Event;
use crate::plan::{FINAL_BATCH, NodeId, NodeStatus, Usage};
use crate::planner::{FailedTask, PlanRound};

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    pub(super) fn mark_started(&mut self, id: NodeId) -> Result<(), EngineError> {
        let now = clock::now();
        let Some(node) = self.plan.node_mut(id) else {
            return Ok(());
        };
        node.status = NodeStatus::Running;
        node.attempts = Some(node.attempts.unwrap_or(0) + 1);
        node.updated_at = Some(now);
        let event = Event::TaskStarted {
            node: id.to_string(),
            kind: node.kind,
            title: node.title.clone(),
            attempt: node.attempts,
            is_final: node.batch == FINAL_BATCH,
        };
        tracing::info!("task {id} started: {}", node.title);
        self.events.emit(event);
        self.save("task started")
    }

    pub(super) fn finish(
        &mut self,
        id: NodeId,
        result: Result<TaskOutput, TaskError>,
        took: Duration,
    ) -> Result<(), EngineError> {
        let now = clock::now();
        let Some(node) = self.plan.node_mut(id) else {
            return Ok(());
        };
        node.updated_at = Some(now.clone());
        node.finished_at = Some(now);
        match result {
            Ok(out) => {
                let out = out.cleaned();
                node.status = NodeStatus::Completed;
                node.summary = out.summary;
                node.info = out.info.render();
                node.sources = out.sources;
                node.truncated = out.truncated;
                node.usage = Some(Usage {
                    prompt_tokens: out.usage.prompt_tokens,
                    completion_tokens: out.usage.completion_tokens,
                    total_tokens: out.usage.total_tokens,
                });
                let event = Event::TaskCompleted {
                    node: id.to_string(),
                    seconds: took.as_secs_f64(),
                    tokens: out.usage.total_tokens,
                    sources: node.sources.len(),
                    truncated: out.truncated,
                };
                tracing::info!("task {id} completed in {:.1} s", took.as_secs_f64());
                self.events.emit(event);
                self.totals.tasks_completed += 1;
                self.totals.tokens.add(out.usage);
                self.save("task completed")
            }
            Err(TaskError::NotRun(why)) => {
                // Not a failure of the task: the run stopped spending before it could run.
                node.status = NodeStatus::Failed;
                node.errors.push(format!("not run: {why}"));
                self.events.emit(Event::TaskNotRun {
                    node: id.to_string(),
                    why,
                });
                self.totals.tasks_not_run += 1;
                self.save("task not run")
            }
            Err(err) if err.is_unusable() || err.is_diverged() => {
                // Not the task's fault: it runs again once the configuration (or the
                // program) is fixed.
                let message = err.to_string();
                node.status = NodeStatus::Planned;
                node.errors.push(message.clone());
                tracing::error!("task {id}: {message}");
                if err.is_diverged() {
                    self.save("task stopped: the replay diverged")?;
                    return Err(EngineError::Diverged(message));
                }
                self.save("task stopped: endpoint unusable")?;
                Err(EngineError::Unusable(message))
            }
            Err(err) => {
                let message = err.to_string();
                node.status = NodeStatus::Failed;
                node.errors.push(message.clone());
                self.notes.failed.push(FailedTask {
                    node_id: id.to_string(),
                    title: node.title.clone(),
                    error: message.clone(),
                });
                tracing::warn!("task {id} failed: {message}");
                self.events.emit(Event::TaskFailed {
                    node: id.to_string(),
                    seconds: took.as_secs_f64(),
                    error: message,
                });
                self.totals.tasks_failed += 1;
                self.save("task failed")
            }
        }
    }
}
