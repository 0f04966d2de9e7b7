//! [`Writer`]: the one task of a worker that writes its questions' runs into the database, fed
//! over a channel. A run sends it every line it appends to its event log or transcript, as it
//! writes it (the [`Tee`] of each file), and every checkpoint of its plan ([`DbMirror`], the
//! run's [`Mirror`], which waits until the checkpoint is stored). A worker killed mid-task so
//! leaves its paid model answers in the database, and the worker that takes the question over
//! is answered from them instead of asking again (the transcript's salvage).
//!
//! Each question's messages are stored in the order they were sent: what came together, one
//! statement per question, the questions' statements at once. A line is a row keyed by
//! (question, file, sequence number) and inserted idempotently, so a statement retried after
//! its answer was lost adds nothing twice. Every statement is fenced by the claim: once another
//! worker took the question, nothing more of this run is written, and the run stops at its next
//! checkpoint.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio_util::task::AbortOnDropHandle;

use super::claim::Claimed;
use super::db::Db;
use crate::atomic::Tee;
use crate::plan::{PlanFile, beside};
use crate::workflow::Mirror;

/// The files a run appends to as it goes: stored line by line, never whole.
pub const APPENDED: [&str; 2] = [beside::EVENTS, beside::TRANSCRIPT];

/// At most this many messages are stored in one round.
const TOGETHER: usize = 512;

/// Whether what a question's run sent is stored: `Ok(false)` when another worker holds the
/// question (nothing was written); `Err` when the database failed past its retries.
pub type Stored = Result<bool, String>;

/// A question as the writer fences it.
#[derive(Debug)]
struct Held {
    claimed: Claimed,
    /// Set once a statement found the claim lost: nothing more is tried.
    lost: AtomicBool,
}

enum Message {
    Line {
        q: Arc<Held>,
        suffix: &'static str,
        seq: i64,
        bytes: Vec<u8>,
    },
    /// A checkpoint's plan, told once stored with every line sent before it.
    Plan {
        q: Arc<Held>,
        text: String,
        told: oneshot::Sender<Stored>,
    },
    /// Told once every line sent before is stored.
    Flush {
        q: Arc<Held>,
        told: oneshot::Sender<Stored>,
    },
}

/// How a worker's runs reach its writer.
#[derive(Clone)]
pub struct Writer {
    sender: mpsc::UnboundedSender<Message>,
}

impl Writer {
    /// Starts the writer of `db`; the handle stops it when dropped.
    pub fn spawn(db: Db) -> (Writer, AbortOnDropHandle<()>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        let task = AbortOnDropHandle::new(tokio::spawn(run(db, receiver)));
        (Writer { sender }, task)
    }

    /// What a run of `claimed` sends through; `next` is the sequence number of each appended
    /// file's next line (what the database holds of it, [`super::claim::load`]).
    pub fn question(&self, claimed: Claimed, next: &HashMap<String, i64>) -> QuestionWriter {
        let counter =
            |suffix: &str| Arc::new(AtomicI64::new(next.get(suffix).copied().unwrap_or(0)));
        QuestionWriter {
            sender: self.sender.clone(),
            held: Arc::new(Held {
                claimed,
                lost: AtomicBool::new(false),
            }),
            next: APPENDED.map(|suffix| (suffix, counter(suffix))),
        }
    }
}

