//! [`Ledger`]: the only writer of a run's plan, its checkpoints, its totals and its events.
//!
//! Every change to the plan goes through a method here and is checkpointed at once, whole, before
//! the next one (one writer: a crash loses at most the tasks in flight, which stay `running` and
//! run again on resume), except a task's start, checkpointed with the others of its batch once they
//! are under way (see [`Ledger::task_started`]). Where a checkpoint goes is behind [`Checkpoints`]:
//! the plan file ([`crate::plan::PlanStore`], saved atomically), alone or [`Mirrored`] in a
//! [`Mirror`] (a queue's database), which keeps every checkpoint too.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::outcome::EngineError;
use crate::agents::{TaskError, TaskOutput};
use crate::clock;
use crate::events::{Event, EventLog, Observer, Totals};
use crate::plan::{FINAL_BATCH, Node, NodeId, NodeStatus, PlanFile, PlanStore, StoreError};
use crate::planner::FailedTask;
use crate::usage::Usage;

/// Where a run's plan is kept, whole, at every checkpoint.
pub trait Checkpoints: Send {
    /// Keeps `plan` as the latest checkpoint, whole and atomically: a failed save leaves the
    /// previous one.
    fn save(&mut self, plan: &PlanFile) -> Result<(), StoreError>;

    /// The plan's name as the user gave it, for messages and events.
    fn name(&self) -> &Path;
}

impl Checkpoints for PlanStore {
    fn save(&mut self, plan: &PlanFile) -> Result<(), StoreError> {
        PlanStore::save(self, plan)
    }

    fn name(&self) -> &Path {
        self.path()
    }
}

/// A second keeper of every checkpoint, after the plan file (a queue's database): a run whose
/// mirror cannot keep a checkpoint stops, as when its file cannot be written.
pub trait Mirror: Send {
    /// Keeps `plan`, whole, as the latest checkpoint, after every line handed to its tees
    /// before; the message says why it cannot.
    fn keep(&mut self, plan: &PlanFile) -> Result<(), String>;

    /// Where the lines the run appends to its file `suffix` (`events.ndjson`,
    /// `transcript.jsonl`) go too, as they are written.
    fn tee(&self, _suffix: &str) -> Option<crate::atomic::Tee> {
        None
    }
}

/// The plan file, each of its checkpoints kept by a [`Mirror`] too.
pub struct Mirrored {
    pub store: PlanStore,
    pub mirror: Box<dyn Mirror>,
}

impl Checkpoints for Mirrored {
    fn save(&mut self, plan: &PlanFile) -> Result<(), StoreError> {
        self.store.save(plan)?;
        self.mirror
            .keep(plan)
            .map_err(|message| StoreError::Mirror {
                path: self.store.path().to_path_buf(),
                message,
            })
    }

    fn name(&self) -> &Path {
        self.store.path()
    }
}

/// How a task's end was written down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    Completed,
    /// It failed: the next planning round hears of it.
    Failed(FailedTask),
    /// The budget kept it from running, or cut it.
    NotRun,
    /// The node is not in the plan (nothing was written).
    Unknown,
}

/// A run's plan, where it is checkpointed, its event log and its totals.
pub struct Ledger {
    checkpoints: Box<dyn Checkpoints>,
    plan: PlanFile,
    events: Arc<EventLog>,
    totals: Totals,
    /// Why the plan in memory is ahead of its checkpoint, when a step left its save to the next
    /// one ([`Ledger::save_later`]).
    owed: Option<String>,
}

impl Ledger {
    pub fn new(checkpoints: Box<dyn Checkpoints>, plan: PlanFile, events: Arc<EventLog>) -> Ledger {
        Ledger {
            checkpoints,
            plan,
            events,
            totals: Totals::default(),
            owed: None,
        }
    }

    pub fn plan(&self) -> &PlanFile {
        &self.plan
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Every token the run's calls cost so far: those of the answers its tasks and rounds
    /// used, and those of streamed attempts that broke on the way ([`EventLog::unanswered`]),
    /// which the server bills all the same. What the budget weighs.
    pub fn tokens(&self) -> Usage {
        let mut tokens = self.totals.tokens;
        tokens.add(self.events.unanswered());
        tokens
    }

    /// The plan's name as the user gave it.
    pub fn name(&self) -> &Path {
        self.checkpoints.name()
    }

    pub fn emit(&self, event: Event) {
        self.events.emit(event);
    }

    /// What the calls of `node` report, as its events.
    pub fn observer(&self, node: &str) -> Observer<'_> {
        self.events.observer(node)
    }

    /// The event log, for a task that outlives a borrow of the ledger.
    pub fn events(&self) -> &Arc<EventLog> {
        &self.events
    }

    /// Checkpoints the plan as it is (`file_written`, with `why`, after the whys of the saves
    /// left to it).
    pub fn save(&mut self, why: &str) -> Result<(), EngineError> {
        self.save_later(why);
        self.save_owed()
    }

