//! One page over HTTP, politely and safely: its URL checked by the guard at every hop,
//! robots.txt obeyed at every hop's origin, redirects followed at most [`MAX_REDIRECTS`]
//! times, at most `search.read.perHost` connections to one host and `search.read.concurrency`
//! in all, each host behind its own gate (a 429 there holds back every read of the host), the
//! one retry policy (`Retry-After` honoured), and the body read within the per-page deadline
//! and byte cap: a page cut by either keeps what arrived, and says why. Content encodings
//! (gzip, brotli, deflate) are undone by the client, and the cap counts decoded bytes, so a
//! compressed bomb is cut like any other page.

use crate::sync::Locked;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Url;
use reqwest::header::{
    CONTENT_TYPE, ETAG, IF_MODIFIED_SINCE, IF_NONE_MATCH, LAST_MODIFIED, LOCATION,
};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::cache::Validators;
use super::guard::{GuardedResolver, Proxies, Unresolved, check_url};
use super::robots::{MAX_ROBOTS_BYTES, RobotsCache, Rules};
use crate::http::error::{parse_retry_after, strip_query};
use crate::http::{AtGate, Gates, HttpError, RetryObserver, with_retry_at_gate};
use crate::settings::{RateLimits, ReadSettings, RetrySettings};

/// The most redirects followed for one page.
pub const MAX_REDIRECTS: usize = 5;

/// A page's body, as far as it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    /// Where the body came from, after redirects.
    pub url: String,
    pub content_type: Option<String>,
    /// Decoded of its content encoding.
    pub bytes: Vec<u8>,
    /// Why the body stops early (the byte cap, the deadline), when it does.
    pub cut: Option<String>,
    /// What the server sent to identify this version of the page.
    pub validators: Validators,
    /// When the page's time (`search.read.timeoutMs`) runs out: its text must be read by then.
    pub deadline: std::time::Instant,
}

/// A page's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    Body(Fetched),
    /// The version the validators name is still the page (304).
    NotModified,
}

/// What one page's hops share: its deadline, its byte cap and the validators of the version
/// already kept.
struct Ask<'a> {
    deadline: Deadline,
    max_bytes: u64,
    known: &'a Validators,
}

impl<'a> Ask<'a> {
    fn new(timeout: Duration, max_bytes: u64, known: &'a Validators) -> Ask<'a> {
        Ask {
            deadline: Deadline::new(timeout),
            max_bytes,
            known,
        }
    }
}

/// A page's time: `timeout` of its own, counted from its first request. Time spent queued
/// (for a connection to its host, for its host's robots.txt) is not the page's: a page that
/// waits behind a slow one on the same host is not timed out by the wait.
struct Deadline {
    timeout: Duration,
    at: Mutex<Option<Instant>>,
}

impl Deadline {
    fn new(timeout: Duration) -> Deadline {
        Deadline {
            timeout,
            at: Mutex::new(None),
        }
    }

    /// Starts the clock at the first request; later hops move the deadline on by the time
    /// they waited in the queue (`queued`).
    fn resume(&self, queued: Duration) -> Instant {
        let mut at = self.at.locked();
        let deadline = match *at {
            None => Instant::now() + self.timeout,
            Some(deadline) => deadline + queued,
        };
        *at = Some(deadline);
        deadline
    }

    /// The deadline as it stands (started, when no hop has).
    fn get(&self) -> Instant {
        let at = *self.at.locked();
        at.unwrap_or_else(|| self.resume(Duration::ZERO))
    }
}

/// Why a page was not read: the cause a user reads, and the status when a server answered.
#[derive(Debug)]
struct Failed {
    cause: String,
    status: Option<u16>,
}

impl From<String> for Failed {
    fn from(cause: String) -> Failed {
        Failed {
            cause,
            status: None,
        }
    }
}

/// One hop's answer.
enum Hop {
    Answer(Answer),
    Redirect(Url),
}

/// The reader's HTTP side: one client, its hosts' gates and connection limits, and the robots.txt
/// of every origin met. Shared by every task of a run (and every run of a batch).
pub struct Fetcher {
    client: reqwest::Client,
    settings: ReadSettings,
    retry: RetrySettings,
    gates: Arc<Gates>,
    hosts: Mutex<HashMap<String, Arc<Semaphore>>>,
    all: Semaphore,
    robots: RobotsCache,
    proxies: Proxies,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fetcher")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Fetcher {
    pub fn new(
        settings: ReadSettings,
        retry: RetrySettings,
        gates: Arc<Gates>,
    ) -> Result<Fetcher, reqwest::Error> {
        // Installing twice is harmless: the second call reports the provider already set.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let proxies = Proxies::of(|var| std::env::var(var).ok());
        let client = reqwest::Client::builder()
            .user_agent(settings.user_agent.clone())
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(GuardedResolver {
                allow_private: settings.allow_private,
                exempt: proxies.hosts().to_vec(),
            }))
            .connect_timeout(settings.timeout)
            .build()?;
        Ok(Fetcher {
            client,
            all: Semaphore::new(settings.concurrency),
            settings,
            retry,
            gates,
            hosts: Mutex::default(),
            robots: RobotsCache::default(),
            proxies,
        })
    }

