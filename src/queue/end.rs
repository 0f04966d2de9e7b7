//! A question's attempt ended: its plan and files stored (but the event log and transcript,
//! whose lines the worker's writer stored as they came), its row's status (over, or
//! pending again for another attempt, or `failed` once its attempts are spent), and its job
//! settled, in one transaction that only the claim's holder can commit (a worker stores the
//! ends that came together in one).

use apalis_core::task::status::Status;
use serde_json::Value;

use sqlx::{Postgres, Transaction};

use super::claim::{Claimed, Files, ack, holds};
use super::db::{Db, QueueError};
use super::writer::APPENDED;
use crate::batch::ItemStatus;
use crate::events::Totals;
use crate::review::ReviewSummary;

/// How a question's attempt ended, for the queue.
#[derive(Debug, Clone)]
pub enum End {
    /// Its run ended with a report (or without one, `final_failed`): it is over.
    Ended {
        status: ItemStatus,
        totals: Totals,
        reason: Option<String>,
        review: Option<ReviewSummary>,
    },
    /// The attempt failed: another worker tries again, unless the attempts are spent.
    Failed(String),
    /// Not the question's fault (a signal, an endpoint that cannot be used): pending again,
    /// the attempt not counted.
    Released(String),
}

/// Whether attempt number `attempt` was the last one allowed: a failed one ends the question
/// `failed` instead of sending it back to the queue.
pub fn spent(attempt: i32, max_attempts: u32) -> bool {
    attempt >= i32::try_from(max_attempts).unwrap_or(i32::MAX)
}

/// A question's attempt that ended, with what its run left, to be stored.
#[derive(Debug)]
pub struct Ending {
    pub claimed: Claimed,
    pub end: End,
    pub files: Files,
}

/// Stores each question's end with its files and settles its job, all in one transaction: for
/// each, `false` when another worker took the question meanwhile (nothing of it is written).
pub async fn finish(
    db: &Db,
    endings: &[Ending],
    max_attempts: u32,
) -> Result<Vec<bool>, QueueError> {
    db.retrying("storing questions' ends", || async move {
        let mut tx = db.begin().await?;
        let mut held = Vec::with_capacity(endings.len());
        for ending in endings {
            held.push(store(&mut tx, ending, max_attempts).await?);
        }
        tx.commit().await?;
        Ok(held)
    })
    .await
}

/// Stores one end in `tx`; `false` when its claim is no longer held.
async fn store(
    tx: &mut Transaction<'static, Postgres>,
    ending: &Ending,
    max_attempts: u32,
) -> Result<bool, sqlx::Error> {
    let Ending {
        claimed: c,
        end,
        files,
    } = ending;
    if !holds(tx, c).await? {
        return Ok(false);
    }
    store_files(tx, c, files).await?;
    let spent = spent(c.attempt, max_attempts);
    let (status, job_status, attempts, error) = match end {
        End::Ended { status, .. } => (status.as_str(), Status::Done, c.attempt, None),
        End::Failed(e) if spent => ("failed", Status::Killed, c.attempt, Some(e)),
        End::Failed(e) => ("pending", Status::Failed, c.attempt, Some(e)),
        End::Released(why) => ("pending", Status::Pending, c.attempt - 1, Some(why)),
    };
    let (totals, reason, review) = match end {
        End::Ended {
            totals,
            reason,
            review,
            ..
        } => (
            serde_json::to_value(totals).ok(),
            reason.clone(),
            review.as_ref().and_then(|r| serde_json::to_value(r).ok()),
        ),
        End::Failed(e) if spent => (None, Some(e.clone()), None),
        _ => (None, None, None),
    };
    sqlx::query(
        "UPDATE researchflow.questions SET status = $3, worker = NULL, updated_at = now(),
         attempt = $4, last_error = COALESCE($5, last_error), totals = $6, reason = $7,
         review = $8 WHERE batch = $1 AND id = $2",
    )
    .bind(&c.batch)
    .bind(&c.id)
    .bind(status)
    .bind(attempts)
    .bind(error)
    .bind(totals)
    .bind(reason)
    .bind(review)
    .execute(&mut **tx)
    .await?;
    let result = match error {
        Some(e) => Err(e.clone()),
        None => Ok(Value::String(status.to_string())),
    };
    ack(tx, &c.job, attempts, job_status, result, &c.worker).await?;
    Ok(true)
}

/// Stores the plan and every file beside it whole, but the appended ones (their lines are
/// stored already), in `tx`, which holds the question's row.
async fn store_files(
    tx: &mut Transaction<'static, Postgres>,
    c: &Claimed,
    files: &Files,
) -> Result<(), sqlx::Error> {
    if let Some(text) = &files.plan {
        sqlx::query(
            "UPDATE researchflow.questions SET plan = $3, updated_at = now()
             WHERE batch = $1 AND id = $2",
        )
        .bind(&c.batch)
        .bind(&c.id)
        .bind(text)
        .execute(&mut **tx)
        .await?;
    }
    let whole = files
        .beside
        .iter()
        .filter(|(suffix, _)| !APPENDED.contains(&suffix.as_str()));
    for (suffix, bytes) in whole {
        sqlx::query(
            "INSERT INTO researchflow.files (batch, question, suffix, content)
             VALUES ($1, $2, $3, $4)
             ON CONFLICT (batch, question, suffix) DO UPDATE SET content = EXCLUDED.content",
        )
        .bind(&c.batch)
        .bind(&c.id)
        .bind(suffix)
        .bind(bytes)
        .execute(&mut **tx)
        .await?;
    }
    Ok(())
}
