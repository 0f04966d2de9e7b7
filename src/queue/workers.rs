//! The live workers of a queue, among which every endpoint's configured rate budget (and what
//! remains of the budget its server announces) is divided: each worker counts the workers
//! that run a question and were heard from within a lease (apalis's workers table, whose
//! heartbeats `lease.rs` sends), itself included, every [`RECOUNT_EVERY`]; its gates read the
//! count at each admission. A worker with nothing to run, or gone, takes no share.
//! Nothing else about rates is kept in the database.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use super::db::Db;
use crate::http::Gates;

/// How often a worker counts the live workers: a worker that starts or stops changes the
/// others' shares within this.
pub const RECOUNT_EVERY: Duration = Duration::from_millis(250);

/// The worker processes running a question and heard from within `within`, `name` (this one)
/// among them.
pub async fn live(db: &Db, name: &str, within: Duration) -> Result<u32, sqlx::Error> {
    let count: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (
            SELECT split_part(w.id, '/', 1) FROM apalis.workers w
            WHERE w.last_seen > now() - make_interval(secs => $1) AND EXISTS (
                SELECT 1 FROM researchflow.questions q
                WHERE q.status = 'running' AND q.worker = w.id)
            UNION SELECT $2
         ) AS live",
    )
    .bind(within.as_secs_f64())
    .bind(name)
    .fetch_one(&db.pool)
    .await?;
    Ok(u32::try_from(count).unwrap_or(u32::MAX).max(1))
}

/// The gates of worker `name`: every endpoint's budgets divided by the count of live workers,
/// kept up to date in the background while the gates live. Until the first count, and
/// whenever the database does not answer, the last count holds (1 at first).
pub fn gates(db: Db, name: String, within: Duration) -> Gates {
    let share = Arc::new(AtomicU32::new(1));
    let held = Arc::downgrade(&share);
    tokio::spawn(async move {
        while let Some(share) = held.upgrade() {
            match live(&db, &name, within).await {
                Ok(n) => share.store(n, Ordering::Relaxed),
                Err(e) => tracing::debug!("the live workers are not counted this time: {e}"),
            }
            drop(share);
            tokio::time::sleep(RECOUNT_EVERY).await;
        }
    });
    Gates::shared_by(share)
}
