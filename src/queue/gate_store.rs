//! [`DbGates`]: the queue's database as the [`GateStore`] of every worker's gates, one row per
//! endpoint in `researchflow.gates`. A gate renews its lease of the budget a few times a second
//! while in use (`http/gate/lease.rs`), never once per call; each renewal is one transaction:
//! the row locked (created on first use) and read with the server's clock, the step run, the
//! row written, committed without waiting for the disk (a budget lost in a crash is relearnt in
//! seconds). N workers on N machines admit within one budget, and a 429 closes the gate for all
//! of them: a renewal that closes it tells every worker at once (`NOTIFY` on
//! [`CHANNEL`], which each worker's gates `LISTEN` to on a connection of their own), whose
//! calls then renew before they go instead of going on the lease in hand; should that news
//! be lost, the next renewal brings it. It never waits for a server that is
//! down: the gate goes on with the process's own budget meanwhile.

use crate::sync::Locked;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use sqlx::PgPool;
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::types::Json;

use super::db::Db;
use super::url::QueueUrl;
use crate::http::shared_gate::{News, Step};
use crate::http::{GateStore, Gates, Lease, SharedState};

/// How long one renewal may take before the gate goes on without the store.
const PATIENCE: Duration = Duration::from_secs(3);

/// The channel a renewal that closes a gate notifies, with the gate's key as the payload.
pub const CHANNEL: &str = "researchflow_gates";

/// How long the listener waits before connecting again after losing its connection.
const RELISTEN: Duration = Duration::from_secs(1);

/// The shared gates of a queue's workers.
pub struct DbGates {
    db: Db,
    /// The gates of this process to wake when their key's gate is closed, by key; whether
    /// the listener runs.
    watchers: Arc<Mutex<Watchers>>,
}

#[derive(Default)]
struct Watchers {
    by_key: HashMap<String, Vec<Weak<News>>>,
    listening: bool,
}

/// Every endpoint's rate budget kept in `db`, shared by every worker of the queue.
pub fn shared_gates(db: &Db) -> Gates {
    Gates::shared(Arc::new(DbGates::new(db.clone())))
}

impl GateStore for DbGates {
    fn watch(&self, key: &str, news: Weak<News>) {
        let mut watchers = self.watchers.locked();
        let gates = watchers.by_key.entry(key.to_string()).or_default();
        gates.retain(|w| w.strong_count() > 0);
        gates.push(news);
        if !std::mem::replace(&mut watchers.listening, true) {
            tokio::spawn(listen(self.db.url.clone(), Arc::downgrade(&self.watchers)));
        }
    }

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
    pub fn new(db: Db) -> DbGates {
        DbGates {
            db,
            watchers: Arc::default(),
        }
    }

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
        let closed_until = state.closed_until;
        let lease = step(&mut state, now);
        if state.closed_until > closed_until.max(now) {
            // Delivered at the commit.
            sqlx::query("SELECT pg_notify($1, $2)")
                .bind(CHANNEL)
                .bind(key)
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("UPDATE researchflow.gates SET state = $2, updated_at = now() WHERE key = $1")
            .bind(key)
            .bind(Json(&state))
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(lease)
    }
}

/// Wakes this process's gates of each key a renewal of any process closed, for as long as
/// any gate of this process is watched; on a connection of its own (not one of the pool's,
/// which a long wait would hold), connected again after a loss. News lost meanwhile comes
/// with the next renewal.
async fn listen(url: QueueUrl, watchers: Weak<Mutex<Watchers>>) {
    let pool = PgPoolOptions::new()
        .max_connections(1)
        .max_lifetime(None)
        .idle_timeout(None)
        .connect_lazy_with(url.options().clone());
    while let Err(e) = hear(&pool, &watchers).await {
        tracing::debug!(
            "the queue's news of closed gates cannot be heard ({}); the renewals bring it",
            url.redact(&e.to_string())
        );
        if watchers.strong_count() == 0 {
            return;
        }
        tokio::time::sleep(RELISTEN).await;
    }
}

/// Hears the channel until its connection fails, or no gate is watched any more.
async fn hear(pool: &PgPool, watchers: &Weak<Mutex<Watchers>>) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen(CHANNEL).await?;
    loop {
        let note = listener.recv().await?;
        let Some(watchers) = watchers.upgrade() else {
            return Ok(());
        };
        let watchers = watchers.locked();
        for news in watchers.by_key.get(note.payload()).into_iter().flatten() {
            if let Some(news) = news.upgrade() {
                news.tell();
            }
        }
    }
}
