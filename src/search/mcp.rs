//! [`McpSearch`]: provider `mcp`, a tool of an MCP server (any software that speaks the Model
//! Context Protocol) as the search provider, through the official Rust SDK's client.
//!
//! The server is started on first use (`search.command`, its stdio the transport; its stderr
//! goes to ours) or reached over streamable HTTP (`search.url`), once, and its tools are listed
//! then; every query is one `tools/call` on that connection, concurrent queries sharing it.
//! Each call has the `timeouts.searchMs` budget (starting a server, which can take a while,
//! has [`CONNECT_TIMEOUT`], or `searchMs` when longer), and every attempt goes through the one
//! retry policy ([`with_retry`]): a server that cannot be started or reached, that
//! crashes or closes the connection mid-call, or that does not answer in time is a transient
//! failure, and the next attempt starts (or reaches) it again. A server that still cannot be
//! started or reached after the retries cannot be used as configured
//! ([`SearchError::Unusable`]), and neither can one without the configured tool. A tool's
//! error, or an answer without a usable result, is one failed search, named by server and
//! tool. Results are read by [`super::mcp_hits`] and kept only with a web URL, cleaned like
//! any web hit. This module never sends the LLM's key anywhere: the server gets the query, and a
//! server it starts gets the environment without the variables that hold researchflow's keys.

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
};
use rmcp::service::{RoleClient, RunningService, ServiceError};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};

use super::mcp_hits::results_of;
use super::{SearchError, SearchHit};
use crate::http::{HttpError, RetryObserver, Unusable, with_retry};
use crate::settings::secret::redact;
use crate::settings::{ApiKey, McpSearchSettings, McpServer, RetrySettings, Settings};
use crate::text::one_line;

/// The longest a server may take to start (or be reached) and list its tools, unless
/// `timeouts.searchMs` is longer: a Python or Node server's first start can take seconds.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(60);

/// The configured MCP search tool and its server's connection.
pub struct McpSearch {
    settings: McpSearchSettings,
    /// The server as messages name it, without secrets.
    label: String,
    http: reqwest::Client,
    max_results: u32,
    timeout: Duration,
    retry: RetrySettings,
    secrets: Vec<ApiKey>,
    connection: tokio::sync::Mutex<Option<Arc<Connection>>>,
}

/// A started (or reached) server and the names of its tools.
struct Connection {
    client: RunningService<RoleClient, ClientConfig>,
    tools: Vec<String>,
}

/// Why a call reached the server but got no answer to read: not worth a retry.
enum Refusal {
    /// The server has no tool of the configured name.
    NoTool(Vec<String>),
    /// The server answered the call with a protocol error.
    Error(String),
}

impl std::fmt::Debug for McpSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpSearch")
            .field("server", &self.label)
            .field("tool", &self.settings.tool)
            .finish()
    }
}

impl McpSearch {
    /// Provider `mcp` of the settings, when it is configured.
    pub fn new(http: reqwest::Client, settings: &Settings) -> Option<McpSearch> {
        let mcp = settings.search.mcp.clone()?;
        let secrets = settings.secrets();
        Some(McpSearch {
            label: redact(&mcp.server.label(), &secrets),
            settings: mcp,
            http,
            max_results: settings.search.max_results,
            timeout: settings.search_timeout,
            retry: settings.retry,
            secrets,
            connection: tokio::sync::Mutex::new(None),
        })
    }

    /// The server as messages name it: its command line or URL.
    pub fn server(&self) -> &str {
        &self.label
    }

    /// The configured tool.
    pub fn tool(&self) -> &str {
        &self.settings.tool
    }

    /// The names of the server's tools (connecting, with the retry policy).
    pub async fn tools(&self, observer: &dyn RetryObserver) -> Result<Vec<String>, SearchError> {
        let what = "mcp search server";
        with_retry(&self.retry, what, observer, || async {
            let connection = self.connection().await?;
            Ok(connection.tools.clone())
        })
        .await
        .map_err(|e| self.explain(e))
    }

