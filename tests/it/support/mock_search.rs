//! Web-search APIs for tests, in the three shapes researchflow speaks: SearXNG
//! (`GET /search?q=..&format=json`), Tavily (`POST /search` with a JSON body) and Brave
//! (`GET /res/v1/web/search?q=..&count=..`). Normal answers are deterministic from the query:
//! result `i` of `n` has url `https://example.test/<slug>/<i>`, title `Result <i> for <q>` and
//! snippet `Snippet <i> about <q>.` (see [`result_url`], [`slug`]), unless a fixed list of
//! results ([`SearchHit`]) is set, which then answers every query (the pages of a
//! [`WebSite`](super::web_site::WebSite), say). Faults and raw bodies can be queued for the next
//! search request, an API key can be required, and a latency added. The shared core in
//! `server.rs` records requests; dropping the [`MockSearch`] shuts it down.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::fault::Fault;
use super::server::{Planned, Recorded, Route, Server, json_response, lock, raw_response};

/// Which search API the mock plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SearchKind {
    Searxng,
    Tavily,
    Brave,
}

/// Results served when the request asks for no particular number.
pub const DEFAULT_COUNT: usize = 3;
/// The most results one answer holds.
pub const MAX_COUNT: usize = 10;

/// The query's slug: lower-cased, each run of characters other than ASCII letters and digits
/// replaced by one '-', '-' trimmed from both ends, then cut to 40 characters. A query with no
/// letter or digit at all gets the slug "empty" (so its URLs keep a path segment).
pub fn slug(q: &str) -> String {
    let mut out = String::new();
    for c in q.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed: String = out.trim_matches('-').chars().take(40).collect();
    if trimmed.is_empty() {
        "empty".to_owned()
    } else {
        trimmed
    }
}

/// The URL of result `i` (1-based) for query `q`.
pub fn result_url(q: &str, i: usize) -> String {
    format!("https://example.test/{}/{i}", slug(q))
}

/// The title of result `i` for query `q`.
pub fn result_title(q: &str, i: usize) -> String {
    format!("Result {i} for {q}")
}

/// The snippet of result `i` for query `q`.
pub fn result_snippet(q: &str, i: usize) -> String {
    format!("Snippet {i} about {q}.")
}

/// One search result of a fixed list, served as it is for every query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit {
    pub title: String,
    pub url: String,
    pub snippet: String,
}

#[derive(Default)]
struct State {
    kind: Option<SearchKind>,
    /// When set, the results of every query instead of the ones made from it.
    fixed: Mutex<Option<Vec<SearchHit>>>,
    key: Mutex<Option<String>>,
    queue: Mutex<VecDeque<Planned>>,
    delay: Mutex<Duration>,
    returned_urls: Mutex<Vec<String>>,
}

fn error(status: u16, message: &str) -> Planned {
    Planned::respond(json_response(status, &json!({ "error": message })))
}

