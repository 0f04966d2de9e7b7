//! [`Gate`]: the rate budget of one endpoint, shared by every call to it in the process.
//!
//! Before each attempt a call waits at its endpoint's gate for admission, then sends on its
//! own: the gate's lock is only ever held for a few arithmetic steps, never across an await.
//! Admission takes three things, in this order:
//! - the gate must be open: a 429 (any call's) closes it for every caller until the server's
//!   `Retry-After`, or the retry policy's backoff delay when the server named none;
//! - the call's estimated tokens, from a GCRA limiter of `tokensPerMinute` (a full minute's
//!   burst; a reservation larger than that is cut to it);
//! - one request from a GCRA limiter of the admitted request rate, spread evenly (a burst of
//!   one: servers enforce per-minute limits over shorter windows). That rate starts at
//!   `requestsPerMinute` (without it, on a [`ramp`](super::ramp) until the limit is lifted or
//!   a 429 met) and follows [`Aimd`](super::aimd::Aimd): lowered by a
//!   429 to just under the rate the server accepted over the last seconds, raised step by
//!   step by successes.
//!
//! The limiters are `governor`'s, on tokio's clock, so a test with paused time drives them too
//! (`state.rs`). The gate knows nothing of retries or observers: [`super::retry`] calls it and
//! reports.
//!
//! A gate made [`Gate::shared`] paces its calls at the share of a budget that every process of
//! a queue's batch shares through a [`GateStore`] ([`super::shared_gate`]): it leases that
//! share and renews it in the background (`lease.rs`), and under a rate limit its requests go
//! at the times of one schedule the store hands out to every process (`state.rs`), so no call
//! waits on the store but for a renewal when its process runs out of times; should
//! the store fail, the gate goes on with its own budget meanwhile.

mod accepted;
mod lease;
mod state;

use crate::sync::Locked;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::time::Instant;

use super::shared_gate::GateStore;
pub use super::wait::WaitReason;
use crate::settings::RateLimits;
pub use lease::RENEW_EVERY;
use lease::Sharing;
use state::{State, Step};

/// One admission: what the call waited, and when (which rate) it was admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    pub waited: Duration,
    /// Why the call waited longest, if it waited at all.
    pub reason: Option<WaitReason>,
    epoch: u64,
    /// Admitted under a lease of the shared budget (its epoch is the store's).
    shared: bool,
}

/// The rate budget of one endpoint. Created through [`super::Gates`], one per endpoint.
pub struct Gate {
    /// The endpoint as logs and events show it (no password).
    shown: String,
    state: Arc<Mutex<State>>,
    /// The lease of a gate shared with other processes.
    shared: Option<Arc<Sharing>>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Gate")
            .field("endpoint", &self.shown)
            .field("limits", &state.limits)
            .field("rate", &state.aimd.rate())
            .field("shared", &self.shared.is_some())
            .finish()
    }
}

impl Gate {
    /// A gate with `limits`; `shown` names the endpoint in logs and events.
    pub fn new(shown: &str, limits: RateLimits) -> Gate {
        Gate {
            shown: shown.to_string(),
            state: Arc::new(Mutex::new(State::new(limits))),
            shared: None,
        }
    }

    /// The same gate, its budget shared with other processes through `store` under `key`.
    pub fn shared(mut self, store: Arc<dyn GateStore>, key: &str) -> Gate {
        self.shared = Some(Arc::new(Sharing::new(store, key, &self.shown)));
        self
    }

    /// The endpoint as logs and events show it.
    pub fn endpoint(&self) -> &str {
        &self.shown
    }

    /// The request rate admitted now, in requests a minute (`None`: no limit).
    pub fn rate(&self) -> Option<f64> {
        self.lock().aimd.rate()
    }

    /// Lowers the configured limits to `limits` where those are lower (another role on the
    /// endpoint asked for less).
    pub fn tighten(&self, limits: RateLimits) {
        let mut state = self.lock();
        let tighter = state.limits.tighter(limits);
        if tighter != state.limits {
            state.tighten(tighter);
        }
    }

