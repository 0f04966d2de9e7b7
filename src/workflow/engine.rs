//! The workflow loop: plan a round, run the planned tasks with bounded concurrency, persist
//! every result as it completes, repeat until the final summary (batch -1) has run.
//!
//! - One writer: spawned tasks never touch the plan; they report to this loop, which updates
//!   the plan in memory and saves it atomically after every change (node order stays plan
//!   order). A crash therefore loses at most the tasks in flight, which stay `running` and are
//!   run again on resume.
//! - Concurrency: a semaphore with owned permits moved into the tasks. The final node runs only
//!   after every other pending node has finished.
//! - Termination: at most `max_rounds` planning rounds per invocation. The last round, and any
//!   round after two rounds in a row with zero tasks (or failed planning), tells the planner it
//!   must finalise; if it still does not, its tasks are discarded and the orchestrator adds the
//!   final summary over every completed node itself. Every run that is not killed ends with a
//!   final summary.
//! - Shutdown: the `shutdown` future (Ctrl-C, SIGTERM) stops the run at once: tasks in flight
//!   are abandoned (their nodes stay `running` for resume), the plan is saved, and the run
//!   reports `interrupted`.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use serde_json::json;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tracing::Instrument;
use tracing_indicatif::span_ext::IndicatifSpanExt;

use super::events::EventLog;
use super::report;
use crate::agents::{SearchAgent, SummaryAgent, TaskError, TaskInput, TaskOutput};
use crate::llm::LlmClient;
use crate::plan::{
    FINAL_BATCH, NodeId, NodeStatus, NodeType, PlanFile, PlanStore, Source, StoreError, segments,
};
use crate::planner::{FailedTask, LogOptions, Planner, RoundNotes, force_final};
use crate::prompts::Prompts;
use crate::search::SearchClient;

/// The most characters one input segment of a task contributes.
const SEGMENT_MAX_CHARS: usize = 12_000;

/// How a workflow run is bounded.
#[derive(Debug, Clone, Copy)]
pub struct WorkflowOptions {
    pub max_rounds: u32,
    pub concurrency: usize,
    pub log: LogOptions,
}

/// The LLM clients and search client the sub-agents use.
pub struct Agents {
    pub search_llm: LlmClient,
    pub summary_llm: LlmClient,
    pub search: Option<SearchClient>,
    pub prompts: Prompts,
}

impl Agents {
    async fn run(
        &self,
        input: &TaskInput,
        final_sources: Option<&[Source]>,
        observer: &dyn crate::http::RetryObserver,
    ) -> Result<TaskOutput, TaskError> {
        let summary = SummaryAgent {
            llm: &self.summary_llm,
            summary_prompt: &self.prompts.summary,
            final_prompt: &self.prompts.final_report,
        };
        match (input.kind, final_sources) {
            (_, Some(sources)) => summary.run_final(input, sources, observer).await,
            (NodeType::Search, None) => {
                SearchAgent {
                    llm: &self.search_llm,
                    search: self.search.as_ref(),
                    queries_prompt: &self.prompts.search_queries,
                    analysis_prompt: &self.prompts.search_analysis,
                }
                .run(input, observer)
                .await
            }
            (_, None) => summary.run(input, observer).await,
        }
    }
}

