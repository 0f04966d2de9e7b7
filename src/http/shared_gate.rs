//! One endpoint's rate budget kept where every process of a batch shares it (a queue's
//! database): the three things a [`super::Gate`] holds (closed-until with its reason, the GCRA
//! schedules of requests and tokens, the AIMD rate) as one [`SharedState`], which a
//! [`GateStore`] updates atomically (read, step, write under one lock) on the store's clock,
//! so that N workers on N machines admit within one budget and all wait out one 429. The
//! arithmetic is the in-memory gate's, here as pure steps; the store lives with the queue.

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;

use serde::{Deserialize, Serialize};

use super::aimd::Aimd;
use super::wait::WaitReason;
use crate::settings::RateLimits;

/// Successes measuring the accepted rate: the last 20 within a minute (as the gate's).
const ACCEPTED_MAX: usize = 20;
const ACCEPTED_WINDOW_MS: f64 = 60_000.0;

/// A gate's state in the store; times are the store's clock, in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SharedState {
    /// `None` until the first caller sets it from its limits.
    pub aimd: Option<Aimd>,
    /// The GCRA theoretical arrival time of the next request.
    pub requests_next: f64,
    /// Of the tokens budget.
    pub tokens_next: f64,
    pub tokens_per_minute: Option<u32>,
    /// Closed by a 429 until then, for that reason (`retry_after`, `backoff`).
    pub closed_until: f64,
    pub closed_reason: Option<String>,
    pub decrease_due: bool,
    pub accepted: VecDeque<f64>,
    pub last_admitted: Option<f64>,
}

/// What one step decided.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// Admitted at this AIMD epoch.
    Admitted(u64),
    /// Wait this many milliseconds, then ask again.
    Wait(f64, WaitReason),
    /// A 429 or a success noted.
    Noted,
}

/// A step on one gate's state, given the store's clock in milliseconds.
pub type Step<'a> = dyn FnMut(&mut SharedState, f64) -> Decision + Send + 'a;

/// Where shared gates live. `update` reads the state of `key` (a new one when absent), runs
/// `step` on it and writes it back, all under one lock: no other process sees half a step.
/// The step may run more than once (a store retries a conflict); the error is one line.
pub trait GateStore: Send + Sync {
    fn update<'a>(
        &'a self,
        key: &'a str,
        step: &'a mut Step<'a>,
    ) -> Pin<Box<dyn Future<Output = Result<Decision, String>> + Send + 'a>>;
}

impl SharedState {
    /// The configured limits of a caller: the rate starts there, a lower one tightens it.
    fn follow(&mut self, limits: RateLimits) {
        let rpm = limits.requests_per_minute.map(|n| f64::from(n.get()));
        match (&mut self.aimd, rpm) {
            (None, _) => self.aimd = Some(Aimd::new(rpm)),
            (Some(aimd), Some(rpm)) => aimd.tighten(rpm),
            (Some(_), None) => {}
        }
        if let Some(tpm) = limits.tokens_per_minute.map(|n| n.get()) {
            self.tokens_per_minute = Some(self.tokens_per_minute.map_or(tpm, |t| t.min(tpm)));
        }
    }

    /// One admission attempt at `now`: lower the rate if a 429 asked and the gate is open
    /// again; then open gate, tokens (reserved once: `tokens_due` is emptied), one request.
    pub fn admit(
        &mut self,
        now: f64,
        limits: RateLimits,
        tokens_due: &mut Option<u32>,
    ) -> Decision {
        self.follow(limits);
        if self.decrease_due && self.closed_until <= now {
            self.decrease_due = false;
            let accepted = self.accepted_rpm(now);
            if let Some(rate) = self.aimd.as_mut().and_then(|a| a.decrease(accepted)) {
                tracing::info!(
                    "a shared rate budget is rate limited: at most {rate:.1} requests a minute from now on, for every worker"
                );
                if let Some(last) = self.last_admitted {
                    self.requests_next = self.requests_next.max(last + 60_000.0 / rate);
                }
            }
        }
        if self.closed_until > now {
            let reason = match self.closed_reason.as_deref() {
                Some("backoff") => WaitReason::Backoff,
                _ => WaitReason::RetryAfter,
            };
            return Decision::Wait(self.closed_until - now, reason);
        }
        if let (Some(tokens), Some(tpm)) = (*tokens_due, self.tokens_per_minute) {
            let per_token = 60_000.0 / f64::from(tpm.max(1));
            let next =
                self.tokens_next.max(now) + f64::from(tokens.clamp(1, tpm.max(1))) * per_token;
            if next - now > 60_000.0 {
                return Decision::Wait(next - now - 60_000.0, WaitReason::TokensPerMinute);
            }
            self.tokens_next = next;
        }
        *tokens_due = None;
        let aimd = self.aimd.get_or_insert_with(|| Aimd::new(None));
        if let Some(rate) = aimd.rate() {
            if self.requests_next > now {
                return Decision::Wait(self.requests_next - now, WaitReason::RequestsPerMinute);
            }
            self.requests_next = now + 60_000.0 / rate;
        }
        self.last_admitted = Some(now);
        Decision::Admitted(aimd.epoch())
    }