/// One question's way to the writer.
#[derive(Clone)]
pub struct QuestionWriter {
    sender: mpsc::UnboundedSender<Message>,
    held: Arc<Held>,
    next: [(&'static str, Arc<AtomicI64>); 2],
}

impl QuestionWriter {
    /// Where the lines of the appended file `suffix` go (`None` for any other file).
    pub fn tee(&self, suffix: &str) -> Option<Tee> {
        let (suffix, next) = self.next.iter().find(|(s, _)| *s == suffix)?.clone();
        let (sender, q) = (self.sender.clone(), Arc::clone(&self.held));
        Some(Arc::new(move |bytes: &[u8]| {
            let _ = sender.send(Message::Line {
                q: Arc::clone(&q),
                suffix,
                seq: next.fetch_add(1, Ordering::SeqCst),
                bytes: bytes.to_vec(),
            });
        }))
    }

    /// Stores the checkpoint `text` after every line sent before it.
    pub async fn checkpoint(&self, text: String) -> Stored {
        self.ask(|told| Message::Plan {
            q: Arc::clone(&self.held),
            text,
            told,
        })
        .await
    }

    /// Waits until every line sent so far is stored.
    pub async fn flush(&self) -> Stored {
        self.ask(|told| Message::Flush {
            q: Arc::clone(&self.held),
            told,
        })
        .await
    }

    async fn ask(&self, message: impl FnOnce(oneshot::Sender<Stored>) -> Message) -> Stored {
        let (told, heard) = oneshot::channel();
        self.sender
            .send(message(told))
            .map_err(|_| "the worker's writer has stopped".to_string())?;
        heard
            .await
            .unwrap_or_else(|_| Err("the worker's writer has stopped".into()))
    }
}

/// How long lines wait for a checkpoint or a flush to be stored with: most of a run's lines
/// come just before one (a model's answer, then its task's end), and one statement for both
/// is half the transactions. Short enough that a worker killed mid-task has stored the
/// answers it paid for.
const LINGER: Duration = Duration::from_millis(250);

/// The writer's loop: each round, what has come since the last, by question.
async fn run(db: Db, mut receiver: mpsc::UnboundedReceiver<Message>) {
    while let Some(first) = receiver.recv().await {
        let messages = gather(first, &mut receiver).await;
        let rounds = by_question(messages).into_iter().map(|g| g.store(&db));
        futures_util::future::join_all(rounds).await;
    }
}

/// `first` and what follows it for one round: whatever is waiting, and while nothing but lines
/// came, what comes within [`LINGER`].
async fn gather(first: Message, receiver: &mut mpsc::UnboundedReceiver<Message>) -> Vec<Message> {
    let until = tokio::time::Instant::now() + LINGER;
    let mut messages = vec![first];
    while messages.len() < TOGETHER {
        let next = match receiver.try_recv() {
            Ok(m) => Some(m),
            Err(_) if messages.iter().any(awaited) => None,
            Err(_) => tokio::time::timeout_at(until, receiver.recv())
                .await
                .ok()
                .flatten(),
        };
        match next {
            Some(m) => messages.push(m),
            None => break,
        }
    }
    messages
}

/// Whether someone waits for `m` to be stored (a checkpoint, a flush).
fn awaited(m: &Message) -> bool {
    !matches!(m, Message::Line { .. })
}

/// What one question sent in a round.
struct Group {
    q: Arc<Held>,
    lines: Vec<(&'static str, i64, Vec<u8>)>,
    /// The latest checkpoint's plan.
    plan: Option<String>,
    told: Vec<oneshot::Sender<Stored>>,
}

/// `messages` by question, each question's in the order sent.
fn by_question(messages: Vec<Message>) -> Vec<Group> {
    let mut groups: Vec<Group> = Vec::new();
    for message in messages {
        let q = match &message {
            Message::Line { q, .. } | Message::Plan { q, .. } | Message::Flush { q, .. } => q,
        };
        let i = match groups.iter().position(|g| Arc::ptr_eq(&g.q, q)) {
            Some(i) => i,
            None => {
                groups.push(Group {
                    q: Arc::clone(q),
                    lines: Vec::new(),
                    plan: None,
                    told: Vec::new(),
                });
                groups.len() - 1
            }
        };
        let group = &mut groups[i];
        match message {
            Message::Line {
                suffix, seq, bytes, ..
            } => group.lines.push((suffix, seq, bytes)),
            Message::Plan { text, told, .. } => {
                group.plan = Some(text);
                group.told.push(told);
            }
            Message::Flush { told, .. } => group.told.push(told),
        }
    }
    groups
}

impl Group {
    /// Stores the group in one statement (retried while the server cannot be reached) and
    /// tells whoever waits.
    async fn store(self, db: &Db) {
        let stored = if self.q.lost.load(Ordering::SeqCst) {
            Ok(false)
        } else {
            let (q, plan, lines) = (&self.q.claimed, self.plan.as_deref(), &self.lines);
            db.retrying("storing a run's lines and checkpoint", || {
                statement(db, q, plan, lines)
            })
            .await
            .map_err(|e| e.to_string())
        };
        if stored == Ok(false) {
            self.q.lost.store(true, Ordering::SeqCst);
        }
        if let Err(e) = &stored {
            tracing::warn!("question `{}`: {e}", self.q.claimed.id);
        }
        for told in self.told {
            let _ = told.send(stored.clone());
        }
    }
}

/// Adds `lines` and stores `plan` (when there is one) of question `c`, when `c` still holds it,
/// in one statement: whether the claim is held. Committed as any transaction is, durably: a
/// line a server crash lost would be a hole in its file for good.
async fn statement(
    db: &Db,
    c: &Claimed,
    plan: Option<&str>,
    lines: &[(&'static str, i64, Vec<u8>)],
) -> Result<bool, sqlx::Error> {
    let suffixes: Vec<&str> = lines.iter().map(|(s, _, _)| *s).collect();
    let seqs: Vec<i64> = lines.iter().map(|(_, n, _)| *n).collect();
    let bytes: Vec<&[u8]> = lines.iter().map(|(_, _, b)| b.as_slice()).collect();
    sqlx::query_scalar(
        // `FOR UPDATE`: a claim taken meanwhile waits for this statement, or is seen by it.
        "WITH held AS (
             SELECT 1 FROM researchflow.questions q
             WHERE q.batch = $1 AND q.id = $2 AND q.claim = $3
             FOR UPDATE OF q
         ), plan AS (
             UPDATE researchflow.questions SET plan = $4, updated_at = now()
             WHERE batch = $1 AND id = $2 AND $4::text IS NOT NULL AND EXISTS (SELECT 1 FROM held)
         ), added AS (
             INSERT INTO researchflow.lines (batch, question, suffix, seq, line)
             SELECT $1, $2, l.suffix, l.seq, l.line
             FROM unnest($5::text[], $6::bigint[], $7::bytea[]) AS l(suffix, seq, line)
             WHERE EXISTS (SELECT 1 FROM held)
             ON CONFLICT (batch, question, suffix, seq) DO NOTHING
         )
         SELECT EXISTS (SELECT 1 FROM held)",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(c.claim)
    .bind(plan)
    .bind(&suffixes)
    .bind(&seqs)
    .bind(&bytes)
    .fetch_one(&db.pool)
    .await
}

/// Keeps a question's checkpoints in the database, through the worker's writer.
pub struct DbMirror {
    writer: QuestionWriter,
    /// Set when another worker took the question: the run's end must not be stored.
    lost: Arc<AtomicBool>,
    handle: tokio::runtime::Handle,
}

impl DbMirror {
    pub fn new(writer: QuestionWriter, lost: Arc<AtomicBool>) -> DbMirror {
        DbMirror {
            writer,
            lost,
            handle: tokio::runtime::Handle::current(),
        }
    }
}

impl Mirror for DbMirror {
    fn keep(&mut self, plan: &PlanFile) -> Result<(), String> {
        let mut text = serde_json::to_string_pretty(plan).map_err(|e| e.to_string())?;
        text.push('\n');
        // Masked as the plan file itself is (`crate::atomic::write`).
        let text = crate::text::secrets::mask(&text).into_owned();
        // The ledger calls from inside the run, synchronously: the writer runs meanwhile.
        let writer = &self.writer;
        let stored = tokio::task::block_in_place(|| self.handle.block_on(writer.checkpoint(text)));
        match stored {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.lost.store(true, Ordering::SeqCst);
                Err(format!(
                    "question `{}` was taken over by another worker (this one's lease ran out): this run stops",
                    writer.held.claimed.id
                ))
            }
            Err(e) => Err(e),
        }
    }

    fn tee(&self, suffix: &str) -> Option<Tee> {
        self.writer.tee(suffix)
    }
}
