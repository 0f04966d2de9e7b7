//! Timestamps as every file we write shows them: RFC 3339 in UTC with a `Z`. One place, so the
//! plan file, the events and the ids agree on the format.

use chrono::{SecondsFormat, Utc};

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
}
