//! The lines of a transcript, as written and read back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One line of `<out>.transcript.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Line {
    Session(SessionLine),
    Llm(Box<LlmLine>),
    Search(SearchLine),
    Page(PageLine),
}

/// The start of one invocation on the plan (a new run, or a resume).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionLine {
    /// 1 for the first invocation, then 2, ...
    pub session: u32,
    pub at: String,
    /// The researchflow version that recorded it.
    pub version: String,
    pub workflow_id: String,
    pub query: String,
    /// The most planning rounds the invocation allowed (a replay allows as many).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rounds: Option<u32>,
    /// The transcript this run replayed, if it was a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_of: Option<String>,
}

/// One attempt of one LLM call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LlmLine {
    pub session: u32,
    pub at: String,
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The call's number under its role and site, from 0.
    pub call: u32,
    /// The attempt's number within the call, from 1 (retries and renegotiations add one).
    pub attempt: u32,
    pub model: String,
    /// The chat-completions URL, without query or password.
    pub url: String,
    pub messages: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// The HTTP status, when the server answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// The answer's text, when the attempt gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Value>,
    /// Why the attempt failed, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `http`, `malformed`, `empty` or `unusable`, with `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_kind: Option<String>,
    pub latency_ms: u64,
    /// Served from a transcript, not asked of a server.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// One search call (every provider of the run, fused).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchLine {
    pub session: u32,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    pub call: u32,
    /// The providers, joined with `+` (`local+searxng`).
    pub provider: String,
    pub query: String,
    /// The hits, when the search worked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub latency_ms: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

/// One page read for a task: what the reader made of it, or why it was not read. Pages of a
/// task are read at once, so they are found by URL, not numbered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PageLine {
    pub session: u32,
    pub at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// As the search result gave it.
    pub url: String,
    /// The page as read (its final URL, kind, title, text and why it was cut), when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<Value>,
    /// Why it was not read, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub latency_ms: u64,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}
