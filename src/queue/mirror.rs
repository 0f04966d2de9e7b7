//! [`DbMirror`]: a queue worker's [`Mirror`], which keeps every checkpoint of a question's run
//! in the database too, with what the run appended to its event log and transcript since the
//! last one, in one statement fenced by the worker's claim (`checkpoint.rs`; a transaction
//! when a file must go whole): a worker whose lease ran out (another took the question) can
//! write nothing more, and its run stops. The ledger calls it from inside the run,
//! synchronously; the statements run on the process's runtime meanwhile (`block_in_place`),
//! retried while the server restarts.
//!
//! Between checkpoints, [`Shipper`] sends what the run appended (the model answers of a task
//! in flight, above all) once it has waited a round of [`SHIP_EVERY`]: a worker killed
//! mid-task leaves its paid answers in the database, and the worker that takes the question
//! over is answered from them instead of asking again (the transcript's salvage). One
//! statement per appended file at most every [`SHIP_EVERY`] (fenced by the claim inside it,
//! no transaction), and none while checkpoints keep up.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use std::time::Duration;

use sqlx::{PgExecutor, Postgres, Transaction};
use tokio::sync::Mutex;

use super::checkpoint::AtOnce;
use super::claim::{Claimed, Files, holds};
use super::db::{Db, QueueError};
use crate::plan::PlanFile;
use crate::workflow::Mirror;

/// The files a run appends to as it goes, kept at every checkpoint.
const APPENDED: [&str; 2] = ["events.ndjson", "transcript.jsonl"];

/// How long what a run appended may wait for a checkpoint before [`Shipper`] sends it.
pub const SHIP_EVERY: Duration = Duration::from_secs(1);

/// How many bytes of each appended file the database holds; one sender at a time.
pub type Kept = Arc<Mutex<HashMap<String, u64>>>;

/// Keeps a question's checkpoints in the queue's database.
pub struct DbMirror {
    db: Db,
    claimed: Claimed,
    plan: PathBuf,
    kept: Kept,
    /// Set when another worker took the question: the run's end must not be stored.
    lost: Arc<AtomicBool>,
    handle: tokio::runtime::Handle,
}

impl DbMirror {
    /// The mirror of `claimed`'s run on the plan at `plan`, whose appended files hold what
    /// `files` held (the last checkpoint).
    pub fn new(
        db: Db,
        claimed: Claimed,
        plan: PathBuf,
        files: &Files,
        lost: Arc<AtomicBool>,
    ) -> DbMirror {
        let kept = files
            .beside
            .iter()
            .filter(|(s, _)| APPENDED.contains(&s.as_str()))
            .map(|(s, b)| (s.clone(), b.len() as u64))
            .collect();
        DbMirror {
            db,
            claimed,
            plan,
            kept: Arc::new(Mutex::new(kept)),
            lost,
            handle: tokio::runtime::Handle::current(),
        }
    }

    /// How many bytes of each appended file the database holds, as this mirror and its
    /// shipper left it: a question's end appends only what lies past it.
    pub fn kept(&self) -> Kept {
        Arc::clone(&self.kept)
    }

    /// The sender of what the run appends between this mirror's checkpoints.
    pub fn shipper(&self) -> Shipper {
        Shipper {
            db: self.db.clone(),
            claimed: self.claimed.clone(),
            plan: self.plan.clone(),
            kept: Arc::clone(&self.kept),
        }
    }

    /// Stores the checkpoint `text` with what the appended files gained since the last one:
    /// in one statement, or, when an appended file does not hold in the database what `kept`
    /// says, in a transaction that sends such a file whole.
    async fn store(&self, text: &str) -> Result<bool, QueueError> {
        let mut kept = self.kept.lock().await;
        let appended = appended(&self.plan, &kept);
        let c = &self.claimed;
        let (plan, appended_ref) = (&self.plan, &appended);
        let pool = &self.db.pool;
        let at_once = self
            .db
            .retrying("keeping a checkpoint", || {
                super::checkpoint::store(pool, c, text, appended_ref)
            })
            .await?;
        let stored = match at_once {
            AtOnce::Stored => true,
            AtOnce::Lost => false,
            AtOnce::Unmatched => {
                self.db
                    .retrying("keeping a checkpoint", || async move {
                        let mut tx = self.db.begin_checkpoint().await?;
                        if !holds(&mut tx, c).await? {
                            return Ok(false);
                        }
                        store_plan(&mut tx, c, text).await?;
                        for (suffix, from, bytes) in appended_ref {
                            append(&mut tx, c, suffix, *from, bytes, || whole(plan, suffix))
                                .await?;
                        }
                        tx.commit().await?;
                        Ok(true)
                    })
                    .await?
            }
        };
        if stored {
            note_kept(&mut kept, appended);
        }
        Ok(stored)
    }
}