/// Counts reported at the end of a run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub rounds: u32,
    pub tasks_completed: u32,
    pub tasks_failed: u32,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    pub seconds: f64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// The final summary ran and the report is written.
    Completed,
    /// The final summary failed.
    FinalFailed,
    /// Stopped by a signal.
    Interrupted,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub status: RunStatus,
    pub final_node: Option<String>,
    pub report: Option<PathBuf>,
    pub totals: Totals,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot write the report `{path}`: {source}")]
    Report {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub type Shutdown = Pin<Box<dyn Future<Output = ()> + Send>>;

pub struct Engine {
    pub store: PlanStore,
    pub plan: PlanFile,
    pub events: Arc<EventLog>,
    pub agents: Arc<Agents>,
    pub planner_llm: LlmClient,
    pub repair_attempts: u32,
    pub options: WorkflowOptions,
    pub report_path: PathBuf,
    pub shutdown: Shutdown,
    interrupted: bool,
    totals: Totals,
    failed_since_round: Vec<FailedTask>,
}

impl Engine {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        store: PlanStore,
        plan: PlanFile,
        events: Arc<EventLog>,
        agents: Arc<Agents>,
        planner_llm: LlmClient,
        repair_attempts: u32,
        options: WorkflowOptions,
        report_path: PathBuf,
        shutdown: Shutdown,
    ) -> Engine {
        Engine {
            store,
            plan,
            events,
            agents,
            planner_llm,
            repair_attempts,
            options,
            report_path,
            shutdown,
            interrupted: false,
            totals: Totals::default(),
            failed_since_round: Vec::new(),
        }
    }

    fn now() -> String {
        Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
    }

    fn save(&mut self, why: &str) -> Result<(), EngineError> {
        self.store.save(&self.plan)?;
        self.events.emit(
            "file_written",
            json!({"path": self.store.path().display().to_string(), "why": why}),
        );
        Ok(())
    }

    /// Runs the workflow to its final summary.
    pub async fn run(mut self) -> Result<RunSummary, EngineError> {
        let started = Instant::now();
        self.events.emit(
            "run_started",
            json!({
                "plan_file": self.store.path().display().to_string(),
                "workflow_id": self.plan.workflow_id,
                "max_rounds": self.options.max_rounds,
                "concurrency": self.options.concurrency,
            }),
        );
        let mut zero_streak = 0u32;
        let status = loop {
            if self.run_pending().await? {
                break RunStatus::Interrupted;
            }
            if let Some(done) = self.plan.final_node().filter(|n| !n.is_pending()) {
                break match done.status {
                    NodeStatus::Completed => RunStatus::Completed,
                    _ => RunStatus::FinalFailed,
                };
            }
            if self.plan.final_node().is_some() {
                // A final node of a type that cannot run (`start`/`end`): nothing more to do.
                break RunStatus::FinalFailed;
            }
            if self.totals.rounds >= self.options.max_rounds {
                self.add_final("the round limit was reached")?;
                continue;
            }
            let must_finalise =
                self.totals.rounds + 1 >= self.options.max_rounds || zero_streak >= 2;
            let planned_any = self.plan_round(must_finalise).await?;
            if self.interrupted {
                break RunStatus::Interrupted;
            }
            zero_streak = if planned_any { 0 } else { zero_streak + 1 };
        };

        let final_node = self.plan.final_node().map(|n| n.node_id.to_string());
        let report = if status == RunStatus::Completed {
            self.write_report()?
        } else {
            None
        };
        self.totals.retries = self.events.retries();
        self.totals.seconds = started.elapsed().as_secs_f64();
        self.events.emit(
            "run_finished",
            json!({
                "status": status,
                "final_node": final_node,
                "report": report.as_ref().map(|p| p.display().to_string()),
                "totals": self.totals,
            }),
        );
        Ok(RunSummary {
            status,
            final_node,
            report,
            totals: self.totals.clone(),
        })
    }

    /// One planning round. Returns whether it planned any task.
    async fn plan_round(&mut self, must_finalise: bool) -> Result<bool, EngineError> {
        let round = self.totals.rounds + 1;
        let notes = RoundNotes {
            failed: std::mem::take(&mut self.failed_since_round),
            must_finalise,
        };
        let planner = Planner {
            llm: &self.planner_llm,
            system_prompt: self.agents.prompts.planning.clone(),
            repair_attempts: self.repair_attempts,
            log: self.options.log,
        };
        let before = self.plan.clone();
        let observer = self.events.observer("planner");
        let span = tracing::info_span!("planning", round);
        span.pb_set_message(&format!("planning round {round}"));
        let result = tokio::select! {
            biased;
            _ = &mut self.shutdown => {
                self.interrupted = true;
                return Ok(false);
            }
            r = planner.run(&mut self.plan, &notes, &observer).instrument(span) => r,
        };
        self.totals.rounds = round;
        match result {
            Ok(outcome) => {
                self.add_usage(outcome.usage);
                let ids: Vec<String> = outcome
                    .applied
                    .planned
                    .iter()
                    .map(|n| n.node_id.to_string())
                    .collect();
                if must_finalise && !outcome.answer.is_final {
                    self.plan = before;
                    self.events.emit(
                        "round_planned",
                        json!({"round": round, "tasks": ids, "is_final": false, "discarded": true}),
                    );
                    self.add_final("the planner did not finalise in the last round")?;
                    return Ok(true);
                }
                tracing::info!(
                    "round {round}: planned {} task(s){}",
                    ids.len(),
                    if outcome.answer.is_final {
                        " (final)"
                    } else {
                        ""
                    }
                );
                self.events.emit(
                    "round_planned",
                    json!({
                        "round": round,
                        "tasks": ids,
                        "is_final": outcome.answer.is_final,
                        "refs": outcome.applied.resolved_refs,
                        "calls": outcome.calls,
                        "tokens": outcome.usage.total_tokens,
                    }),
                );
                self.save("round planned")?;
                Ok(!outcome.applied.planned.is_empty())
            }
            Err(err) => {
                tracing::warn!("round {round}: planning failed: {err}");
                self.events.emit(
                    "planning_failed",
                    json!({"round": round, "error": err.to_string()}),
                );
                // The failed round's notes still matter to the next one.
                self.failed_since_round = notes.failed;
                if must_finalise {
                    self.add_final("planning failed in the last round")?;
                    return Ok(true);
                }
                Ok(false)
            }
        }
    }

    fn add_final(&mut self, reason: &str) -> Result<(), EngineError> {
        let node = force_final(&mut self.plan, &Self::now());
        tracing::info!(
            "adding the final summary `{}` myself: {reason}",
            node.node_id
        );
        self.events.emit(
            "final_forced",
            json!({"node": node.node_id.to_string(), "reason": reason, "p_node": node.p_node}),
        );
        self.save("final summary added")
    }

    fn add_usage(&mut self, usage: crate::plan::Usage) {
        self.totals.prompt_tokens += usage.prompt_tokens;
        self.totals.completion_tokens += usage.completion_tokens;
        self.totals.total_tokens += usage.total_tokens;
    }

    /// Runs every pending node: first all but the final one, then the final one. Returns
    /// whether the run was interrupted.
    async fn run_pending(&mut self) -> Result<bool, EngineError> {
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

    fn task_input(&self, id: NodeId) -> Option<(TaskInput, Option<Vec<Source>>)> {
        let node = self.plan.node(id)?;
        let segs = segments::render(&self.plan, [node.p_node.as_str()], SEGMENT_MAX_CHARS);
        for w in &segs.warnings {
            tracing::warn!("task {id}: {w}");
        }
        let input = TaskInput {
            node_id: id,
            kind: node.kind,
            title: node.title.clone(),
            question: self.plan.question().to_string(),
            context: segs.text,
        };
        let sources = (node.batch == FINAL_BATCH).then(|| report::final_sources(&self.plan, node));
        Some((input, sources))
    }

    async fn run_batch(&mut self, ids: Vec<NodeId>) -> Result<bool, EngineError> {
        let semaphore = Arc::new(Semaphore::new(self.options.concurrency.max(1)));
        let (started_tx, mut started_rx) = mpsc::unbounded_channel::<NodeId>();
        let mut tasks: JoinSet<(NodeId, Result<TaskOutput, TaskError>, Duration)> = JoinSet::new();
        let batch_span = tracing::info_span!("tasks", count = ids.len());
        batch_span.pb_set_length(ids.len() as u64);
        batch_span.pb_set_message("running tasks");
        batch_span.pb_start();
        for id in ids {
            let Some((input, sources)) = self.task_input(id) else {
                continue;
            };
            let agents = Arc::clone(&self.agents);
            let events = Arc::clone(&self.events);
            let semaphore = Arc::clone(&semaphore);
            let started_tx = started_tx.clone();
            let span = tracing::info_span!(parent: &batch_span, "task", node = %id);
            span.pb_set_message(&input.title);
            tasks.spawn(
                async move {
                    // The semaphore is never closed, so this waits for a permit and gets one.
                    let _permit = semaphore.acquire_owned().await;
                    let _ = started_tx.send(id);
                    let clock = Instant::now();
                    let observer = events.observer(&id.to_string());
                    let result = agents.run(&input, sources.as_deref(), &observer).await;
                    (id, result, clock.elapsed())
                }
                .instrument(span),
            );
        }
        drop(started_tx);

        let mut started_open = true;
        loop {
            tokio::select! {
                biased;
                _ = &mut self.shutdown, if !self.interrupted => {
                    self.interrupted = true;
                    tasks.abort_all();
                    tracing::warn!("interrupted: stopping; tasks in flight stay `running` and run again on resume");
                    self.save("interrupted")?;
                    return Ok(true);
                }
                msg = started_rx.recv(), if started_open => match msg {
                    Some(id) => self.mark_started(id)?,
                    None => started_open = false,
                },
                joined = tasks.join_next() => match joined {
                    Some(Ok((id, result, took))) => {
                        self.finish(id, result, took)?;
                        batch_span.pb_inc(1);
                    }
                    Some(Err(e)) => {
                        // A task panicked: its node stays `running` and is retried on resume.
                        tracing::error!("a task ended abnormally: {e}");
                        batch_span.pb_inc(1);
                    }
                    None => break,
                },
            }
        }
        Ok(false)
    }

    fn mark_started(&mut self, id: NodeId) -> Result<(), EngineError> {
        let now = Self::now();
        let Some(node) = self.plan.node_mut(id) else {
            return Ok(());
        };
        node.status = NodeStatus::Running;
        node.attempts = Some(node.attempts.unwrap_or(0) + 1);
        node.updated_at = Some(now);
        let fields = json!({
            "node": id.to_string(),
            "type": node.kind,
            "title": node.title,
            "attempt": node.attempts,
            "final": node.batch == FINAL_BATCH,
        });
        tracing::info!("task {id} started: {}", node.title);
        self.events.emit("task_started", fields);
        self.save("task started")
    }

    fn finish(
        &mut self,
        id: NodeId,
        result: Result<TaskOutput, TaskError>,
        took: Duration,
    ) -> Result<(), EngineError> {
        let now = Self::now();
        let Some(node) = self.plan.node_mut(id) else {
            return Ok(());
        };
        node.updated_at = Some(now.clone());
        node.finished_at = Some(now);
        match result {
            Ok(out) => {
                node.status = NodeStatus::Completed;
                node.summary = out.summary;
                node.info = out.info.render();
                node.sources = out.sources;
                node.usage = Some(out.usage);
                let fields = json!({
                    "node": id.to_string(),
                    "seconds": took.as_secs_f64(),
                    "tokens": out.usage.total_tokens,
                    "sources": node.sources.len(),
                });
                tracing::info!("task {id} completed in {:.1} s", took.as_secs_f64());
                self.events.emit("task_completed", fields);
                self.totals.tasks_completed += 1;
                self.add_usage(out.usage);
                self.save("task completed")
            }
            Err(err) => {
                let message = err.to_string();
                node.status = NodeStatus::Failed;
                node.errors.push(message.clone());
                self.failed_since_round.push(FailedTask {
                    node_id: id.to_string(),
                    title: node.title.clone(),
                    error: message.clone(),
                });
                tracing::warn!("task {id} failed: {message}");
                self.events.emit(
                    "task_failed",
                    json!({"node": id.to_string(), "seconds": took.as_secs_f64(), "error": message}),
                );
                self.totals.tasks_failed += 1;
                self.save("task failed")
            }
        }
    }

    fn write_report(&self) -> Result<Option<PathBuf>, EngineError> {
        let Some(node) = self.plan.final_node() else {
            return Ok(None);
        };
        let text = report::render(&self.plan, node, &self.store.path().display().to_string());
        let path = self.report_path.clone();
        let dir = path.parent().filter(|p| !p.as_os_str().is_empty());
        let write = || -> std::io::Result<()> {
            let mut tmp =
                tempfile::NamedTempFile::new_in(dir.unwrap_or(std::path::Path::new(".")))?;
            std::io::Write::write_all(&mut tmp, text.as_bytes())?;
            tmp.persist(&path).map_err(|e| e.error)?;
            Ok(())
        };
        write().map_err(|source| EngineError::Report {
            path: path.clone(),
            source,
        })?;
        Ok(Some(path))
    }
}
