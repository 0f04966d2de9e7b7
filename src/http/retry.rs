//! The one retry policy every HTTP call goes through (LLM and search alike).
//!
//! Exponential backoff from `baseDelayMs` doubling up to `maxDelayMs` (2 s -> 4 s -> 8 s by
//! default), jittered by backon, for at most `maxRetries` retries. A server's `Retry-After` /
//! `retry-after-ms` replaces the computed delay, cut to `maxRetryAfterMs`. Only errors that
//! [`HttpError::is_transient`] accepts are retried. Every retry is logged with its delay and
//! reported to the caller's observer, which the workflow turns into events.

use std::future::Future;
use std::time::Duration;

use backon::{ExponentialBuilder, Retryable};

use super::error::HttpError;
use crate::settings::RetrySettings;

/// One retry about to happen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryNotice {
    /// What was being called, e.g. `planning LLM` or `searxng search`.
    pub what: String,
    /// 1 for the first retry.
    pub retry: usize,
    pub delay: Duration,
    pub cause: String,
    /// Whether the delay came from the server's Retry-After.
    pub server_asked: bool,
}

/// Receives retry notices, and other notes of a call worth an event (a structured-output form
/// the server refused, say); the workflow records them as events.
pub trait RetryObserver: Send + Sync {
    fn on_retry(&self, notice: &RetryNotice);

    /// A note about the call: `event` names it, `fields` is a JSON object.
    fn on_note(&self, _event: &str, _fields: serde_json::Value) {}
}

/// An observer that records nothing, for callers without an event log (`researchflow plan`).
/// Retries are still logged: [`with_retry`] logs every one itself.
pub struct NoObserver;

impl RetryObserver for NoObserver {
    fn on_retry(&self, _notice: &RetryNotice) {}
}

/// Runs `op` until it succeeds, fails with a non-transient error, or retries run out.
pub async fn with_retry<T, F, Fut>(
    policy: &RetrySettings,
    what: &str,
    observer: &dyn RetryObserver,
    op: F,
) -> Result<T, HttpError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, HttpError>>,
{
    let backoff = ExponentialBuilder::default()
        .with_min_delay(policy.base_delay)
        .with_max_delay(policy.max_delay)
        .with_factor(2.0)
        .with_max_times(policy.max_retries)
        .with_jitter();
    let mut retries = 0usize;
    let max_retry_after = policy.max_retry_after;
    op.retry(backoff)
        .sleep(tokio::time::sleep)
        .when(HttpError::is_transient)
        .adjust(move |err, computed| {
            // `computed` is None once the retries are used up: stop then, whatever the server said.
            let computed = computed?;
            Some(
                err.retry_after()
                    .map_or(computed, |asked| asked.min(max_retry_after)),
            )
        })
        .notify(|err: &HttpError, delay: Duration| {
            retries += 1;
            let notice = RetryNotice {
                what: what.to_string(),
                retry: retries,
                delay,
                cause: err.cause(),
                server_asked: err.retry_after().is_some(),
            };
            tracing::warn!(
                "{what}: {} (retry {}/{} in {} ms)",
                err,
                notice.retry,
                policy.max_retries,
                delay.as_millis()
            );
            observer.on_retry(&notice);
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Collect(Mutex<Vec<RetryNotice>>);
    impl RetryObserver for Collect {
        fn on_retry(&self, notice: &RetryNotice) {
            self.0.lock().expect("not poisoned").push(notice.clone());
        }
    }

    fn policy() -> RetrySettings {
        RetrySettings {
            max_retries: 3,
            base_delay: Duration::from_millis(2000),
            max_delay: Duration::from_millis(8000),
            max_retry_after: Duration::from_millis(120_000),
            max_rate_limit_wait: Duration::from_secs(600),
        }
    }

    fn err(status: u16, retry_after: Option<Duration>) -> HttpError {
        HttpError::Status {
            url: "u".into(),
            status,
            body: String::new(),
            retry_after,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn backs_off_2_4_8_with_jitter_then_gives_up() {
        let calls = AtomicUsize::new(0);
        let seen = Collect(Mutex::new(Vec::new()));
        let result: Result<(), _> = with_retry(&policy(), "t", &seen, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(err(503, None))
        })
        .await;
        assert!(result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 4, "one try and three retries");
        let delays: Vec<u128> = seen
            .0
            .lock()
            .expect("ok")
            .iter()
            .map(|n| n.delay.as_millis())
            .collect();
        assert_eq!(delays.len(), 3);
        for (d, base) in delays.iter().zip([2000u128, 4000, 8000]) {
            assert!(*d >= base && *d <= base * 2, "delay {d} for base {base}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn retry_after_replaces_the_delay_and_is_capped() {
        let calls = AtomicUsize::new(0);
        let seen = Collect(Mutex::new(Vec::new()));
        let mut p = policy();
        p.max_retry_after = Duration::from_secs(30);
        let result = with_retry(&p, "t", &seen, || async {
            match calls.fetch_add(1, Ordering::SeqCst) {
                0 => Err(err(429, Some(Duration::from_secs(1)))),
                1 => Err(err(429, Some(Duration::from_secs(3600)))),
                _ => Ok(7),
            }
        })
        .await;
        assert_eq!(result.ok(), Some(7));
        let notices = seen.0.lock().expect("ok").clone();
        assert_eq!(notices[0].delay, Duration::from_secs(1));
        assert!(notices[0].server_asked);
        assert_eq!(notices[1].delay, Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn permanent_errors_are_not_retried() {
        let calls = AtomicUsize::new(0);
        let result: Result<(), _> = with_retry(&policy(), "t", &NoObserver, || async {
            calls.fetch_add(1, Ordering::SeqCst);
            Err(HttpError::Status {
                url: "u".into(),
                status: 429,
                body: "insufficient_quota".into(),
                retry_after: None,
            })
        })
        .await;
        assert!(result.is_err());
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