    pub fn settings(&self) -> &ReadSettings {
        &self.settings
    }

    /// The page at `url`, or why it was not read; with `known` validators, asked only if it
    /// changed since.
    pub async fn fetch(
        &self,
        url: &str,
        known: &Validators,
        observer: &dyn RetryObserver,
    ) -> Result<Answer, String> {
        let url = Url::parse(url).map_err(|e| format!("it is not a URL ({e})"))?;
        let _slot = self.all.acquire().await.map_err(|e| e.to_string())?;
        let ask = Ask::new(self.settings.timeout, self.settings.max_bytes, known);
        self.follow(url, &ask, observer, true)
            .await
            .map_err(|f| f.cause)
    }

    /// Follows `url`'s redirects to a body, each hop checked (and, with `obey`, held against
    /// its origin's robots.txt).
    async fn follow(
        &self,
        mut url: Url,
        ask: &Ask<'_>,
        observer: &dyn RetryObserver,
        obey: bool,
    ) -> Result<Answer, Failed> {
        for _ in 0..=MAX_REDIRECTS {
            check_url(&url, self.settings.allow_private)?;
            self.proxies
                .check(&url, self.settings.allow_private)
                .await
                .map_err(|e| e.to_string())?;
            let queued = Instant::now();
            if obey {
                self.robots_allow(&url, observer).await?;
            }
            match self.hop(&url, ask, observer, queued).await? {
                Hop::Answer(answer) => return Ok(answer),
                Hop::Redirect(next) => url = next,
            }
        }
        Err(format!("it redirects more than {MAX_REDIRECTS} times").into())
    }

    /// `Err(cause)` when `url`'s origin forbids reading it.
    async fn robots_allow(&self, url: &Url, observer: &dyn RetryObserver) -> Result<(), String> {
        let (cell, robots_url) = self.robots.cell(url);
        let rules = cell
            .get_or_init(|| async {
                let known = Validators::default();
                let ask = Ask::new(self.settings.timeout, MAX_ROBOTS_BYTES, &known);
                let got = Box::pin(self.follow(robots_url, &ask, observer, false)).await;
                match got {
                    Ok(Answer::Body(body)) => Rules::from_answer(200, &body.bytes),
                    Ok(Answer::NotModified) => Rules::Parsed(None),
                    Err(Failed {
                        status: Some(status),
                        ..
                    }) => Rules::from_answer(status, b""),
                    Err(Failed { cause, .. }) => Rules::Unavailable(cause),
                }
            })
            .await;
        rules.check(url)
    }

    /// One hop: its host's slot and gate, the retries, the body. The page's clock runs from
    /// the moment the slot is had; the time since `queued` was spent waiting.
    async fn hop(
        &self,
        url: &Url,
        ask: &Ask<'_>,
        observer: &dyn RetryObserver,
        queued: Instant,
    ) -> Result<Hop, Failed> {
        let host = url.host_str().unwrap_or_default().to_string();
        let slot = self.host_slot(&host);
        let _slot = slot.acquire().await.map_err(|e| e.to_string())?;
        let deadline = ask.deadline.resume(queued.elapsed());
        let key = format!("read:{}", url.origin().ascii_serialization());
        let gate = self.gates.gate(&key, &host, RateLimits::default());
        let what = format!("read {host}");
        let attempts = with_retry_at_gate(
            &self.retry,
            &what,
            observer,
            Some(AtGate {
                gate: &gate,
                tokens: 0,
            }),
            || self.attempt(url, ask),
        );
        // The retries' waits count against the page's deadline too (a second more for a body
        // cut at the deadline to come back).
        match tokio::time::timeout_at(deadline + Duration::from_secs(1), attempts).await {
            Ok(Ok(hop)) => Ok(hop),
            Ok(Err(e)) => Err(Failed {
                cause: e.to_string(),
                status: match &e {
                    HttpError::Status { status, .. } => Some(*status),
                    _ => None,
                },
            }),
            Err(_) => Err(format!(
                "it did not answer within the per-page timeout ({} ms)",
                self.settings.timeout.as_millis()
            )
            .into()),
        }
    }