    /// Leaves the checkpoint of a change (`why`) to the next save: for a step whose next one
    /// comes before anything is awaited (a round's plan is saved with the starts of its tasks,
    /// once they are under way, so that the tasks wait for no fsync). Whoever runs the next
    /// step saves, or calls [`Ledger::save_owed`].
    pub fn save_later(&mut self, why: &str) {
        self.owed = Some(match self.owed.take() {
            Some(owed) => format!("{owed}, {why}"),
            None => why.to_string(),
        });
    }

    /// Checkpoints the changes left for later ([`Ledger::save_later`]), if any.
    pub fn save_owed(&mut self) -> Result<(), EngineError> {
        let Some(why) = self.owed.take() else {
            return Ok(());
        };
        self.checkpoints.save(&self.plan)?;
        self.emit(Event::FileWritten {
            path: self.name().display().to_string(),
            why,
        });
        Ok(())
    }

    /// Changes the plan with `change` in memory only: the next [`Ledger::save`] checkpoints
    /// it, with what else belongs to the same step.
    pub fn stage<T>(&mut self, change: impl FnOnce(&mut PlanFile) -> T) -> T {
        change(&mut self.plan)
    }

    /// Changes the plan with `change`, then checkpoints it.
    pub fn edit<T>(
        &mut self,
        why: &str,
        change: impl FnOnce(&mut PlanFile) -> T,
    ) -> Result<T, EngineError> {
        let out = change(&mut self.plan);
        self.save(why)?;
        Ok(out)
    }

    /// Replaces the plan by `plan` (a planning round's draft), then checkpoints it.
    pub fn commit(&mut self, plan: PlanFile, why: &str) -> Result<(), EngineError> {
        self.plan = plan;
        self.save(why)
    }

    /// Counts a planning round of this invocation and what its calls spent.
    pub fn count_round(&mut self, usage: Usage) {
        self.totals.rounds += 1;
        self.totals.tokens.add(usage);
    }

    /// The totals as the run ends: the retries its calls made, every token they cost
    /// ([`Ledger::tokens`]) and how long it took.
    pub fn close_totals(&mut self, took: Duration) -> Totals {
        self.totals.retries = self.events.retries();
        self.totals.seconds = took.as_secs_f64();
        let mut totals = self.totals.clone();
        totals.tokens = self.tokens();
        totals
    }

    /// Node `id` starts: `running`, one attempt more, `task_started`. Not checkpointed here:
    /// the task must not wait for an fsync its safety does not need (a task lost in a crash
    /// runs again on resume, `running` or `planned`, its answered calls salvaged from the
    /// transcript). The caller checkpoints the starts of a batch once, after its tasks are
    /// under way.
    pub fn task_started(&mut self, id: NodeId) -> Result<(), EngineError> {
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
        self.emit(event);
        Ok(())
    }

    /// Node `id` ended with `result` after `took`: written into it, its event, checkpointed
    /// (a completed final summary with the run's end, which follows it without a wait). An
    /// endpoint that cannot be used, or a replay that diverged, puts the node back to
    /// `planned` (it is not the task's fault) and stops the run.
    pub fn task_ended(
        &mut self,
        id: NodeId,
        result: Result<TaskOutput, TaskError>,
        took: Duration,
    ) -> Result<Ended, EngineError> {
        let now = clock::now();
        let Some(node) = self.plan.node_mut(id) else {
            return Ok(Ended::Unknown);
        };
        node.updated_at = Some(now.clone());
        node.finished_at = Some(now);
        match result {
            Ok(out) => {
                let is_final = node.batch == FINAL_BATCH;
                let event = record_output(node, out.cleaned(), took, &mut self.totals);
                self.emit(event);
                match is_final {
                    true => self.save_later("task completed"),
                    false => self.save("task completed")?,
                }
                Ok(Ended::Completed)
            }
            Err(TaskError::NotRun(why)) => {
                // Not a failure of the task: the run stopped spending before it could run.
                node.status = NodeStatus::Failed;
                node.errors.push(format!("not run: {why}"));
                self.emit(Event::TaskNotRun {
                    node: id.to_string(),
                    why,
                });
                self.totals.tasks_not_run += 1;
                self.save("task not run")?;
                Ok(Ended::NotRun)
            }
            Err(err) if err.is_unusable() || err.is_diverged() => {
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
                let failed = FailedTask {
                    node_id: id.to_string(),
                    title: node.title.clone(),
                    error: message.clone(),
                };
                tracing::warn!("task {id} failed: {message}");
                self.emit(Event::TaskFailed {
                    node: id.to_string(),
                    seconds: took.as_secs_f64(),
                    error: message,
                });
                self.totals.tasks_failed += 1;
                self.save("task failed")?;
                Ok(Ended::Failed(failed))
            }
        }
    }
}

