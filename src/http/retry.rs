//! The one retry policy every HTTP call goes through (LLM and search alike).
//!
//! Exponential backoff from `baseDelayMs` doubling up to `maxDelayMs` (2 s -> 4 s -> 8 s by
//! default), jittered by backon, for at most `maxRetries` retries. A server's `Retry-After` /
//! `retry-after-ms` replaces the computed delay, cut to `maxRetryAfterMs`. Only errors that
//! [`HttpError::is_transient`] accepts are retried. Every retry is logged with its delay and
//! reported to the caller's observer, which the workflow turns into events.
//!
//! A call may go through its endpoint's [`Gate`] ([`with_retry_at_gate`]): each attempt waits
//! there for admission, a 429 closes the gate for every call of the endpoint, and the retry of
//! that 429 waits at the gate without counting against `maxRetries` (a rate limit is the
//! server's pace, not a failure of the call) for as long as the call has run less than
//! `maxRateLimitWaitMs` (10 minutes by default); after that a 429 is an ordinary retry. backon
//! stays the one loop: the attempt tells [`CountedBackoff`] that its 429 was absorbed, and that
//! retry then takes no step of the backoff.

use crate::sync::Locked;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder, Retryable};
use tokio::time::Instant;

use super::error::HttpError;
use super::gate::{Admission, Gate, WaitReason};
use crate::settings::RetrySettings;

/// A wait at a gate longer than this is logged and reported to the observer.
const NOTED_WAIT: Duration = Duration::from_secs(1);

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

/// A wait of over a second at an endpoint's gate (its rate budget, or a 429's delay).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateWait {
    pub endpoint: String,
    pub wait_ms: u64,
    /// [`crate::http::WaitReason::as_str`].
    pub reason: &'static str,
}

/// Receives what happens to a call worth an event: its retries and its waits at a gate. The
/// run records them as events (`http_retry`, `rate_limited`); the LLM layer extends it
/// (`llm::CallObserver`).
pub trait RetryObserver: Send + Sync {
    fn on_retry(&self, notice: &RetryNotice);

    /// The call waited at its endpoint's gate for over a second.
    fn on_gate_wait(&self, _wait: &GateWait) {}
}

/// An observer that records nothing, for callers without an event log (`researchflow plan`).
/// Retries are still logged: [`with_retry`] logs every one itself.
pub struct NoObserver;

impl RetryObserver for NoObserver {
    fn on_retry(&self, _notice: &RetryNotice) {}
}

/// A call's place at its endpoint's gate: the gate, and the tokens each attempt reserves.
#[derive(Debug, Clone, Copy)]
pub struct AtGate<'a> {
    pub gate: &'a Gate,
    pub tokens: u32,
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
    with_retry_at_gate(policy, what, observer, None, op).await
}

/// [`with_retry`], each attempt first admitted by `gate` (when given). The futures `op`
/// returns must do nothing until polled (as an `async fn`'s do): each is made before its
/// admission.
pub async fn with_retry_at_gate<T, F, Fut>(
    policy: &RetrySettings,
    what: &str,
    observer: &dyn RetryObserver,
    gate: Option<AtGate<'_>>,
    mut op: F,
) -> Result<T, HttpError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, HttpError>>,
{
    let call = Call {
        gate,
        started: Instant::now(),
        policy: *policy,
        gate_backoff: Mutex::new(backoff(policy).without_max_times().build()),
        absorbed: Mutex::new(None),
    };
    let counted_backoff = CountedBackoff {
        inner: backoff(policy).with_max_times(policy.max_retries).build(),
        call: &call,
    };
    let (mut retries, mut counted) = (0usize, 0usize);
    let max_retry_after = policy.max_retry_after;
    (|| call.attempt(op(), what, observer))
        .retry(counted_backoff)
        .sleep(tokio::time::sleep)
        .when(HttpError::is_transient)
        .adjust(|err, computed| {
            // `computed` is None once the retries are used up: stop then, whatever the server said.
            let computed = computed?;
            if call.absorbed.locked().is_some() {
                // The gate does the waiting, shared with every other call of the endpoint.
                return Some(Duration::ZERO);
            }
            Some(
                err.retry_after()
                    .map_or(computed, |asked| asked.min(max_retry_after)),
            )
        })
        .notify(|err: &HttpError, delay: Duration| {
            retries += 1;
            let absorbed = call.absorbed.locked().take();
            let notice = RetryNotice {
                what: what.to_string(),
                retry: retries,
                delay: absorbed.unwrap_or(delay),
                cause: err.cause(),
                server_asked: err.retry_after().is_some(),
            };
            match (absorbed, call.gate) {
                (Some(Duration::ZERO), Some(at)) => tracing::warn!(
                    "{what}: {err} (the rate of `{}` is lowered and the call goes again at it; not counted against retry.maxRetries)",
                    at.gate.endpoint()
                ),
                (Some(wait), Some(at)) => tracing::warn!(
                    "{what}: {err} (every call to `{}` waits {} ms; not counted against retry.maxRetries)",
                    at.gate.endpoint(),
                    wait.as_millis()
                ),
                _ => {
                    counted += 1;
                    tracing::warn!(
                        "{what}: {err} (retry {counted}/{} in {} ms)",
                        policy.max_retries,
                        delay.as_millis()
                    );
                }
            }
            observer.on_retry(&notice);
        })
        .await
}

