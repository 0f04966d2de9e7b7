//! [`Aimd`]: the request rate of an endpoint whose limit neither its answers nor the settings
//! state, for all the processes that share it (a queue's live workers, `share` of them: each
//! paces at the rate over `share`). No limit at first. A 429 lowers the rate once the gate it
//! closed opens again, when the answers to what was sent before it are in: to just under what
//! the server took over the seconds before it (what was sent less what was refused, times
//! `share`), or, when paced already, just under the rate refused. That estimate is told to the
//! other processes ([`Cut`]); the rate is just under the mean of the estimates made within
//! [`SETTLE`] (a burst that crowded some workers out and let others through is measured by
//! all of them together). Each success adds a small step, so that the rate climbs back to
//! where it was refused in [`STEPS_BACK`] successes and stays near the limit, refused now and
//! then. A burst too crowded out to measure a share by starts slow and doubles (see [`BURST`]).

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// A 429 sets the rate to this share of the rate refused.
const DECREASE: f64 = 0.9;

/// Successes to climb back from a decrease to the rate refused: the slower the climb, the
/// rarer the 429s (one in about this many requests, each closing the gate for a moment).
const STEPS_BACK: f64 = 50.0;

/// After a decrease, 429s say nothing of the new rate for this long: the server still counts
/// what was sent before (a window of a second, as most have), and the refused calls' retries.
const SETTLE: Duration = Duration::from_secs(1);

/// Unpaced, fewer requests than this sent in the last [`WINDOW`] say nothing of a rate: their
/// 429 only closes the gate (a stray 429 does not pace every later call). Fewer than this
/// taken by the server (a burst that other processes' bursts crowded out) are no measure of
/// this process's share: the rate starts from what was taken and doubles each [`SETTLE`]
/// without a 429, until a 429 measures it (TCP's slow start), instead of climbing for minutes.
const BURST: usize = 4;

/// Once the rate is this many times the one refused, the limit is taken to be gone.
const LIFT: f64 = 2.0;

/// The requests that measure the rate the server took: those sent in the two seconds before
/// the 429, over at least a second (a burst of ten in 100 ms is ten a second, not a hundred).
const WINDOW: Duration = Duration::from_secs(2);

#[derive(Debug, Default)]
pub struct Aimd {
    /// Requests a minute (`None`: no limit).
    rate: Option<f64>,
    /// The rate last refused, and the requests a minute each success adds.
    refused: f64,
    step: f64,
    /// Since when the rate doubles each [`SETTLE`] without a 429 (not measured yet).
    starting: Option<Instant>,
    /// The earliest next admission.
    next: Option<Instant>,
    /// When the 429 came that lowers the rate once the gate opens.
    due: Option<Instant>,
    /// The last admission before the last decrease, and when it was: a 429 of an earlier
    /// one, or within [`SETTLE`] of it, is old news.
    decreased_at: u64,
    decreased: Option<Instant>,
    /// The requests of the last [`WINDOW`] (before a due decrease, of the window before it).
    sent: VecDeque<Sent>,
    /// The estimates of the endpoint's rate made within [`SETTLE`] of the last, this
    /// process's and those it heard of.
    estimates: VecDeque<(Instant, f64)>,
}

/// A decrease this process made: the rate it measured (told to the others), and its new rate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cut {
    pub estimate: f64,
    pub rate: f64,
}

/// A request the rate was paced by: its admission number, when it went, whether refused.
#[derive(Debug)]
struct Sent {
    seq: u64,
    at: Instant,
    refused: bool,
}

impl Aimd {
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    /// The gate is open: a due decrease is made (the new rate returned), and when the next
    /// request may go, if not now.
    pub fn open(&mut self, now: Instant, share: f64) -> (Option<Cut>, Option<Instant>) {
        let lowered = self.due.take().map(|at| self.decrease(at, now, share));
        if let (Some(since), Some(rate)) = (self.starting, self.rate) {
            let held = (now - since).as_secs_f64().div_euclid(SETTLE.as_secs_f64());
            self.rate = Some(rate * 2f64.powf(held));
            self.starting = Some(since + SETTLE.mul_f64(held));
        }
        (lowered, self.rate.and(self.next).filter(|next| *next > now))
    }

