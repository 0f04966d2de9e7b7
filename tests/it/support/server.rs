//! The one HTTP server core that both mocks share. It accepts connections on 127.0.0.1 (port 0),
//! records every request ([`Recorded`]) in arrival order, counts how many are being handled at
//! once, asks the mock's route function what to do ([`Planned`]), waits the planned delay and
//! then answers, or carries out a [`Fault`]: an error status, a hang, or a dropped connection.
//! In one-at-a-time mode ([`Server::one_at_a_time`]) requests take turns, in arrival order,
//! from asking the route to answering, as a single-slot server such as llama-cpp-python does.
//!
//! A route may also answer with a body produced over time ([`Action::Stream`]): the core sends
//! the head, then spawns the mock's [`Producer`], which feeds the body through a [`BodySender`]
//! (a tokio channel of capacity 1). When the client goes, hyper drops the body, and the
//! producer learns it at once: a send fails and [`BodySender::closed`] resolves. In
//! one-at-a-time mode the turn moves into the producer's task and is released only when the
//! producer returns, so a streamed answer holds the single slot until its generation ends.
//! Producer tasks live in a `JoinSet` that dropping the [`Server`] aborts.
//!
//! Connections are served with hyper's low-level HTTP/1 connection so that a [`Fault::Drop`] can
//! close the socket without writing a single response byte: the service returns an error and
//! hyper abandons the connection. All connection tasks live in a `JoinSet` owned by the accept
//! task, which [`Server`]'s `Drop` aborts, so hanging requests never keep a test alive.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use futures_util::future::BoxFuture;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{OwnedMutexGuard, mpsc};
use tokio::task::{JoinHandle, JoinSet};

use super::fault::Fault;

/// One request as the mock received it.
#[derive(Clone, Debug)]
pub struct Recorded {
    /// 0-based arrival order across all paths.
    pub seq: usize,
    pub method: String,
    /// e.g. "/v1/chat/completions"
    pub path: String,
    /// Raw query string, "" if none.
    pub query: String,
    /// Names lower-cased, in the order received.
    pub headers: Vec<(String, String)>,
    /// Parsed JSON body, `Value::Null` if none or not JSON.
    pub body: serde_json::Value,
    pub raw_body: String,
    pub received_at: Instant,
    /// When the response (for a streamed body, its head) was handed to the connection (or the
    /// connection dropped); `None` while the request hangs or is still being delayed.
    pub responded_at: Option<Instant>,
}

impl Recorded {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first value of query parameter `name`, url-decoded (`+` is a space).
    pub fn query_param(&self, name: &str) -> Option<String> {
        query_pairs(&self.query)
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    /// All query parameters, url-decoded, in order.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        query_pairs(&self.query)
    }

    /// The chat `messages` array of an LLM request (empty if there is none).
    pub fn messages(&self) -> Vec<serde_json::Value> {
        self.body
            .get("messages")
            .and_then(|m| m.as_array())
            .cloned()
            .unwrap_or_default()
    }

    /// Content of the first message with role `system`.
    pub fn system_prompt(&self) -> Option<String> {
        self.messages()
            .iter()
            .find(|m| m["role"] == "system")
            .and_then(|m| message_text(&m["content"]))
    }

    /// Content of the LAST message with role `user`.
    pub fn user_prompt(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .and_then(|m| message_text(&m["content"]))
    }

    /// How long the request took to answer, if it was answered.
    pub fn latency(&self) -> Option<Duration> {
        self.responded_at
            .map(|t| t.saturating_duration_since(self.received_at))
    }
}

/// A message's content as text: a plain string, or the `text` parts of an array of content
/// parts joined together.
fn message_text(content: &serde_json::Value) -> Option<String> {
    match content {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                .collect(),
        ),
        _ => None,
    }
}

/// Splits a raw query string into url-decoded pairs.
pub fn query_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let (k, v) = part.split_once('=').unwrap_or((part, ""));
            (url_decode(k), url_decode(v))
        })
        .collect()
}

/// Decodes `%XX` escapes and `+` (form encoding); invalid escapes are kept as they are.
pub fn url_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(hi), Some(lo)) => {
                    out.push(hi << 4 | lo);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// What a mock wants done with one request.
pub enum Action {
    /// Send this response.
    Respond(Response),
    /// Send this head, then a body that a task produces over time.
    Stream(Streamed),
    /// Carry out this fault.
    Fault(Fault),
}

/// A response whose body is produced while it is being sent: `status` and `headers` go out
/// first, then whatever `produce` sends through its [`BodySender`]; the body ends when
/// `produce` returns (or drops the sender).
pub struct Streamed {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub produce: Producer,
}

/// Feeds a streamed body. It runs in its own task, which keeps the one-at-a-time turn until it
/// returns and is aborted when the server is dropped.
pub type Producer = Box<dyn FnOnce(BodySender) -> BoxFuture<'static, ()> + Send>;

/// The client is no longer reading: hyper dropped the body because the connection closed.
#[derive(Debug)]
pub struct ClientGone;

/// The producing end of a streamed body: a channel of capacity 1 into the response body, so a
/// producer runs at most one chunk ahead of the connection and learns at once that the client
/// left.
pub struct BodySender(mpsc::Sender<Result<Bytes, Aborted>>);

/// A body its server gave up on mid-way: the connection is closed without the body's end.
#[derive(Debug)]
pub struct Aborted;

impl std::fmt::Display for Aborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mock fault: the server died mid-body")
    }
}

