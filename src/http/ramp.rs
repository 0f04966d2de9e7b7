//! The request rate of an endpoint whose limit is unknown, when its calls begin: a ramp.
//!
//! With no `requestsPerMinute` configured and no 429 seen, nothing says how many requests
//! the server takes. Sending every call that is ready at once (a batch's 128 first calls)
//! meets an unknown limit with all of them: before the first 429 comes back the rest are in
//! flight, and each is refused. Measured against a server admitting 10 a second
//! (`scripts/bench-queue.sh` (b), 4 workers of 32 jobs), 6 to 41 of the first calls were
//! refused. So a cold endpoint's calls start at [`START_RPM`], and the rate doubles every
//! [`PER_DOUBLING`] calls admitted (as TCP's slow start doubles its window, but by calls sent,
//! not answered: a 429 comes back at once, an answer only when the model is done) until
//! [`END_RPM`], where the limit is lifted. The first 429 then meets few calls in flight, and
//! pins the AIMD rate where the ramp stood ([`super::aimd::Aimd::pin`]). Counted in calls, not
//! in time, the ramp waits for calls that come slowly (a slow start of the questions) instead
//! of being over before they come. Against a server with no limit it costs little: of 128
//! calls ready at once, the first 60 go over about 100 ms (a little more on tokio's timer,
//! whose tick is a millisecond), the rest with the 60th.
//!
//! An endpoint is cold at its first call, and again after no call for [`COLD_AFTER_MS`].
//! Only the numbers live here: the gate ([`super::gate`]) and a shared budget
//! ([`super::shared_gate`]) each keep a [`Ramp`].

use serde::{Deserialize, Serialize};

/// The rate a ramp starts at, in requests a minute (200 a second).
pub const START_RPM: f64 = 12_000.0;

/// How many calls admitted double the rate.
pub const PER_DOUBLING: u32 = 10;

/// Where the ramp ends and the limit is lifted: after six doublings (60 calls).
pub const END_RPM: f64 = START_RPM * 64.0;

/// An endpoint with no call for this long is cold again: its next call starts a new ramp.
pub const COLD_AFTER_MS: f64 = 2_000.0;

/// The calls admitted on an endpoint's ramp, while one runs. Kept by the gate of one
/// process, and by a budget that processes share (in its store).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Ramp {
    admitted: Option<u32>,
}

impl Ramp {
    /// The rate for the next call (requests a minute) of an endpoint whose limit is
    /// `unknown` and which is `cold` (no call for [`COLD_AFTER_MS`]): a cold endpoint starts
    /// a ramp; `None` when none runs (no limit: the ramp ended, or the limit is known).
    pub fn follow(&mut self, unknown: bool, cold: bool) -> Option<f64> {
        if !unknown {
            self.admitted = None;
        } else if cold {
            self.admitted = Some(0);
        }
        self.rate()
    }

    /// The ramp's rate now, while one runs.
    pub fn rate(&self) -> Option<f64> {
        rate(self.admitted?)
    }

    /// How many calls may go at the rate now before it doubles (`None`: no ramp runs).
    pub fn before_doubling(&self) -> Option<u32> {
        self.rate()?;
        self.admitted.map(|n| PER_DOUBLING - n % PER_DOUBLING)
    }

    /// `n` more calls were admitted on the ramp; past its end, it is over.
    pub fn admitted(&mut self, n: u32) {
        if let Some(admitted) = &mut self.admitted {
            *admitted = admitted.saturating_add(n);
        }
        if self.rate().is_none() {
            self.admitted = None;
        }
    }

    /// A 429 met the ramp: it ends, and its rate then is returned (to pin the AIMD rate to).
    pub fn stop(&mut self) -> Option<f64> {
        let rate = self.rate();
        self.admitted = None;
        rate
    }
}

/// The rate of a ramp after `admitted` calls, in requests a minute; `None` once it has
/// reached [`END_RPM`] (no limit).
fn rate(admitted: u32) -> Option<f64> {
    let rate = START_RPM * 2f64.powi((admitted / PER_DOUBLING) as i32);
    (rate < END_RPM).then_some(rate)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cold_endpoint_ramps_doubling_every_ten_calls_until_the_end_or_a_429() {
        let mut ramp = Ramp::default();
        assert_eq!(ramp.follow(true, false), None, "warm: no ramp begins");
        assert_eq!(ramp.follow(true, true), Some(START_RPM));
        assert_eq!(ramp.before_doubling(), Some(10));
        ramp.admitted(9);
        assert_eq!(
            (ramp.rate(), ramp.before_doubling()),
            (Some(START_RPM), Some(1))
        );
        ramp.admitted(1);
        assert_eq!(ramp.follow(true, false), Some(2.0 * START_RPM));
        ramp.admitted(49);
        assert_eq!(
            ramp.rate(),
            Some(32.0 * START_RPM),
            "59 calls: five doublings"
        );
        ramp.admitted(1);
        assert_eq!(ramp.follow(true, false), None, "60 calls: over");
        assert_eq!(ramp.before_doubling(), None);
        assert_eq!(ramp.follow(true, true), Some(START_RPM), "cold again");
        ramp.admitted(10);
        assert_eq!(ramp.stop(), Some(2.0 * START_RPM));
        assert_eq!(ramp.follow(true, false), None, "a 429 ended it");
        ramp.follow(true, true);
        assert_eq!(ramp.follow(false, false), None, "a known limit ends it");
        assert_eq!(ramp.stop(), None);
    }

    /// The figure the module states: 128 calls ready at once, the first 60 over about 100 ms.
    #[test]
    fn a_ramp_sends_128_waiting_calls_within_100_ms() {
        let mut ramp = Ramp::default();
        ramp.follow(true, true);
        let (mut t, mut sent) = (0.0, 0);
        while let Some(rpm) = ramp.rate() {
            t += 60_000.0 / rpm;
            ramp.admitted(1);
            sent += 1;
        }
        assert_eq!(sent, 60);
        assert!(
            t <= 100.0,
            "the 60th call went at {t:.0} ms, the 68 others with it"
        );
    }
}
