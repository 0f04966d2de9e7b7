//! The admitted request rate of one endpoint, steered like TCP's congestion window: additive
//! increase, multiplicative decrease (AIMD).
//!
//! A 429 lowers the rate to a little under the rate the server was seen to accept lately (or
//! the current rate, if lower); with no accepted request to go by, it halves the current rate.
//! Each success then adds one step: to just under the refused rate ([`RETURN`] of it) in
//! fewer than [`RECOVERY_STEPS`] successes (from a halving, ten times as many), then ten times
//! slower, the step doubling every [`RECOVERY_STEPS`] successes without a 429 (as TCP CUBIC
//! plateaus near its last maximum, then probes ever faster), until the configured limit is
//! reached again, or, without one, until twice the refused rate, where the limit is lifted.
//! A server that admits R requests a second is thus run just under R, probed again now and
//! then; a rate lowered too far by a short measure climbs back in seconds, not minutes. A
//! server that refuses again at the same rate has a steady limit: each such refusal in a row
//! doubles how long the rate holds just under it before probing again ([`STEADY_BAND`],
//! [`MAX_STEADY`]), so a long run meets the limit ever more rarely. Only
//! the numbers live here: [`super::gate`] measures the accepted rate, turns the numbers into
//! a GCRA limiter and decides what counts as a 429 or a success. Nothing here waits or reads
//! a clock.

/// What a 429 multiplies the rate by, from the rate the server was seen to accept.
pub const DECREASE: f64 = 0.95;

/// What a 429 multiplies the current rate by when no request was accepted lately: nothing says
/// where the server's limit is.
pub const BLIND_DECREASE: f64 = 0.5;

/// How many successes would bring a lowered rate back to where it was refused: each success
/// adds `refused rate * (1 - DECREASE) / RECOVERY_STEPS` (the quick climb stops short, at
/// [`RETURN`] of it).
pub const RECOVERY_STEPS: f64 = 20.0;

/// Where the quick climb after a decrease ends, as a share of the refused rate. That rate was
/// refused (or measured a little above what the server accepts): going straight back to it
/// is refused again within a second or two, so the last stretch is probed slowly. Measured
/// against a server admitting 10 a second in a sliding second (`scripts/bench-queue.sh`
/// (b)): going back to the refused rate itself meant a 429 every 3 s or so.
pub const RETURN: f64 = 0.99;

/// From [`RETURN`] of the refused rate on, steps start this many times smaller (and double
/// every [`RECOVERY_STEPS`] successes): the server is probed again only after many answers,
/// so few requests are refused.
pub const PROBE_SLOWDOWN: f64 = 10.0;

/// A refusal at a rate within this share of the last refused rate meets the same limit: the
/// limit is steady.
pub const STEADY_BAND: f64 = 0.05;

/// The most refusals in a row at a steady limit that lengthen the hold: after `k`, the rate
/// holds at [`RETURN`] of the refused rate for `RECOVERY_STEPS * (2^k - 1)` successes before
/// probing beyond it (up to 1,260 successes). Measured against a server admitting 10 a second
/// in a sliding second (`scripts/bench-queue.sh` (b)): probing at once after every refusal
/// met the limit again every 5 to 7 s, one request in 60 refused for as long as the run.
pub const MAX_STEADY: u32 = 6;

/// The lowest rate a decrease goes to, in requests a minute: a server that keeps refusing is
/// still asked now and then.
pub const MIN_RATE: f64 = 1.0;

