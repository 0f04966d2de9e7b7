//! What a [`super::Gate`] holds under its lock: the limiters on tokio's clock, the AIMD rate,
//! the closing of a 429, the accepted rate, and for a shared gate its last [`Lease`]. Only
//! arithmetic and `governor` calls: nothing here waits.

use std::collections::VecDeque;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::state::{InMemoryState, NotKeyed};
use governor::{Quota, RateLimiter};
use tokio::time::Instant;

use super::super::aimd::Aimd;
use super::super::ramp::{self, Ramp};
use super::super::shared_gate::{Lease, Slots};
use super::WaitReason;
use super::accepted::Accepted;
use crate::settings::RateLimits;

/// How much the target rate must move before a limiter is rebuilt: each rebuild forgets the
/// limiter's state, so it is not done on every small step.
const REBUILD_CHANGE: f64 = 0.1;

/// How long a lease is acted on without a renewal: past it, a call waits for a renewal
/// first (one store round trip), and when the store does not answer, the gate goes on with
/// its own budget.
const LEASE_FRESH: Duration = Duration::from_millis(500);

/// The window of tokens reserved that a rebuilt token limiter starts spent by.
const TOKENS_WINDOW: Duration = Duration::from_secs(60);

/// governor's clock on tokio's: paused test time moves it as it moves `sleep`.
#[derive(Debug, Clone)]
pub(super) struct TokioClock {
    start: Instant,
}

impl Clock for TokioClock {
    type Instant = Duration;

    fn now(&self) -> Duration {
        self.start.elapsed()
    }
}

type Limiter = RateLimiter<NotKeyed, InMemoryState, TokioClock, NoOpMiddleware<Duration>>;

/// The request limiter of the rate admitted now.
struct Requests {
    rpm: f64,
    limiter: Limiter,
}

pub(super) struct State {
    clock: TokioClock,
    pub(super) limits: RateLimits,
    pub(super) aimd: Aimd,
    requests: Option<Requests>,
    tokens: Option<(NonZeroU32, Limiter)>,
    /// The tokens reserved within the last [`TOKENS_WINDOW`]: a rebuilt limiter starts spent
    /// by them.
    reserved: VecDeque<(Instant, u32)>,
    pub(super) closed: Option<(Instant, WaitReason)>,
    /// When the last request was admitted.
    last_admitted: Option<Instant>,
    /// No request before then: a rebuilt request limiter's first one comes one new interval
    /// after the last one admitted.
    not_before: Option<Instant>,
    /// A 429 of the current rate was answered: the rate is lowered when the gate opens again,
    /// when the answers in flight at the refusal have come back and the accepted rate counts
    /// them.
    pub(super) decrease_due: bool,
    /// The last successes, measuring the rate the server accepts.
    accepted: Accepted,
    /// A shared gate's last lease, and until when it is acted on.
    lease: Option<(Lease, Instant)>,
    /// The times of the shared request schedule this process holds (earliest first), and
    /// how far apart they were handed out.
    slots: VecDeque<Instant>,
    slot_interval: Duration,
    /// The last renewal had no time to give before then.
    no_slot_before: Option<Instant>,
    /// The ramp of this endpoint's unknown limit, while it runs.
    ramp: Ramp,
}

/// One step of an admission, decided under the lock.
pub(super) enum Step {
    /// Admitted at this AIMD epoch, by a lease (the store's epoch) or by this process.
    Admitted {
        epoch: u64,
        leased: bool,
    },
    WaitUntil(Instant, WaitReason),
    /// A shared gate holds no time of the request schedule: a renewal is needed.
    NeedSlots,
}

impl State {
    pub(super) fn new(limits: RateLimits) -> State {
        let clock = TokioClock {
            start: Instant::now(),
        };
        let rpm = limits.requests_per_minute.map(|n| f64::from(n.get()));
        let mut state = State {
            tokens: None,
            clock,
            limits,
            aimd: Aimd::new(rpm),
            requests: None,
            reserved: VecDeque::new(),
            closed: None,
            last_admitted: None,
            not_before: None,
            decrease_due: false,
            accepted: Accepted::default(),
            lease: None,
            slots: VecDeque::new(),
            slot_interval: Duration::ZERO,
            no_slot_before: None,
            ramp: Ramp::default(),
        };
        state.follow_tokens(limits.tokens_per_minute);
        state.follow_rate(Instant::now(), true);
        state
    }

    /// The last lease, while it is fresh enough to act on.
    pub(super) fn lease(&self) -> Option<&Lease> {
        self.lease
            .as_ref()
            .filter(|(_, until)| *until > Instant::now())
            .map(|(lease, _)| lease)
    }

