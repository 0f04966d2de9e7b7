//! The numeric keys of the config file: retries, timeouts, the claims threshold. Integer keys
//! hold their range in their type (`cli::Bounded`), checked as the file is read; what is left
//! here is what a type cannot say (a delay below another, a share).

use std::time::Duration;

use super::Resolver;
use crate::cli::Bounded;
use crate::settings::config_file::Millis;
use crate::settings::resolved::{RetrySettings, SettingsError};

impl Resolver<'_> {
    pub(super) fn retry(&self) -> Result<RetrySettings, SettingsError> {
        let d = RetrySettings::default();
        let c = &self.file.retry;
        let ms = |v: Option<Millis<0>>, dflt| v.map_or(dflt, |v| Duration::from_millis(v.get()));
        let r = RetrySettings {
            // At most 20: the cast cannot truncate.
            max_retries: c.max_retries.map_or(d.max_retries, |n| n.get() as usize),
            base_delay: ms(c.base_delay_ms, d.base_delay),
            max_delay: ms(c.max_delay_ms, d.max_delay),
            max_retry_after: ms(c.max_retry_after_ms, d.max_retry_after),
            max_rate_limit_wait: ms(c.max_rate_limit_wait_ms, d.max_rate_limit_wait),
        };
        if r.max_delay < r.base_delay {
            return Err(self.invalid(
                "retry.maxDelayMs",
                r.max_delay.as_millis(),
                "must not be below `retry.baseDelayMs`",
            ));
        }
        Ok(r)
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
}

/// A timeout key's span, else `default_ms`.
pub(super) fn timeout(v: Option<Millis<1>>, default_ms: u64) -> Duration {
    Duration::from_millis(v.map_or(default_ms, Bounded::get))
}