fn bearer(request: &Recorded) -> Option<&str> {
    request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

impl State {
    fn kind(&self) -> SearchKind {
        self.kind.expect("kind is set at start")
    }

    fn route(&self, request: &Recorded) -> Planned {
        let delay = *lock(&self.delay);
        self.route_inner(request).delay(delay)
    }

    fn route_inner(&self, request: &Recorded) -> Planned {
        let (method, path) = (request.method.as_str(), request.path.as_str());
        let endpoint = match self.kind() {
            SearchKind::Searxng => ("GET", "/search"),
            SearchKind::Tavily => ("POST", "/search"),
            SearchKind::Brave => ("GET", "/res/v1/web/search"),
        };
        if path != endpoint.1 {
            return error(404, &format!("mock search: no route for {method} {path}"));
        }
        if method != endpoint.0 {
            return error(405, &format!("mock search: {method} not allowed on {path}"));
        }
        // A queued fault or raw body is what the next search request gets, whatever it sent.
        if let Some(planned) = lock(&self.queue).pop_front() {
            return planned;
        }
        if let Some(denied) = self.check_key(request) {
            return denied;
        }
        match self.kind() {
            SearchKind::Searxng => self.searxng(request),
            SearchKind::Tavily => self.tavily(request),
            SearchKind::Brave => self.brave(request),
        }
    }

    /// `Some(401 answer)` when a key is required and the request does not carry it.
    fn check_key(&self, request: &Recorded) -> Option<Planned> {
        let key = lock(&self.key).clone()?;
        let key = key.as_str();
        let ok = match self.kind() {
            SearchKind::Searxng => {
                bearer(request) == Some(key)
                    || request.query_param("api_key").as_deref() == Some(key)
            }
            SearchKind::Tavily => {
                bearer(request) == Some(key) || request.body["api_key"].as_str() == Some(key)
            }
            SearchKind::Brave => request.header("x-subscription-token") == Some(key),
        };
        if ok {
            return None;
        }
        let body = match self.kind() {
            SearchKind::Searxng => json!({ "error": "Unauthorized" }),
            SearchKind::Tavily => {
                json!({ "detail": { "error": "Unauthorized: missing or invalid API key." } })
            }
            SearchKind::Brave => json!({
                "type": "ErrorResponse",
                "error": {
                    "code": "SUBSCRIPTION_TOKEN_INVALID",
                    "detail": "The provided subscription token is invalid.",
                    "status": 401,
                },
            }),
        };
        Some(Planned::respond(json_response(401, &body)))
    }

    /// The results for `q`, remembering their URLs: the first `n` of the fixed list (all of it
    /// when the request asks for no number), else results 1..=n (n defaults to
    /// [`DEFAULT_COUNT`]). Each is (url, title, snippet).
    fn results(&self, q: &str, n: Option<usize>) -> Vec<(String, String, String)> {
        let results: Vec<_> = match lock(&self.fixed).as_ref() {
            Some(hits) => hits
                .iter()
                .take(n.unwrap_or(usize::MAX))
                .map(|h| (h.url.clone(), h.title.clone(), h.snippet.clone()))
                .collect(),
            None => (1..=n.unwrap_or(DEFAULT_COUNT))
                .map(|i| (result_url(q, i), result_title(q, i), result_snippet(q, i)))
                .collect(),
        };
        let mut seen = lock(&self.returned_urls);
        for (url, _, _) in &results {
            if !seen.contains(url) {
                seen.push(url.clone());
            }
        }
        results
    }

    fn searxng(&self, request: &Recorded) -> Planned {
        if request.query_param("format").as_deref() != Some("json") {
            // What SearXNG does when the requested format is not enabled.
            return Planned::respond(raw_response(
                403,
                &[("content-type", "text/html; charset=utf-8")],
                "<!DOCTYPE html><html><body><h1>403 Forbidden</h1></body></html>",
            ));
        }
        let Some(q) = request.query_param("q").filter(|q| !q.is_empty()) else {
            return error(400, "mock searxng: missing q");
        };
        let results: Vec<Value> = self
            .results(&q, None)
            .into_iter()
            .map(|(url, title, content)| {
                json!({ "url": url, "title": title, "content": content, "engine": "mock" })
            })
            .collect();
        Planned::respond(json_response(
            200,
            &json!({ "query": q, "number_of_results": results.len(), "results": results }),
        ))
    }

    fn tavily(&self, request: &Recorded) -> Planned {
        let Some(q) = request.body["query"].as_str().filter(|q| !q.is_empty()) else {
            return Planned::respond(json_response(
                400,
                &json!({ "detail": { "error": "Missing required field: query" } }),
            ));
        };
        let n = request.body["max_results"]
            .as_u64()
            .map(|n| (n as usize).min(MAX_COUNT));
        let results: Vec<Value> = self
            .results(q, n)
            .into_iter()
            .map(|(url, title, content)| {
                json!({ "title": title, "url": url, "content": content, "score": 0.9 })
            })
            .collect();
        Planned::respond(json_response(
            200,
            &json!({ "query": q, "results": results, "response_time": 0.01 }),
        ))
    }

    fn brave(&self, request: &Recorded) -> Planned {
        let Some(q) = request.query_param("q").filter(|q| !q.is_empty()) else {
            return Planned::respond(json_response(
                422,
                &json!({
                    "type": "ErrorResponse",
                    "error": { "code": "VALIDATION", "detail": "q is required", "status": 422 },
                }),
            ));
        };
        let n = request
            .query_param("count")
            .and_then(|c| c.parse::<usize>().ok())
            .map(|n| n.min(MAX_COUNT));
        let results: Vec<Value> = self
            .results(&q, n)
            .into_iter()
            .map(|(url, title, description)| {
                json!({ "title": title, "url": url, "description": description })
            })
            .collect();
        Planned::respond(json_response(
            200,
            &json!({
                "type": "search",
                "query": { "original": q },
                "web": { "type": "search", "results": results },
            }),
        ))
    }
}

/// A search API on 127.0.0.1; dropping it shuts the server down.
pub struct MockSearch {
    server: Server,
    state: Arc<State>,
}

impl MockSearch {
    pub async fn start(kind: SearchKind) -> MockSearch {
        let state = Arc::new(State {
            kind: Some(kind),
            ..State::default()
        });
        let route_state = state.clone();
        let route: Route = Arc::new(move |request: &Recorded| route_state.route(request));
        MockSearch {
            server: Server::start(route).await,
            state,
        }
    }

    /// A mock that answers every query with `hits` (see [`MockSearch::set_results`]).
    pub async fn with_results(kind: SearchKind, hits: Vec<SearchHit>) -> MockSearch {
        let search = MockSearch::start(kind).await;
        search.set_results(hits);
        search
    }

    /// From now on every query gets `hits`, whatever it asks: all of them, or the first
    /// `max_results` (Tavily) or `count` (Brave) when the request gives that number.
    pub fn set_results(&self, hits: Vec<SearchHit>) {
        *lock(&self.state.fixed) = Some(hits);
    }

    /// "http://127.0.0.1:PORT" (no trailing slash).
    pub fn base_url(&self) -> String {
        self.server.url()
    }

    pub fn kind(&self) -> SearchKind {
        self.state.kind()
    }

    /// From now on a search request without `key` gets 401. SearXNG accepts
    /// `Authorization: Bearer KEY` or query `api_key`; Tavily `Authorization: Bearer KEY` or the
    /// JSON body field `api_key`; Brave the header `X-Subscription-Token`.
    pub fn require_key(&self, key: &str) {
        *lock(&self.state.key) = Some(key.to_owned());
    }

    /// The next search request (on the kind's endpoint) gets `fault` instead of results; queued
    /// faults and raw bodies are served first in first out, before the key is checked.
    pub fn push_fault(&self, fault: Fault) {
        lock(&self.state.queue).push_back(Planned::fault(fault));
    }

    /// The next search request gets this raw (maybe malformed) body with
    /// `content-type: application/json`.
    pub fn push_raw(&self, status: u16, body: &str) {
        lock(&self.state.queue).push_back(Planned::respond(raw_response(
            status,
            &[("content-type", "application/json")],
            body,
        )));
    }

    /// Latency added to every answer from now on (faults and errors included).
    pub fn set_delay(&self, d: Duration) {
        *lock(&self.state.delay) = d;
    }

    /// Every request so far, in arrival order (any path).
    pub fn requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    /// Every result URL served so far in a normal answer, in order of first appearance.
    pub fn returned_urls(&self) -> Vec<String> {
        lock(&self.state.returned_urls).clone()
    }

    /// The most requests that were being handled at the same moment.
    pub fn max_in_flight(&self) -> usize {
        self.server.max_in_flight()
    }

    /// Requests being handled right now.
    pub fn in_flight(&self) -> usize {
        self.server.in_flight()
    }
}
