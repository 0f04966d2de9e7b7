//! `researchflow mcp` driven without an SDK, for what an SDK would not send or would hide:
//! [`HttpServer`] (the server on streamable HTTP, its address read from its stderr),
//! [`Stdio`] (one client on its stdin and stdout, a request at a time) and [`Http`] (raw
//! POSTs and DELETEs of the streamable HTTP transport, their answers read as JSON-RPC
//! messages, SSE or not).

use std::ffi::OsString;
use std::path::Path;
use std::process::Stdio as Piped;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

use super::bin::isolated_vars;

/// The protocol version both raw clients speak: the one with sessions.
pub const PROTOCOL: &str = "2025-06-18";

/// A `tokio` command for the real binary, isolated like every run, in `dir`, with `env`.
fn command(args: &[OsString], dir: &Path, env: &[(&str, &str)]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_researchflow"));
    command.args(args).current_dir(dir).kill_on_drop(true);
    for var in isolated_vars() {
        command.env_remove(var);
    }
    command.env("NO_COLOR", "1");
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

/// The arguments of `researchflow mcp`: `extra` first, then `--root ROOT` and each flag of
/// `more` with its path.
pub fn server_args(extra: &[&str], root: &Path, more: &[(&str, &Path)]) -> Vec<OsString> {
    let mut args: Vec<OsString> = vec!["mcp".into()];
    args.extend(extra.iter().map(OsString::from));
    args.extend(["--root".into(), root.into()]);
    for (flag, path) in more {
        args.extend([OsString::from(flag), path.into()]);
    }
    args
}

/// The message of a tool call answered as an error (`isError`); panics with the answer
/// otherwise.
#[track_caller]
pub fn error_text(answer: &Value) -> &str {
    let result = &answer["result"];
    assert_eq!(result["isError"], true, "{answer:#}");
    result["content"][0]["text"].as_str().expect("a message")
}

/// `researchflow mcp --http` running, its address read from its stderr.
pub struct HttpServer {
    child: Child,
    pub url: String,
    log: tokio::task::JoinHandle<String>,
}

impl HttpServer {
    pub async fn start(args: Vec<OsString>, dir: &Path) -> HttpServer {
        HttpServer::start_with(args, dir, &[]).await
    }

    /// The server with `env` set (after the isolated variables were removed).
    pub async fn start_with(args: Vec<OsString>, dir: &Path, env: &[(&str, &str)]) -> HttpServer {
        let mut child = command(&args, dir, env)
            .stdin(Piped::null())
            .stdout(Piped::piped())
            .stderr(Piped::piped())
            .spawn()
            .expect("start the server");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut log = String::new();
        let url = loop {
            let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
                .await
                .expect("the server announces its address")
                .expect("read stderr")
                .unwrap_or_else(|| panic!("the server exited:\n{log}"));
            log.push_str(&line);
            log.push('\n');
            if let Some(at) = line.find("http://") {
                break line[at..].trim().to_string();
            }
        };
        assert!(url.ends_with("/mcp"), "{url}");
        let log = tokio::spawn(async move {
            let mut log = log;
            while let Ok(Some(line)) = lines.next_line().await {
                log.push_str(&line);
                log.push('\n');
            }
            log
        });
        HttpServer { child, url, log }
    }

    /// The URL on loopback: a server bound to `0.0.0.0` is reached at `127.0.0.1`.
    pub fn loopback_url(&self) -> String {
        self.url.replace("://0.0.0.0:", "://127.0.0.1:")
    }

    /// SIGTERM: the server exits 0 and has written nothing on stdout; its log.
    pub async fn stop(mut self) -> String {
        let pid = self.child.id().expect("running").to_string();
        std::process::Command::new("kill")
            .args(["-s", "TERM", &pid])
            .status()
            .expect("kill");
        let status = tokio::time::timeout(Duration::from_secs(30), self.child.wait())
            .await
            .expect("the server stops on SIGTERM")
            .expect("wait");
        let log = self.log.await.expect("log");
        assert!(status.success(), "{status}\n{log}");
        let mut stdout = String::new();
        if let Some(mut pipe) = self.child.stdout.take() {
            tokio::io::AsyncReadExt::read_to_string(&mut pipe, &mut stdout)
                .await
                .expect("stdout");
        }
        assert_eq!(stdout, "", "stdout carries nothing over HTTP");
        log
    }
}

/// One client of `researchflow mcp` on stdio, initialized, asking one request at a time.
pub struct Stdio {
    child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl Stdio {
    /// The server started in `dir` with `args` (after `mcp`) and `env`, and initialized.
    pub async fn start(args: Vec<OsString>, dir: &Path, env: &[(&str, &str)]) -> Stdio {
        let child = command(&args, dir, env)
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::piped())
            .spawn()
            .expect("start the server");
        Stdio::on(child).await
    }

    async fn on(mut child: Child) -> Stdio {
        let stdin = child.stdin.take().expect("stdin");
        let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let mut client = Stdio {
            child,
            stdin,
            lines,
            next_id: 1,
        };
        let init = client.request("initialize", initialize_params()).await;
        assert!(init.get("result").is_some(), "{init}");
        client
            .send_line(
                &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
            )
            .await;
        client
    }

    async fn send_line(&mut self, line: &str) {
        self.stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write to the server");
    }

    /// Sends `method` with `params`; the answer (the whole message: `result` or `error`),
    /// notifications before it skipped.
    pub async fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.send_line(&message.to_string()).await;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(60), self.lines.next_line())
                .await
                .expect("the server answers")
                .expect("read stdout")
                .expect("a line before the answer");
            let message: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not a protocol message on stdout: {e}: {line}"));
            if message["id"] == id {
                return message;
            }
        }
    }

    /// `tools/call` of `tool` with `arguments`: its answer, as [`Stdio::request`].
    pub async fn call(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))
            .await
    }

    /// Closes stdin; the server exits 0; its stderr.
    pub async fn close(self) -> String {
        drop(self.stdin);
        let ended = tokio::time::timeout(Duration::from_secs(30), self.child.wait_with_output())
            .await
            .expect("the server ends when stdin closes")
            .expect("wait");
        let log = String::from_utf8_lossy(&ended.stderr).into_owned();
        assert!(ended.status.success(), "{log}");
        log
    }
}