impl std::error::Error for Aborted {}

impl BodySender {
    /// Sends one chunk of the body; fails once the client has gone.
    pub async fn send(&self, chunk: impl Into<Bytes>) -> Result<(), ClientGone> {
        self.0.send(Ok(chunk.into())).await.map_err(|_| ClientGone)
    }

    /// Closes the connection mid-body, as a server that crashes while answering: the client
    /// reads what was sent, then an end of file where the next chunk should be.
    pub async fn abort(&self) {
        // A client already gone has nothing left to cut.
        let _ = self.0.send(Err(Aborted)).await;
    }

    /// Resolves when the client has gone (at once if it already has).
    pub async fn closed(&self) {
        self.0.closed().await;
    }
}

/// A channel whose receiving end is a response body.
fn body_channel() -> (BodySender, Body) {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Aborted>>(1);
    let chunks = futures_util::stream::unfold(rx, |mut rx| async move {
        let chunk = rx.recv().await?;
        Some((chunk, rx))
    });
    (BodySender(tx), Body::from_stream(chunks))
}

/// A mock's decision for one request: wait `delay`, then carry out `action`.
pub struct Planned {
    pub delay: Duration,
    pub action: Action,
    /// Headers added to whatever the action answers (none to a dropped connection).
    pub headers: Vec<(String, String)>,
}

impl Planned {
    pub fn respond(response: impl IntoResponse) -> Planned {
        Planned {
            delay: Duration::ZERO,
            action: Action::Respond(response.into_response()),
            headers: Vec::new(),
        }
    }

    pub fn fault(fault: Fault) -> Planned {
        Planned {
            delay: Duration::ZERO,
            action: Action::Fault(fault),
            headers: Vec::new(),
        }
    }

    pub fn stream(streamed: Streamed) -> Planned {
        Planned {
            delay: Duration::ZERO,
            action: Action::Stream(streamed),
            headers: Vec::new(),
        }
    }

    pub fn delay(mut self, delay: Duration) -> Planned {
        self.delay = delay;
        self
    }

    pub fn with_headers(mut self, headers: Vec<(String, String)>) -> Planned {
        self.headers = headers;
        self
    }
}

/// A JSON response with the given status.
pub fn json_response(status: u16, value: &serde_json::Value) -> Response {
    raw_response(
        status,
        &[("content-type", "application/json")],
        &value.to_string(),
    )
}

/// A response with exactly this status, headers and body.
pub fn raw_response<K: AsRef<str>, V: AsRef<str>>(
    status: u16,
    headers: &[(K, V)],
    body: &str,
) -> Response {
    let mut response = Response::new(Body::from(body.to_owned()));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or_else(|_| panic!("invalid HTTP status {status}"));
    for (name, value) in headers {
        let name = HeaderName::from_bytes(name.as_ref().as_bytes())
            .unwrap_or_else(|_| panic!("invalid header name {:?}", name.as_ref()));
        let value = HeaderValue::from_str(value.as_ref())
            .unwrap_or_else(|_| panic!("invalid header value {:?}", value.as_ref()));
        response.headers_mut().append(name, value);
    }
    response
}

/// Decides what to do with each request; called once per request, in arrival order of
/// recording, before any delay.
pub type Route = Arc<dyn Fn(&Recorded) -> Planned + Send + Sync>;

struct Shared {
    route: Route,
    requests: Mutex<Vec<Recorded>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    one_at_a_time: AtomicBool,
    /// Held from routing to answering in one-at-a-time mode (for a streamed answer, until its
    /// producer returns); tokio's mutex is fair, so turns follow arrival order.
    turn: Arc<tokio::sync::Mutex<()>>,
    /// The producers of streamed bodies; `None` once the server is dropped, which aborts them.
    producers: Mutex<Option<JoinSet<()>>>,
}

/// Locks a mutex even if a panicking test thread poisoned it.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Counts a request as in flight for as long as it lives (also when its future is dropped).
struct InFlight<'a>(&'a Shared);

