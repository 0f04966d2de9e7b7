//! `search.read`: how the search sub-agent reads the pages behind its results. How many pages
//! per task (0 turns reading off), how long and how much of one page, how many at once in all
//! and to one host, whether private addresses may be read (intranets; the tests), the user
//! agent robots.txt is matched against, and how much of what was read the model sees.

use std::time::Duration;

use serde::Deserialize;

/// `search.read` as written.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReadConfig {
    /// Pages read per task, from the top of the merged results; 0 reads none.
    pub pages: Option<usize>,
    pub timeout_ms: Option<u64>,
    pub max_bytes: Option<u64>,
    /// Pages read at once, in all.
    pub concurrency: Option<usize>,
    /// Connections to one host at once.
    pub per_host: Option<usize>,
    /// Read URLs that resolve to loopback, private or link-local addresses.
    pub allow_private: Option<bool>,
    pub user_agent: Option<String>,
    /// The most characters of passages one task's analysis sees.
    pub passage_chars: Option<usize>,
}

/// `search.read`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadSettings {
    pub pages: usize,
    pub timeout: Duration,
    pub max_bytes: u64,
    pub concurrency: usize,
    pub per_host: usize,
    pub allow_private: bool,
    pub user_agent: String,
    pub passage_chars: usize,
}

/// The user agent pages are read with, and robots.txt is matched against (its product token is
/// `researchflow`). An operator adds a contact through `search.read.userAgent`.
pub const DEFAULT_USER_AGENT: &str = concat!(
    "researchflow/",
    env!("CARGO_PKG_VERSION"),
    " (research agent; obeys robots.txt)"
);

impl Default for ReadSettings {
    fn default() -> ReadSettings {
        ReadSettings {
            pages: 5,
            timeout: Duration::from_secs(15),
            max_bytes: 5 * 1024 * 1024,
            concurrency: 4,
            per_host: 2,
            allow_private: false,
            user_agent: DEFAULT_USER_AGENT.to_string(),
            passage_chars: PASSAGE_CHARS,
        }
    }
}

/// The most characters of passages a task's analysis sees by default: about what the final
/// summary's list shows of the five pages read by default (700 characters each,
/// `final_sources::EXCERPT_MAX_CHARS`). At 8,000 an analysis was shown about 7,500 characters
/// of three pages, of which the final summary's list shows 2,100. The stand-in model's right
/// answers on the three shipped sets (`scripts/bench-eval.sh`) at 8,000, 4,000 and 3,000:
/// 25, 23, 23 quoting the first sentence shown; 46, 47, 47 quoting the best.
pub const PASSAGE_CHARS: usize = 4_000;

/// A key of `search.read` out of its range: the key, the value and what to use.
pub type Invalid = (&'static str, String, &'static str);

impl ReadConfig {
    /// The settings, each key checked against its range.
    pub fn resolve(&self) -> Result<ReadSettings, Invalid> {
        let d = ReadSettings::default();
        let within = |key: &'static str, value: Option<u64>, default: u64, range, hint| {
            let value = value.unwrap_or(default);
            match std::ops::RangeInclusive::contains(&range, &value) {
                true => Ok(value),
                false => Err((key, value.to_string(), hint)),
            }
        };
        let size = |v: Option<usize>| v.map(|v| v as u64);
        let pages = within(
            "search.read.pages",
            size(self.pages),
            5,
            0..=20,
            "use 0 to 20",
        );
        let timeout_ms = within(
            "search.read.timeoutMs",
            self.timeout_ms,
            15_000,
            100..=300_000,
            "use 100 to 300000 (five minutes)",
        );
        let max_bytes = within(
            "search.read.maxBytes",
            self.max_bytes,
            d.max_bytes,
            1024..=64 * 1024 * 1024,
            "use 1024 to 67108864 (64 MiB)",
        );
        let concurrency = within(
            "search.read.concurrency",
            size(self.concurrency),
            4,
            1..=32,
            "use 1 to 32",
        );
        let per_host = within(
            "search.read.perHost",
            size(self.per_host),
            2,
            1..=16,
            "use 1 to 16",
        );
        let passage_chars = within(
            "search.read.passageChars",
            size(self.passage_chars),
            PASSAGE_CHARS as u64,
            500..=16_000,
            "use 500 to 16000 (the results block a task's analysis sees holds 24000)",
        );
        let user_agent = match self.user_agent.as_deref().map(str::trim) {
            None => d.user_agent,
            Some(agent)
                if !agent.is_empty() && agent.chars().all(|c| c == ' ' || c.is_ascii_graphic()) =>
            {
                agent.to_string()
            }
            Some(agent) => {
                return Err((
                    "search.read.userAgent",
                    agent.to_string(),
                    "use printable ASCII, e.g. `researchflow/1 (+https://example.org/contact)`",
                ));
            }
        };
        Ok(ReadSettings {
            pages: pages? as usize,
            timeout: Duration::from_millis(timeout_ms?),
            max_bytes: max_bytes?,
            concurrency: concurrency? as usize,
            per_host: per_host? as usize,
            allow_private: self.allow_private.unwrap_or(false),
            user_agent,
            passage_chars: passage_chars? as usize,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_ranges() {
        assert_eq!(ReadConfig::default().resolve(), Ok(ReadSettings::default()));
        let off = ReadConfig {
            pages: Some(0),
            ..Default::default()
        };
        assert_eq!(off.resolve().map(|s| s.pages), Ok(0));
        let slow = ReadConfig {
            timeout_ms: Some(10),
            ..Default::default()
        };
        let (key, value, _) = slow.resolve().expect_err("too short");
        assert_eq!((key, value.as_str()), ("search.read.timeoutMs", "10"));
        let agent = ReadConfig {
            user_agent: Some("bot\nX-Injected: 1".into()),
            ..Default::default()
        };
        assert_eq!(
            agent.resolve().expect_err("a header line").0,
            "search.read.userAgent"
        );
    }
}
