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
//!   `requestsPerMinute` (or no limit) and follows [`Aimd`]: lowered by a 429 to just under the
//!   rate the server accepted over the last seconds, raised step by step by successes.
//!
//! The limiters are `governor`'s, on tokio's clock, so a test with paused time drives them too.
//! The gate knows nothing of retries or observers: [`super::retry`] calls it and reports.
//!
//! A gate made [`Gate::shared`] keeps that state in a [`GateStore`] instead, where every
//! process of a queue's batch shares it ([`super::shared_gate`]); should the store fail, the
//! call goes through the in-memory state meanwhile.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::time::Instant;

use super::aimd::Aimd;
use super::shared_gate::{Decision, GateStore, SharedState};
pub use super::wait::WaitReason;
use crate::settings::RateLimits;

/// The rate the server accepts (to lower the admitted rate to just under it on a 429) is
/// measured over its last [`ACCEPTED_MAX`] successes within this window: seconds for a busy
/// endpoint, up to a minute for a slow one.
const ACCEPTED_WINDOW: Duration = Duration::from_secs(60);

/// How many of the last successes measure the accepted rate.
const ACCEPTED_MAX: usize = 20;

/// How much the target rate must move before the request limiter is rebuilt: each rebuild
/// forgets the limiter's state, so it is not done on every small step.
const REBUILD_CHANGE: f64 = 0.1;

/// governor's clock on tokio's: paused test time moves it as it moves `sleep`.
#[derive(Debug, Clone)]
struct TokioClock {
    start: Instant,
}

impl Clock for TokioClock {
    type Instant = Duration;

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Duration>>;

/// One admission: what the call waited, and when (which rate) it was admitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    pub waited: Duration,
    /// Why the call waited longest, if it waited at all.
    pub reason: Option<WaitReason>,
    epoch: u64,
    /// Admitted by the shared state (its epoch is the store's).
    shared: bool,
}

/// The request limiter of the rate admitted now.
struct Requests {
    rpm: f64,
    limiter: Limiter,
}

struct State {
    clock: TokioClock,
    limits: RateLimits,
    aimd: Aimd,
    requests: Option<Requests>,
    tokens: Option<(NonZeroU32, Limiter)>,
    closed: Option<(Instant, WaitReason)>,
    /// When the last request was admitted.
    last_admitted: Option<Instant>,
    /// A 429 of the current rate was answered: the rate is lowered when the gate opens again,
    /// when the answers in flight at the refusal have come back and the accepted rate counts
    /// them.
    decrease_due: bool,
    /// The last successes (at most [`ACCEPTED_MAX`], within [`ACCEPTED_WINDOW`]), oldest
    /// first.
    accepted: VecDeque<Instant>,
}

/// One step of an admission, decided under the lock.
enum Step {
    Admitted(u64),
    WaitUntil(Instant, WaitReason),
}

/// The rate budget of one endpoint. Created through [`super::Gates`], one per endpoint.
pub struct Gate {
    /// The endpoint as logs and events show it (no password).
    shown: String,
    state: Mutex<State>,
    /// The store and key of a gate shared with other processes.
    shared: Option<(Arc<dyn GateStore>, String)>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock();
        f.debug_struct("Gate")
            .field("endpoint", &self.shown)
            .field("limits", &state.limits)
            .field("rate", &state.aimd.rate())
            .finish()
    }
}

impl Gate {
    /// A gate with `limits`; `shown` names the endpoint in logs and events.
    pub fn new(shown: &str, limits: RateLimits) -> Gate {
        let clock = TokioClock {
            start: Instant::now(),
        };
        let rpm = limits.requests_per_minute.map(|n| f64::from(n.get()));
        let mut state = State {
            tokens: limits
                .tokens_per_minute
                .map(|n| (n, token_limiter(n, &clock))),
            clock,
            limits,
            aimd: Aimd::new(rpm),
            requests: None,
            closed: None,
            last_admitted: None,
            decrease_due: false,
            accepted: VecDeque::new(),
        };
        state.follow_rate(Instant::now(), true);
        Gate {
            shown: shown.to_string(),
            state: Mutex::new(state),
            shared: None,
        }
    }

    /// The same gate, its state kept in `store` under `key` (shared with other processes).
    pub fn shared(mut self, store: Arc<dyn GateStore>, key: &str) -> Gate {
        self.shared = Some((store, key.to_string()));
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
        if tighter == state.limits {
            return;
        }
        if tighter.tokens_per_minute != state.limits.tokens_per_minute {
            state.tokens = tighter
                .tokens_per_minute
                .map(|n| (n, token_limiter(n, &state.clock)));
        }
        if let Some(rpm) = tighter.requests_per_minute {
            state.aimd.tighten(f64::from(rpm.get()));
            state.follow_rate(Instant::now(), true);
        }
        state.limits = tighter;
    }

