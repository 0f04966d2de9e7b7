//! [`Worker`]: a driver of runs like a local batch, on the run layer's scheduler, whose questions
//! come from the queue: it takes as many as it has free slots (`--jobs`), runs each through
//! [`RunWorkflow`] from its last checkpoint (inside its [`question_span`]), and stores how each
//! ended, telling the progress display of each start and end. Its leases are renewed beside
//! (`lease.rs`). Ctrl-C or SIGTERM: no new question; running ones checkpoint, go back
//! to the queue, and the worker ends interrupted. `--drain`: it ends once its batch (or every
//! batch) has nothing pending or running.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tracing::Instrument;

use super::claim::{self, Claimed};
use super::db::{Db, QueueError};
use super::end::End;
use super::ender::{EndStore, Ender, clear, shown_name};
use super::job::{Attempted, attempt};
use super::lease::{Leases, spawn_beats};
use super::writer::Writer;
use crate::events::RunStatus;
use crate::logging::question_span;
use crate::progress::{BatchUpdate, Progress, QuestionEnd};
use crate::run::Shutdown;
use crate::run::scheduler::{Admit, Done, Scheduler};
use crate::run::shutdown::on_watch;
use crate::settings::RunOptions;
use crate::workflow::{EngineError, RunWorkflow};

/// How often the queue is asked for work while slots are free.
const POLL: Duration = Duration::from_millis(250);

/// How often a draining worker with nothing left to run asks again: other workers' last
/// questions may still fail back into the queue, and when none does, the worker ends this
/// soon after the batch's last question (a batch's wall time is its last worker's).
const DRAIN_POLL: Duration = Duration::from_millis(50);

/// What a worker does.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// Only this batch; `None`: every batch.
    pub batch: Option<String>,
    pub jobs: usize,
    pub max_attempts: u32,
    pub lease: Duration,
    pub drain: bool,
}

/// How a worker ended.
#[derive(Debug, Default)]
pub struct WorkerEnd {
    pub interrupted: bool,
    /// An endpoint could not be used, and why: the worker took no further question.
    pub unusable: Option<String>,
    /// Attempts this worker ran to an end.
    pub ran: usize,
}

/// A worker of the queue.
pub struct Worker<W> {
    pub db: Db,
    pub runner: Arc<W>,
    pub run_options: RunOptions,
    pub options: WorkerOptions,
    /// This process in the queue (`host:pid:random`).
    pub name: String,
    /// Where the questions' files live while they run.
    pub scratch: PathBuf,
    /// The progress display, on a terminal.
    pub display: Option<Arc<dyn Progress>>,
}

