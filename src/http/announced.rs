//! [`Announced`]: the rate budget a server states in the headers of its answers, and how those
//! headers reach the endpoint's gate.
//!
//! Read, for requests and for tokens, OpenAI's `x-ratelimit-limit-*`, `x-ratelimit-remaining-*`
//! and `x-ratelimit-reset-*` (`-requests`, `-tokens`; the reset a duration such as `1s`,
//! `6m0s`, `20ms`), and for requests the IETF draft's `RateLimit-Limit`, `RateLimit-Remaining`
//! and `RateLimit-Reset` (seconds), or its combined `RateLimit` (`limit=, remaining=, reset=`
//! or `r=;t=`) with `RateLimit-Policy` (`q=`). A value that cannot be read is ignored; a
//! budget needs at least its remaining count and its reset.
//!
//! The answer is read deep in a client ([`super::send`], the LLM stream), the gate sits in the
//! retry policy: [`listen`] runs one attempt with a task-local slot that [`heard`] fills.

use std::cell::RefCell;
use std::future::Future;
use std::time::Duration;

use reqwest::header::HeaderMap;
use tokio::time::Instant;

/// The longest reset believed: a day. Anything longer is taken for a misreading.
const MAX_RESET: Duration = Duration::from_secs(86_400);

/// One budget as the server stated it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Left {
    pub limit: Option<f64>,
    pub remaining: f64,
    /// How long until the budget is whole again.
    pub reset: Duration,
}

/// What one answer's headers said, and when it came.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Announced {
    pub requests: Option<Left>,
    pub tokens: Option<Left>,
    pub at: Instant,
}

tokio::task_local! {
    static HEARD: RefCell<Option<Announced>>;
}

/// Runs `fut` (one attempt), returning its output and the last budget its answers announced.
pub async fn listen<T>(fut: impl Future<Output = T>) -> (T, Option<Announced>) {
    HEARD
        .scope(RefCell::new(None), async {
            let out = fut.await;
            (out, HEARD.with(RefCell::take))
        })
        .await
}

/// Notes the budget `headers` announce for the attempt running (outside [`listen`]: nothing).
pub fn heard(headers: &HeaderMap) {
    if let Some(announced) = Announced::read(headers) {
        let _ = HEARD.try_with(|slot| *slot.borrow_mut() = Some(announced));
    }
}

impl Announced {
    /// The budgets `headers` announce, if any.
    pub fn read(headers: &HeaderMap) -> Option<Announced> {
        let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        let openai = |kind: &str| {
            Some(Left {
                limit: get(&format!("x-ratelimit-limit-{kind}")).and_then(count),
                remaining: count(get(&format!("x-ratelimit-remaining-{kind}"))?)?,
                reset: duration(get(&format!("x-ratelimit-reset-{kind}"))?)?,
            })
        };
        let requests = openai("requests").or_else(|| ietf(&get));
        let tokens = openai("tokens");
        (requests.is_some() || tokens.is_some()).then(|| Announced {
            requests,
            tokens,
            at: Instant::now(),
        })
    }
}

/// The IETF draft's fields: apart (`RateLimit-Remaining: 50`, the first item the value) or
/// combined (`RateLimit: limit=100, remaining=50, reset=30`, `RateLimit: "p";r=50;t=30` with
/// `RateLimit-Policy: "p";q=100;w=60`); apart first.
fn ietf<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Option<Left> {
    let items = |v: &'a str| v.split([',', ';']);
    let mut found: Vec<(String, &str)> = ["limit", "remaining", "reset"]
        .into_iter()
        .filter_map(|k| {
            Some((
                k.to_string(),
                items(get(&format!("ratelimit-{k}"))?).next()?,
            ))
        })
        .collect();
    for line in [get("ratelimit"), get("ratelimit-policy")]
        .into_iter()
        .flatten()
    {
        found.extend(items(line).filter_map(|item| {
            let (k, v) = item.split_once('=')?;
            Some((k.trim().to_ascii_lowercase(), v))
        }));
    }
    let find = |keys: [&str; 2]| {
        found
            .iter()
            .find_map(|(k, v)| keys.contains(&k.as_str()).then_some(*v))
    };
    Some(Left {
        limit: find(["limit", "q"]).and_then(count),
        remaining: count(find(["remaining", "r"])?)?,
        reset: seconds(find(["reset", "t"])?)?,
    })
}

/// A count: a finite number not below zero.
fn count(v: &str) -> Option<f64> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite() && *n >= 0.0)
}

/// A number of seconds, up to [`MAX_RESET`].
fn seconds(v: &str) -> Option<Duration> {
    Some(Duration::try_from_secs_f64(count(v)?).ok()?).filter(|d| *d <= MAX_RESET)
}

/// A duration as Go prints one (`1s`, `6m0s`, `1h2m3.5s`, `20ms`), or a bare number of seconds.
fn duration(v: &str) -> Option<Duration> {
    let v = v.trim();
    if let Some(d) = seconds(v) {
        return Some(d);
    }
    let (mut rest, mut total) = (v, 0.0);
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        let (number, tail) = rest.split_at(digits);
        let unit = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, tail) = tail.split_at(unit);
        let scale = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 1e-3,
            "us" | "µs" => 1e-6,
            "ns" => 1e-9,
            _ => return None,
        };
        total += count(number)? * scale;
        rest = tail;
    }
    (!v.is_empty()).then_some(())?;
    seconds(&total.to_string())
}
