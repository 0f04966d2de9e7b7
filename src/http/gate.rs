//! [`Gate`]: the rate budget of one endpoint, shared by every call to it in the process.
//!
//! Before each attempt a call waits at its endpoint's gate for admission, then sends on its
//! own: the gate's lock is only held for a few arithmetic steps, never across an await.
//! Admission takes, in this order:
//! - the gate must be open: a 429 (any call's) closes it for every caller until the server's
//!   `Retry-After`, or the retry policy's backoff delay when the server named none;
//! - while nothing is known (no limit configured, no call answered yet), the first call goes
//!   alone: the others wait up to [`PROBE`] for its answer;
//! - the budgets the server announces in its answers' headers ([`super::announced`]), for
//!   requests and for tokens: what remains of each is spread over the time until it resets,
//!   counting the calls admitted since the answer that told it; a budget past its reset is
//!   whole again (its limit, over the longest reset heard);
//! - the configured `tokensPerMinute` (a full minute's burst; a reservation larger is cut to
//!   it) and `requestsPerMinute` (spread evenly, a burst of one), as `governor` quotas;
//! - only while no answer announced a budget and no `requestsPerMinute` is set: the adaptive
//!   rate of [`Aimd`], which 429s lower and successes raise.
//!
//! In a queue's worker the configured limits, the announced remainders and the adaptive rate
//! are divided by the number of live workers ([`Sharing`], kept by the queue): the headers
//! describe the whole account, and the rate one worker measures after a 429 is told to the
//! others. Everything runs on tokio's clock (paused test time drives it). The gate knows
//! nothing of retries or observers: [`super::retry`] calls it and reports.

use crate::sync::Locked;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::sync::{Notify, mpsc};
use tokio::time::Instant;

use super::aimd::{Aimd, Cut};
use super::announced::{Announced, Left};
use crate::settings::RateLimits;

/// While nothing is known of an endpoint, the calls after its first wait this long at most for
/// the first answer (which may announce a budget): a burst of first calls is not sent blind.
const PROBE: Duration = Duration::from_secs(1);

/// One admission: what the call waited, and its place among the gate's admissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    pub waited: Duration,
    /// Why the call waited longest, if it waited at all.
    pub reason: Option<WaitReason>,
    /// Requests and tokens admitted so far, this one included.
    seq: u64,
    tokens: u64,
}

/// Why a call waited at the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum WaitReason {
    /// Closed by a 429 until its `Retry-After`.
    RetryAfter,
    /// Closed by a 429 without `Retry-After`, for the retry policy's backoff delay.
    Backoff,
    /// The request budget: the server's, `requestsPerMinute`, or the adaptive rate.
    RequestsPerMinute,
    /// The token budget: the server's, or `tokensPerMinute`.
    TokensPerMinute,
}

impl WaitReason {
    /// As events carry it.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// As logs say it.
    pub fn describe(self) -> &'static str {
        match self {
            WaitReason::RetryAfter => "closed after a 429, until the server's Retry-After",
            WaitReason::Backoff => "closed after a 429 without Retry-After, for the backoff delay",
            WaitReason::RequestsPerMinute => "the request budget (the server's, or configured)",
            WaitReason::TokensPerMinute => "the token budget (the server's, or configured)",
        }
    }
}

/// The rate budget of one endpoint. Created through [`super::Gates`], one per endpoint.
#[derive(Debug)]
pub struct Gate {
    /// The endpoint's key, and as logs and events show it (no password).
    key: String,
    shown: String,
    state: Mutex<State>,
    /// Wakes the waiting calls when an answer told of a budget.
    news: Notify,
    sharing: Sharing,
}

/// The processes that share every endpoint's budgets: how many are live (1 outside a queue; 0
/// is taken for 1), and where the rates they measure go (endpoint key, estimate), to be told
/// to the others.
#[derive(Debug, Clone, Default)]
pub struct Sharing {
    pub share: Arc<AtomicU32>,
    pub tell: Option<mpsc::UnboundedSender<(String, f64)>>,
}

impl Gate {
    /// A gate with `limits`; `shown` names the endpoint in logs and events.
    pub fn new(shown: &str, limits: RateLimits) -> Gate {
        Gate::shared_by(shown, shown, limits, Sharing::default())
    }

    /// A gate whose budgets are divided among the processes of `sharing`.
    pub fn shared_by(key: &str, shown: &str, limits: RateLimits, sharing: Sharing) -> Gate {
        Gate {
            key: key.to_string(),
            shown: shown.to_string(),
            state: Mutex::new(State::new(limits)),
            news: Notify::new(),
            sharing,
        }
    }