/// The backoff of `policy`, without its count of retries.
fn backoff(policy: &RetrySettings) -> ExponentialBuilder {
    ExponentialBuilder::default()
        .with_min_delay(policy.base_delay)
        .with_max_delay(policy.max_delay)
        .with_factor(2.0)
        .with_jitter()
}

/// One call through [`with_retry_at_gate`]: its gate, and what its attempts tell the policy.
struct Call<'a> {
    gate: Option<AtGate<'a>>,
    started: Instant,
    policy: RetrySettings,
    /// The delays of 429s without Retry-After at the gate: the policy's backoff, uncounted.
    gate_backoff: Mutex<ExponentialBackoff>,
    /// The gate's wait after the last attempt's 429, when that retry is not counted; read by
    /// the backoff and `adjust`, taken by `notify` (backon calls them in that order).
    absorbed: Mutex<Option<Duration>>,
}

impl Call<'_> {
    /// One attempt: admission at the gate, `fut`, and what its outcome and the budget its
    /// answer announced tell the gate.
    async fn attempt<T, Fut>(
        &self,
        fut: Fut,
        what: &str,
        observer: &dyn RetryObserver,
    ) -> Result<T, HttpError>
    where
        Fut: Future<Output = Result<T, HttpError>>,
    {
        *self.absorbed.locked() = None;
        let Some(at) = self.gate else {
            return fut.await;
        };
        let admission = at.gate.admit(at.tokens).await;
        report_wait(at.gate, &admission, what, observer);
        let (result, announced) = super::announced::listen(fut).await;
        if let Some(announced) = &announced {
            at.gate.announced(&admission, announced);
        }
        match &result {
            Ok(_) => at.gate.succeeded(),
            Err(err) if err.is_rate_limited() => {
                let (delay, reason) = match err.retry_after() {
                    Some(asked) => (
                        asked.min(self.policy.max_retry_after),
                        WaitReason::RetryAfter,
                    ),
                    // Without a count of retries the backoff never ends: then its longest delay.
                    None => (
                        (self.gate_backoff.locked().next()).unwrap_or(self.policy.max_delay),
                        WaitReason::Backoff,
                    ),
                };
                let closed = at.gate.refused(&admission, delay, reason);
                if self.started.elapsed() < self.policy.max_rate_limit_wait {
                    *self.absorbed.locked() = Some(closed);
                }
            }
            Err(_) => {}
        }
        result
    }
}

/// The policy's backoff, which takes no step (counts no retry) for a 429 absorbed at the gate.
struct CountedBackoff<'a> {
    inner: ExponentialBackoff,
    call: &'a Call<'a>,
}

impl Iterator for CountedBackoff<'_> {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        match *self.call.absorbed.locked() {
            Some(_) => Some(Duration::ZERO),
            None => self.inner.next(),
        }
    }
}

/// Logs a wait at the gate longer than [`NOTED_WAIT`], once, and tells the observer.
fn report_wait(gate: &Gate, admission: &Admission, what: &str, observer: &dyn RetryObserver) {
    let Some(reason) = admission.reason.filter(|_| admission.waited > NOTED_WAIT) else {
        return;
    };
    let wait_ms = u64::try_from(admission.waited.as_millis()).unwrap_or(u64::MAX);
    tracing::info!(
        "{what}: waited {:.1} s at the gate of `{}`: {}",
        admission.waited.as_secs_f64(),
        gate.endpoint(),
        reason.describe()
    );
    observer.on_gate_wait(&GateWait {
        endpoint: gate.endpoint().to_string(),
        wait_ms,
        reason: reason.as_str(),
    });
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