    /// Acts on a lease from the store: its closing, its share of the rate and of the tokens.
    /// A lease of a closed gate lasts until the gate opens, so that the first call then asks
    /// the store for the rate a 429 has lowered instead of going at the old one.
    pub(super) fn take_lease(&mut self, lease: Lease) {
        let now = Instant::now();
        let mut until = now + LEASE_FRESH;
        if lease.closed_ms > 0.0 {
            let open = now + Duration::from_secs_f64(lease.closed_ms / 1000.0);
            if self.closed.is_none_or(|(closed, _)| closed < open) {
                self.closed = Some((open, lease.reason));
            }
            until = until.min(open);
        }
        self.lease = Some((lease, until));
        self.follow_tokens(lease.tokens_per_minute.and_then(NonZeroU32::new));
        self.follow_rate(now, false);
        self.take_slots(now, lease.slots);
    }

    /// Keeps the times of the shared schedule a lease handed out (after those held).
    fn take_slots(&mut self, now: Instant, slots: Option<Slots>) {
        let Some(slots) = slots else {
            self.slots.clear();
            self.no_slot_before = None;
            return;
        };
        let ms = |ms: f64| Duration::from_secs_f64(ms.max(0.0) / 1000.0);
        self.slot_interval = ms(slots.interval_ms);
        let first = now + ms(slots.first_ms);
        self.slots
            .extend((0..slots.count).map(|i| first + self.slot_interval * i));
        self.no_slot_before = (slots.count == 0).then(|| now + ms(slots.retry_ms));
    }

    /// The times of the schedule held, for a renewal to ask only for the calls without one.
    pub(super) fn slots_held(&self) -> usize {
        self.slots.len()
    }

    /// Whether a call can go on without a renewal: a fresh lease, and under a schedule, a
    /// time held or none to be had yet.
    pub(super) fn can_admit(&self) -> bool {
        match self.lease() {
            None => false,
            Some(lease) if lease.slots.is_some() => {
                !self.slots.is_empty() || self.no_slot_before.is_some_and(|t| t > Instant::now())
            }
            Some(_) => true,
        }
    }

    /// The gate went quiet: its lease is not renewed, so the next call asks for a new one;
    /// the times it held are gone by then.
    pub(super) fn forget_lease(&mut self) {
        self.lease = None;
        self.slots.clear();
        self.no_slot_before = None;
    }

    /// A tighter configuration: the tokens budget and the AIMD limit follow it.
    pub(super) fn tighten(&mut self, tighter: RateLimits) {
        if tighter.tokens_per_minute != self.limits.tokens_per_minute {
            self.follow_tokens(tighter.tokens_per_minute);
        }
        if let Some(rpm) = tighter.requests_per_minute {
            self.aimd.tighten(f64::from(rpm.get()));
            self.follow_rate(Instant::now(), true);
        }
        self.limits = tighter;
    }

    /// A success: counted as accepted, and the admitted rate takes one step up.
    pub(super) fn succeeded(&mut self) {
        let now = Instant::now();
        self.accepted.push(now);
        if self.aimd.increase() {
            self.follow_rate(now, false);
        }
    }

    /// Lowers the rate if a 429 asked for it and the gate is open again; returns the new rate.
    pub(super) fn lower_when_open(&mut self) -> Option<f64> {
        let now = Instant::now();
        if !self.decrease_due || self.closed.is_some_and(|(until, _)| until > now) {
            return None;
        }
        self.decrease_due = false;
        let accepted = self.accepted.rpm(now);
        let rate = self.aimd.decrease(accepted)?;
        self.follow_rate(now, true);
        Some(rate)
    }