/// A task's output written into its node, counted in the totals; its `task_completed`.
fn record_output(node: &mut Node, out: TaskOutput, took: Duration, totals: &mut Totals) -> Event {
    node.status = NodeStatus::Completed;
    node.summary = out.summary;
    node.info = out.info.render();
    node.sources = out.sources;
    node.truncated = out.truncated;
    if node.batch == FINAL_BATCH {
        let (cited, supported) = crate::agents::claims::counts(&out.claims);
        totals.claims_cited = cited;
        totals.claims_supported = supported;
    }
    node.claims = out.claims;
    node.quality = out.quality;
    node.usage = Some(out.usage);
    tracing::info!(
        "task {} completed in {:.1} s",
        node.node_id,
        took.as_secs_f64()
    );
    totals.tasks_completed += 1;
    totals.tokens.add(out.usage);
    Event::TaskCompleted {
        node: node.node_id.to_string(),
        seconds: took.as_secs_f64(),
        tokens: out.usage.total_tokens,
        sources: node.sources.len(),
        truncated: out.truncated,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Info;

    /// Checkpoints kept in memory, to see what each save held.
    struct Kept(std::sync::Arc<std::sync::Mutex<Vec<PlanFile>>>);

    impl Checkpoints for Kept {
        fn save(&mut self, plan: &PlanFile) -> Result<(), StoreError> {
            self.0.lock().expect("lock").push(plan.clone());
            Ok(())
        }

        fn name(&self) -> &Path {
            Path::new("kept.json")
        }
    }

    fn ledger() -> (
        Ledger,
        std::sync::Arc<std::sync::Mutex<Vec<PlanFile>>>,
        tempfile::TempDir,
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let events = Arc::new(EventLog::open(&dir.path().join("e.ndjson")).expect("log"));
        let mut plan = PlanFile::new("Q?", "wf-test".into(), clock::now());
        let mut node = plan.nodes[0].clone();
        node.node_id = NodeId::parse("b").expect("id");
        node.kind = crate::plan::NodeType::Search;
        node.batch = 2;
        node.status = NodeStatus::Planned;
        plan.nodes.push(node);
        let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let ledger = Ledger::new(Box::new(Kept(kept.clone())), plan, events);
        (ledger, kept, dir)
    }

    #[test]
    fn every_change_is_a_whole_checkpoint_at_once() {
        let (mut ledger, kept, _dir) = ledger();
        let b = NodeId::parse("b").expect("id");
        ledger.task_started(b).expect("start");
        assert!(
            kept.lock().expect("lock").is_empty(),
            "a start waits for no checkpoint"
        );
        ledger.save("task started").expect("the batch's starts");
        let mut info = Info::default();
        info.set("llm", "analysis");
        let out = TaskOutput {
            summary: "Found.".into(),
            info,
            sources: Vec::new(),
            usage: Usage {
                prompt_tokens: 3,
                completion_tokens: 4,
                total_tokens: 7,
            },
            truncated: false,
            ..Default::default()
        };
        let ended = ledger
            .task_ended(b, Ok(out), Duration::from_millis(5))
            .expect("end");
        assert_eq!(ended, Ended::Completed);
        let kept = kept.lock().expect("lock");
        assert_eq!(kept.len(), 2, "one checkpoint per change");
        assert_eq!(kept[0].node(b).expect("b").status, NodeStatus::Running);
        assert_eq!(kept[1].node(b).expect("b").summary, "Found.");
        assert_eq!(ledger.totals().tokens.total_tokens, 7);
        assert_eq!(ledger.totals().tasks_completed, 1);
    }

    #[test]
    fn an_unusable_endpoint_puts_the_node_back_and_stops_the_run() {
        let (mut ledger, _kept, _dir) = ledger();
        let b = NodeId::parse("b").expect("id");
        ledger.task_started(b).expect("start");
        let stop = ledger.task_ended(
            b,
            Err(TaskError::Unusable("the key is refused".into())),
            Duration::ZERO,
        );
        assert!(matches!(stop, Err(EngineError::Unusable(_))));
        assert_eq!(
            ledger.plan().node(b).expect("b").status,
            NodeStatus::Planned
        );
    }

    #[test]
    fn a_save_left_for_later_goes_with_the_next_one_or_alone_when_paid() {
        let (mut ledger, kept, dir) = ledger();
        let whys = || -> Vec<String> {
            std::fs::read_to_string(dir.path().join("e.ndjson"))
                .expect("events")
                .lines()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .filter(|e| e["event"] == "file_written")
                .filter_map(|e| e["why"].as_str().map(String::from))
                .collect()
        };
        ledger.stage(|plan| plan.rounds = 1);
        ledger.save_later("round planned");
        assert!(kept.lock().expect("lock").is_empty(), "nothing written yet");
        ledger.save("task started").expect("save");
        assert_eq!(
            kept.lock().expect("lock").len(),
            1,
            "one checkpoint for both"
        );
        assert_eq!(kept.lock().expect("lock")[0].rounds, 1);
        ledger.save_owed().expect("nothing owed");
        assert_eq!(
            kept.lock().expect("lock").len(),
            1,
            "nothing owed, nothing saved"
        );
        ledger.save_later("round planned");
        ledger.save_owed().expect("owed");
        assert_eq!(kept.lock().expect("lock").len(), 2);
        assert_eq!(whys(), ["round planned, task started", "round planned"]);
    }
}
