//! A worker's hold on questions, through apalis-postgres's queries: taking jobs
//! (`fetch_next`, `lock_tasks`: `FOR UPDATE SKIP LOCKED`, so two workers never take one job),
//! and settling each with `handle_results` (done, failed for another attempt, killed when its
//! attempts are spent, or pending again when it was only interrupted). Beside each job, the
//! question's row: its status, attempt, worker, and `claim`, a fencing token raised at every
//! take, so that a worker whose lease ran out can no longer write anything of the question.
//! How an attempt's end is stored is `end.rs`'s.

use std::collections::HashMap;

use apalis_core::backend::TaskResult;
use apalis_core::task::status::Status;
use apalis_core::task::task_id::TaskId;
use apalis_core::worker::context::WorkerContext;
use apalis_postgres::Config;
use serde_json::Value;
use sqlx::{Postgres, Transaction};

use super::db::{Db, QueueError};
use super::submit::{into_sqlx, job_type};

/// A question a worker took.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub batch: String,
    pub id: String,
    /// The stem of its files.
    pub name: String,
    pub query: String,
    /// The fencing token of this take.
    pub claim: i64,
    /// This attempt's number, from 1.
    pub attempt: i32,
    pub job: TaskId,
    /// The apalis worker holding the job.
    pub worker: String,
    /// Whether the queue held anything of the question when it was taken (a checkpoint, or
    /// files a run sent): when not, a run starts without reading anything back.
    pub stored: bool,
}

/// The plan and the files beside it, as the queue holds them.
#[derive(Debug, Clone, Default)]
pub struct Files {
    pub plan: Option<String>,
    /// `(suffix, content)`: `events.ndjson`, `report.md`, ...
    pub beside: Vec<(String, Vec<u8>)>,
    /// The sequence number of the next line of each appended file the queue holds lines of.
    pub next: HashMap<String, i64>,
}

/// Takes up to `max` jobs of `batch` for `worker`: each question's row marked running with a
/// new claim. A job whose question already ended is settled at once; one whose attempts are
/// spent (its workers lost) ends `failed`.
pub async fn take(
    db: &Db,
    worker: &WorkerContext,
    batch: &str,
    max: usize,
    max_attempts: u32,
) -> Result<Vec<Claimed>, QueueError> {
    db.retrying("taking questions", || async move {
        let mut tx = db.begin().await?;
        let config = Config::default()
            .queue(job_type(batch))
            .batch_size(max.max(1));
        let tasks = apalis_postgres::queries::fetch_next(&mut *tx, &config, worker)
            .await
            .map_err(into_sqlx)?;
        let ids: Vec<String> = tasks
            .iter()
            .filter_map(|t| t.ctx().task_id().map(ToString::to_string))
            .collect();
        apalis_postgres::queries::lock_tasks(&mut *tx, &ids, worker.name()).await?;
        let mut taken = Vec::new();
        for task in &tasks {
            let Some(job) = task.ctx().task_id() else {
                continue;
            };
            let before = i32::try_from(task.ctx().attempt()).unwrap_or(i32::MAX);
            if let Some(c) = claim(&mut tx, batch, job, before, worker.name(), max_attempts).await?
            {
                taken.push(c);
            }
        }
        tx.commit().await?;
        Ok(taken)
    })
    .await
}

