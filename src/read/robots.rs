//! robots.txt, read once per origin (scheme, host, port) per reader and obeyed for the
//! reader's user agent (product token `researchflow`), parsed by `texting_robots`. As RFC 9309
//! says: a robots.txt that is missing (4xx) allows everything; one that cannot be had (5xx
//! after the retries, a timeout, an unreachable host) disallows everything, since silence is
//! not consent.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use reqwest::Url;
use texting_robots::Robot;
use tokio::sync::OnceCell;

/// The product token robots.txt groups are matched against.
pub const AGENT_TOKEN: &str = "researchflow";

/// The largest robots.txt read (Google reads 500 KiB).
pub const MAX_ROBOTS_BYTES: u64 = 512 * 1024;

/// What an origin's robots.txt says.
#[derive(Debug)]
pub enum Rules {
    /// No robots.txt (4xx), or one that allows everything it does not name.
    Parsed(Option<Robot>),
    /// It could not be had: nothing of the origin is read.
    Unavailable(String),
}

impl Rules {
    /// `Err(cause)` when `url` may not be read.
    pub fn check(&self, url: &Url) -> Result<(), String> {
        match self {
            Rules::Parsed(Some(robot)) if !robot.allowed(url.as_str()) => {
                Err("robots.txt disallows it".into())
            }
            Rules::Parsed(_) => Ok(()),
            Rules::Unavailable(why) => Err(format!(
                "its site's robots.txt could not be read ({why}), so nothing of the site is read"
            )),
        }
    }

    /// The rules of a robots.txt answered with `status` and `body`.
    pub fn from_answer(status: u16, body: &[u8]) -> Rules {
        match status {
            200..=299 => Rules::Parsed(Robot::new(AGENT_TOKEN, body).ok()),
            400..=499 => Rules::Parsed(None),
            _ => Rules::Unavailable(format!("HTTP {status}")),
        }
    }
}

/// The rules of every origin met, each fetched once even when many tasks ask at once.
#[derive(Debug, Default)]
pub struct RobotsCache {
    origins: Mutex<HashMap<String, Arc<OnceCell<Rules>>>>,
}

impl RobotsCache {
    /// The cell of `url`'s origin, and the URL of its robots.txt.
    pub fn cell(&self, url: &Url) -> (Arc<OnceCell<Rules>>, Url) {
        let origin = url.origin().ascii_serialization();
        let mut robots = url.clone();
        robots.set_path("/robots.txt");
        robots.set_query(None);
        robots.set_fragment(None);
        let mut origins = self.origins.locked();
        let cell = origins.entry(origin).or_default();
        (Arc::clone(cell), robots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> Url {
        Url::parse(s).expect("a URL")
    }

    #[test]
    fn a_missing_file_allows_and_an_unavailable_one_forbids() {
        let rules = Rules::from_answer(200, b"User-agent: *\nDisallow: /private/\n");
        assert!(rules.check(&url("http://h.test/docs/a.html")).is_ok());
        let no = rules.check(&url("http://h.test/private/b.html"));
        assert_eq!(no, Err("robots.txt disallows it".into()));
        let ours = Rules::from_answer(
            200,
            b"User-agent: researchflow\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
        );
        assert!(ours.check(&url("http://h.test/a")).is_err(), "our group");
        assert!(
            Rules::from_answer(404, b"")
                .check(&url("http://h.test/private/x"))
                .is_ok()
        );
        let down = Rules::from_answer(503, b"").check(&url("http://h.test/a"));
        assert!(down.expect_err("forbidden").contains("HTTP 503"));
    }

    #[test]
    fn one_cell_per_origin() {
        let cache = RobotsCache::default();
        let (a, robots) = cache.cell(&url("http://h.test:8080/x/y?q=1#f"));
        let (b, _) = cache.cell(&url("http://h.test:8080/z"));
        let (c, _) = cache.cell(&url("https://h.test:8080/z"));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(robots.as_str(), "http://h.test:8080/robots.txt");
    }
}