    /// Waits until the gate admits one request reserving `tokens` (cut to the token budget's
    /// size). Never fails: every wait has an end (a closing is bounded by the retry policy's
    /// longest delay, a limiter by its rate, a renewal of a shared budget by the store's
    /// patience).
    pub async fn admit(&self, tokens: u32) -> Admission {
        let started = Instant::now();
        let _waiting = self.shared.as_ref().map(|s| s.ask(&self.state));
        let mut tokens_due = Some(tokens);
        let mut longest: Option<(Duration, WaitReason)> = None;
        loop {
            if let Some(sharing) = &self.shared
                && sharing.must_renew(&self.state)
            {
                sharing.renew_for_call(&self.state).await;
            }
            let step = {
                let mut state = self.lock();
                if let Some(rate) = state.lower_when_open() {
                    tracing::info!(
                        "`{}` is rate limited: admitting at most {rate:.1} requests a minute from now on",
                        self.shown
                    );
                }
                state.step(&mut tokens_due)
            };
            match step {
                Step::Admitted { epoch, leased } => {
                    return Admission {
                        waited: started.elapsed(),
                        reason: longest.map(|(_, reason)| reason),
                        epoch,
                        shared: leased,
                    };
                }
                Step::WaitUntil(until, reason) => {
                    let wait = until.saturating_duration_since(Instant::now());
                    if longest.is_none_or(|(w, _)| wait > w) {
                        longest = Some((wait, reason));
                    }
                    tokio::time::sleep_until(until).await;
                }
                Step::NeedSlots => {
                    if let Some(sharing) = &self.shared {
                        sharing.renew_for_slot(&self.state).await;
                    }
                }
            }
        }
    }

    /// A 429 answered the call admitted by `admission`: closes the gate for everyone for
    /// `delay` (unless it is closed for longer already) and, once per rate, has the admitted
    /// rate lowered to just under what the server accepted lately, when the gate opens again.
    ///
    /// A shared gate closes in this process at once, and reports the 429 to the store at
    /// once: the other processes wait it out from their next renewal.
    pub fn refused(&self, admission: &Admission, delay: Duration, reason: WaitReason) {
        let mut state = self.lock();
        let until = Instant::now() + delay;
        if state.closed.is_none_or(|(closed, _)| closed < until) {
            state.closed = Some((until, reason));
        }
        if !admission.shared && admission.epoch == state.aimd.epoch() {
            state.decrease_due = true;
            state.refused(Instant::now());
        }
        drop(state);
        if let Some(sharing) = &self.shared {
            // A call admitted by this process's own budget has no epoch of the store's: its
            // 429 closes the shared gate but lowers no shared rate.
            let epoch = if admission.shared {
                admission.epoch
            } else {
                u64::MAX
            };
            sharing.refused(epoch, delay, reason);
        }
    }

    /// A call succeeded: counted as accepted, and the admitted rate takes one step up.
    pub fn succeeded(&self) {
        if let Some(sharing) = &self.shared {
            sharing.succeeded();
        }
        self.lock().succeeded();
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.state)
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    // The state stays consistent between statements, so a poisoned lock is still usable.
    state.locked()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::shared_gate::{News, Refusal, Report, SharedState, Step as StoreStep};
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::Weak;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A store in memory, on tokio's clock: counts its updates, keeps who watches.
    struct Memory {
        started: tokio::time::Instant,
        state: Mutex<SharedState>,
        updates: AtomicUsize,
        watching: Mutex<Vec<Weak<News>>>,
    }

    impl GateStore for Memory {
        fn update<'a>(
            &'a self,
            _key: &'a str,
            step: &'a mut StoreStep<'a>,
        ) -> Pin<Box<dyn Future<Output = Result<super::super::Lease, String>> + Send + 'a>>
        {
            Box::pin(async move {
                self.updates.fetch_add(1, Ordering::SeqCst);
                let now = self.started.elapsed().as_secs_f64() * 1000.0;
                Ok(step(&mut self.state.locked(), now))
            })
        }

