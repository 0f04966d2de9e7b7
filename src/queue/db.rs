//! [`Db`]: the connection pool to a queue's database, opened after one direct connection
//! whose failure is told in one line that names what to fix (server unreachable, password
//! refused, database missing), and [`Db::retrying`]: every later statement outlives a restart
//! of the server, retried with backoff while the fault is a lost connection. Every message
//! goes through the URL's redaction: the password never shows.

use std::future::Future;
use std::time::{Duration, Instant};

use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection, Postgres, Transaction};

use super::url::QueueUrl;

/// How long a statement is retried while the server cannot be reached.
const PATIENCE: Duration = Duration::from_secs(300);
/// The first and the longest pause between two tries.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
const LONGEST_PAUSE: Duration = Duration::from_secs(3);

/// Why the queue cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    /// What the user must fix: the URL, the server, the schema (exit 2).
    #[error("{0}")]
    Setup(String),
    /// The database failed a statement, or stayed unreachable (exit 1).
    #[error("{0}")]
    Database(String),
}

impl QueueError {
    /// The command's error: what to fix exits 2, a failing database 1.
    pub fn into_command(self) -> crate::exit::CommandError {
        match self {
            QueueError::Setup(m) => crate::exit::CommandError::usage(anyhow::anyhow!(m)),
            QueueError::Database(m) => crate::exit::CommandError::failure(anyhow::anyhow!(m)),
        }
    }
}

/// A queue's database.
#[derive(Clone)]
pub struct Db {
    pub pool: PgPool,
    pub url: QueueUrl,
}

impl Db {
    /// Connects once (the error names what to fix), then opens the pool of at most
    /// `connections`.
    pub async fn connect(url: QueueUrl, connections: u32) -> Result<Db, QueueError> {
        let first = PgConnection::connect_with(url.options()).await;
        match first {
            Ok(conn) => {
                let _ = conn.close().await;
            }
            Err(e) => return Err(QueueError::Setup(connect_error(&url, &e))),
        }
        let pool = PgPoolOptions::new()
            .max_connections(connections.max(2))
            .acquire_timeout(Duration::from_secs(10))
            .connect_lazy_with(url.options().clone());
        Ok(Db { pool, url })
    }

    /// `op`, tried again with backoff while the server cannot be reached (a restart, a cut),
    /// for up to five minutes; any other error at once. `what` names it in messages.
    pub async fn retrying<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, QueueError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, sqlx::Error>>,
    {
        let started = Instant::now();
        let mut pause = FIRST_PAUSE;
        let mut told = false;
        loop {
            match op().await {
                Ok(value) => {
                    if told {
                        tracing::info!("the queue's database is back: {what}");
                    }
                    return Ok(value);
                }
                Err(e) => match passing(&e) {
                    Some(why) if started.elapsed() < PATIENCE => {
                        if !told {
                            tracing::warn!(
                                "the queue's database at `{}` {why} ({}): {what} is tried again with backoff",
                                self.url.server(),
                                self.url.redact(&e.to_string())
                            );
                            told = true;
                        }
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(LONGEST_PAUSE);
                    }
                    _ => return Err(self.failed(what, &e)),
                },
            }
        }
    }

    /// A transaction begun on the pool.
    pub async fn begin(&self) -> Result<Transaction<'static, Postgres>, sqlx::Error> {
        self.pool.begin().await
    }

    /// `what` failed with `e`, as one redacted line.
    pub fn failed(&self, what: &str, e: &sqlx::Error) -> QueueError {
        QueueError::Database(self.url.redact(&format!(
            "the queue's database at `{}`: {what}: {e}",
            self.url.server()
        )))
    }
}