    /// Runs one query and returns at most `search.maxResults` hits, retrying transient
    /// failures.
    pub async fn search(
        &self,
        query: &str,
        observer: &dyn RetryObserver,
    ) -> Result<Vec<SearchHit>, SearchError> {
        let answer = with_retry(&self.retry, "mcp search", observer, || self.attempt(query))
            .await
            .map_err(|e| self.explain(e))?;
        let result = answer.map_err(|refusal| self.refused(refusal))?;
        self.hits(&result)
    }

    /// One attempt: connect when needed, then call the tool within the search timeout.
    async fn attempt(&self, query: &str) -> Result<Result<CallToolResult, Refusal>, HttpError> {
        let connection = self.connection().await?;
        if !connection.tools.contains(&self.settings.tool) {
            return Ok(Err(Refusal::NoTool(connection.tools.clone())));
        }
        let arguments = self.settings.arguments_for(query, self.max_results);
        let params =
            CallToolRequestParams::new(self.settings.tool.clone()).with_arguments(arguments);
        let called = tokio::time::timeout(self.timeout, connection.client.call_tool(params)).await;
        let failure = match called {
            Ok(Ok(result)) => return Ok(Ok(result)),
            Ok(Err(ServiceError::McpError(e))) => {
                return Ok(Err(Refusal::Error(e.message.to_string())));
            }
            // A crash or a closed connection.
            Ok(Err(e)) => HttpError::Transport {
                url: self.label.clone(),
                message: self.redacted(&e.to_string()),
            },
            Err(_) => HttpError::Timeout {
                url: self.label.clone(),
                timeout: self.timeout,
            },
        };
        // The next attempt starts (or reaches) the server afresh; a hung one is stopped.
        self.forget(&connection).await;
        Err(failure)
    }

