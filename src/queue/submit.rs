//! Submitting a batch's questions: one row per question in `researchflow.questions` and one
//! apalis job each, in one transaction, under a lock on the batch's name. Idempotent by
//! question id: a question already queued, running or ended is counted, never added again.

use std::collections::HashMap;

use apalis_core::task::builder::TaskBuilder;
use apalis_core::task::task_id::TaskId;
use serde::Serialize;
use sqlx::{Postgres, Transaction};

use super::db::{Db, QueueError};
use super::status;
use crate::batch::Question;

/// What a submission did, as `batch FILE --queue` prints it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Submitted {
    pub batch: String,
    pub submitted: usize,
    pub already_queued: usize,
    pub already_done: usize,
}

/// The apalis queue (`job_type`) of batch `name`: one per batch, so that two batches never
/// touch each other's jobs.
pub fn job_type(batch: &str) -> String {
    format!("researchflow/{batch}")
}

/// A job's attempts as apalis counts them never stop it: the worker's `--max-attempts` does.
const APALIS_MAX_ATTEMPTS: usize = 1_000_000;

/// A batch name: what a user types, shown in `batch status`.
pub fn check_name(name: &str) -> Result<(), QueueError> {
    let blank_ends = name.trim() != name;
    if name.trim().is_empty()
        || blank_ends
        || name.len() > 200
        || name.chars().any(char::is_control)
    {
        return Err(QueueError::Setup(format!(
            "`--batch {name:?}`: a batch's name is 1 to 200 characters, not only white space, with none at either end and no control character"
        )));
    }
    Ok(())
}

/// Adds `questions` to batch `name`, those it does not hold yet.
pub async fn submit(db: &Db, name: &str, questions: &[Question]) -> Result<Submitted, QueueError> {
    check_name(name)?;
    let added = db
        .retrying("submitting the questions", || async move {
            let mut tx = db.begin().await?;
            let out = add_new(&mut tx, name, questions).await?;
            if out.is_ok() {
                tx.commit().await?;
            }
            Ok(out)
        })
        .await?;
    added.map_err(|(id, by)| {
        QueueError::Setup(format!(
            "question `{id}` would be named like question `{by}`, already in batch `{name}`: give it its own id"
        ))
    })
}

/// In `tx`: the batch, the rows and jobs of the new questions; or, adding nothing, a new
/// question (its id) whose file name is an earlier question's (its id).
async fn add_new(
    tx: &mut Transaction<'static, Postgres>,
    name: &str,
    questions: &[Question],
) -> Result<Result<Submitted, (String, String)>, sqlx::Error> {
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('researchflow.batch/' || $1))")
        .bind(name)
        .execute(&mut **tx)
        .await?;
    sqlx::query("INSERT INTO researchflow.batches (name) VALUES ($1) ON CONFLICT DO NOTHING")
        .bind(name)
        .execute(&mut **tx)
        .await?;
    let rows: Vec<(String, String, String, i32)> =
        sqlx::query_as("SELECT id, name, status, seq FROM researchflow.questions WHERE batch = $1")
            .bind(name)
            .fetch_all(&mut **tx)
            .await?;
    let mut out = Submitted {
        batch: name.to_string(),
        submitted: 0,
        already_queued: 0,
        already_done: 0,
    };
    let by_id: HashMap<&str, &str> = rows.iter().map(|r| (r.0.as_str(), r.2.as_str())).collect();
    let names: HashMap<&str, &str> = rows.iter().map(|r| (r.1.as_str(), r.0.as_str())).collect();
    let mut seq = rows.iter().map(|r| r.3).max().unwrap_or(0);
    let mut new = Vec::new();
    for q in questions {
        match by_id.get(q.id.as_str()).map(|s| status::parse(s)) {
            Some(s) if status::is_ended(s) => out.already_done += 1,
            Some(_) => out.already_queued += 1,
            None => {
                if let Some(by) = names.get(q.name.as_str()) {
                    return Ok(Err((q.id.clone(), (*by).to_string())));
                }
                seq += 1;
                new.push((q, seq, ulid::Ulid::generate()));
            }
        }
    }
    out.submitted = new.len();
    if new.is_empty() {
        return Ok(Ok(out));
    }
    let column = |f: &dyn Fn(&(&Question, i32, ulid::Ulid)) -> String| -> Vec<String> {
        new.iter().map(f).collect()
    };
    sqlx::query(
        "INSERT INTO researchflow.questions (batch, id, name, query, seq, job_id)
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::text[], $5::int[], $6::text[])",
    )
    .bind(name)
    .bind(column(&|n| n.0.id.clone()))
    .bind(column(&|n| n.0.name.clone()))
    .bind(column(&|n| n.0.query.clone()))
    .bind(new.iter().map(|n| n.1).collect::<Vec<i32>>())
    .bind(column(&|n| n.2.to_string()))
    .execute(&mut **tx)
    .await?;
    let tasks = new
        .iter()
        .map(|(q, _, job)| {
            let args = serde_json::json!({"batch": name, "question": q.id}).to_string();
            TaskBuilder::new(args.into_bytes())
                .task_id(TaskId::from_ulid(*job))
                .max_attempts(APALIS_MAX_ATTEMPTS)
                .idempotency_key(&q.id)
                .build()
        })
        .collect();
    apalis_postgres::queries::push_tasks(&mut **tx, &job_type(name), tasks)
        .await
        .map_err(into_sqlx)?;
    Ok(Ok(out))
}

/// apalis-postgres's error as sqlx's (what it wraps), so that a lost connection is retried.
pub fn into_sqlx(e: apalis_postgres::Error) -> sqlx::Error {
    match e {
        apalis_postgres::Error::Database(e) => e,
        other => sqlx::Error::Decode(other.to_string().into()),
    }
}
