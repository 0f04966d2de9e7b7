//! [`DbGates`]: the queue's database as the [`GateStore`] of every worker's gates, one row per
//! endpoint in `researchflow.gates`. A gate renews its lease of the budget a few times a second
//! while in use (`http/gate/lease.rs`), never once per call; each renewal is one transaction:
//! the row locked (created on first use) and read with the server's clock, the step run, the
//! row written, committed without waiting for the disk (a budget lost in a crash is relearnt in
//! seconds). N workers on N machines admit within one budget, and a 429 closes the gate for all
//! of them at their next renewal. It never waits for a server that is down: the gate goes on
//! with the process's own budget meanwhile.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use sqlx::types::Json;

use super::db::Db;
use crate::http::shared_gate::Step;
use crate::http::{GateStore, Gates, Lease, SharedState};

/// How long one renewal may take before the gate goes on without the store.
const PATIENCE: Duration = Duration::from_secs(3);

/// The shared gates of a queue's workers.
pub struct DbGates {
    pub db: Db,
}

/// Every endpoint's rate budget kept in `db`, shared by every worker of the queue.
pub fn shared_gates(db: &Db) -> Gates {
    Gates::shared(Arc::new(DbGates { db: db.clone() }))
}

impl GateStore for DbGates {
    fn update<'a>(
        &'a self,
        key: &'a str,
        step: &'a mut Step<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Lease, String>> + Send + 'a>> {
        Box::pin(async move {
            match tokio::time::timeout(PATIENCE, self.transact(key, step)).await {
                Ok(Ok(lease)) => Ok(lease),
                Ok(Err(e)) => Err(self.db.url.redact(&e.to_string())),
                Err(_) => Err(format!(
                    "the queue's database did not answer within {} s",
                    PATIENCE.as_secs()
                )),
            }
        })
    }
}

impl DbGates {
    async fn transact(&self, key: &str, step: &mut Step<'_>) -> Result<Lease, sqlx::Error> {
        let mut tx = self.db.begin().await?;
        sqlx::query("SET LOCAL synchronous_commit = off")
            .execute(&mut *tx)
            .await?;
        let (state, now): (Json<serde_json::Value>, f64) = sqlx::query_as(
            "INSERT INTO researchflow.gates AS g (key) VALUES ($1)
             ON CONFLICT (key) DO UPDATE SET updated_at = g.updated_at
             RETURNING g.state, (extract(epoch FROM clock_timestamp()) * 1000)::float8",
        )
        .bind(key)
        .fetch_one(&mut *tx)
        .await?;
        let mut state: SharedState = serde_json::from_value(state.0).unwrap_or_default();
        let lease = step(&mut state, now);
        sqlx::query("UPDATE researchflow.gates SET state = $2, updated_at = now() WHERE key = $1")
            .bind(key)
            .bind(Json(&state))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(lease)
    }
}