impl<W: RunWorkflow + 'static> Worker<W> {
    /// Runs questions until stopped, or (with `drain`) until nothing is left.
    pub async fn run(&self, mut stop: Shutdown) -> Result<WorkerEnd, QueueError> {
        let leases = Leases::default();
        let beats = spawn_beats(leases.clone(), self.db.clone(), self.options.lease);
        let mut ender = Ender::spawn(EndStore {
            db: self.db.clone(),
            scratch: self.scratch.clone(),
            max_attempts: self.options.max_attempts,
            display: self.display.clone(),
        });
        // Every attempt's lines are stored before its end is: the writer may stop with the loop.
        let (writer, _writing) = Writer::spawn(self.db.clone());
        let (tell, told) = watch::channel(false);
        let mut end = WorkerEnd::default();
        let mut jobs: Scheduler<Claimed, Attempted> = Scheduler::new(self.options.jobs);
        let mut running = 0;
        self.show(BatchUpdate::Begin { total: None });
        let result = loop {
            let taking = !end.interrupted && end.unusable.is_none();
            if taking && running < self.options.jobs {
                let taken = match self.take(&leases, self.options.jobs - running).await {
                    Ok(taken) => taken,
                    Err(e) => break Err(e),
                };
                for c in taken {
                    running += 1;
                    let job = self.job(c.clone(), on_watch(told.clone()), &writer);
                    jobs.queue(c, move || job);
                }
                let _ = jobs.start(|_| Ok::<_, std::convert::Infallible>(Admit::Run));
            }
            if running == 0 && (!taking || self.options.drain) {
                // What is left is judged once this worker's own ends are stored.
                ender.flush().await;
                if !taking || self.nothing_left().await? {
                    break Ok(());
                }
            }
            let poll = if running == 0 && self.options.drain {
                DRAIN_POLL
            } else {
                POLL
            };
            tokio::select! {
                () = &mut stop, if !end.interrupted => {
                    end.interrupted = true;
                    tracing::warn!("interrupted: no new question; running ones checkpoint and go back to the queue");
                    let _ = tell.send(true);
                }
                done = jobs.next(), if running > 0 => {
                    // Every end that came meanwhile is handed on too, so that their slots
                    // are filled by one claim.
                    let mut done = done;
                    while let Some(one) = done {
                        running -= 1;
                        self.ended(one, &mut end, &ender);
                        done = jobs.try_next();
                    }
                }
                () = ender.failed() => break Ok(()),
                () = tokio::time::sleep(poll), if taking => {}
            }
        };
        beats.abort();
        let stored = ender.close().await;
        self.show(BatchUpdate::Finished);
        let ran = match (result, stored) {
            (Err(e), _) | (Ok(()), Err(e)) => return Err(e),
            (Ok(()), Ok(ran)) => ran,
        };
        end.ran = ran;
        Ok(end)
    }

    fn show(&self, update: BatchUpdate) {
        if let Some(display) = &self.display {
            display.show(update);
        }
    }

    /// Up to `free` questions, from the batch served or each batch in turn.
    async fn take(&self, leases: &Leases, mut free: usize) -> Result<Vec<Claimed>, QueueError> {
        let mut taken = Vec::new();
        for batch in self.batches().await? {
            if free == 0 {
                break;
            }
            let ctx = leases.worker(&self.db, &self.name, &batch).await?;
            let more = claim::take(&self.db, &ctx, &batch, free, self.options.max_attempts).await?;
            free -= more.len().min(free);
            for c in &more {
                let line = format!(
                    "question `{}` of batch `{}`: attempt {} starts",
                    c.id, c.batch, c.attempt
                );
                match self.display {
                    Some(_) => tracing::debug!("{line}"),
                    None => tracing::info!("{line}"),
                }
                self.show(BatchUpdate::Started {
                    name: shown_name(c),
                    query: c.query.clone(),
                });
            }
            taken.extend(more);
        }
        Ok(taken)
    }

    /// The batches to take from: the one served, or every batch with work left, oldest first.
    async fn batches(&self) -> Result<Vec<String>, QueueError> {
        if let Some(batch) = &self.options.batch {
            return Ok(vec![batch.clone()]);
        }
        self.db
            .retrying("listing the batches", || {
                sqlx::query_scalar(
                    "SELECT b.name FROM researchflow.batches b WHERE EXISTS (
                        SELECT 1 FROM researchflow.questions q
                        WHERE q.batch = b.name AND q.status IN ('pending', 'running'))
                     ORDER BY b.created_at, b.name",
                )
                .fetch_all(&self.db.pool)
            })
            .await
    }

    /// Whether nothing is pending or running in the batch served (or in any batch).
    async fn nothing_left(&self) -> Result<bool, QueueError> {
        let batch = self.options.batch.clone();
        let left: i64 = self
            .db
            .retrying("counting what is left", || {
                sqlx::query_scalar(
                    "SELECT count(*) FROM researchflow.questions
                     WHERE ($1::text IS NULL OR batch = $1) AND status IN ('pending', 'running')",
                )
                .bind(batch.clone())
                .fetch_one(&self.db.pool)
            })
            .await?;
        Ok(left == 0)
    }

    fn job(
        &self,
        c: Claimed,
        shutdown: Shutdown,
        writer: &Writer,
    ) -> impl Future<Output = Attempted> + Send + 'static {
        let span = question_span(&shown_name(&c));
        attempt(
            self.db.clone(),
            writer.clone(),
            Arc::clone(&self.runner),
            c,
            self.scratch.clone(),
            self.run_options,
            shutdown,
        )
        .instrument(span)
    }

    /// Hands how a question's attempt ended to the ender, which stores it.
    fn ended(&self, done: Done<Claimed, Attempted>, end: &mut WorkerEnd, ender: &Ender) {
        let c = done.key;
        let outcome = match done.outcome {
            Ok(Attempted { lost: true, .. }) => {
                tracing::warn!(
                    "question `{}`: another worker took it over; its run here is dropped",
                    c.id
                );
                clear(&self.scratch, &c);
                self.show(BatchUpdate::Ended {
                    name: shown_name(&c),
                    end: QuestionEnd::Stopped,
                    tokens: 0,
                });
                return;
            }
            Ok(Attempted { finished, .. }) => finished,
            Err(panic) => Err(crate::exit::CommandError::failure(anyhow::anyhow!(
                "the run stopped on an internal error: {panic}"
            ))),
        };
        let what = match outcome {
            Ok(finished) => {
                let s = finished.summary;
                match s.status {
                    RunStatus::Interrupted => End::Released("interrupted".into()),
                    RunStatus::Failed if matches!(s.failure, Some(EngineError::Unusable(_))) => {
                        end.unusable = s.reason.clone();
                        End::Released(s.reason.unwrap_or_default())
                    }
                    RunStatus::Failed => {
                        End::Failed(s.reason.unwrap_or_else(|| "the run failed".into()))
                    }
                    status => End::Ended {
                        status: status.into(),
                        totals: s.totals,
                        reason: s.reason,
                        review: s.review,
                    },
                }
            }
            Err(e) => End::Failed(e.to_string()),
        };
        ender.send(c, what);
    }
}

/// This process's name in the queue: `host:pid:random`, unique among every worker.
pub fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| crate::text::one_line(h.trim(), 60))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    let random = ulid::Ulid::generate().to_string().to_lowercase();
    format!(
        "{host}:{}:{}",
        std::process::id(),
        &random[random.len() - 6..]
    )
}
