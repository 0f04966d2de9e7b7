//! [`DbMirror`]: a queue worker's [`Mirror`], which keeps every checkpoint of a question's run
//! in the database too, with what the run appended to its event log and transcript since the
//! last one, in one transaction fenced by the worker's claim: a worker whose lease ran out
//! (another took the question) can write nothing more, and its run stops. The ledger calls it
//! from inside the run, synchronously; the statements run on the process's runtime meanwhile
//! (`block_in_place`), retried while the server restarts.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use sqlx::{Postgres, Transaction};

use super::claim::{Claimed, Files, holds};
use super::db::{Db, QueueError};
use crate::plan::PlanFile;
use crate::workflow::Mirror;

/// The files a run appends to as it goes, kept at every checkpoint.
const APPENDED: [&str; 2] = ["events.ndjson", "transcript.jsonl"];

/// Keeps a question's checkpoints in the queue's database.
pub struct DbMirror {
    db: Db,
    claimed: Claimed,
    plan: PathBuf,
    /// How many bytes of each appended file the database holds.
    kept: HashMap<String, u64>,
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
            kept,
            lost,
            handle: tokio::runtime::Handle::current(),
        }
    }

    /// What each appended file gained since the last checkpoint: `(suffix, offset, bytes)`.
    fn appended(&self) -> Vec<(String, u64, Vec<u8>)> {
        super::local::beside(&self.plan)
            .into_iter()
            .filter(|(s, _)| APPENDED.contains(&s.as_str()))
            .filter_map(|(suffix, path)| {
                let bytes = std::fs::read(&path).ok()?;
                let from = self.kept.get(&suffix).copied().unwrap_or(0);
                let new = bytes.get(usize::try_from(from).ok()?..)?.to_vec();
                Some((suffix, from, new))
            })
            .collect()
    }

    async fn store(
        &self,
        text: &str,
        appended: &[(String, u64, Vec<u8>)],
    ) -> Result<bool, QueueError> {
        let c = &self.claimed;
        let plan = &self.plan;
        self.db
            .retrying("keeping a checkpoint", || async move {
                let mut tx = self.db.begin().await?;
                if !holds(&mut tx, c).await? {
                    return Ok(false);
                }
                store_plan(&mut tx, c, text).await?;
                for (suffix, from, bytes) in appended {
                    append(&mut tx, c, suffix, *from, bytes, plan).await?;
                }
                tx.commit().await?;
                Ok(true)
            })
            .await
    }
}

impl Mirror for DbMirror {
    fn keep(&mut self, plan: &PlanFile) -> Result<(), String> {
        let mut text = serde_json::to_string_pretty(plan).map_err(|e| e.to_string())?;
        text.push('\n');
        let appended = self.appended();
        let stored =
            tokio::task::block_in_place(|| self.handle.block_on(self.store(&text, &appended)));
        match stored {
            Ok(true) => {
                for (suffix, from, bytes) in appended {
                    self.kept.insert(suffix, from + bytes.len() as u64);
                }
                Ok(())
            }
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
/// commit whose answer was lost) replaces it with the whole file.
async fn append(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    suffix: &str,
    from: u64,
    bytes: &[u8],
    plan: &std::path::Path,
) -> Result<(), sqlx::Error> {
    let done = sqlx::query(
        "INSERT INTO researchflow.files AS f (batch, question, suffix, content)
         VALUES ($1, $2, $3, $4)
         ON CONFLICT (batch, question, suffix) DO UPDATE SET content = f.content || EXCLUDED.content
         WHERE octet_length(f.content) = $5",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(suffix)
    .bind(bytes)
    .bind(i64::try_from(from).unwrap_or(i64::MAX))
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        let whole = super::local::beside(plan)
            .into_iter()
            .find(|(s, _)| s == suffix)
            .and_then(|(_, path)| std::fs::read(path).ok())
            .unwrap_or_default();
        replace(tx, c, suffix, &whole).await?;
    }
    Ok(())
}

async fn replace(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    suffix: &str,
    bytes: &[u8],
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO researchflow.files (batch, question, suffix, content) VALUES ($1, $2, $3, $4)
         ON CONFLICT (batch, question, suffix) DO UPDATE SET content = EXCLUDED.content",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(suffix)
    .bind(bytes)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Stores the plan and every file beside it whole (a question's end).
pub async fn store_files(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    files: &Files,
) -> Result<(), sqlx::Error> {
    if let Some(text) = &files.plan {
        store_plan(tx, c, text).await?;
    }
    for (suffix, bytes) in &files.beside {
        replace(tx, c, suffix, bytes).await?;
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