/// What each appended file beside `plan` gained past what `kept` says the database holds:
/// `(suffix, offset, bytes)`, files that gained nothing left out. Only what lies past the
/// offset is read.
fn appended(plan: &std::path::Path, kept: &HashMap<String, u64>) -> Vec<(String, u64, Vec<u8>)> {
    use std::io::{Read, Seek, SeekFrom};
    appended_files(plan)
        .filter_map(|(suffix, path)| {
            let from = kept.get(&suffix).copied().unwrap_or(0);
            let mut file = std::fs::File::open(&path).ok()?;
            file.seek(SeekFrom::Start(from)).ok()?;
            let mut new = Vec::new();
            file.read_to_end(&mut new).ok()?;
            Some((suffix, from, new)).filter(|(_, _, new)| !new.is_empty())
        })
        .collect()
}

/// Whether an appended file beside `plan` holds more than `kept` says the database does (its
/// size only: nothing is read).
fn grown(plan: &std::path::Path, kept: &HashMap<String, u64>) -> bool {
    appended_files(plan).any(|(suffix, path)| {
        let held = kept.get(&suffix).copied().unwrap_or(0);
        std::fs::metadata(path).is_ok_and(|m| m.len() > held)
    })
}

/// `(suffix, path)` of the files beside `plan` that a run appends to.
fn appended_files(plan: &std::path::Path) -> impl Iterator<Item = (String, PathBuf)> {
    super::local::beside(plan)
        .into_iter()
        .filter(|(s, _)| APPENDED.contains(&s.as_str()))
}

fn note_kept(kept: &mut HashMap<String, u64>, appended: Vec<(String, u64, Vec<u8>)>) {
    for (suffix, from, bytes) in appended {
        kept.insert(suffix, from + bytes.len() as u64);
    }
}

/// Sends what a question's run appended to its transcript and event log to the database
/// between checkpoints, fenced by the claim as a checkpoint is: see the module's doc.
pub struct Shipper {
    db: Db,
    claimed: Claimed,
    plan: PathBuf,
    kept: Kept,
}

impl Shipper {
    /// Looks every [`SHIP_EVERY`] and sends what was already waiting at the last look (so
    /// lines wait one to two rounds), until the claim is lost (the caller stops it with the
    /// run before that). A try that fails is left to the next one, or to the next checkpoint.
    /// Run it as a task of its own, never inside the run's: a checkpoint waits for the offsets
    /// a send holds, and blocks its task while it waits.
    pub async fn run(self) {
        let mut waiting = false;
        loop {
            tokio::time::sleep(SHIP_EVERY).await;
            // What a checkpoint will send within a moment is left to it: only lines that
            // were already waiting one round ago go.
            let now_waiting = grown(&self.plan, &*self.kept.lock().await);
            if waiting && now_waiting {
                // Bounded: a link that hangs must not hold the next checkpoint back for long.
                // Abandoning a send is safe: it is single statements, never a transaction.
                match tokio::time::timeout(SHIP_EVERY * 3, self.ship()).await {
                    Ok(Ok(true)) => {}
                    Ok(Ok(false)) => return, // taken over: the run learns it at its next checkpoint
                    Ok(Err(e)) => tracing::debug!("could not send the run's new lines: {e}"),
                    Err(_) => tracing::debug!("sending the run's new lines timed out"),
                }
            }
            waiting = now_waiting;
        }
    }