    /// The endpoint as logs and events show it.
    pub fn endpoint(&self) -> &str {
        &self.shown
    }

    /// The adaptive request rate, in requests a minute for all the processes sharing the
    /// endpoint (`None`: no limit, or the limit is the server's or the settings').
    pub fn rate(&self) -> Option<f64> {
        self.lock().aimd.rate()
    }

    /// Lowers the configured limits to `limits` where those are lower (another role on the
    /// endpoint asked for less).
    pub fn tighten(&self, limits: RateLimits) {
        let mut state = self.lock();
        let tighter = state.limits.tighter(limits);
        if tighter != state.limits {
            state.limits = tighter;
            state.quotas();
        }
    }

    /// Waits until the gate admits one request reserving `tokens`. Never fails: every wait
    /// has an end (a closing is bounded by the retry policy's longest delay, a budget by its
    /// reset, a quota by its rate).
    pub async fn admit(&self, tokens: u32) -> Admission {
        let started = Instant::now();
        let mut reserved = false;
        let mut longest: Option<(Duration, WaitReason)> = None;
        loop {
            let news = self.news.notified();
            let share = self.sharing.share.load(Ordering::Relaxed).max(1);
            let (step, cut) = {
                let mut state = self.lock();
                (state.step(tokens, &mut reserved, share), state.cut.take())
            };
            if let Some(cut) = cut {
                self.cut(cut, share);
            }
            match step {
                Ok((seq, tokens)) => {
                    return Admission {
                        waited: started.elapsed(),
                        reason: longest.map(|(_, reason)| reason),
                        seq,
                        tokens,
                    };
                }
                Err((until, reason)) => {
                    let wait = until.saturating_duration_since(Instant::now());
                    if longest.is_none_or(|(w, _)| wait > w) {
                        longest = Some((wait, reason));
                    }
                    tokio::select! {
                        () = tokio::time::sleep_until(until) => {}
                        () = news => {}
                    }
                }
            }
        }
    }

    /// The answer to the call admitted by `admission` announced budgets: they replace those
    /// told by answers to earlier calls.
    pub fn announced(&self, admission: &Admission, announced: &Announced) {
        let mut state = self.lock();
        state.known.announced = true;
        let at = announced.at;
        if let Some(left) = announced.requests {
            Budget::hear(&mut state.known.requests_left, left, at, admission.seq);
        }
        if let Some(left) = announced.tokens {
            Budget::hear(&mut state.known.tokens_left, left, at, admission.tokens);
        }
        state.known.answered = true;
        drop(state);
        self.news.notify_waiters();
    }

    /// A 429 answered the call admitted by `admission`: closes the gate for everyone for
    /// `delay` (unless it is closed for longer already), and lowers the adaptive rate when it
    /// is the one that holds. A 429 that names no delay while the adaptive rate paces closes
    /// nothing: lowering the rate is the answer to it, and a pause of the backoff's length
    /// would idle the whole budget (the refused call goes again at the lowered pace). Returns
    /// how long the gate is closed from now.
    pub fn refused(&self, admission: &Admission, delay: Duration, reason: WaitReason) -> Duration {
        let mut state = self.lock();
        let now = Instant::now();
        let paced = state.adaptive() && state.aimd.rate().is_some();
        let until = now + delay;
        let closes = !(paced && reason == WaitReason::Backoff);
        if closes && state.known.closed.is_none_or(|(closed, _)| closed < until) {
            state.known.closed = Some((until, reason));
        }
        self.first_answer(&mut state);
        if state.adaptive() {
            state.aimd.refused(admission.seq, now);
        }
        (state.known.closed).map_or(Duration::ZERO, |(closed, _)| {
            closed.saturating_duration_since(now)
        })
    }

    /// A call succeeded: the adaptive rate takes one step up.
    pub fn succeeded(&self) {
        let mut state = self.lock();
        self.first_answer(&mut state);
        if state.adaptive() {
            let share = f64::from(state.share);
            state.aimd.succeeded(share);
        }
    }

    /// Another process sharing the endpoint measured its rate at `estimate` after a 429.
    pub fn heard(&self, estimate: f64) {
        let mut state = self.lock();
        if state.adaptive() && estimate.is_finite() && estimate > 0.0 {
            let rate = state.aimd.heard(estimate, Instant::now());
            let (shown, n) = (&self.shown, state.share);
            tracing::info!(
                "`{shown}` is rate limited: another worker measured {estimate:.1} requests a minute; admitting at most {rate:.1} a minute among {n} workers from now on"
            );
        }
    }