    /// The `seq`th request goes now, from one of `share` processes.
    pub fn admitted(&mut self, seq: u64, now: Instant, share: f64) {
        let kept = self.due.unwrap_or(now);
        while self.sent.front().is_some_and(|s| kept - s.at > WINDOW) {
            self.sent.pop_front();
        }
        self.sent.push_back(Sent {
            seq,
            at: now,
            refused: false,
        });
        if let Some(rate) = self.rate {
            self.next = Some(now + Duration::from_secs_f64(60.0 * share / rate));
        }
    }

    /// A call of one of `share` processes succeeded (each takes a step for all).
    pub fn succeeded(&mut self, share: f64) {
        if let Some(rate) = self.rate.filter(|_| self.starting.is_none()) {
            let rate = rate + self.step * share;
            self.rate = (rate < self.refused * LIFT).then_some(rate);
        }
    }

    /// The request admitted as the `seq`th was refused.
    pub fn refused(&mut self, seq: u64, now: Instant) {
        if let Some(sent) = self.sent.iter_mut().rev().find(|s| s.seq == seq) {
            sent.refused = true;
        }
        let old = seq <= self.decreased_at || self.decreased.is_some_and(|t| now - t < SETTLE);
        let recent = self.sent.iter().filter(|s| now - s.at <= WINDOW).count();
        if old || (self.rate.is_none() && recent < BURST) {
            return;
        }
        self.due.get_or_insert(now);
    }

    /// Another process sharing the endpoint measured its rate at `estimate` after a 429: the
    /// rate is lowered with it, and this process's 429s of what it sent before are old news;
    /// the new rate.
    pub fn heard(&mut self, estimate: f64, now: Instant) -> f64 {
        self.decreased_at = self.sent.back().map_or(0, |s| s.seq);
        self.decreased = Some(now);
        self.settle(estimate, now, false)
    }

    /// Lowers the rate for the 429 that came `at`.
    fn decrease(&mut self, at: Instant, now: Instant, share: f64) -> Cut {
        let before: Vec<&Sent> = self
            .sent
            .iter()
            .filter(|s| s.at <= at && at - s.at <= WINDOW)
            .collect();
        let span = before
            .first()
            .map_or(WINDOW, |first| (at - first.at).max(Duration::from_secs(1)));
        let accepted = before.iter().filter(|s| !s.refused).count();
        let taken = accepted.max(1) as f64 * 60.0 / span.as_secs_f64() * share;
        self.decreased_at = self.sent.back().map_or(0, |s| s.seq);
        self.decreased = Some(now);
        // Paced, the rate was refused; unpaced or starting, what the server took.
        let measuring = self.rate.is_none() || self.starting.is_some();
        let estimate = match self.rate {
            Some(rate) if !measuring => rate,
            _ => taken,
        };
        let rate = self.settle(estimate, now, measuring && accepted < BURST);
        Cut { estimate, rate }
    }

    /// Takes in an `estimate` of the rate the server takes: the rate is set just under the mean
    /// of the recent ones, or, for a `slow` start when no other is known, to it (doubling).
    fn settle(&mut self, estimate: f64, now: Instant, slow: bool) -> f64 {
        self.estimates.retain(|(at, _)| now - *at < SETTLE);
        self.estimates.push_back((now, estimate));
        let mean = self.estimates.iter().map(|(_, e)| e).sum::<f64>() / self.estimates.len() as f64;
        if slow && self.estimates.len() == 1 {
            self.starting = Some(now);
            return *self.rate.insert(mean);
        }
        self.starting = None;
        self.refused = mean;
        self.step = mean * (1.0 - DECREASE) / STEPS_BACK;
        *self.rate.insert(mean * DECREASE)
    }
}