    /// Sends what the appended files gained; false when the claim is no longer held.
    ///
    /// Each file's lines go in one statement of their own, fenced by the claim inside it: no
    /// transaction and no lock outlives the statement, so a send cut off by the timeout leaves
    /// nothing behind on the server. What each statement sent is noted at once; a file the
    /// database holds more or less of than `kept` says (a send that timed out yet arrived, a
    /// checkpoint a server crash lost) is sent whole, in a second statement.
    async fn ship(&self) -> Result<bool, sqlx::Error> {
        let mut kept = self.kept.lock().await;
        for (suffix, from, bytes) in appended(&self.plan, &kept) {
            let pool = &self.db.pool;
            let (held, appended) = try_append(pool, &self.claimed, &suffix, from, &bytes).await?;
            if !held {
                return Ok(false);
            }
            if appended {
                note_kept(&mut kept, vec![(suffix, from, bytes)]);
                continue;
            }
            // The database holds another length: the whole file goes, or the same offset
            // would be tried again every second until the next checkpoint.
            let whole = whole(&self.plan, &suffix);
            if !replace(pool, &self.claimed, &suffix, &whole).await? {
                return Ok(false);
            }
            kept.insert(suffix, whole.len() as u64);
        }
        Ok(true)
    }
}

impl Mirror for DbMirror {
    fn keep(&mut self, plan: &PlanFile) -> Result<(), String> {
        let mut text = serde_json::to_string_pretty(plan).map_err(|e| e.to_string())?;
        text.push('\n');
        // Masked as the plan file itself is (`crate::atomic::write`).
        let text = crate::text::secrets::mask(&text);
        let stored = tokio::task::block_in_place(|| self.handle.block_on(self.store(&text)));
        match stored {
            Ok(true) => Ok(()),
            Ok(false) => {
                self.lost.store(true, Ordering::SeqCst);
                Err(format!(
                    "question `{}` was taken over by another worker (this one's lease ran out): this run stops",
                    self.claimed.id
                ))
            }
            Err(e) => Err(e.to_string()),
        }
    }
}

