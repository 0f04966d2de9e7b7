//! The live workers of a queue, among which every endpoint's rate budget is divided (the
//! configured one, what remains of the one its server announces, and the adaptive rate): each
//! worker counts the workers that run a question and were heard from within a lease (apalis's
//! workers table, whose heartbeats `lease.rs` sends), itself included, every [`RECOUNT_EVERY`];
//! its gates read the count at each admission. A worker with nothing to run, or gone, takes no
//! share. The rate a worker measures after a 429 goes to the others as a notification on
//! [`CHANNEL`] (PostgreSQL's LISTEN/NOTIFY: nothing about rates is stored).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sqlx::postgres::PgListener;
use tokio::sync::mpsc;

use super::db::Db;
use crate::http::{Gates, Sharing};

/// The notification channel of the rates measured after a 429.
pub const CHANNEL: &str = "researchflow_rates";

/// A rate a worker measured: of endpoint `key` (its base URL, no password, and model), in
/// requests a minute for all the workers.
#[derive(Debug, Serialize, Deserialize)]
struct Measured {
    worker: String,
    key: String,
    estimate: f64,
}

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
/// kept up to date in the background (until the first count, and whenever the database does
/// not answer, the last count holds: 1 at first); the rates its gates measure told to the
/// other workers, and theirs to its gates, for as long as the process runs.
pub fn gates(db: Db, name: String, within: Duration) -> Gates {
    let share = Arc::new(AtomicU32::new(1));
    let (tell, told) = mpsc::unbounded_channel();
    let gates = Gates::shared_by(Sharing {
        share: Arc::clone(&share),
        tell: Some(tell),
    });
    count(db.clone(), name.clone(), within, share);
    tokio::spawn(tell_others(db.clone(), name.clone(), told));
    tokio::spawn(hear_others(db, name, gates.clone()));
    gates
}

/// Counts the live workers into `share` every [`RECOUNT_EVERY`] while anything holds it.
fn count(db: Db, name: String, within: Duration, share: Arc<AtomicU32>) {
    let held = Arc::downgrade(&share);
    drop(share);
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
}

/// Sends what this worker's gates measured to the others, until the gates are gone.
async fn tell_others(db: Db, worker: String, mut told: mpsc::UnboundedReceiver<(String, f64)>) {
    while let Some((key, estimate)) = told.recv().await {
        let note = Measured {
            worker: worker.clone(),
            key,
            estimate,
        };
        let sent = sqlx::query("SELECT pg_notify($1, $2)")
            .bind(CHANNEL)
            .bind(serde_json::to_string(&note).unwrap_or_default())
            .execute(&db.pool)
            .await;
        if let Err(e) = sent {
            tracing::debug!("the rate measured is not told to the other workers: {e}");
        }
    }
}

/// Gives this worker's gates what the other workers measured (a lost connection is made
/// again; what was told meanwhile is missed, and the next 429 measures again).
async fn hear_others(db: Db, worker: String, gates: Gates) {
    loop {
        if let Err(e) = listen(&db, &worker, &gates).await {
            tracing::debug!("not hearing the other workers' rates: {e}");
        }
        tokio::time::sleep(RECOUNT_EVERY).await;
    }
}

async fn listen(db: &Db, worker: &str, gates: &Gates) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(&db.pool).await?;
    listener.listen(CHANNEL).await?;
    loop {
        let note = listener.recv().await?;
        match serde_json::from_str::<Measured>(note.payload()) {
            Ok(m) if m.worker != worker => gates.heard(&m.key, m.estimate),
            Ok(_) => {}
            Err(e) => tracing::debug!("a rate notification not understood: {e}"),
        }
    }
}