/// The row of `job` claimed for `worker`, or `None` when the job is settled instead.
async fn claim(
    tx: &mut Transaction<'static, Postgres>,
    batch: &str,
    job: &TaskId,
    before: i32,
    worker: &str,
    max_attempts: u32,
) -> Result<Option<Claimed>, sqlx::Error> {
    let row: Option<(String, String, String, String, Option<String>, bool)> = sqlx::query_as(
        "SELECT id, name, query, status, last_error, plan IS NOT NULL OR EXISTS (
             SELECT 1 FROM researchflow.files f WHERE f.batch = q.batch AND f.question = q.id
         ) OR EXISTS (
             SELECT 1 FROM researchflow.lines l WHERE l.batch = q.batch AND l.question = q.id)
         FROM researchflow.questions q
         WHERE batch = $1 AND job_id = $2 FOR UPDATE OF q",
    )
    .bind(batch)
    .bind(job.to_string())
    .fetch_optional(&mut **tx)
    .await?;
    let Some((id, name, query, status, last_error, stored)) = row else {
        ack(
            tx,
            job,
            before,
            Status::Killed,
            Err("no question".into()),
            worker,
        )
        .await?;
        return Ok(None);
    };
    if super::status::is_ended(super::status::parse(&status)) {
        ack(tx, job, before, Status::Done, Ok(Value::Null), worker).await?;
        return Ok(None);
    }
    if before >= i32::try_from(max_attempts).unwrap_or(i32::MAX) {
        let reason = last_error.unwrap_or_else(|| {
            format!("the worker running it was lost {before} time(s) (killed, or its machine gone)")
        });
        sqlx::query(
            "UPDATE researchflow.questions SET status = 'failed', reason = $3, worker = NULL,
             updated_at = now() WHERE batch = $1 AND id = $2",
        )
        .bind(batch)
        .bind(&id)
        .bind(&reason)
        .execute(&mut **tx)
        .await?;
        ack(tx, job, before, Status::Killed, Err(reason), worker).await?;
        return Ok(None);
    }
    let attempt = before + 1;
    let claim: i64 = sqlx::query_scalar(
        "UPDATE researchflow.questions SET status = 'running', worker = $3, attempt = $4,
         claim = claim + 1, started_at = now(), updated_at = now()
         WHERE batch = $1 AND id = $2 RETURNING claim",
    )
    .bind(batch)
    .bind(&id)
    .bind(worker)
    .bind(attempt)
    .fetch_one(&mut **tx)
    .await?;
    Ok(Some(Claimed {
        batch: batch.to_string(),
        id,
        name,
        query,
        claim,
        attempt,
        job: job.clone(),
        worker: worker.to_string(),
        stored,
    }))
}

/// Settles `job` in apalis's table: its status, attempts and result.
pub async fn ack(
    tx: &mut Transaction<'static, Postgres>,
    job: &TaskId,
    attempts: i32,
    status: Status,
    result: Result<Value, String>,
    worker: &str,
) -> Result<(), sqlx::Error> {
    let payload = TaskResult {
        task_id: job.clone(),
        attempt: usize::try_from(attempts).unwrap_or(0),
        status,
        result,
    };
    apalis_postgres::queries::handle_results(&mut **tx, &[&payload], worker)
        .await
        .map_err(into_sqlx)?;
    Ok(())
}

/// Whether `c` still holds its question (no other worker took it since), the row locked
/// until `tx` ends.
pub async fn holds(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
) -> Result<bool, sqlx::Error> {
    let claim: Option<i64> = sqlx::query_scalar(
        "SELECT claim FROM researchflow.questions WHERE batch = $1 AND id = $2 FOR UPDATE",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(claim == Some(c.claim))
}

/// What the queue holds of question `id` of `batch`: its last checkpoint, its files, and each
/// appended file's lines, in order, as one file.
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
        let mut beside: Vec<(String, Vec<u8>)> = sqlx::query_as(
            "SELECT suffix, content FROM researchflow.files WHERE batch = $1 AND question = $2",
        )
        .bind(batch)
        .bind(id)
        .fetch_all(&db.pool)
        .await?;
        let appended: Vec<(String, Vec<u8>, i64)> = sqlx::query_as(
            "SELECT suffix, string_agg(line, ''::bytea ORDER BY seq), max(seq) + 1
             FROM researchflow.lines WHERE batch = $1 AND question = $2 GROUP BY suffix",
        )
        .bind(batch)
        .bind(id)
        .fetch_all(&db.pool)
        .await?;
        let mut next = HashMap::new();
        for (suffix, content, after) in appended {
            next.insert(suffix.clone(), after);
            beside.push((suffix, content));
        }
        Ok(Files { plan, beside, next })
    })
    .await
}