/// Why `e` is worth another try, as the log says it: a lost or refused connection, a server
/// shutting down or starting, a conflict with another transaction, no connection free, a
/// transaction the server ended for sitting idle. `None`: not worth one.
fn passing(e: &sqlx::Error) -> Option<&'static str> {
    const UNREACHABLE: &str = "cannot be reached";
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => Some(UNREACHABLE),
        sqlx::Error::Database(db) => match db.code()?.as_ref() {
            code if code.starts_with("08") || code.starts_with("57P") => Some(UNREACHABLE),
            "40001" | "40P01" => Some("met a conflict with another worker's transaction"),
            "53300" => Some("has no connection free"),
            // The server ended a transaction that sat idle (`queue/url.rs`): a worker
            // stalled, or cut off and back; its connection is gone, the work is not.
            "25P03" => Some("ended a transaction that sat idle"),
            _ => None,
        },
        _ => None,
    }
}

/// Whether `e` is worth another try ([`passing`]).
pub fn is_transient(e: &sqlx::Error) -> bool {
    passing(e).is_some()
}

/// The first connection's failure, as one line that names what to fix.
fn connect_error(url: &QueueUrl, e: &sqlx::Error) -> String {
    let server = url.server();
    let shown = url.shown();
    let code = match e {
        sqlx::Error::Database(db) => db.code().map(|c| c.to_string()),
        _ => None,
    };
    let detail = url.redact(&e.to_string());
    match (code.as_deref(), e) {
        (Some("28P01" | "28000"), _) => format!(
            "the PostgreSQL server at `{server}` refused user `{}` ({detail}): fix the user or the password in `--queue {shown}`",
            url.user
        ),
        (Some("3D000"), _) => format!(
            "the database `{}` does not exist on the PostgreSQL server at `{server}`: create it (`createdb {}`) or fix its name in `--queue {shown}`",
            url.database, url.database
        ),
        (_, sqlx::Error::Io(_) | sqlx::Error::Tls(_)) => format!(
            "cannot reach the PostgreSQL server at `{server}` ({detail}): start it, or fix the host and port in `--queue {shown}`"
        ),
        _ => format!("cannot connect to the queue `{shown}`: {detail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::error::{DatabaseError, ErrorKind};
    use std::borrow::Cow;

    /// An error the server sent, with its SQLSTATE.
    #[derive(Debug)]
    struct Sent(&'static str);

    impl std::fmt::Display for Sent {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "error {}", self.0)
        }
    }

    impl std::error::Error for Sent {}

    impl DatabaseError for Sent {
        fn message(&self) -> &str {
            "sent"
        }
        fn code(&self) -> Option<Cow<'_, str>> {
            Some(Cow::Borrowed(self.0))
        }
        fn as_error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
            self
        }
        fn as_error_mut(&mut self) -> &mut (dyn std::error::Error + Send + Sync + 'static) {
            self
        }
        fn into_error(self: Box<Self>) -> Box<dyn std::error::Error + Send + Sync + 'static> {
            self
        }
        fn kind(&self) -> ErrorKind {
            ErrorKind::Other
        }
    }

    #[test]
    fn a_passing_error_is_named_for_what_it_is() {
        let sent = |code| sqlx::Error::Database(Box::new(Sent(code)));
        let cut = sqlx::Error::Io(std::io::Error::other("reset"));
        assert_eq!(passing(&cut), Some("cannot be reached"));
        assert_eq!(passing(&sent("57P01")), Some("cannot be reached"));
        assert_eq!(passing(&sent("08006")), Some("cannot be reached"));
        assert_eq!(
            passing(&sent("25P03")),
            Some("ended a transaction that sat idle")
        );
        assert!(passing(&sent("40001")).is_some_and(|why| why.contains("conflict")));
        assert!(passing(&sent("40P01")).is_some_and(|why| why.contains("conflict")));
        assert_eq!(passing(&sent("53300")), Some("has no connection free"));
        assert!(
            !is_transient(&sent("23505")),
            "a unique violation is no passing error"
        );
        assert!(!is_transient(&sqlx::Error::RowNotFound));
    }
}