/// `initialize`'s params, as a client that speaks [`PROTOCOL`] sends them.
pub fn initialize_params() -> Value {
    json!({"protocolVersion": PROTOCOL, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}})
}

/// A raw client of the streamable HTTP transport: every request with the headers a client
/// sends (and `extra`), in its session once [`Http::initialize`] opened one.
pub struct Http {
    client: reqwest::Client,
    pub url: String,
    extra: Vec<(String, String)>,
    pub session: Option<String>,
}

impl Http {
    pub fn new(url: &str) -> Http {
        Http {
            client: super::http_client().build().expect("client"),
            url: url.to_string(),
            extra: Vec::new(),
            session: None,
        }
    }

    /// Every request also carries `name: value`.
    pub fn header(mut self, name: &str, value: &str) -> Http {
        self.extra.push((name.to_string(), value.to_string()));
        self
    }

    fn with_headers(&self, mut request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        request = request
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", PROTOCOL);
        if let Some(session) = &self.session {
            request = request.header("mcp-session-id", session);
        }
        for (name, value) in &self.extra {
            request = request.header(name, value);
        }
        request
    }

    /// POSTs `body` as it is (it may be broken JSON), as `application/json`.
    pub async fn post_raw(&self, body: &str) -> reqwest::Response {
        self.with_headers(self.client.post(&self.url))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .await
            .expect("POST")
    }

    /// POSTs one JSON-RPC message.
    pub async fn post(&self, message: &Value) -> reqwest::Response {
        self.post_raw(&message.to_string()).await
    }

    /// `initialize`: the response (its status, for a test that expects a refusal); on 200 the
    /// session is kept and `notifications/initialized` sent.
    pub async fn initialize(&mut self) -> reqwest::Response {
        let message = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": initialize_params()});
        let response = self.post(&message).await;
        if response.status() == 200 {
            let session = response
                .headers()
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .expect("a session id")
                .to_string();
            self.session = Some(session);
            let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
            let sent = self.post(&initialized).await;
            assert_eq!(sent.status(), 202, "notifications/initialized");
        }
        response
    }

    /// A request's answer: its messages up to the one with `id`, the last.
    pub async fn request(&self, id: i64, method: &str, params: Value) -> Vec<Value> {
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let mut response = self.post(&message).await;
        assert_eq!(response.status(), 200, "{method}");
        let mut stream = Messages::default();
        let mut seen = Vec::new();
        while let Some(message) = stream.next(&mut response).await {
            let done = message["id"] == id;
            seen.push(message);
            if done {
                break;
            }
        }
        seen
    }

    /// `DELETE /mcp` of the session.
    pub async fn delete(&self) -> reqwest::Response {
        self.with_headers(self.client.delete(&self.url))
            .send()
            .await
            .expect("DELETE")
    }
}

/// The JSON-RPC messages of a response, read as they come: the `data:` of each SSE event,
/// or the whole body when it is `application/json`.
#[derive(Default)]
pub struct Messages {
    buffer: String,
}

impl Messages {
    /// The next message; `None` when the body ends first.
    pub async fn next(&mut self, response: &mut reqwest::Response) -> Option<Value> {
        let is_json = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("application/json"));
        loop {
            if let Some(message) = self.take_event(is_json) {
                return Some(message);
            }
            let chunk = tokio::time::timeout(Duration::from_secs(60), response.chunk())
                .await
                .expect("the server sends")
                .expect("read the body");
            match chunk {
                Some(bytes) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                None if is_json && !self.buffer.trim().is_empty() => {
                    let body = std::mem::take(&mut self.buffer);
                    return Some(serde_json::from_str(&body).expect("a JSON body"));
                }
                None => return None,
            }
        }
    }

    fn take_event(&mut self, is_json: bool) -> Option<Value> {
        if is_json {
            return None;
        }
        loop {
            let normalized = self.buffer.replace("\r\n", "\n");
            let end = normalized.find("\n\n")?;
            let event = normalized[..end].to_string();
            self.buffer = normalized[end + 2..].to_string();
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            if !data.is_empty() {
                return Some(serde_json::from_str(&data).expect("an SSE event's data is JSON"));
            }
        }
    }
}
