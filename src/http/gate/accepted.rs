//! [`Accepted`]: the rate an endpoint's server accepted lately, measured from the times of the
//! gate's last successes, for a 429 to lower the admitted rate to just under it.

use std::collections::VecDeque;
use std::time::Duration;

use tokio::time::Instant;

/// The rate the server accepts (to lower the admitted rate to just under it on a 429) is
/// measured over its last [`ACCEPTED_MAX`] successes within this window: seconds for a busy
/// endpoint, up to a minute for a slow one.
const ACCEPTED_WINDOW: Duration = Duration::from_secs(60);

/// How many of the last successes measure the accepted rate.
const ACCEPTED_MAX: usize = 20;

/// A pause between two successes that is longer than [`IDLE_MIN`] and this many times the
/// usual one after it (their median) ends the measure of the accepted rate: the run had no
/// call to make then (between two rounds, say), which says nothing of what the server
/// accepts. Counting it, ten answers in a second after ten a minute earlier measured 22 a
/// minute, and a 429 lowered the rate to 21 instead of to about 570.
const IDLE_FACTOR: f64 = 10.0;
const IDLE_MIN: Duration = Duration::from_secs(5);

/// The times of the last successes (at most [`ACCEPTED_MAX`], within [`ACCEPTED_WINDOW`]),
/// oldest first.
#[derive(Debug, Default)]
pub(super) struct Accepted {
    at: VecDeque<Instant>,
}

impl Accepted {
    /// A success at `now`.
    pub(super) fn push(&mut self, now: Instant) {
        if self.at.len() >= ACCEPTED_MAX {
            self.at.pop_front();
        }
        self.at.push_back(now);
    }

    /// The rate the server accepted lately, in requests a minute: the last successes over
    /// the time from the first of them to the last, spread over one more interval than lies
    /// between them (at least a second, so a burst that began a moment ago does not count
    /// as a high rate); `None` with fewer than two, which make no rate. Measured up to the
    /// last success, not to now: the time a 429 kept the gate closed (no call, no success)
    /// would dilute it; and from the last idle pause on ([`IDLE_FACTOR`]), for the same reason.
    pub(super) fn rpm(&mut self, now: Instant) -> Option<f64> {
        while self
            .at
            .front()
            .is_some_and(|t| now.saturating_duration_since(*t) > ACCEPTED_WINDOW)
        {
            self.at.pop_front();
        }
        if let Some(pause) = last_idle_pause(&self.at) {
            self.at.drain(..pause);
        }
        let (first, last, n) = (self.at.front()?, self.at.back()?, self.at.len());
        if n < 2 {
            return None;
        }
        let between = last.saturating_duration_since(*first).as_secs_f64();
        let span = (between * n as f64 / (n - 1) as f64).max(1.0);
        Some(n as f64 * 60.0 / span)
    }
}

/// Where the last idle pause between the successes `at` ends (the index of the first success
/// after it), if there was one: a gap longer than [`IDLE_MIN`] and [`IDLE_FACTOR`] times the
/// median of at least two gaps after it.
fn last_idle_pause(at: &VecDeque<Instant>) -> Option<usize> {
    let mut later: Vec<Duration> = Vec::new();
    for i in (1..at.len()).rev() {
        let gap = at[i].saturating_duration_since(at[i - 1]);
        if later.len() >= 2 {
            let mut sorted = later.clone();
            sorted.sort();
            let median = sorted[sorted.len() / 2];
            if gap > IDLE_MIN && gap.as_secs_f64() > IDLE_FACTOR * median.as_secs_f64() {
                return Some(i);
            }
        }
        later.push(gap);
    }
    None
}
