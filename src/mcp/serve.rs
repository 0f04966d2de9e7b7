//! The two transports of `researchflow mcp`: stdio (the client started the server: stdin
//! and stdout carry the protocol and nothing else, logs go to stderr) and streamable HTTP at
//! `/mcp` (the official SDK's service in an axum router). Either ends when its client goes
//! (stdin closed) or on Ctrl-C / SIGTERM; then every run still in flight is stopped as Ctrl-C
//! stops a workflow (what finished saved, `interrupted`), and the server waits for each to
//! save before it exits.

use std::net::SocketAddr;

use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::setup::ResearchServer;
use crate::kernel::Shutdown;
use crate::output::eprint_line;

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

/// Serves the streamable HTTP transport at `http://ADDR/mcp` until `stop` resolves. Requests
/// must name a loopback host unless the address itself is not one (`--allow-remote`).
pub async fn http(server: ResearchServer, addr: SocketAddr, stop: Shutdown) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on `{addr}`: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("cannot listen on `{addr}`: {e}"))?;
    let sessions = CancellationToken::new();
    let mut config =
        StreamableHttpServerConfig::default().with_cancellation_token(sessions.child_token());
    if !addr.ip().is_loopback() {
        // Reached by a name of the operator's choosing: the Host check would refuse it.
        config = config.disable_allowed_hosts();
    }
    let handler = server.clone();
    let service = StreamableHttpService::new(
        move || Ok(handler.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    // Always shown, `-q` or not: a client needs the address, the port when ADDR gave 0.
    eprint_line(&format!(
        "researchflow mcp: serving MCP (streamable HTTP) at http://{local}/mcp"
    ));
    let active = std::sync::Arc::clone(&server.active);
    let served = axum::serve(listener, router)
        .with_graceful_shutdown(async move {
            stop.await;
            tracing::info!("stopping: runs in flight are saved first");
            sessions.cancel();
            active.stop_all().await;
        })
        .await;
    server.active.stop_all().await;
    served.map_err(|e| format!("the HTTP server failed: {e}"))
}