    /// The connections of `host`.
    fn host_slot(&self, host: &str) -> Arc<Semaphore> {
        let mut hosts = self.hosts.locked();
        let slot = hosts
            .entry(host.to_string())
            .or_insert_with(|| Arc::new(Semaphore::new(self.settings.per_host)));
        Arc::clone(slot)
    }

    /// One request and its body.
    async fn attempt(&self, url: &Url, ask: &Ask<'_>) -> Result<Hop, HttpError> {
        let deadline = ask.deadline.get();
        let shown = strip_query(url.as_str());
        let timeout = self.settings.timeout;
        let mut request = self.client.get(url.clone());
        if let Some(etag) = &ask.known.etag {
            request = request.header(IF_NONE_MATCH, etag);
        }
        if let Some(when) = &ask.known.last_modified {
            request = request.header(IF_MODIFIED_SINCE, when);
        }
        let sent = tokio::time::timeout_at(deadline, request.send()).await;
        let response = match sent {
            Err(_) => {
                return Err(HttpError::Timeout {
                    url: shown,
                    timeout,
                });
            }
            Ok(Err(e)) => return Err(transport(&shown, &e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status == reqwest::StatusCode::NOT_MODIFIED && !ask.known.is_empty() {
            return Ok(Hop::Answer(Answer::NotModified));
        }
        if status.is_redirection() && status != reqwest::StatusCode::NOT_MODIFIED {
            let next = response
                .headers()
                .get(LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| url.join(l).ok());
            return match next {
                Some(next) => Ok(Hop::Redirect(next)),
                None => Err(HttpError::Refused {
                    url: shown,
                    status: status.as_u16(),
                    body: "a redirect without a usable Location".into(),
                }),
            };
        }
        if !status.is_success() {
            return Err(HttpError::Status {
                url: shown,
                status: status.as_u16(),
                body: String::new(),
                retry_after: parse_retry_after(response.headers()),
            });
        }
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v: &reqwest::header::HeaderValue| v.to_str().ok())
                .map(str::to_string)
        };
        let content_type = header(CONTENT_TYPE);
        let validators = Validators {
            etag: header(ETAG),
            last_modified: header(LAST_MODIFIED),
        };
        let (bytes, cut) = self.body(response, &shown, ask).await?;
        Ok(Hop::Answer(Answer::Body(Fetched {
            url: url.to_string(),
            content_type,
            bytes,
            cut,
            validators,
            deadline: ask.deadline.get().into_std(),
        })))
    }
}

impl Fetcher {
    /// A body read until its end, the deadline or the byte cap, whichever comes first: what
    /// arrived, and why it stops early when it does. Nothing arrived is an error.
    async fn body(
        &self,
        mut response: reqwest::Response,
        shown: &str,
        ask: &Ask<'_>,
    ) -> Result<(Vec<u8>, Option<String>), HttpError> {
        let timeout = self.settings.timeout;
        let cap = usize::try_from(ask.max_bytes).unwrap_or(usize::MAX);
        let mut bytes: Vec<u8> = Vec::new();
        let deadline = ask.deadline.get();
        loop {
            let cut = match tokio::time::timeout_at(deadline, response.chunk()).await {
                Err(_) if bytes.is_empty() => {
                    let url = shown.to_string();
                    return Err(HttpError::Timeout { url, timeout });
                }
                Err(_) => format!("the per-page timeout ({} ms)", timeout.as_millis()),
                Ok(Err(e)) if bytes.is_empty() => return Err(transport(shown, &e)),
                Ok(Err(_)) => "the connection dropped".to_string(),
                Ok(Ok(None)) => return Ok((bytes, None)),
                Ok(Ok(Some(chunk))) => {
                    let room = cap - bytes.len();
                    if chunk.len() <= room {
                        bytes.extend_from_slice(&chunk);
                        continue;
                    }
                    bytes.extend_from_slice(&chunk[..room]);
                    format!("the byte cap ({} bytes)", ask.max_bytes)
                }
            };
            return Ok((bytes, Some(cut)));
        }
    }
}

/// A request that failed before an answer. A name the resolver gave no address for (it does
/// not resolve, or only to refused addresses) is not asked again.
fn transport(shown: &str, e: &reqwest::Error) -> HttpError {
    let message = crate::text::error_chain(e);
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(at) = cause {
        if at.is::<Unresolved>() {
            return HttpError::Unresolvable {
                url: shown.to_string(),
                message,
            };
        }
        cause = at.source();
    }
    match e.is_connect() {
        true => HttpError::Connect {
            url: shown.to_string(),
            message,
        },
        false => HttpError::Transport {
            url: shown.to_string(),
            message,
        },
    }
}
