//! The numeric keys of the config file: retries, timeouts, the claims threshold, repair
//! attempts. Each is checked against its bounds here (the budget's keys have the types of
//! their flags, which check theirs as the file is read); every duration is at most
//! [`crate::clock::LONGEST`], so that no deadline computed from one can overflow.

use std::time::Duration;

use super::Resolver;
use crate::settings::resolved::{RetrySettings, SettingsError};

impl Resolver<'_> {
    pub(super) fn retry(&self) -> Result<RetrySettings, SettingsError> {
        let d = RetrySettings::default();
        let c = &self.file.retry;
        let ms = |key: &str, v: Option<u64>, dflt: Duration| {
            Ok::<_, SettingsError>(self.span(key, v, None)?.unwrap_or(dflt))
        };
        let r = RetrySettings {
            max_retries: c.max_retries.unwrap_or(d.max_retries),
            base_delay: ms("retry.baseDelayMs", c.base_delay_ms, d.base_delay)?,
            max_delay: ms("retry.maxDelayMs", c.max_delay_ms, d.max_delay)?,
            max_retry_after: ms(
                "retry.maxRetryAfterMs",
                c.max_retry_after_ms,
                d.max_retry_after,
            )?,
            max_rate_limit_wait: ms(
                "retry.maxRateLimitWaitMs",
                c.max_rate_limit_wait_ms,
                d.max_rate_limit_wait,
            )?,
        };
        if r.max_retries > 20 {
            return Err(self.invalid("retry.maxRetries", r.max_retries, "use 0 to 20"));
        }
        if r.max_delay < r.base_delay {
            return Err(self.invalid(
                "retry.maxDelayMs",
                r.max_delay.as_millis(),
                "must not be below `retry.baseDelayMs`",
            ));
        }
        Ok(r)
    }

    pub(super) fn timeout(
        &self,
        v: Option<u64>,
        key: &str,
        default_ms: u64,
    ) -> Result<Duration, SettingsError> {
        let positive = Some("use a positive number of milliseconds");
        Ok(self
            .span(key, v, positive)?
            .unwrap_or(Duration::from_millis(default_ms)))
    }

    /// A key of milliseconds, refused when it is longer than [`crate::clock::LONGEST`], or 0
    /// where `zero` says why 0 cannot be.
    fn span(
        &self,
        key: &str,
        value: Option<u64>,
        zero: Option<&str>,
    ) -> Result<Option<Duration>, SettingsError> {
        let Some(v) = value else { return Ok(None) };
        let longest = crate::clock::LONGEST_SECS * 1000;
        match zero {
            Some(hint) if v == 0 => Err(self.invalid(key, 0, hint)),
            _ if v > longest => {
                Err(self.invalid(key, v, &format!("use at most {longest} (30 days)")))
            }
            _ => Ok(Some(Duration::from_millis(v))),
        }
    }

    pub(super) fn claims_threshold(&self) -> Result<f64, SettingsError> {
        match self.file.claims.threshold {
            None => Ok(crate::settings::DEFAULT_CLAIM_THRESHOLD),
            Some(t) if (0.0..=1.0).contains(&t) => Ok(t),
            Some(t) => Err(self.invalid(
                "claims.threshold",
                t,
                "use a share from 0 to 1 (0.5: half a claim's content words in its sources)",
            )),
        }
    }

    pub(super) fn repair_attempts(&self) -> Result<u32, SettingsError> {
        let n = self.file.planner.repair_attempts.unwrap_or(1);
        if n > 5 {
            return Err(self.invalid("planner.repairAttempts", n, "use 0 to 5"));
        }
        Ok(n)
    }
}