impl<'a> InFlight<'a> {
    fn enter(shared: &'a Shared) -> Self {
        let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        shared.max_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(shared)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The error a service returns to make hyper close the connection without answering.
#[derive(Debug)]
struct DropConnection;

impl std::fmt::Display for DropConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("mock fault: connection dropped")
    }
}

impl std::error::Error for DropConnection {}

impl Shared {
    async fn handle(&self, req: hyper::Request<Incoming>) -> Result<Response, DropConnection> {
        let _in_flight = InFlight::enter(self);
        let record = self.record(req).await;
        let turn = match self.one_at_a_time.load(Ordering::SeqCst) {
            true => Some(self.turn.clone().lock_owned().await),
            false => None,
        };
        let planned = (self.route)(&record);
        if !planned.delay.is_zero() {
            tokio::time::sleep(planned.delay).await;
        }
        let result = match planned.action {
            Action::Respond(response) => Ok(response),
            Action::Stream(streamed) => Ok(self.stream(streamed, turn)),
            Action::Fault(Fault::Status {
                status,
                headers,
                body,
            }) => Ok(raw_response(status, &headers, &body)),
            Action::Fault(Fault::Hang) => std::future::pending().await,
            Action::Fault(Fault::Drop) => Err(DropConnection),
        };
        let result = result.map(|mut response| {
            for (name, value) in &planned.headers {
                if let (Ok(name), Ok(value)) = (
                    HeaderName::from_bytes(name.as_bytes()),
                    HeaderValue::from_str(value),
                ) {
                    response.headers_mut().insert(name, value);
                }
            }
            response
        });
        lock(&self.requests)[record.seq].responded_at = Some(Instant::now());
        result
    }

    /// Reads the whole request and records it.
    async fn record(&self, req: hyper::Request<Incoming>) -> Recorded {
        let received_at = Instant::now();
        let (parts, body) = req.into_parts();
        let bytes = axum::body::to_bytes(Body::new(body), usize::MAX)
            .await
            .unwrap_or_default();
        let raw_body = String::from_utf8_lossy(&bytes).into_owned();
        let mut requests = lock(&self.requests);
        let record = Recorded {
            seq: requests.len(),
            method: parts.method.to_string(),
            path: parts.uri.path().to_owned(),
            query: parts.uri.query().unwrap_or("").to_owned(),
            headers: parts
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body: serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null),
            raw_body,
            received_at,
            responded_at: None,
        };
        requests.push(record.clone());
        record
    }

    /// The head of a streamed response, its body fed by the producer in a task of its own that
    /// holds the turn (if any) until it returns.
    fn stream(&self, streamed: Streamed, turn: Option<OwnedMutexGuard<()>>) -> Response {
        let (sender, body) = body_channel();
        let mut response = raw_response(streamed.status, &streamed.headers, "");
        *response.body_mut() = body;
        let produce = (streamed.produce)(sender);
        // A dropped server starts nothing: the sender is dropped and the body ends at once.
        if let Some(producers) = lock(&self.producers).as_mut() {
            while producers.try_join_next().is_some() {}
            producers.spawn(async move {
                produce.await;
                drop(turn);
            });
        }
        response
    }
}

/// A running server; dropping it stops accepting and aborts every connection, hanging or not,
/// and every producer of a streamed body.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    accept_task: JoinHandle<()>,
}

impl Server {
    /// Binds 127.0.0.1 on a free port and starts serving with `route`.
    pub async fn start(route: Route) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1:0");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared {
            route,
            requests: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            one_at_a_time: AtomicBool::new(false),
            turn: Arc::new(tokio::sync::Mutex::new(())),
            producers: Mutex::new(Some(JoinSet::new())),
        });
        let accept_task = tokio::spawn(accept_loop(listener, shared.clone()));
        Server {
            addr,
            shared,
            accept_task,
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// "http://127.0.0.1:PORT"
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.requests).clone()
    }

    /// From now on, answer one request at a time in arrival order; later requests wait their
    /// turn (they count as in flight while they wait).
    pub fn one_at_a_time(&self) {
        self.shared.one_at_a_time.store(true, Ordering::SeqCst);
    }

    /// The most requests that were being handled at the same moment.
    pub fn max_in_flight(&self) -> usize {
        self.shared.max_in_flight.load(Ordering::SeqCst)
    }

    /// Requests being handled right now (hanging ones included).
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept_task.abort();
        // Dropping the set aborts every producer still running.
        lock(&self.shared.producers).take();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    // Owned here so that aborting this task drops (and so aborts) every connection task.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = service_fn(move |req| {
                        let shared = shared.clone();
                        async move { shared.handle(req).await }
                    });
                    // An error here is a dropped client, a parse error, or a Fault::Drop.
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}