    /// A 429 answered a call admitted at `epoch`: closed for everyone for `delay_ms`, and the
    /// rate lowered once per epoch when the gate opens again.
    pub fn refused(&mut self, now: f64, epoch: u64, delay_ms: f64, reason: WaitReason) -> Decision {
        if self.closed_until < now + delay_ms {
            self.closed_until = now + delay_ms;
            self.closed_reason = Some(reason.as_str().to_string());
        }
        if self.aimd.as_ref().is_some_and(|a| a.epoch() == epoch) {
            self.decrease_due = true;
        }
        Decision::Noted
    }

    /// A call succeeded: counted as accepted; the rate takes one step up.
    pub fn succeeded(&mut self, now: f64) -> Decision {
        if self.accepted.len() >= ACCEPTED_MAX {
            self.accepted.pop_front();
        }
        self.accepted.push_back(now);
        if let Some(aimd) = &mut self.aimd {
            aimd.increase();
        }
        Decision::Noted
    }

    /// The rate accepted lately, in requests a minute (the gate's measure).
    fn accepted_rpm(&mut self, now: f64) -> Option<f64> {
        while self
            .accepted
            .front()
            .is_some_and(|t| now - t > ACCEPTED_WINDOW_MS)
        {
            self.accepted.pop_front();
        }
        let (first, n) = (*self.accepted.front()?, self.accepted.len());
        if n < 2 {
            return None;
        }
        let span = (now - first).max(1000.0);
        Some(n as f64 * 60_000.0 / span)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::num::NonZeroU32;

    fn limits(rpm: u32) -> RateLimits {
        RateLimits {
            requests_per_minute: NonZeroU32::new(rpm),
            tokens_per_minute: None,
        }
    }

    #[test]
    fn requests_are_spread_and_a_429_closes_the_gate_then_lowers_the_rate() {
        let mut s = SharedState::default();
        let mut due = None;
        assert_eq!(s.admit(0.0, limits(600), &mut due), Decision::Admitted(0));
        assert_eq!(
            s.admit(10.0, limits(600), &mut due),
            Decision::Wait(90.0, WaitReason::RequestsPerMinute),
            "600 a minute: one every 100 ms"
        );
        for t in [100.0, 200.0, 300.0] {
            assert_eq!(s.admit(t, limits(600), &mut due), Decision::Admitted(0));
            s.succeeded(t + 5.0);
        }
        s.refused(310.0, 0, 2000.0, WaitReason::RetryAfter);
        assert_eq!(
            s.admit(400.0, limits(600), &mut due),
            Decision::Wait(1910.0, WaitReason::RetryAfter),
            "every caller waits out the Retry-After"
        );
        assert_eq!(
            s.admit(2400.0, limits(600), &mut due),
            Decision::Admitted(1)
        );
        let rate = s.aimd.as_ref().and_then(Aimd::rate).expect("a rate");
        assert!(rate < 600.0, "lowered under what was accepted: {rate}");
    }

    #[test]
    fn a_state_survives_its_round_trip_through_the_store() {
        let mut s = SharedState::default();
        let mut due = Some(500);
        s.admit(0.0, limits(60), &mut due);
        let back: SharedState =
            serde_json::from_value(serde_json::to_value(&s).expect("json")).expect("back");
        assert_eq!(back.requests_next, s.requests_next);
        assert_eq!(back.aimd, s.aimd);
    }
}