    /// This process lowered the adaptive rate: logged, and told to the others.
    fn cut(&self, cut: Cut, share: u32) {
        let (rate, shown) = (cut.rate, &self.shown);
        match share {
            1 => tracing::info!(
                "`{shown}` is rate limited: admitting at most {rate:.1} requests a minute from now on"
            ),
            n => tracing::info!(
                "`{shown}` is rate limited: admitting at most {rate:.1} requests a minute among {n} workers from now on"
            ),
        }
        if let Some(tell) = &self.sharing.tell {
            // The receiver ends with the queue's connection: then no one is left to tell.
            let _ = tell.send((self.key.clone(), cut.estimate));
        }
    }

    /// The calls waiting for a first answer go on.
    fn first_answer(&self, state: &mut State) {
        if !std::mem::replace(&mut state.known.answered, true) {
            self.news.notify_waiters();
        }
    }

    /// The state stays consistent between statements: a poisoned lock is still usable.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.locked()
    }
}

/// governor's clock on tokio's: paused test time moves it as it moves `sleep`.
#[derive(Debug, Clone)]
struct TokioClock(Instant);

impl Clock for TokioClock {
    type Instant = Duration;

    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Duration>>;

/// What a [`Gate`] holds under its lock.
#[derive(Debug)]
struct State {
    clock: TokioClock,
    limits: RateLimits,
    /// The workers sharing the budgets when the quotas were built.
    share: u32,
    requests: Option<Limiter>,
    tokens: Option<(NonZeroU32, Limiter)>,
    known: Known,
    aimd: Aimd,
    /// A decrease of the adaptive rate made in the last step, to be told.
    cut: Option<Cut>,
}

/// What the answers told of the endpoint, and what was admitted.
#[derive(Debug, Default)]
struct Known {
    closed: Option<(Instant, WaitReason)>,
    requests_left: Option<Budget>,
    tokens_left: Option<Budget>,
    /// Some answer announced a budget: the adaptive rate has no say any more.
    announced: bool,
    /// Some call was answered; before, when the first was admitted.
    answered: bool,
    probe: Option<Instant>,
    /// Requests and tokens admitted so far.
    admitted: u64,
    tokens_admitted: u64,
}

/// The error of a step: wait until then, for that reason.
type Wait = (Instant, WaitReason);

impl State {
    fn new(limits: RateLimits) -> State {
        let mut state = State {
            clock: TokioClock(Instant::now()),
            limits,
            share: 1,
            requests: None,
            tokens: None,
            known: Known::default(),
            aimd: Aimd::default(),
            cut: None,
        };
        state.quotas();
        state
    }

    /// Whether the adaptive rate paces the calls: no limit announced, none configured.
    fn adaptive(&self) -> bool {
        !self.known.announced && self.limits.requests_per_minute.is_none()
    }

    /// The governor quotas of the configured limits, divided by the share.
    fn quotas(&mut self) {
        let share = f64::from(self.share);
        let per = |n: NonZeroU32| {
            let each = (f64::from(n.get()) / share).max(1.0);
            (Duration::from_secs_f64(60.0 / each), each)
        };
        // A burst of one request; of a minute's tokens.
        let limiter = |(period, burst)| {
            let quota = Quota::with_period(period).expect("a positive period");
            RateLimiter::direct_with_clock(quota.allow_burst(burst), self.clock.clone())
        };
        self.requests = self
            .limits
            .requests_per_minute
            .map(|rpm| limiter((per(rpm).0, NonZeroU32::MIN)));
        self.tokens = self.limits.tokens_per_minute.map(|tpm| {
            let (period, each) = per(tpm);
            let burst = NonZeroU32::new(each as u32).unwrap_or(NonZeroU32::MIN);
            (burst, limiter((period, burst)))
        });
    }