    /// The open connection, or a new one.
    async fn connection(&self) -> Result<Arc<Connection>, HttpError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref()
            && !connection.client.is_closed()
        {
            return Ok(Arc::clone(connection));
        }
        let bound = self.timeout.max(CONNECT_TIMEOUT);
        let connected = match tokio::time::timeout(bound, self.connect()).await {
            Ok(connected) => connected?,
            Err(_) => {
                return Err(HttpError::Timeout {
                    url: self.label.clone(),
                    timeout: bound,
                });
            }
        };
        let connection = Arc::new(connected);
        *slot = Some(Arc::clone(&connection));
        Ok(connection)
    }

    /// Drops `connection` unless another attempt already replaced it.
    async fn forget(&self, connection: &Arc<Connection>) {
        let mut slot = self.connection.lock().await;
        if slot.as_ref().is_some_and(|c| Arc::ptr_eq(c, connection)) {
            *slot = None;
        }
    }

    /// Starts or reaches the server, and lists its tools.
    async fn connect(&self) -> Result<Connection, HttpError> {
        let cannot = |e: &dyn std::fmt::Display| HttpError::Connect {
            url: self.label.clone(),
            message: self.redacted(&e.to_string()),
        };
        let info = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("researchflow", env!("CARGO_PKG_VERSION")),
        );
        let client = match &self.settings.server {
            McpServer::Command(argv) => {
                let mut command = tokio::process::Command::new(&argv[0]);
                command.args(&argv[1..]);
                // A server that hangs is abandoned when its call times out: rmcp kills it from
                // a task, which never runs once the process is ending, so the child would
                // outlive us (one per retry). Dropped, it is killed at once.
                command.kill_on_drop(true);
                for name in self.secret_variables() {
                    command.env_remove(name);
                }
                let transport = TokioChildProcess::new(command).map_err(|e| cannot(&e))?;
                info.serve(transport).await.map_err(|e| cannot(&e))?
            }
            McpServer::Url(url) => {
                let config = StreamableHttpClientTransportConfig::with_uri(url.address());
                let transport =
                    StreamableHttpClientTransport::with_client(self.http.clone(), config);
                info.serve(transport).await.map_err(|e| cannot(&e))?
            }
        };
        let tools = client.list_all_tools().await.map_err(|e| cannot(&e))?;
        tracing::debug!(
            "mcp search server `{}`: {} tool(s)",
            self.label,
            tools.len()
        );
        Ok(Connection {
            client,
            tools: tools.into_iter().map(|t| t.name.to_string()).collect(),
        })
    }

    /// The hits of a tool's answer, or why it has none to give.
    fn hits(&self, result: &CallToolResult) -> Result<Vec<SearchHit>, SearchError> {
        let texts: Vec<&str> = result
            .content
            .iter()
            .filter_map(|c| c.as_text())
            .map(|t| t.text.as_str())
            .collect();
        if result.is_error == Some(true) {
            return Err(self.tool_error(&format!(
                "answered with an error: {}",
                preview(&texts.join(" "))
            )));
        }
        let Some(found) = results_of(result.structured_content.as_ref(), &texts) else {
            return Err(self.tool_error(&format!(
                "answered with no list of results (`{}`): it must return results with a `url` (and `title`, `snippet`), as structured content or JSON text",
                preview(&texts.join(" "))
            )));
        };
        let count = found.len();
        let max = usize::try_from(self.max_results).unwrap_or(usize::MAX);
        let hits: Vec<SearchHit> = found
            .into_iter()
            .filter_map(|r| SearchHit::from_parts(r.title, r.url, r.snippet))
            .take(max)
            .collect();
        if count > 0 && hits.is_empty() {
            return Err(self.tool_error(&format!(
                "answered {count} result(s), none with an http(s) `url`"
            )));
        }
        Ok(hits)
    }

    fn tool_error(&self, what: &str) -> SearchError {
        SearchError::Tool {
            message: self.redacted(&format!(
                "the MCP tool `{}` of `{}` {what}",
                self.settings.tool, self.label
            )),
        }
    }

    /// A refusal as the error of this search, or of the configuration.
    fn refused(&self, refusal: Refusal) -> SearchError {
        match refusal {
            Refusal::NoTool(tools) => SearchError::Unusable {
                why: Unusable::NotFound,
                message: format!(
                    "the MCP search server `{}` has no tool `{}` (it has: {}): set `search.tool` to one of them",
                    self.label,
                    self.settings.tool,
                    if tools.is_empty() {
                        "none".to_string()
                    } else {
                        tools.join(", ")
                    }
                ),
            },
            Refusal::Error(message) => {
                self.tool_error(&format!("refused the call: {}", preview(&message)))
            }
        }
    }

    /// `err` as [`SearchError::Unusable`] when the server cannot be started or reached.
    fn explain(&self, err: HttpError) -> SearchError {
        if !matches!(err, HttpError::Connect { .. }) {
            return SearchError::Http(err);
        }
        let fix = match self.settings.server {
            McpServer::Command(_) => {
                "check `search.command`: the program must start an MCP server on its stdio"
            }
            McpServer::Url(_) => "check `search.url` and that the server runs",
        };
        SearchError::Unusable {
            why: Unusable::Unreachable,
            message: format!("cannot use the MCP search server: {err}: {fix}"),
        }
    }

    /// The environment variables that hold one of researchflow's secrets (the model's API
    /// keys, a web provider's key, a URL's password): a server started by `search.command`
    /// inherits every other variable, not these, since its search needs none of them.
    fn secret_variables(&self) -> Vec<std::ffi::OsString> {
        std::env::vars_os()
            .filter(|(_, value)| {
                value.to_str().is_some_and(|value| {
                    self.secrets
                        .iter()
                        .any(|secret| !secret.expose().is_empty() && secret.expose() == value)
                })
            })
            .map(|(name, _)| name)
            .collect()
    }

    fn redacted(&self, text: &str) -> String {
        redact(text, &self.secrets)
    }
}

/// A short one-line excerpt of a server's words, for a message.
fn preview(text: &str) -> String {
    one_line(text, 200)
}