async fn store_plan(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    text: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE researchflow.questions SET plan = $3, updated_at = now() WHERE batch = $1 AND id = $2",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(text)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Appends `bytes` to the stored file when it holds `from` bytes; otherwise (a retry after a
/// commit whose answer was lost, a checkpoint the server lost in a crash) replaces it with
/// the whole file, `whole()`. With nothing to append, the stored length is only checked.
async fn append(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    suffix: &str,
    from: u64,
    bytes: &[u8],
    whole: impl FnOnce() -> Vec<u8>,
) -> Result<(), sqlx::Error> {
    let matches = if bytes.is_empty() {
        stored_length(&mut **tx, c, suffix).await? == Some(from)
    } else {
        try_append(&mut **tx, c, suffix, from, bytes).await?.1
    };
    if !matches {
        replace(&mut **tx, c, suffix, &whole()).await?;
    }
    Ok(())
}

/// Appends `bytes` to the stored file `suffix` when it holds `from` bytes, in one statement
/// fenced by the claim: whether the claim is held, and whether the bytes went.
async fn try_append(
    db: impl PgExecutor<'_>,
    c: &Claimed,
    suffix: &str,
    from: u64,
    bytes: &[u8],
) -> Result<(bool, bool), sqlx::Error> {
    sqlx::query_as(
        "WITH held AS (
             SELECT 1 FROM researchflow.questions
             WHERE batch = $1 AND id = $2 AND claim = $6
         ), sent AS (
             INSERT INTO researchflow.files AS f (batch, question, suffix, content)
             SELECT $1, $2, $3, $4 FROM held
             ON CONFLICT (batch, question, suffix)
             DO UPDATE SET content = f.content || EXCLUDED.content
             WHERE octet_length(f.content) = $5
             RETURNING 1
         )
         SELECT EXISTS (SELECT 1 FROM held), EXISTS (SELECT 1 FROM sent)",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(suffix)
    .bind(bytes)
    .bind(i64::try_from(from).unwrap_or(i64::MAX))
    .bind(c.claim)
    .fetch_one(db)
    .await
}

/// Replaces the stored file `suffix` with `bytes`, in one statement fenced by the claim:
/// whether the claim is held (and the file stored).
async fn replace(
    db: impl PgExecutor<'_>,
    c: &Claimed,
    suffix: &str,
    bytes: &[u8],
) -> Result<bool, sqlx::Error> {
    let stored: Option<i32> = sqlx::query_scalar(
        "WITH held AS (
             SELECT 1 FROM researchflow.questions
             WHERE batch = $1 AND id = $2 AND claim = $5
         )
         INSERT INTO researchflow.files (batch, question, suffix, content)
         SELECT $1, $2, $3, $4 FROM held
         ON CONFLICT (batch, question, suffix) DO UPDATE SET content = EXCLUDED.content
         RETURNING 1",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(suffix)
    .bind(bytes)
    .bind(c.claim)
    .fetch_optional(db)
    .await?;
    Ok(stored.is_some())
}

/// How many bytes the stored file `suffix` holds (`None`: none is stored).
async fn stored_length(
    db: impl PgExecutor<'_>,
    c: &Claimed,
    suffix: &str,
) -> Result<Option<u64>, sqlx::Error> {
    let stored: Option<i32> = sqlx::query_scalar(
        "SELECT octet_length(content) FROM researchflow.files
         WHERE batch = $1 AND question = $2 AND suffix = $3",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(suffix)
    .fetch_optional(db)
    .await?;
    Ok(stored.and_then(|n| u64::try_from(n).ok()))
}

/// The whole file `suffix` beside `plan` on the worker's disk (empty when it cannot be read).
fn whole(plan: &std::path::Path, suffix: &str) -> Vec<u8> {
    super::local::beside(plan)
        .into_iter()
        .find(|(s, _)| s == suffix)
        .and_then(|(_, path)| std::fs::read(path).ok())
        .unwrap_or_default()
}

/// Stores the plan and every file beside it (a question's end): whole, but for the appended
/// files the database holds a beginning of, as `kept` says, which get what lies past it (the
/// whole file when the database holds something else).
pub async fn store_files(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    files: &Files,
    kept: &HashMap<String, u64>,
) -> Result<(), sqlx::Error> {
    if let Some(text) = &files.plan {
        store_plan(tx, c, text).await?;
    }
    for (suffix, bytes) in &files.beside {
        let held = kept
            .get(suffix)
            .and_then(|&from| usize::try_from(from).ok())
            .filter(|&from| APPENDED.contains(&suffix.as_str()) && from <= bytes.len());
        match held {
            Some(from) => {
                append(tx, c, suffix, from as u64, &bytes[from..], || bytes.clone()).await?;
            }
            None => {
                replace(&mut **tx, c, suffix, bytes).await?;
            }
        }
    }
    Ok(())
}

/// What the queue holds of question `id` of `batch`: its last checkpoint and files.
pub async fn load(db: &Db, batch: &str, id: &str) -> Result<Files, QueueError> {
    db.retrying("reading a question's checkpoint", || async move {
        let plan: Option<String> = sqlx::query_scalar(
            "SELECT plan FROM researchflow.questions WHERE batch = $1 AND id = $2",
        )
        .bind(batch)
        .bind(id)
        .fetch_optional(&db.pool)
        .await?
        .flatten();
        let beside: Vec<(String, Vec<u8>)> = sqlx::query_as(
            "SELECT suffix, content FROM researchflow.files WHERE batch = $1 AND question = $2",
        )
        .bind(batch)
        .bind(id)
        .fetch_all(&db.pool)
        .await?;
        Ok(Files { plan, beside })
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_lies_past_the_kept_offsets_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("q1.json");
        std::fs::write(dir.path().join("q1.events.ndjson"), "one\ntwo\n").unwrap();
        std::fs::write(dir.path().join("q1.transcript.jsonl"), "call\n").unwrap();
        std::fs::write(dir.path().join("q1.report.md"), "# not appended\n").unwrap();
        let mut kept = HashMap::new();
        kept.insert("events.ndjson".to_string(), 4);
        kept.insert("transcript.jsonl".to_string(), 5);
        assert_eq!(
            appended(&plan, &kept),
            vec![("events.ndjson".to_string(), 4, b"two\n".to_vec())],
            "the transcript gained nothing; the report is not an appended file"
        );
        assert!(grown(&plan, &kept));
        let sent = appended(&plan, &kept);
        note_kept(&mut kept, sent);
        assert_eq!(kept["events.ndjson"], 8);
        assert!(appended(&plan, &kept).is_empty());
        assert!(!grown(&plan, &kept));
        // A file shorter than the offset (replaced since) has nothing past it to send.
        kept.insert("events.ndjson".to_string(), 100);
        assert!(appended(&plan, &kept).is_empty());
    }
}