/// The admitted rate of one endpoint, in requests a minute.
// Serialized: a gate shared through a store (`shared_gate.rs`) keeps it there.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Aimd {
    /// The configured `requestsPerMinute`, if any: the rate never climbs above it.
    limit: Option<f64>,
    /// The rate admitted now; `None` for no limit at all.
    rate: Option<f64>,
    /// The rate the server refused last (the one lowered); sets the size of a step.
    refused_at: f64,
    /// Counts decreases. A 429 of a request admitted before the last decrease says nothing
    /// about the lowered rate, so it does not lower it again (TCP halves once a window).
    epoch: u64,
    /// Successes at or beyond [`RETURN`] of the refused rate since the last decrease: the
    /// probing steps double every [`RECOVERY_STEPS`] of them.
    #[serde(default)]
    probes: u32,
    /// Refusals in a row at the same rate (within [`STEADY_BAND`]), up to [`MAX_STEADY`]: the
    /// rate holds longer before probing.
    #[serde(default)]
    steady: u32,
}

impl Aimd {
    pub fn new(limit: Option<f64>) -> Aimd {
        Aimd {
            limit,
            rate: limit,
            refused_at: limit.unwrap_or(0.0),
            epoch: 0,
            probes: 0,
            steady: 0,
        }
    }

    /// The rate admitted now (`None`: no limit).
    pub fn rate(&self) -> Option<f64> {
        self.rate
    }

    pub fn limit(&self) -> Option<f64> {
        self.limit
    }

    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    /// A 429. `accepted` is the rate the server was seen to accept lately (`None`: too few
    /// answers to tell). Lowers the rate to [`DECREASE`] times the lower of the current rate
    /// and `accepted`, or without `accepted` to [`BLIND_DECREASE`] times the current rate.
    /// Returns the new rate, or `None` when there is nothing to lower (no limit and nothing
    /// accepted).
    pub fn decrease(&mut self, accepted: Option<f64>) -> Option<f64> {
        let (from, factor) = match (self.rate, accepted) {
            (Some(rate), Some(accepted)) => (rate.min(accepted), DECREASE),
            (None, Some(accepted)) => (accepted, DECREASE),
            (Some(rate), None) => (rate, BLIND_DECREASE),
            (None, None) => return None,
        };
        let rate = (from * factor).max(MIN_RATE);
        let same_limit = (from - self.refused_at).abs() <= self.refused_at * STEADY_BAND;
        self.steady = if self.epoch > 0 && same_limit {
            (self.steady + 1).min(MAX_STEADY)
        } else {
            0
        };
        self.refused_at = from;
        self.rate = Some(rate);
        self.epoch += 1;
        self.probes = 0;
        Some(rate)
    }

    /// A 429 met the ramp of a cold endpoint ([`super::ramp`]) at `rate`: the unknown limit
    /// lies under it, so the rate holds there, as the rate refused, until the gate opens and
    /// [`Aimd::decrease`] lowers it (from it, or from what the server accepted if that is
    /// lower). Does nothing when the rate is set already (a limit known, or lowered before).
    pub fn pin(&mut self, rate: f64) {
        if self.rate.is_none() {
            self.rate = Some(rate);
            self.refused_at = rate;
        }
    }

    /// Whether nothing says where the limit is: none configured, no 429 met.
    pub fn unknown(&self) -> bool {
        self.rate.is_none() && self.limit.is_none() && self.epoch == 0
    }

    /// A success: one step up. Returns whether the rate changed.
    pub fn increase(&mut self) -> bool {
        let Some(rate) = self.rate else {
            return false;
        };
        let step = self.refused_at * (1.0 - DECREASE) / RECOVERY_STEPS;
        let plateau = self.refused_at * RETURN;
        let next = if rate < plateau {
            (rate + step.max(MIN_RATE / PROBE_SLOWDOWN)).min(plateau)
        } else {
            let probes = f64::from(self.probes) - self.hold();
            self.probes = self.probes.saturating_add(1);
            if probes < 0.0 {
                return false;
            }
            let doublings = (probes / RECOVERY_STEPS).floor().min(16.0);
            rate + (step / PROBE_SLOWDOWN * 2f64.powf(doublings)).max(MIN_RATE / PROBE_SLOWDOWN)
        };
        let next = match self.limit {
            Some(limit) => Some(next.min(limit)),
            None if next >= 2.0 * self.refused_at => None,
            None => Some(next),
        };
        let changed = next != self.rate;
        self.rate = next;
        changed
    }