        fn watch(&self, _key: &str, news: Weak<News>) {
            self.watching.locked().push(news);
        }
    }

    /// A 429 lowers the rate to just under what the server accepted since the endpoint was
    /// last idle: ten answers a minute earlier do not dilute the ten of the last second.
    #[tokio::test(start_paused = true)]
    async fn an_idle_pause_does_not_count_in_the_accepted_rate() {
        let gate = Gate::new("e", RateLimits::default());
        let burst = || async {
            for _ in 0..10 {
                let admitted = gate.admit(0).await;
                assert_eq!(admitted.waited, Duration::ZERO);
                gate.succeeded();
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        };
        burst().await;
        tokio::time::sleep(Duration::from_secs(50)).await; // between two rounds, say
        burst().await;
        let refused = gate.admit(0).await;
        gate.refused(&refused, Duration::from_secs(1), WaitReason::RetryAfter);
        tokio::time::sleep(Duration::from_secs(1)).await;
        gate.admit(0).await;
        let rate = gate.rate().expect("a 429 sets a rate");
        // 10 answers in about a second: 600 a minute, lowered to 95% of it.
        assert!((500.0..=600.0).contains(&rate), "{rate}");
    }

    /// A cold endpoint with no limit known: its first 60 calls go on a ramp (the 40th some
    /// 100 ms after the first, not at once), then at once; a 429 met on a new ramp after a
    /// quiet spell pins the rate where the ramp stood.
    #[tokio::test(start_paused = true)]
    async fn a_cold_endpoint_ramps_up_and_a_429_on_the_ramp_pins_the_rate() {
        let gate = Gate::new("e", RateLimits::default());
        let started = Instant::now();
        for _ in 0..40 {
            gate.admit(0).await;
        }
        let ramped = started.elapsed();
        assert!(
            // Paced on tokio's timer, whose tick is a millisecond: at most 1,000 a second.
            (Duration::from_millis(85)..Duration::from_millis(115)).contains(&ramped),
            "{ramped:?}"
        );
        for _ in 0..20 {
            gate.admit(0).await;
        }
        let started = Instant::now();
        for _ in 0..100 {
            gate.admit(0).await;
        }
        assert_eq!(started.elapsed(), Duration::ZERO, "the ramp is over");
        assert_eq!(gate.rate(), None);

        tokio::time::sleep(Duration::from_secs(3)).await;
        for _ in 0..15 {
            gate.admit(0).await;
        }
        let cold = gate.admit(0).await;
        gate.refused(&cold, Duration::from_secs(1), WaitReason::RetryAfter);
        let pinned = gate.rate().expect("pinned");
        assert_eq!(pinned, 2.0 * crate::http::ramp::START_RPM);
    }

    /// Another process's 429 told by the store: the lease in hand says open, but the next
    /// call renews first and waits the 429 out instead of going into it.
    #[tokio::test(start_paused = true)]
    async fn news_of_another_process_429_makes_the_next_call_renew_and_wait() {
        let store = Arc::new(Memory {
            started: tokio::time::Instant::now(),
            state: Mutex::default(),
            updates: AtomicUsize::new(0),
            watching: Mutex::default(),
        });
        // Another process has used the endpoint past its ramp (60 calls): no limit is known,
        // none holds.
        let other = Report {
            process: "other".to_string(),
            demand: 10,
            waiting: 10,
            ..Report::default()
        };
        for _ in 0..6 {
            let mut step = |s: &mut SharedState, now: f64| s.renew(now, &other);
            store.update("k", &mut step).await.expect("update");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let gate = Gate::new("e", RateLimits::default()).shared(store.clone(), "k");
        gate.admit(0).await;
        gate.succeeded();
        assert_eq!(
            store.updates.load(Ordering::SeqCst),
            7,
            "the first call renews"
        );

        // Another process reports a 429 of 2 s to the store.
        let closing = Report {
            process: "other".to_string(),
            demand: 1,
            refused: Some(Refusal {
                epoch: 0,
                delay_ms: 2000.0,
                reason: WaitReason::RetryAfter,
            }),
            ..Report::default()
        };
        let mut step = |s: &mut SharedState, now: f64| s.renew(now, &closing);
        store.update("k", &mut step).await.expect("update");
        let updates = store.updates.load(Ordering::SeqCst);

        // Untold, this process goes on its fresh lease.
        let untold = gate.admit(0).await;
        assert_eq!(untold.waited, Duration::ZERO);
        assert_eq!(store.updates.load(Ordering::SeqCst), updates);

        // Told, its next call renews and waits for the gate to open.
        for news in store.watching.locked().iter() {
            news.upgrade().expect("watched").tell();
        }
        let told = gate.admit(0).await;
        assert!(store.updates.load(Ordering::SeqCst) > updates);
        assert!(told.waited >= Duration::from_millis(1900), "{told:?}");
        assert_eq!(told.reason, Some(WaitReason::RetryAfter));
    }
}
