//! [`Sessions`]: the HTTP transport's sessions, capped and expired. `rmcp`'s session manager
//! holds them; this adds what it lacks: at most `--max-sessions` at once (an `initialize`
//! beyond is refused, so a flood of them cannot take the server's memory), and expiry after
//! `--session-idle` seconds with no request received and none in flight. `rmcp`'s own idle
//! timer is off: it counts a session whose only call is a long `research` as idle, and
//! closing that session would stop the run.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use tokio_util::sync::CancellationToken;

use super::active::Active;

/// The sessions of one HTTP server.
pub struct Sessions {
    manager: Arc<LocalSessionManager>,
    max: usize,
    idle: Duration,
    /// Held while an `initialize` is counted and served: two cannot both take the last place.
    opening: tokio::sync::Mutex<()>,
    seen: Mutex<HashMap<String, Seen>>,
}

/// When a session was last asked something, and how many of its responses are open.
struct Seen {
    last: Instant,
    open: usize,
}

impl Sessions {
    /// At most `max` sessions, each expiring after `idle` without a request.
    pub fn new(max: usize, idle: Duration) -> Sessions {
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = None;
        Sessions {
            manager: Arc::new(manager),
            max,
            idle,
            opening: tokio::sync::Mutex::new(()),
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// The session manager the `rmcp` service runs on.
    pub fn manager(&self) -> Arc<LocalSessionManager> {
        Arc::clone(&self.manager)
    }

    pub fn max(&self) -> usize {
        self.max
    }

    pub fn idle(&self) -> Duration {
        self.idle
    }

    /// A place for one more session, held until the `initialize` is answered; `None` when
    /// every place is taken.
    pub async fn place(&self) -> Option<tokio::sync::MutexGuard<'_, ()>> {
        let guard = self.opening.lock().await;
        let count = self.manager.sessions.read().await.len();
        (count < self.max).then_some(guard)
    }

    /// Whether `id` is a session of this server.
    pub async fn exists(&self, id: &str) -> bool {
        self.manager
            .has_session(&id.to_string().into())
            .await
            .unwrap_or(false)
    }

    /// `id` was just opened.
    pub fn opened(&self, id: &str) {
        self.seen.locked().insert(
            id.to_string(),
            Seen {
                last: Instant::now(),
                open: 0,
            },
        );
    }

    /// A request of session `id` came in: it is busy until the [`Visit`] (held by its
    /// response) is dropped.
    pub fn visit(self: &Arc<Self>, id: &str) -> Visit {
        let mut seen = self.seen.locked();
        let entry = seen.entry(id.to_string()).or_insert(Seen {
            last: Instant::now(),
            open: 0,
        });
        entry.last = Instant::now();
        entry.open += 1;
        Visit {
            sessions: Arc::clone(self),
            id: id.to_string(),
        }
    }

    /// Session `id` ended (`DELETE`).
    pub fn forget(&self, id: &str) {
        self.seen.locked().remove(id);
    }

    /// Closes every session idle for longer than the idle time, stopping what its calls
    /// still run; forgets the sessions that ended on their own.
    pub async fn reap(&self, active: &Active) {
        let ids: Vec<String> = self
            .manager
            .sessions
            .read()
            .await
            .keys()
            .map(ToString::to_string)
            .collect();
        let expired: Vec<String> = {
            let mut seen = self.seen.locked();
            seen.retain(|id, _| ids.contains(id));
            for id in &ids {
                // A session this gate did not see open is counted from now.
                seen.entry(id.clone()).or_insert(Seen {
                    last: Instant::now(),
                    open: 0,
                });
            }
            let expired: Vec<String> = seen
                .iter()
                .filter(|(_, s)| s.open == 0 && s.last.elapsed() > self.idle)
                .map(|(id, _)| id.clone())
                .collect();
            for id in &expired {
                seen.remove(id);
            }
            expired
        };
        for id in expired {
            tracing::debug!(
                "the HTTP session `{id}` was idle for {:?}: closing it",
                self.idle
            );
            active.stop_session(&id);
            if let Err(e) = self.manager.close_session(&id.clone().into()).await {
                tracing::debug!("cannot close the idle session `{id}`: {e}");
            }
        }
    }

    /// Reaps idle sessions until `stop` is cancelled.
    pub async fn reap_until(self: Arc<Self>, active: Arc<Active>, stop: CancellationToken) {
        let tick = (self.idle / 2).clamp(Duration::from_millis(100), Duration::from_secs(30));
        loop {
            tokio::select! {
                () = tokio::time::sleep(tick) => self.reap(&active).await,
                () = stop.cancelled() => return,
            }
        }
    }
}

/// A request of a session being answered; dropped when its response ends or is dropped.
pub struct Visit {
    sessions: Arc<Sessions>,
    id: String,
}

impl Drop for Visit {
    fn drop(&mut self) {
        if let Some(seen) = self.sessions.seen.locked().get_mut(&self.id) {
            seen.open = seen.open.saturating_sub(1);
            seen.last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_with_an_open_response_is_not_idle() {
        let sessions = Arc::new(Sessions::new(2, Duration::from_millis(10)));
        let (id, _transport) = sessions.manager.create_session().await.expect("create");
        let id = id.to_string();
        sessions.opened(&id);
        let active = Active::default();
        let visit = sessions.visit(&id);
        tokio::time::sleep(Duration::from_millis(30)).await;
        sessions.reap(&active).await;
        assert!(sessions.exists(&id).await, "a response is open");
        drop(visit);
        tokio::time::sleep(Duration::from_millis(30)).await;
        sessions.reap(&active).await;
        assert!(!sessions.exists(&id).await, "idle, then closed");
    }

    #[tokio::test]
    async fn places_are_counted() {
        let sessions = Sessions::new(1, Duration::from_secs(60));
        assert!(sessions.place().await.is_some());
        let (_id, _transport) = sessions.manager.create_session().await.expect("create");
        assert!(sessions.place().await.is_none(), "full");
    }
}