    /// Successes the rate holds at [`RETURN`] of the refused rate before probing beyond it.
    fn hold(&self) -> f64 {
        RECOVERY_STEPS * (2f64.powi(self.steady as i32) - 1.0)
    }

    /// A lower configured limit (another role on the endpoint asked for less).
    pub fn tighten(&mut self, limit: f64) {
        if self.limit.is_some_and(|l| l <= limit) {
            return;
        }
        self.limit = Some(limit);
        self.rate = Some(self.rate.map_or(limit, |r| r.min(limit)));
        self.refused_at = self.refused_at.min(limit).max(MIN_RATE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Steps until the rate stops changing or is lifted.
    fn climb(aimd: &mut Aimd) -> usize {
        let mut steps = 0;
        while aimd.rate().is_some() && aimd.increase() {
            steps += 1;
        }
        steps
    }

    #[test]
    fn a_configured_rate_goes_under_what_was_accepted_and_climbs_back_to_the_limit() {
        let mut aimd = Aimd::new(Some(600.0));
        assert_eq!(aimd.decrease(Some(600.0)), Some(570.0));
        assert_eq!(aimd.epoch(), 1);
        for _ in 0..16 {
            assert!(aimd.increase());
        }
        assert_eq!(
            aimd.rate(),
            Some(594.0),
            "570 to 99% of 600 by steps of 1.5"
        );
        aimd.increase();
        assert!(
            aimd.rate().is_some_and(|r| r > 594.0 && r < 594.2),
            "then by steps of 0.15: {:?}",
            aimd.rate()
        );
        // 20 of 0.15 and 10 of 0.3 (give or take one for rounding).
        assert!((29..=31).contains(&climb(&mut aimd)));
        assert_eq!(aimd.rate(), Some(600.0));
        assert!(!aimd.increase(), "at the limit");
        // A server accepting far less than the limit: straight under what it accepts.
        assert_eq!(aimd.decrease(Some(60.0)), Some(57.0));
        // Nothing accepted lately: halved.
        assert_eq!(aimd.decrease(None), Some(28.5));
    }

    #[test]
    fn without_a_limit_the_accepted_rate_is_lowered_and_the_limit_lifted_later() {
        let mut aimd = Aimd::new(None);
        assert!(!aimd.increase(), "no limit, nothing to raise");
        assert_eq!(
            aimd.decrease(None),
            None,
            "nothing accepted, nothing to lower"
        );
        assert_eq!(aimd.epoch(), 0);
        assert_eq!(aimd.decrease(Some(600.0)), Some(570.0));
        let mut steps = 0;
        while aimd.rate().is_some_and(|r| r < 594.0) {
            assert!(aimd.increase());
            steps += 1;
        }
        assert_eq!(steps, 16, "570 to 99% of 600 by steps of 1.5");
        while aimd.rate().is_some() {
            assert!(aimd.increase());
            steps += 1;
        }
        // 594 to 1200 by steps of 0.15, doubling every 20: 20 x 0.15 x (1 + 2 + ... + 64)
        // = 381 in 140 steps, then 12 of 19.2.
        assert_eq!(steps, 16 + 152, "then no limit");
    }

    #[test]
    fn a_rate_lowered_too_far_climbs_back_faster_the_longer_no_429_comes() {
        let mut aimd = Aimd::new(Some(600.0));
        // A short measure: 400 accepted where the server takes 600.
        assert_eq!(aimd.decrease(Some(400.0)), Some(380.0));
        let mut steps = 0;
        while aimd.rate().is_some_and(|r| r < 600.0) {
            aimd.increase();
            steps += 1;
        }
        // 16 steps of 1 to 396 (99% of 400), then steps of 0.1 doubling every 20: 126 in 120
        // steps, and 13 of 6.4 for the rest. At a constant 0.1 a step it would take 2,000.
        assert_eq!(steps, 16 + 120 + 13);
        assert_eq!(aimd.rate(), Some(600.0), "not beyond the limit");
    }

    /// Successes from a decrease until the rate first goes beyond [`RETURN`] of the refused
    /// rate: those that held it (at the plateau) and all.
    fn successes_until_probing(aimd: &mut Aimd) -> (usize, usize) {
        let plateau = aimd.refused_at * RETURN;
        let (mut held, mut all) = (0, 0);
        while aimd.rate().is_some_and(|r| r <= plateau + 1e-9) {
            held += usize::from(!aimd.increase());
            all += 1;
        }
        (held, all)
    }

    #[test]
    fn a_429_in_a_ramp_pins_the_rate_there_and_the_decrease_goes_under_the_accepted_rate() {
        let mut aimd = Aimd::new(None);
        assert!(aimd.unknown());
        aimd.pin(24_000.0);
        assert!(!aimd.unknown());
        assert_eq!(aimd.rate(), Some(24_000.0));
        aimd.pin(48_000.0);
        assert_eq!(aimd.rate(), Some(24_000.0), "pinned once");
        assert_eq!(
            aimd.epoch(),
            0,
            "the 429 belongs to the epoch it was admitted in"
        );
        assert_eq!(aimd.decrease(Some(600.0)), Some(570.0));
        assert_eq!(aimd.epoch(), 1);
        // Without an accepted rate, the ramp's rate is halved.
        let mut blind = Aimd::new(None);
        blind.pin(24_000.0);
        assert_eq!(blind.decrease(None), Some(12_000.0));
        // A configured limit is never ramped, nor pinned.
        let mut configured = Aimd::new(Some(600.0));
        assert!(!configured.unknown());
        configured.pin(24_000.0);
        assert_eq!(configured.rate(), Some(600.0));
    }

    #[test]
    fn a_limit_met_again_at_the_same_rate_is_probed_ever_more_rarely() {
        let mut aimd = Aimd::new(None);
        aimd.decrease(Some(600.0));
        // 16 steps to the plateau, the 17th probes.
        assert_eq!(successes_until_probing(&mut aimd), (0, 17));
        // Refused again just above the plateau: the same limit; the rate holds 20 successes.
        aimd.decrease(Some(610.0));
        assert_eq!(successes_until_probing(&mut aimd).0, 20);
        aimd.decrease(Some(620.0));
        assert_eq!(successes_until_probing(&mut aimd).0, 60);
        for _ in 0..10 {
            aimd.decrease(Some(620.0));
            successes_until_probing(&mut aimd);
        }
        aimd.decrease(Some(620.0));
        assert_eq!(
            successes_until_probing(&mut aimd).0,
            1_260,
            "the hold stops growing"
        );
        // A refusal far from the last one is another limit: probed at once again.
        while aimd.rate().is_some_and(|r| r < 700.0) {
            aimd.increase();
        }
        aimd.decrease(Some(700.0));
        assert_eq!(successes_until_probing(&mut aimd).0, 0);
        // So is one far below (a short measure, or a lowered limit).
        aimd.decrease(Some(500.0));
        assert_eq!(successes_until_probing(&mut aimd).0, 0);
    }

    #[test]
    fn decreases_stop_at_the_minimum_rate_and_a_lower_limit_tightens() {
        let mut aimd = Aimd::new(Some(3.0));
        assert_eq!(aimd.decrease(None), Some(1.5));
        assert_eq!(aimd.decrease(None), Some(1.0));
        assert_eq!(aimd.decrease(Some(0.5)), Some(1.0));
        let mut aimd = Aimd::new(Some(600.0));
        aimd.tighten(900.0);
        assert_eq!(aimd.limit(), Some(600.0));
        aimd.tighten(60.0);
        assert_eq!((aimd.limit(), aimd.rate()), (Some(60.0), Some(60.0)));
    }
}
