//! [`Writer`]: the one task of a worker that writes its questions' runs into the database, fed
//! over a channel. A run sends it every line it appends to its event log or transcript, as it
//! writes it (the [`Tee`] of each file), and every checkpoint of its plan ([`DbMirror`], the
//! run's [`Mirror`], which waits until the checkpoint is stored). A worker killed mid-task so
//! leaves its paid model answers in the database, and the worker that takes the question over
//! is answered from them instead of asking again (the transcript's salvage).
//!
//! Each question's messages are stored in the order they were sent, in one statement a round:
//! its lines wait for its next checkpoint (or a second at most) to go with it, and the
//! questions due in a round are stored at once. A line is a row keyed by
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

/// How long a question's lines wait for its next checkpoint or flush, to be stored in one
/// statement with it: most of a run's lines come shortly before one (a call's start, its
/// answer, then its task's end). Short enough that a worker killed mid-task has stored the
/// answers it paid for a moment before.
const LINGER: Duration = Duration::from_secs(1);

/// The writer's loop: what comes is held by question, and a question's is stored once someone
/// waits for it (a checkpoint, a flush) or its first line has waited [`LINGER`]; the
/// questions due in a round are stored at once.
async fn run(db: Db, mut receiver: mpsc::UnboundedReceiver<Message>) {
    let mut pending: Vec<Group> = Vec::new();
    loop {
        let woke = match pending.iter().map(|g| g.since + LINGER).min() {
            None => receiver.recv().await.map_or(Woke::Closed, Woke::Sent),
            Some(at) => match tokio::time::timeout_at(at, receiver.recv()).await {
                Ok(sent) => sent.map_or(Woke::Closed, Woke::Sent),
                Err(_) => Woke::Due,
            },
        };
        let closed = matches!(woke, Woke::Closed);
        if let Woke::Sent(first) = woke {
            hold(&mut pending, first);
            while let Ok(m) = receiver.try_recv() {
                hold(&mut pending, m);
            }
        }
        let now = tokio::time::Instant::now();
        let (due, rest): (Vec<Group>, Vec<Group>) = std::mem::take(&mut pending)
            .into_iter()
            .partition(|g| closed || !g.told.is_empty() || g.since + LINGER <= now);
        pending = rest;
        futures_util::future::join_all(due.into_iter().map(|g| g.store(&db))).await;
        if closed {
            return;
        }
    }
}

/// What woke the writer.
enum Woke {
    Sent(Message),
    /// A question's lines have waited long enough.
    Due,
    /// Every sender is gone.
    Closed,
}

/// What one question sent that is not stored yet.
struct Group {
    q: Arc<Held>,
    /// When its first message came.
    since: tokio::time::Instant,
    lines: Vec<(&'static str, i64, Vec<u8>)>,
    /// The latest checkpoint's plan.
    plan: Option<String>,
    told: Vec<oneshot::Sender<Stored>>,
}

/// Adds `message` to its question's group in `pending`, in the order sent.
fn hold(pending: &mut Vec<Group>, message: Message) {
    let q = match &message {
        Message::Line { q, .. } | Message::Plan { q, .. } | Message::Flush { q, .. } => q,
    };
    let i = match pending.iter().position(|g| Arc::ptr_eq(&g.q, q)) {
        Some(i) => i,
        None => {
            pending.push(Group {
                q: Arc::clone(q),
                since: tokio::time::Instant::now(),
                lines: Vec::new(),
                plan: None,
                told: Vec::new(),
            });
            pending.len() - 1
        }
    };
    let group = &mut pending[i];
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
