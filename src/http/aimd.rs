//! The admitted request rate of one endpoint, steered like TCP's congestion window: additive
//! increase, multiplicative decrease (AIMD).
//!
//! A 429 halves the rate (from the current one, or from the rate observed when there was no
//! limit yet); each success then adds one step, a fraction of the rate the server refused, until
//! the configured limit is reached again, or, without one, until twice the refused rate, where
//! the limit is lifted. Only the numbers live here: [`super::gate`] turns them into a GCRA
//! limiter and decides what counts as a 429 or a success. Nothing here waits or reads a clock.

/// What a 429 multiplies the rate by.
pub const DECREASE: f64 = 0.5;

/// How many successes bring a halved rate back to where it was refused: each success adds
/// `refused rate / (2 * RECOVERY_STEPS)`. Slow enough that a server is not probed again at once.
pub const RECOVERY_STEPS: f64 = 32.0;

/// The lowest rate a decrease goes to, in requests a minute: a server that keeps refusing is
/// still asked now and then.
pub const MIN_RATE: f64 = 1.0;

/// The admitted rate of one endpoint, in requests a minute.
#[derive(Debug, Clone, PartialEq)]
pub struct Aimd {
    /// The configured `requestsPerMinute`, if any: the rate never climbs above it.
    limit: Option<f64>,
    /// The rate admitted now; `None` for no limit at all.
    rate: Option<f64>,
    /// The rate the server refused last (the one halved); sets the size of a step.
    refused_at: f64,
    /// Counts decreases. A 429 of a request admitted before the last decrease says nothing
    /// about the lowered rate, so it does not lower it again (TCP halves once a window).
    epoch: u64,
}

impl Aimd {
    pub fn new(limit: Option<f64>) -> Aimd {
        Aimd {
            limit,
            rate: limit,
            refused_at: limit.unwrap_or(0.0),
            epoch: 0,
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

    /// A 429. Lowers the rate from the current one, or from `observed` (the rate of the last
    /// minute) when there was no limit; returns the new rate, or `None` when there is nothing
    /// to lower (no limit and no observed rate).
    pub fn decrease(&mut self, observed: Option<f64>) -> Option<f64> {
        let from = self.rate.or(observed)?;
        let rate = (from * DECREASE).max(MIN_RATE);
        self.refused_at = from;
        self.rate = Some(rate);
        self.epoch += 1;
        Some(rate)
    }

    /// A success: one step up. Returns whether the rate changed.
    pub fn increase(&mut self) -> bool {
        let Some(rate) = self.rate else {
            return false;
        };
        let step = (self.refused_at / (2.0 * RECOVERY_STEPS)).max(MIN_RATE);
        let next = rate + step;
        let next = match self.limit {
            Some(limit) => Some(next.min(limit)),
            None if next >= 2.0 * self.refused_at => None,
            None => Some(next),
        };
        let changed = next != self.rate;
        self.rate = next;
        changed
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

    #[test]
    fn a_configured_rate_halves_and_climbs_back_to_the_limit_and_no_further() {
        let mut aimd = Aimd::new(Some(300.0));
        assert_eq!(aimd.decrease(None), Some(150.0));
        assert_eq!(aimd.epoch(), 1);
        let mut steps = 0;
        while aimd.increase() {
            steps += 1;
        }
        assert_eq!(aimd.rate(), Some(300.0));
        assert_eq!(steps, 32, "150 back to 300 by steps of 300/64");
        assert!(!aimd.increase(), "at the limit");
    }

    #[test]
    fn without_a_limit_the_observed_rate_is_halved_and_the_limit_lifted_later() {
        let mut aimd = Aimd::new(None);
        assert!(!aimd.increase(), "no limit, nothing to raise");
        assert_eq!(
            aimd.decrease(None),
            None,
            "nothing observed, nothing to lower"
        );
        assert_eq!(aimd.epoch(), 0);
        assert_eq!(aimd.decrease(Some(480.0)), Some(240.0));
        let mut steps = 0;
        while aimd.rate().is_some() {
            assert!(aimd.increase());
            steps += 1;
        }
        assert_eq!(steps, 96, "240 to 960 by steps of 7.5, then no limit");
    }

    #[test]
    fn decreases_stop_at_the_minimum_rate_and_a_lower_limit_tightens() {
        let mut aimd = Aimd::new(Some(3.0));
        assert_eq!(aimd.decrease(None), Some(1.5));
        assert_eq!(aimd.decrease(None), Some(1.0));
        assert_eq!(aimd.decrease(None), Some(1.0));
        let mut aimd = Aimd::new(Some(600.0));
        aimd.tighten(900.0);
        assert_eq!(aimd.limit(), Some(600.0));
        aimd.tighten(60.0);
        assert_eq!((aimd.limit(), aimd.rate()), (Some(60.0), Some(60.0)));
    }
}
