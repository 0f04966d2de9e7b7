//! [`Ender`]: stores a worker's question ends beside its loop, so that a slot freed by an end
//! is filled at once instead of after the end's transaction. Ends that come while one is being
//! stored wait and are stored together, in one transaction (`end.rs`): the first batch of a
//! batch ends nearly at once, and each end in a transaction of its own made the slots wait
//! for one commit after another.

use std::path::Path;
use std::sync::Arc;

use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use super::claim::Claimed;
use super::db::{Db, QueueError};
use super::end::{End, Ending, finish, spent};
use super::job::plan_path;
use crate::progress::{BatchUpdate, Progress, QuestionEnd};

/// At most this many ends in one transaction.
const TOGETHER: usize = 64;

/// What the loop sends: an end to store, or a wish to hear when everything sent is stored.
enum Sent {
    End(Box<(Claimed, End)>),
    Flush(oneshot::Sender<()>),
}

/// The task storing a worker's ends, and how to reach it.
pub struct Ender {
    sender: mpsc::UnboundedSender<Sent>,
    task: JoinHandle<Result<usize, QueueError>>,
    failed: watch::Receiver<bool>,
}

/// What the task needs to store an end and tell of it.
pub struct EndStore {
    pub db: Db,
    pub scratch: std::path::PathBuf,
    pub max_attempts: u32,
    pub display: Option<Arc<dyn Progress>>,
}

impl Ender {
    /// Starts the task.
    pub fn spawn(store: EndStore) -> Ender {
        let (sender, receiver) = mpsc::unbounded_channel();
        let (fail, failed) = watch::channel(false);
        let task = tokio::spawn(store.run(receiver, fail));
        Ender {
            sender,
            task,
            failed,
        }
    }

    /// Queues question `c`'s end.
    pub fn send(&self, c: Claimed, end: End) {
        // After a failure the task is gone and `close` returns why.
        let _ = self.sender.send(Sent::End(Box::new((c, end))));
    }

    /// Waits until every end sent so far is stored (or the task failed).
    pub async fn flush(&self) {
        let (told, heard) = oneshot::channel();
        if self.sender.send(Sent::Flush(told)).is_ok() {
            let _ = heard.await;
        }
    }

    /// Resolves when storing an end failed (the worker must stop; `close` says why); never
    /// otherwise.
    pub async fn failed(&mut self) {
        if self.failed.wait_for(|f| *f).await.is_err() {
            std::future::pending::<()>().await;
        }
    }

    /// Stores what is left and ends the task: how many attempts were stored as this worker's.
    pub async fn close(self) -> Result<usize, QueueError> {
        drop(self.sender);
        self.task.await.unwrap_or_else(|e| {
            Err(QueueError::Database(format!(
                "storing the questions' ends stopped on an internal error: {e}"
            )))
        })
    }
}

impl EndStore {
    async fn run(
        self,
        mut receiver: mpsc::UnboundedReceiver<Sent>,
        fail: watch::Sender<bool>,
    ) -> Result<usize, QueueError> {
        let mut ran = 0;
        let mut ends = Vec::new();
        let mut flushes = Vec::new();
        while let Some(first) = receiver.recv().await {
            let mut next = Some(first);
            while let Some(sent) = next.take() {
                match sent {
                    Sent::End(sent) => {
                        let (c, end) = *sent;
                        let files = super::local::read_ended(&plan_path(&self.scratch, &c));
                        ends.push(Ending {
                            claimed: c,
                            end,
                            files,
                        });
                    }
                    Sent::Flush(told) => flushes.push(told),
                }
                if ends.len() < TOGETHER {
                    next = receiver.try_recv().ok();
                }
            }
            if !ends.is_empty() {
                let held = match finish(&self.db, &ends, self.max_attempts).await {
                    Ok(held) => held,
                    Err(e) => {
                        let _ = fail.send(true);
                        return Err(e);
                    }
                };
                for (ending, held) in ends.drain(..).zip(held) {
                    ran += usize::from(held);
                    self.tell(&ending, held);
                    self.clear(&ending.claimed);
                }
            }
            for told in flushes.drain(..) {
                let _ = told.send(());
            }
        }
        Ok(ran)
    }

    /// Removes question `c`'s files from the worker's folder once its end is stored: the
    /// database holds them, and a worker that runs for days must not keep every question it
    /// ran on its disk (nor remove them all at its exit).
    fn clear(&self, c: &Claimed) {
        clear(&self.scratch, c);
    }

    /// Tells the display and the log how a stored end went.
    fn tell(&self, ending: &Ending, held: bool) {
        let (c, what) = (&ending.claimed, &ending.end);
        if let Some(display) = &self.display {
            display.show(BatchUpdate::Ended {
                name: shown_name(c),
                end: ended_as(what, held, c.attempt, self.max_attempts),
                tokens: match what {
                    End::Ended { totals, .. } => totals.tokens.total_tokens,
                    _ => 0,
                },
            });
        }
        tracing::info!(
            "question `{}` of batch `{}`: {}",
            c.id,
            c.batch,
            describe(what, held)
        );
    }
}

/// Removes question `c`'s plan and files from the worker's folder `scratch`.
pub fn clear(scratch: &Path, c: &Claimed) {
    let plan = plan_path(scratch, c);
    if let Err(e) = super::local::remove_all(&plan) {
        tracing::debug!("could not remove `{}` and its files: {e}", plan.display());
    }
}

/// A question as the display and the log's spans name it: a worker may serve many batches.
pub fn shown_name(c: &Claimed) -> String {
    format!("{}/{}", c.batch, c.name)
}

/// How the display counts attempt number `attempt` that ended as `end` (`held`: stored as
/// this worker's): a failed attempt with attempts left goes back to the queue.
fn ended_as(end: &End, held: bool, attempt: i32, max_attempts: u32) -> QuestionEnd {
    let last = spent(attempt, max_attempts);
    match end {
        _ if !held => QuestionEnd::Stopped,
        End::Ended { status, .. } if status.is_done() => QuestionEnd::Done,
        End::Ended { .. } => QuestionEnd::Failed,
        End::Failed(_) if last => QuestionEnd::Failed,
        End::Failed(_) | End::Released(_) => QuestionEnd::Stopped,
    }
}

fn describe(end: &End, held: bool) -> String {
    if !held {
        return "taken over by another worker; nothing stored".into();
    }
    match end {
        End::Ended { status, .. } => status.as_str().to_string(),
        End::Failed(e) => format!("the attempt failed: {e}"),
        End::Released(why) => format!("back to the queue ({why})"),
    }
}