    /// One try at admission: the totals admitted with this call, or how long to wait.
    fn step(&mut self, tokens: u32, reserved: &mut bool, share: u32) -> Result<(u64, u64), Wait> {
        let (now, adaptive) = (Instant::now(), self.adaptive());
        if share != self.share {
            self.share = share;
            self.quotas();
        }
        let k = &mut self.known;
        match k.closed {
            Some((until, reason)) if until > now => return Err((until, reason)),
            _ => k.closed = None,
        }
        let probing = !k.answered && adaptive && self.limits.tokens_per_minute.is_none();
        if let Some(probe) = k.probe.filter(|p| probing && now < *p + PROBE) {
            return Err((probe + PROBE, WaitReason::RequestsPerMinute));
        }
        let (share, cost) = (f64::from(share), f64::from(tokens));
        let spacing = [
            Budget::pace(&mut k.requests_left, now, k.admitted, share, 1.0)
                .map_err(|until| (until, WaitReason::RequestsPerMinute))?,
            Budget::pace(&mut k.tokens_left, now, k.tokens_admitted, share, cost)
                .map_err(|until| (until, WaitReason::TokensPerMinute))?,
        ];
        if adaptive {
            let (lowered, wait) = self.aimd.open(now, share);
            self.cut = lowered;
            if let Some(until) = wait {
                return Err((until, WaitReason::RequestsPerMinute));
            }
        }
        if let (Some((burst, limiter)), false, Some(n)) =
            (&self.tokens, *reserved, NonZeroU32::new(tokens))
        {
            if let Ok(Err(not_until)) = limiter.check_n(n.min(*burst)) {
                let wait = not_until.wait_time_from(self.clock.now());
                return Err((now + wait, WaitReason::TokensPerMinute));
            }
            *reserved = true;
        }
        if let Some(Err(not_until)) = self.requests.as_ref().map(RateLimiter::check) {
            let wait = not_until.wait_time_from(self.clock.now());
            return Err((now + wait, WaitReason::RequestsPerMinute));
        }
        let k = &mut self.known;
        k.probe.get_or_insert(now);
        (k.admitted, k.tokens_admitted) = (k.admitted + 1, k.tokens_admitted + u64::from(tokens));
        for (budget, spacing) in [&mut k.requests_left, &mut k.tokens_left]
            .into_iter()
            .zip(spacing)
        {
            if let Some(budget) = budget {
                budget.next = now + spacing;
            }
        }
        self.aimd.admitted(k.admitted, now, share);
        Ok((k.admitted, k.tokens_admitted))
    }
}

/// A budget the server announced (of requests or of tokens), as this process spends it.
#[derive(Debug)]
struct Budget {
    limit: Option<f64>,
    remaining: f64,
    reset_at: Instant,
    /// The longest reset heard: how long a whole budget lasts.
    window: Duration,
    /// The requests (tokens) admitted with the call whose answer told it: those admitted
    /// later are not counted in `remaining`.
    counted: u64,
    /// The earliest next admission, spreading what remains.
    next: Instant,
}

impl Budget {
    /// Takes in `left`, heard at `at` in the answer to the call admitted with `counted`,
    /// unless an answer to a later call told of the budget already.
    fn hear(budget: &mut Option<Budget>, left: Left, at: Instant, counted: u64) {
        if budget.as_ref().is_some_and(|b| b.counted > counted) {
            return;
        }
        let (window, next) = budget
            .take()
            .map_or((left.reset, at), |b| (b.window, b.next));
        *budget = Some(Budget {
            limit: left.limit,
            remaining: left.remaining,
            reset_at: at + left.reset,
            window: window.max(left.reset),
            counted,
            next,
        });
    }

    /// Whether a call costing `cost` may go now with `spent` admitted so far and the budget
    /// divided by `share`: the spacing it leaves before the next, or when to try again.
    fn pace(
        budget: &mut Option<Budget>,
        now: Instant,
        spent: u64,
        share: f64,
        cost: f64,
    ) -> Result<Duration, Instant> {
        let Some(b) = budget.as_mut().filter(|_| cost > 0.0) else {
            return Ok(Duration::ZERO);
        };
        if now >= b.reset_at {
            match b.limit {
                Some(limit) if !b.window.is_zero() => {
                    (b.remaining, b.reset_at, b.counted) = (limit, now + b.window, spent);
                }
                _ => return Ok(Duration::ZERO),
            }
        }
        // A call larger than the whole budget waits for a whole one, not forever.
        let cost = cost.min(b.limit.unwrap_or(b.remaining) / share).max(1.0);
        let left = b.remaining / share - spent.saturating_sub(b.counted) as f64;
        if left < cost {
            return Err(b.reset_at);
        }
        if b.next > now {
            return Err(b.next);
        }
        Ok((b.reset_at - now).mul_f64(cost / left))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events store these names: they must never change.
    #[test]
    fn every_wait_reason_keeps_its_stored_name() {
        assert_eq!(
            crate::text::variant_names::<WaitReason>(),
            "retry_after backoff requests_per_minute tokens_per_minute"
        );
    }
}