    /// One admission attempt: open gate, then tokens (reserved once), then one request.
    pub(super) fn step(&mut self, tokens_due: &mut Option<u32>) -> Step {
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
            self.reserved.push_back((now, n.get()));
            self.forget_reserved(now);
        }
        *tokens_due = None;
        self.follow_ramp(now);
        if self.lease().is_some_and(|lease| lease.slots.is_some()) {
            return self.take_slot(now);
        }
        if let Some(not_before) = self.not_before.filter(|t| *t > now) {
            return Step::WaitUntil(not_before, WaitReason::RequestsPerMinute);
        }
        if let Some(requests) = &self.requests
            && let Err(not_until) = requests.limiter.check()
        {
            let wait = not_until.wait_time_from(self.clock.now());
            return Step::WaitUntil(now + wait, WaitReason::RequestsPerMinute);
        }
        self.last_admitted = Some(now);
        if self.ramp.rate().is_some() {
            self.ramp.admitted(1);
            self.follow_rate(now, false);
        }
        match self.lease() {
            Some(lease) => Step::Admitted {
                epoch: lease.epoch,
                leased: true,
            },
            None => Step::Admitted {
                epoch: self.aimd.epoch(),
                leased: false,
            },
        }
    }

    /// A request under the shared schedule: at the next time held (one passed by more than
    /// half an interval is dropped: sent that late it would crowd the next), else a renewal.
    fn take_slot(&mut self, now: Instant) -> Step {
        while self
            .slots
            .front()
            .is_some_and(|t| *t + self.slot_interval / 2 < now)
        {
            self.slots.pop_front();
        }
        match self.slots.front().copied() {
            Some(t) if t > now => Step::WaitUntil(t, WaitReason::RequestsPerMinute),
            Some(_) => {
                self.slots.pop_front();
                self.last_admitted = Some(now);
                Step::Admitted {
                    epoch: self.lease().map_or(0, |l| l.epoch),
                    leased: true,
                }
            }
            None => match self.no_slot_before.filter(|t| *t > now) {
                Some(t) => Step::WaitUntil(t, WaitReason::RequestsPerMinute),
                None => Step::NeedSlots,
            },
        }
    }

    /// The ramp of an endpoint whose limit is unknown ([`ramp`]), unless a lease of a shared
    /// budget paces the calls: it begins at the first call and at the first after a quiet
    /// spell, and the request limiter follows it.
    fn follow_ramp(&mut self, now: Instant) {
        let unknown = self.aimd.unknown() && self.lease().is_none();
        let cold = self.last_admitted.is_none_or(|t| {
            now.saturating_duration_since(t).as_secs_f64() * 1000.0 > ramp::COLD_AFTER_MS
        });
        let was = self.ramp.rate();
        if self.ramp.follow(unknown, cold) != was {
            self.follow_rate(now, false);
        }
    }

    /// A 429 of this process's own budget: one that met the ramp pins the rate where the ramp
    /// stood ([`Aimd::pin`]), to be lowered when the gate opens.
    pub(super) fn refused(&mut self, now: Instant) {
        if let Some(rate) = self.ramp.stop() {
            self.aimd.pin(rate);
            self.follow_rate(now, true);
        }
    }

    /// Rebuilds the request limiter when the rate to keep (a fresh lease's share, or this
    /// process's AIMD rate) moved far enough from it (`always` for a decrease or a new limit).
    /// A new limiter admits its first request one new interval after the last one admitted
    /// (at once if that is past), so a rebuild never lets two requests through closer
    /// together than the new rate allows, nor holds one back longer.
    fn follow_rate(&mut self, now: Instant, always: bool) {
        let target = match self.lease() {
            Some(lease) => lease.requests_per_minute,
            None => self.aimd.rate().or_else(|| self.ramp.rate()),
        };
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
        self.not_before = None;
        self.requests = target.and_then(|rpm| {
            let interval = Duration::from_secs_f64(60.0 / rpm);
            let quota = Quota::with_period(interval)?.allow_burst(NonZeroU32::MIN);
            let limiter = RateLimiter::direct_with_clock(quota, self.clock.clone());
            self.not_before = self
                .last_admitted
                .map(|t| t + interval)
                .filter(|t| *t > now);
            Some(Requests { rpm, limiter })
        });
    }

    /// Rebuilds the token limiter for `per_minute` tokens (a full minute's burst) when it
    /// moved far enough from the one built. The new limiter starts spent by the tokens
    /// reserved within the last minute, so a rebuild never grants a second minute's burst.
    fn follow_tokens(&mut self, per_minute: Option<NonZeroU32>) {
        let built = self.tokens.as_ref().map(|(n, _)| n.get());
        let moved = match (per_minute.map(NonZeroU32::get), built) {
            (Some(t), Some(b)) => f64::from(t.abs_diff(b)) >= f64::from(b) * REBUILD_CHANGE,
            (t, b) => t != b,
        };
        if !moved {
            return;
        }
        self.forget_reserved(Instant::now());
        let spent: u32 = self.reserved.iter().map(|(_, n)| n).sum();
        self.tokens = per_minute.map(|n| {
            let limiter = RateLimiter::direct_with_clock(Quota::per_minute(n), self.clock.clone());
            if let Some(spent) = NonZeroU32::new(spent.min(n.get())) {
                let _ = limiter.check_n(spent);
            }
            (n, limiter)
        });
    }

    fn forget_reserved(&mut self, now: Instant) {
        while self
            .reserved
            .front()
            .is_some_and(|(t, _)| now.saturating_duration_since(*t) > TOKENS_WINDOW)
        {
            self.reserved.pop_front();
        }
    }
}