    /// Waits until the gate admits one request reserving `tokens` (cut to the token budget's
    /// size). Never fails: every wait has an end (a closing is bounded by the retry policy's
    /// longest delay, a limiter by its rate).
    pub async fn admit(&self, tokens: u32) -> Admission {
        if let Some((store, key)) = &self.shared
            && let Some(admission) = self.admit_shared(store.as_ref(), key, tokens).await
        {
            return admission;
        }
        let started = Instant::now();
        let mut tokens_due = Some(tokens);
        let mut longest: Option<(Duration, WaitReason)> = None;
        loop {
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
                Step::Admitted(epoch) => {
                    return Admission {
                        waited: started.elapsed(),
                        reason: longest.map(|(_, reason)| reason),
                        epoch,
                        shared: false,
                    };
                }
                Step::WaitUntil(until, reason) => {
                    let wait = until.saturating_duration_since(Instant::now());
                    if longest.is_none_or(|(w, _)| wait > w) {
                        longest = Some((wait, reason));
                    }
                    tokio::time::sleep_until(until).await;
                }
            }
        }
    }

    /// A 429 answered the call admitted by `admission`: closes the gate for everyone for
    /// `delay` (unless it is closed for longer already) and, once per rate, has the admitted
    /// rate lowered to just under what the server accepted lately, when the gate opens again.
    ///
    /// A shared gate closes in this process at once too, so that the refused call's retry
    /// never overtakes the store's update.
    pub fn refused(&self, admission: &Admission, delay: Duration, reason: WaitReason) {
        let mut state = self.lock();
        let now = Instant::now();
        let until = now + delay;
        if state.closed.is_none_or(|(closed, _)| closed < until) {
            state.closed = Some((until, reason));
        }
        if admission.shared {
            drop(state);
            let (epoch, ms) = (admission.epoch, delay.as_secs_f64() * 1000.0);
            self.note_shared(move |s, now| s.refused(now, epoch, ms, reason));
            return;
        }
        if admission.epoch == state.aimd.epoch() {
            state.decrease_due = true;
        }
    }

    /// A call succeeded: counted as accepted, and the admitted rate takes one step up.
    pub fn succeeded(&self) {
        if self.shared.is_some() {
            self.note_shared(|s, now| s.succeeded(now));
        }
        let mut state = self.lock();
        let now = Instant::now();
        if state.accepted.len() >= ACCEPTED_MAX {
            state.accepted.pop_front();
        }
        state.accepted.push_back(now);
        if state.aimd.increase() {
            state.follow_rate(Instant::now(), false);
        }
    }

    /// Admission through the shared state; `None` when the store fails (the in-memory state
    /// admits the call instead).
    async fn admit_shared(
        &self,
        store: &dyn GateStore,
        key: &str,
        tokens: u32,
    ) -> Option<Admission> {
        let started = Instant::now();
        let limits = self.lock().limits;
        let mut tokens_due = Some(tokens);
        let mut longest: Option<(Duration, WaitReason)> = None;
        loop {
            // What this process knows already (its own 429s) before what the store says.
            let closed = self
                .lock()
                .closed
                .filter(|(until, _)| *until > Instant::now());
            if let Some((until, reason)) = closed {
                let wait = until.saturating_duration_since(Instant::now());
                if longest.is_none_or(|(w, _)| wait > w) {
                    longest = Some((wait, reason));
                }
                tokio::time::sleep_until(until).await;
            }
            let mut step = |s: &mut SharedState, now: f64| s.admit(now, limits, &mut tokens_due);
            match store.update(key, &mut step).await {
                Ok(Decision::Admitted(epoch)) => {
                    return Some(Admission {
                        waited: started.elapsed(),
                        reason: longest.map(|(_, reason)| reason),
                        epoch,
                        shared: true,
                    });
                }
                Ok(Decision::Wait(ms, reason)) => {
                    let wait = Duration::from_secs_f64(ms.max(0.0) / 1000.0);
                    if longest.is_none_or(|(w, _)| wait > w) {
                        longest = Some((wait, reason));
                    }
                    tokio::time::sleep(wait).await;
                }
                Ok(Decision::Noted) => return None,
                Err(e) => {
                    tracing::warn!(
                        "`{}`'s shared rate budget cannot be read ({e}): this call is admitted by this process's budget alone",
                        self.shown
                    );
                    return None;
                }
            }
        }
    }

    /// Notes a 429 or a success in the shared state, without holding the call up.
    fn note_shared(&self, step: impl FnMut(&mut SharedState, f64) -> Decision + Send + 'static) {
        let Some((store, key)) = self.shared.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let mut step = step;
            if let Err(e) = store.update(&key, &mut step).await {
                tracing::warn!("a shared rate budget is not updated this time: {e}");
            }
        });
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // The state stays consistent between statements, so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl State {
    /// Lowers the rate if a 429 asked for it and the gate is open again; returns the new rate.
    fn lower_when_open(&mut self) -> Option<f64> {
        let now = Instant::now();
        if !self.decrease_due || self.closed.is_some_and(|(until, _)| until > now) {
            return None;
        }
        self.decrease_due = false;
        let accepted = self.accepted_rpm(now);
        let rate = self.aimd.decrease(accepted)?;
        self.follow_rate(now, true);
        Some(rate)
    }

    /// One admission attempt: open gate, then tokens (reserved once), then one request.
    fn step(&mut self, tokens_due: &mut Option<u32>) -> Step {
        let now = Instant::now();
        match self.closed {
            Some((until, reason)) if until > now => return Step::WaitUntil(until, reason),
            Some(_) => self.closed = None,
            None => {}
        }
        if let (Some(tokens), Some((size, limiter))) = (*tokens_due, &self.tokens) {
            let n = NonZeroU32::new(tokens.min(size.get())).unwrap_or(NonZeroU32::MIN);
            // `n` is at most the burst size, so the capacity error cannot happen; were it to,
            // the call is let through rather than held forever.
            if let Ok(Err(not_until)) = limiter.check_n(n) {
                let wait = not_until.wait_time_from(self.clock.now());
                return Step::WaitUntil(now + wait, WaitReason::TokensPerMinute);
            }
        }
        *tokens_due = None;
        if let Some(requests) = &self.requests
            && let Err(not_until) = requests.limiter.check()
        {
            let wait = not_until.wait_time_from(self.clock.now());
            return Step::WaitUntil(now + wait, WaitReason::RequestsPerMinute);
        }
        self.last_admitted = Some(now);
        Step::Admitted(self.aimd.epoch())
    }

    /// The rate the server accepted lately, in requests a minute: the last successes over the
    /// time from the first of them to now (at least a second, so a burst that began a moment
    /// ago does not count as a high rate); `None` with fewer than two, which make no rate.
    fn accepted_rpm(&mut self, now: Instant) -> Option<f64> {
        while self
            .accepted
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) > ACCEPTED_WINDOW)
        {
            self.accepted.pop_front();
        }
        let (first, n) = (self.accepted.front()?, self.accepted.len());
        if n < 2 {
            return None;
        }
        let span = now
            .saturating_duration_since(*first)
            .max(Duration::from_secs(1));
        Some(n as f64 * 60.0 / span.as_secs_f64())
    }

    /// Rebuilds the request limiter when the AIMD rate moved far enough from it (`always` for a
    /// decrease or a new limit). A new limiter admits its first request at once, unless a
    /// request was admitted less than one new interval ago: then it waits one interval, so a
    /// rebuild never lets two requests through closer together than the new rate allows.
    fn follow_rate(&mut self, now: Instant, always: bool) {
        let target = self.aimd.rate();
        let built = self.requests.as_ref().map(|r| r.rpm);
        let rebuild = match (target, built) {
            (None, None) => false,
            (Some(t), Some(b)) => {
                always || (t - b).abs() >= b * REBUILD_CHANGE || Some(t) == self.aimd.limit()
            }
            _ => true,
        };
        if !rebuild || target == built {
            return;
        }
        self.requests = target.and_then(|rpm| {
            let interval = Duration::from_secs_f64(60.0 / rpm);
            let quota = Quota::with_period(interval)?.allow_burst(NonZeroU32::MIN);
            let limiter = RateLimiter::direct_with_clock(quota, self.clock.clone());
            if self
                .last_admitted
                .is_some_and(|t| now.saturating_duration_since(t) < interval)
            {
                // Spends the burst of one, so the next request waits one interval.
                let _ = limiter.check();
            }
            Some(Requests { rpm, limiter })
        });
    }
}

/// A limiter of `per_minute` tokens with a full minute's burst.
fn token_limiter(per_minute: NonZeroU32, clock: &TokioClock) -> Limiter {
    RateLimiter::direct_with_clock(Quota::per_minute(per_minute), clock.clone())
}
