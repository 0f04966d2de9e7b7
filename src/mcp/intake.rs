//! The intake that every request of the HTTP transport passes before `rmcp`'s service (which checks
//! `Host` and `Origin` itself, from the allow-list `serve.rs` gives it):
//!
//! 1. the bearer token, when the server has one: 401 with `WWW-Authenticate: Bearer`;
//! 2. a POST declared JSON must be one JSON-RPC message: broken JSON is a parse error
//!    (-32700), JSON that is no message an invalid request (-32600), each with HTTP 400;
//! 3. an `initialize` that would open a session beyond `--max-sessions` is refused, 503;
//! 4. a request of a session marks it busy while its response is open ([`Sessions`]); a
//!    `tools/call` whose response the client drops before its end (a closed stream) stops the
//!    run it drives, and a `DELETE` that ends the session stops every run of its calls at
//!    once, as a cancellation does (saved, `interrupted`).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::Response;
use futures_util::Stream;
use rmcp::model::ClientJsonRpcMessage;
use serde_json::{Value, json};

use super::active::{Active, HttpCall};
use super::sessions::{Sessions, Visit};
use super::token::BearerToken;

/// The largest request body read: `rmcp`'s own limit.
const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// What the intake checks requests with.
pub struct Intake {
    pub token: Option<BearerToken>,
    pub sessions: Arc<Sessions>,
    pub active: Arc<Active>,
}

/// The JSON-RPC request a POST carries: its method and id.
struct Asked {
    method: String,
    id: Option<Value>,
}

/// The middleware: see the module's list.
pub async fn check(State(intake): State<Arc<Intake>>, request: Request, next: Next) -> Response {
    if let Some(token) = &intake.token
        && !token.admits(request.headers())
    {
        return unauthorized();
    }
    let (request, asked) = if request.method() == Method::POST && declares_json(&request) {
        match read_message(request).await {
            Ok(read) => read,
            Err(refused) => return refused,
        }
    } else {
        (request, None)
    };
    let session = request
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    match (session, asked) {
        (None, Some(asked)) if asked.method == "initialize" => {
            open_session(&intake, request, next, asked.id).await
        }
        (Some(session), asked) if intake.sessions.exists(&session).await => {
            in_session(&intake, session, request, next, asked).await
        }
        _ => next.run(request).await,
    }
}

/// An `initialize`: served when a session may be opened, the session then remembered.
async fn open_session(
    intake: &Intake,
    request: Request,
    next: Next,
    id: Option<Value>,
) -> Response {
    let Some(_place) = intake.sessions.place().await else {
        let max = intake.sessions.max();
        let idle = intake.sessions.idle().as_secs();
        let message = format!(
            "the server has its most sessions open ({max}, `--max-sessions`): end one (`DELETE /mcp`), or retry once an idle one expires (after {idle} s without a request)"
        );
        let mut response = rpc_error(StatusCode::SERVICE_UNAVAILABLE, id, -32000, &message);
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(idle.max(1)));
        return response;
    };
    let response = next.run(request).await;
    if let Some(id) = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
    {
        intake.sessions.opened(id);
    }
    response
}

/// A request of an existing session: the session busy while the response is open; a closed
/// stream or an ended session stops the runs it drives.
async fn in_session(
    intake: &Intake,
    session: String,
    request: Request,
    next: Next,
    asked: Option<Asked>,
) -> Response {
    let deleting = request.method() == Method::DELETE;
    let visit = intake.sessions.visit(&session);
    let response = next.run(request).await;
    if deleting && response.status().is_success() {
        intake.sessions.forget(&session);
        intake.active.stop_session(&session);
        return response;
    }
    // Only a call `rmcp` took (its answer streaming) has a run to stop.
    let call = asked
        .filter(|a| a.method == "tools/call" && response.status() == StatusCode::OK)
        .and_then(|a| a.id)
        .map(|id| HttpCall {
            session,
            request: HttpCall::key(&id),
        });
    let closed = call.map(|call| (call, Arc::clone(&intake.active)));
    response.map(|body| {
        Body::from_stream(Watched {
            inner: body.into_data_stream(),
            ended: false,
            closed,
            _visit: visit,
        })
    })
}

/// Whether the request says its body is JSON: only then is it read here (`rmcp` refuses the
/// others with 415, as it should).
fn declares_json(request: &Request) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
}

/// The body read and checked as one JSON-RPC message; the request rebuilt with it.
async fn read_message(request: Request) -> Result<(Request, Option<Asked>), Response> {
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            let message = format!("the request body is larger than {MAX_BODY_BYTES} bytes");
            rpc_error(StatusCode::PAYLOAD_TOO_LARGE, None, -32600, &message)
        })?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        let message = format!(
            "parse error: the body is not JSON (line {}, column {}): send one JSON-RPC message",
            e.line(),
            e.column()
        );
        rpc_error(StatusCode::BAD_REQUEST, None, -32700, &message)
    })?;
    let id = value.get("id").cloned();
    if serde_json::from_value::<ClientJsonRpcMessage>(value.clone()).is_err() {
        let message = "invalid request: the body is JSON but not one JSON-RPC 2.0 message: send an object with `\"jsonrpc\": \"2.0\"`, a `method`, its `params` and, for a request, an `id`";
        return Err(rpc_error(StatusCode::BAD_REQUEST, id, -32600, message));
    }
    let asked = value
        .get("method")
        .and_then(Value::as_str)
        .map(|method| Asked {
            method: method.to_string(),
            id,
        });
    Ok((Request::from_parts(parts, Body::from(bytes)), asked))
}

/// A JSON-RPC error as an HTTP response.
fn rpc_error(status: StatusCode, id: Option<Value>, code: i64, message: &str) -> Response {
    let body = json!({
        "jsonrpc": "2.0",
        "id": id.unwrap_or(Value::Null),
        "error": {"code": code, "message": message},
    });
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// 401: no token, or another.
fn unauthorized() -> Response {
    let mut response = Response::new(Body::from(
        "unauthorized: send the server's bearer token as `Authorization: Bearer TOKEN`\n",
    ));
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"researchflow mcp\""),
    );
    response
}

/// A response's body, watched: the session is busy while it is open, and a `tools/call`'s
/// run is stopped when the body is dropped before its end (the client closed the stream).
struct Watched<S> {
    inner: S,
    ended: bool,
    closed: Option<(HttpCall, Arc<Active>)>,
    _visit: Visit,
}

impl<S: Stream + Unpin> Stream for Watched<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let next = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(None) = next {
            self.ended = true;
        }
        next
    }
}

impl<S> Drop for Watched<S> {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let Some((call, active)) = &self.closed {
            tracing::info!(
                "the client closed the stream of request {} of session `{}`: stopping its run",
                call.request,
                call.session
            );
            active.stop_call(call);
        }
    }
}
