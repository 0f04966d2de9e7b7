//! Where a batch in the queue stands: the status of each question (`pending`, `running`, then
//! how its run ended: `completed`, `partial`, `degraded`, `final_failed`, or `failed` once its
//! attempts are spent), the counts per status, and who runs what (`batch status`).

use serde::Serialize;

use super::db::{Db, QueueError};
use crate::batch::ItemStatus;

/// Every status a question in the queue can have, in the order `batch status` lists them.
pub const STATUSES: [ItemStatus; 7] = [
    ItemStatus::Pending,
    ItemStatus::Running,
    ItemStatus::Completed,
    ItemStatus::Partial,
    ItemStatus::Degraded,
    ItemStatus::FinalFailed,
    ItemStatus::Failed,
];

/// The status stored as `text`; an unknown word (a newer program's) reads as `pending`.
pub fn parse(text: &str) -> ItemStatus {
    STATUSES
        .into_iter()
        .find(|s| s.as_str() == text)
        .unwrap_or(ItemStatus::Pending)
}

/// Whether the question's run is over for the queue: no worker takes it again.
pub fn is_ended(status: ItemStatus) -> bool {
    !matches!(status, ItemStatus::Pending | ItemStatus::Running)
}

/// A question being run.
#[derive(Debug, Clone, Serialize)]
pub struct Running {
    pub question: String,
    pub worker: String,
    pub attempt: i32,
    /// Seconds since its worker took it.
    pub age: f64,
}

/// A batch's counts and running questions.
#[derive(Debug, Clone, Serialize)]
pub struct BatchStatus {
    pub batch: String,
    pub counts: serde_json::Map<String, serde_json::Value>,
    pub running: Vec<Running>,
}

/// Reads where batch `name` stands; a batch the queue does not hold is an error naming it.
pub async fn read(db: &Db, name: &str) -> Result<BatchStatus, QueueError> {
    let (exists, counts, running) = db
        .retrying("reading the batch's status", || async move {
            let exists: Option<String> =
                sqlx::query_scalar("SELECT name FROM researchflow.batches WHERE name = $1")
                    .bind(name)
                    .fetch_optional(&db.pool)
                    .await?;
            let counts: Vec<(String, i64)> = sqlx::query_as(
                "SELECT status, count(*) FROM researchflow.questions WHERE batch = $1 GROUP BY status",
            )
            .bind(name)
            .fetch_all(&db.pool)
            .await?;
            let running: Vec<(String, Option<String>, i32, Option<f64>)> = sqlx::query_as(
                "SELECT id, worker, attempt, EXTRACT(EPOCH FROM now() - started_at)::float8
                 FROM researchflow.questions WHERE batch = $1 AND status = 'running' ORDER BY seq",
            )
            .bind(name)
            .fetch_all(&db.pool)
            .await?;
            Ok((exists.is_some(), counts, running))
        })
        .await?;
    if !exists {
        return Err(no_such_batch(db, name));
    }
    let mut map = serde_json::Map::new();
    for status in STATUSES {
        let n: i64 = counts
            .iter()
            .filter(|(s, _)| parse(s) == status)
            .map(|(_, n)| n)
            .sum();
        map.insert(status.as_str().to_string(), n.into());
    }
    Ok(BatchStatus {
        batch: name.to_string(),
        counts: map,
        running: running
            .into_iter()
            .map(|(question, worker, attempt, age)| Running {
                question,
                worker: worker_shown(worker.unwrap_or_default(), name),
                attempt,
                age: (age.unwrap_or(0.0) * 10.0).round() / 10.0,
            })
            .collect(),
    })
}

/// Whether the queue holds batch `name`.
pub async fn exists(db: &Db, name: &str) -> Result<bool, QueueError> {
    db.retrying("looking the batch up", || async move {
        let found: Option<String> =
            sqlx::query_scalar("SELECT name FROM researchflow.batches WHERE name = $1")
                .bind(name)
                .fetch_optional(&db.pool)
                .await?;
        Ok(found.is_some())
    })
    .await
}

/// The error for a batch the queue does not hold.
pub fn no_such_batch(db: &Db, name: &str) -> QueueError {
    QueueError::Setup(format!(
        "the queue `{}` holds no batch `{name}`: submit it with `researchflow batch FILE --queue URL --batch {name}`",
        db.url.shown()
    ))
}

/// A worker as `batch status` shows it: `host:pid:random`. Its name in the queue has the
/// batch after a slash (one apalis worker per batch), which the status names already.
fn worker_shown(stored: String, batch: &str) -> String {
    match stored.strip_suffix(&format!("/{batch}")) {
        Some(name) => name.to_string(),
        None => stored,
    }
}

impl BatchStatus {
    /// The table `batch status` prints without `--json`.
    pub fn to_text(&self) -> String {
        let total: u64 = self.counts.values().filter_map(|v| v.as_u64()).sum();
        let counts: Vec<String> = self
            .counts
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let mut out = format!(
            "batch `{}`: {total} question(s)\n  {}\n",
            self.batch,
            counts.join(", ")
        );
        if !self.running.is_empty() {
            out.push_str("running:\n");
            for r in &self.running {
                out.push_str(&format!(
                    "  {}  worker {}  attempt {}  for {:.0} s\n",
                    crate::text::one_line(&r.question, 80),
                    r.worker,
                    r.attempt,
                    r.age
                ));
            }
        }
        out
    }
}
