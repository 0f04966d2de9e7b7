//! The two transports of `researchflow mcp`: stdio (the client started the server: stdin
//! and stdout carry the protocol and nothing else, logs go to stderr) and streamable HTTP at
//! `/mcp` (the official SDK's service in an axum router). Either ends when its client goes
//! (stdin closed) or on Ctrl-C / SIGTERM; then every run still in flight is stopped as Ctrl-C
//! stops a workflow (what finished saved, `interrupted`), and the server waits for each to
//! save before it exits.
//!
//! Over HTTP every request passes [`intake::check`](super::intake) first (the bearer token,
//! broken JSON, the session cap, closed streams), then `rmcp`'s checks of `Host` (loopback
//! names, unless the address is not loopback) and `Origin` (always: [`HttpOptions::origins`]).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::intake::{self, Intake};
use super::sessions::Sessions;
use super::setup::ResearchServer;
use super::token::BearerToken;
use crate::output::eprint_line;
use crate::run::Shutdown;

/// How the HTTP transport is served: `researchflow mcp --http`'s flags, checked.
#[derive(Debug, Clone)]
pub struct HttpOptions {
    pub addr: SocketAddr,
    /// The token every request must carry, when given.
    pub token: Option<BearerToken>,
    /// The `Origin`s a request may come from (`scheme://host:port`, `:*` for any port,
    /// `null`); a request without `Origin` is served.
    pub origins: Vec<String>,
    pub max_sessions: usize,
    pub session_idle: Duration,
}

/// Serves one client over stdin and stdout until it closes them or `stop` resolves.
pub async fn stdio(server: ResearchServer, mut stop: Shutdown) -> Result<(), String> {
    tracing::info!("serving MCP on stdio");
    let running = tokio::select! {
        started = server.clone().serve(rmcp::transport::stdio_pipes()) => started
            .map_err(|e| format!("the MCP client on stdio did not start a session: {e}"))?,
        () = &mut stop => return Ok(()),
    };
    let token = running.cancellation_token();
    tokio::select! {
        ended = running.waiting() => {
            if let Err(e) = ended {
                tracing::warn!("the stdio session ended abnormally: {e}");
            }
        }
        () = stop => {
            tracing::info!("stopping: runs in flight are saved first");
            token.cancel();
        }
    }
    server.active.stop_all().await;
    Ok(())
}

/// Serves the streamable HTTP transport at `http://ADDR/mcp` until `stop` resolves.
pub async fn http(
    server: ResearchServer,
    options: HttpOptions,
    stop: Shutdown,
) -> Result<(), String> {
    let addr = options.addr;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on `{addr}`: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on `{addr}`: {e}"))?;
    let sessions_stop = CancellationToken::new();
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(sessions_stop.child_token())
        .with_allowed_origins(options.origins.clone())
        .enforce_origin_validation();
    if !addr.ip().is_loopback() {
        // Reached by a name of the operator's choosing: the Host check would refuse it.
        config = config.disable_allowed_hosts();
    }
    let sessions = Arc::new(Sessions::new(options.max_sessions, options.session_idle));
    let handler = server.clone();
    let service =
        StreamableHttpService::new(move || Ok(handler.clone()), sessions.manager(), config);
    let state = Arc::new(Intake {
        token: options.token,
        sessions: Arc::clone(&sessions),
        active: Arc::clone(&server.active),
    });
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(state, intake::check));
    tokio::spawn(sessions.reap_until(Arc::clone(&server.active), sessions_stop.child_token()));
    // Always shown, `-q` or not: a client needs the address, the port when ADDR gave 0.
    eprint_line(&format!(
        "researchflow mcp: serving MCP (streamable HTTP) at http://{local}/mcp"
    ));
    let active = Arc::clone(&server.active);
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stop.await;
            tracing::info!("stopping: runs in flight are saved first");
            sessions_stop.cancel();
            active.stop_all().await;
        })
        .await;
    server.active.stop_all().await;
    served.map_err(|e| format!("the HTTP server failed: {e}"))
}
