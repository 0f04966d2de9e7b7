//! The leases of a worker's questions, through apalis-postgres's worker table: the worker is
//! registered once per batch it serves, tells it is alive every third of `--lease`
//! (`keep_alive`), and re-enqueues the jobs of workers not heard from for `--lease` seconds
//! (`reenqueue_orphaned`, one attempt more each), whose questions become `pending` again for
//! any worker to resume from their last checkpoint. A lost connection only delays a beat;
//! but a worker judges the others only once it has itself been heard for a whole lease without
//! a break (after it starts, and after the database comes back from a restart or a cut), so
//! that an outage longer than the lease takes no question from a worker that is alive.

use crate::sync::Locked;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use apalis_core::worker::context::WorkerContext;

use super::db::{Db, QueueError};
use super::submit::{into_sqlx, job_type};

/// The apalis worker of each batch this process serves.
#[derive(Clone, Default)]
pub struct Leases {
    workers: Arc<Mutex<BTreeMap<String, WorkerContext>>>,
    heard: Arc<Mutex<Heard>>,
}

/// Whether this worker's own beats went through lately.
#[derive(Default)]
struct Heard {
    /// The end of the last beat that went through.
    last: Option<Instant>,
    /// Since when the beats went through without a gap longer than a lease.
    since: Option<Instant>,
}

impl Leases {
    /// The apalis worker of `batch`, registered on first use as `<name>/<batch>`.
    pub async fn worker(
        &self,
        db: &Db,
        name: &str,
        batch: &str,
    ) -> Result<WorkerContext, QueueError> {
        if let Some(ctx) = self.lock().get(batch) {
            return Ok(ctx.clone());
        }
        let ctx = WorkerContext::new(&format!("{name}/{batch}"));
        let queue = job_type(batch);
        db.retrying("registering the worker", || {
            let (ctx, queue) = (&ctx, &queue);
            async move {
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
                let mut conn = db.pool.acquire().await?;
                apalis_postgres::queries::register_worker(
                    &mut *conn,
                    queue,
                    ctx,
                    &now.into(),
                    "researchflow",
                )
                .await
                .map_err(into_sqlx)
            }
        })
        .await?;
        self.lock().insert(batch.to_string(), ctx.clone());
        Ok(ctx)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, WorkerContext>> {
        self.workers.locked()
    }

    /// Every beat: each registered worker is alive; each batch's orphaned jobs (their workers
    /// silent for `lease`) go back to the queue, and their questions to `pending`, once this
    /// worker has been heard for a whole lease itself.
    pub async fn beat(&self, db: &Db, lease: Duration) {
        let workers: Vec<(String, WorkerContext)> = self
            .lock()
            .iter()
            .map(|(b, c)| (b.clone(), c.clone()))
            .collect();
        if workers.is_empty() {
            return;
        }
        let reap = self
            .lock_heard()
            .since
            .is_some_and(|since| since.elapsed() >= lease);
        let mut all_heard = true;
        for (batch, ctx) in workers {
            if let Err(e) = beat_one(db, &batch, &ctx, lease, reap).await {
                all_heard = false;
                tracing::warn!(
                    "the lease of batch `{batch}` is not renewed this time: {}",
                    db.url.redact(&e.to_string())
                );
            }
        }
        let now = Instant::now();
        let mut heard = self.lock_heard();
        if !all_heard {
            *heard = Heard::default();
            return;
        }
        // A beat that came after a gap (an outage the pool waited out, a paused process)
        // starts the count again: the others were not heard meanwhile either.
        if heard.last.is_none_or(|last| now - last > lease) {
            heard.since = Some(now);
        }
        heard.last = Some(now);
    }

    fn lock_heard(&self) -> std::sync::MutexGuard<'_, Heard> {
        self.heard.locked()
    }
}

async fn beat_one(
    db: &Db,
    batch: &str,
    ctx: &WorkerContext,
    lease: Duration,
    reap: bool,
) -> Result<(), sqlx::Error> {
    let queue = job_type(batch);
    let mut tx = db.begin().await?;
    apalis_postgres::queries::keep_alive(&mut *tx, &queue, ctx)
        .await
        .map_err(into_sqlx)?;
    if !reap {
        return tx.commit().await;
    }
    let requeued =
        apalis_postgres::queries::reenqueue_orphaned(&mut *tx, &queue, lease.as_secs().max(1))
            .await
            .map_err(into_sqlx)?;
    if requeued > 0 {
        let back = sqlx::query(
            "UPDATE researchflow.questions q SET status = 'pending', worker = NULL, updated_at = now()
             FROM apalis.jobs j
             WHERE q.batch = $1 AND q.job_id = j.id AND q.status = 'running' AND j.status = 'Pending'",
        )
        .bind(batch)
        .execute(&mut *tx)
        .await?;
        tracing::warn!(
            "batch `{batch}`: {} question(s) whose worker was silent for {} s go back to the queue",
            back.rows_affected(),
            lease.as_secs()
        );
    }
    tx.commit().await
}

/// Beats every third of `lease` (within 0.3 to 10 s) until aborted.
pub fn spawn_beats(leases: Leases, db: Db, lease: Duration) -> tokio::task::JoinHandle<()> {
    let every = (lease / 3).clamp(Duration::from_millis(300), Duration::from_secs(10));
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            leases.beat(&db, lease).await;
        }
    })
}
