//! Timestamps as every file we write shows them: RFC 3339 in UTC with a `Z`. One place, so the
//! plan file, the events and the ids agree on the format. Also the longest span of time any
//! flag, variable, config key or MCP argument may give, and the one way a deadline is computed
//! from such a span, so that no deadline can overflow an instant.

use std::time::Duration;

use chrono::{SecondsFormat, Utc};

/// The longest duration researchflow accepts anywhere, in seconds: 30 days. Longer than any
/// run needs, and far from the overflow of an instant.
pub const LONGEST_SECS: u64 = 30 * 24 * 3600;

/// [`LONGEST_SECS`] as a duration.
pub const LONGEST: Duration = Duration::from_secs(LONGEST_SECS);

/// `start + span`, with `span` held to [`LONGEST`]: a deadline that cannot overflow.
pub fn deadline(start: tokio::time::Instant, span: Duration) -> tokio::time::Instant {
    start + span.min(LONGEST)
}

/// Now, to the second: `2026-11-21T10:15:00Z` (plan file fields).
pub fn now() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Now, to the millisecond: `2026-11-21T10:15:00.123Z` (events, where order within a second
/// matters).
pub fn now_millis() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_rfc3339_utc() {
        let s = now();
        assert!(s.ends_with('Z') && s.len() == 20, "{s}");
        let ms = now_millis();
        assert!(ms.ends_with('Z') && ms.len() == 24, "{ms}");
        assert!(chrono::DateTime::parse_from_rfc3339(&ms).is_ok());
    }

    #[test]
    fn a_deadline_never_overflows() {
        let now = tokio::time::Instant::now();
        assert_eq!(deadline(now, Duration::MAX), now + LONGEST);
        assert_eq!(
            deadline(now, Duration::from_secs(5)),
            now + Duration::from_secs(5)
        );
    }
}
