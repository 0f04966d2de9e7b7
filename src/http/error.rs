//! What can go wrong with one HTTP call, and the one function that says whether it is worth
//! retrying ([`HttpError::is_transient`]).
//!
//! Messages never carry a secret: every URL is stored as a [`BaseUrl`] displays it (no query,
//! no password: the HTTP layer is only ever given a `BaseUrl`), and response bodies are
//! redacted before they get here.

use std::time::Duration;

use crate::settings::BaseUrl;

/// One failed HTTP call (after its own attempt, before any retry decision).
#[derive(Debug, Clone, thiserror::Error)]
pub enum HttpError {
    #[error("`{url}` answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
        /// From `Retry-After` (seconds or HTTP date) or `retry-after-ms`.
        retry_after: Option<Duration>,
    },
    #[error("`{url}` did not answer within {timeout:?}")]
    Timeout { url: String, timeout: Duration },
    /// A streamed answer (or a server known to stream) sent nothing for `idle`
    /// (`timeouts.idleMs`): the connection was closed, which stops the server's generation.
    #[error("`{url}` sent nothing for {idle:?} (timeouts.idleMs) and was cut off")]
    Silent { url: String, idle: Duration },
    #[error("cannot reach `{url}`: {message}")]
    Connect { url: String, message: String },
    #[error("connection to `{url}` failed mid-request: {message}")]
    Transport { url: String, message: String },
    /// A stream that said `[DONE]` before any text or finish reason, or ended before its first
    /// event: no answer, though the same request asked whole is answered, or refused saying why
    /// (llama-cpp-python 0.3.x).
    #[error("`{url}` streamed no answer: the stream ended before any text or finish reason")]
    Hollow { url: String },
    #[error("`{url}` answered with a body that is not the expected JSON: {message}")]
    Decode { url: String, message: String },
    /// The address was refused before any connection (a page reader's guard against private
    /// addresses) or does not resolve: asking again gives the same answer.
    #[error("cannot read `{url}`: {message}")]
    Unresolvable { url: String, message: String },
    /// The server refused a part of the request it does not support (told by the caller from
    /// the body): the same request will fail again, so it is not retried.
    #[error("`{url}` refused the request (HTTP {status}): {body}")]
    Refused {
        url: String,
        status: u16,
        body: String,
    },
}

impl HttpError {
    /// 429 (unless the quota is exhausted), 408, 5xx, timeouts and connection errors.
    pub fn is_transient(&self) -> bool {
        match self {
            HttpError::Status { status, body, .. } => match status {
                429 => !is_insufficient_quota(body),
                408 | 500..=599 => true,
                _ => false,
            },
            HttpError::Timeout { .. }
            | HttpError::Silent { .. }
            | HttpError::Connect { .. }
            | HttpError::Transport { .. }
            | HttpError::Hollow { .. } => true,
            HttpError::Decode { .. }
            | HttpError::Refused { .. }
            | HttpError::Unresolvable { .. } => false,
        }
    }

    /// A 429 asking to slow down (not an exhausted quota): what closes an endpoint's gate.
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, HttpError::Status { status: 429, .. }) && self.is_transient()
    }

    /// The delay the server asked for, if any.
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            HttpError::Status { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// A short cause for logs and events: `HTTP 429`, `timeout`, `connect`.
    pub fn cause(&self) -> String {
        match self {
            HttpError::Status { status, .. } => format!("HTTP {status}"),
            HttpError::Timeout { .. } => "timeout".into(),
            HttpError::Silent { .. } => "silent".into(),
            HttpError::Connect { .. } => "connect".into(),
            HttpError::Transport { .. } => "connection dropped".into(),
            HttpError::Hollow { .. } => "hollow stream".into(),
            HttpError::Decode { .. } => "malformed answer".into(),
            HttpError::Refused { status, .. } => format!("HTTP {status} (refused)"),
            HttpError::Unresolvable { .. } => "unresolvable".into(),
        }
    }

    /// Builds the error for a reqwest failure at `url`, shown without query or password.
    pub fn from_reqwest(url: &BaseUrl, timeout: Duration, err: reqwest::Error) -> HttpError {
        let url = url.to_string();
        let (timed_out, connect) = (err.is_timeout(), err.is_connect());
        let decode = err.is_decode() && !cut_off(&err);
        let message = crate::text::error_chain(&err.without_url());
        if timed_out {
            HttpError::Timeout { url, timeout }
        } else if connect {
            HttpError::Connect { url, message }
        } else if decode {
            HttpError::Decode { url, message }
        } else {
            HttpError::Transport { url, message }
        }
    }
}

/// Whether `err`, though it says the body could not be decoded, is a body cut off in transit:
/// a connection closed mid-answer (a server that crashed or restarted) comes through the
/// decompression layer as a decoding error over a body error. Asking again can succeed.
fn cut_off(err: &reqwest::Error) -> bool {
    let mut source = std::error::Error::source(err);
    while let Some(e) = source {
        let body = e
            .downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_body);
        if body || e.is::<std::io::Error>() {
            return true;
        }
        source = e.source();
    }
    false
}

/// Why an endpoint cannot be used as configured: no retry, round or task can help, only the
/// user (a key, a URL, a model name, credit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unusable {
    /// Nothing listens at the address (refused, DNS), after the retries.
    Unreachable,
    /// 401 or 403.
    KeyRefused(u16),
    /// 404: no such model or path.
    NotFound,
    /// 429 `insufficient_quota`.
    QuotaExhausted,
}

impl HttpError {
    /// Whether this failure means the endpoint cannot be used as configured.
    pub fn unusable(&self) -> Option<Unusable> {
        match self {
            HttpError::Connect { .. } => Some(Unusable::Unreachable),
            HttpError::Status { status, body, .. } => match status {
                401 | 403 => Some(Unusable::KeyRefused(*status)),
                404 => Some(Unusable::NotFound),
                429 if is_insufficient_quota(body) => Some(Unusable::QuotaExhausted),
                _ => None,
            },
            _ => None,
        }
    }
}

/// A 400 or 413 whose body says the request does not fit in the model's context: OpenAI and
/// vLLM (`context_length_exceeded`, "maximum context length"), llama-cpp-python (the same words,
/// seen with SmolLM2's 8,192 tokens), llama.cpp's llama-server (`exceed_context_size_error`,
/// "exceeds the available context size"), others ("context window", "context size").
pub fn is_context_overflow(status: u16, body: &str) -> bool {
    if !matches!(status, 400 | 413) {
        return false;
    }
    let body = body.to_ascii_lowercase();
    [
        "context_length_exceeded",
        "context length",
        "exceed_context_size",
        "context size",
        "context window",
    ]
    .iter()
    .any(|needle| body.contains(needle))
}

/// What a context overflow's answer states, in tokens: the model's context and the prompt it
/// counted (either may be missing: not every server says both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct StatedContext {
    pub context: Option<u64>,
    pub prompt: Option<u64>,
}

/// The figures of a context overflow's `body`: llama.cpp's llama-server gives `n_ctx` and
/// `n_prompt_tokens`; OpenAI, vLLM and llama-cpp-python say "maximum context length is N
/// tokens" and the prompt as "M in the messages", "your messages resulted in M tokens" or
/// "your request has M input tokens".
/// Read as text, so that an error that quotes the body (a transcript's) reads the same.
pub fn stated_context(body: &str) -> StatedContext {
    let text = body.to_ascii_lowercase();
    StatedContext {
        context: number_after(&text, "\"n_ctx\":")
            .or_else(|| number_after(&text, "maximum context length is")),
        prompt: number_after(&text, "\"n_prompt_tokens\":")
            .or_else(|| number_before(&text, "in the messages"))
            .or_else(|| number_after(&text, "messages resulted in"))
            .or_else(|| number_after(&text, "request has")),
    }
}

/// The whole number that follows `phrase` in `text` (spaces between).
fn number_after(text: &str, phrase: &str) -> Option<u64> {
    let rest = text[text.find(phrase)? + phrase.len()..].trim_start();
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The whole number just before `phrase` in `text` (spaces between).
fn number_before(text: &str, phrase: &str) -> Option<u64> {
    let head = text[..text.find(phrase)?].trim_end();
    let start = head
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    head[start..].parse().ok()
}

/// A 429 whose body says the account has no quota left: retrying cannot help.
pub fn is_insufficient_quota(body: &str) -> bool {
    body.contains("insufficient_quota")
}

/// Parses `retry-after-ms` (milliseconds) or `Retry-After` (seconds or an HTTP date).
pub fn parse_retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let text = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = text("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let raw = text("retry-after")?;
    if let Ok(secs) = raw.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = chrono::DateTime::parse_from_rfc2822(raw).ok()?;
    let delta = when.with_timezone(&chrono::Utc) - chrono::Utc::now();
    Some(delta.to_std().unwrap_or(Duration::ZERO))
}

/// The URL as errors, logs and events show it: without query or fragment (a query may carry a
/// key) and with the password of `user:pass@` replaced by `***`. The one place that does both.
pub fn strip_query(url: &str) -> String {
    crate::settings::secret::redact_url(url.split(['?', '#']).next().unwrap_or(url))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::{HeaderMap, HeaderValue};

    fn status(code: u16, body: &str) -> HttpError {
        HttpError::Status {
            url: "u".into(),
            status: code,
            body: body.into(),
            retry_after: None,
        }
    }

    #[test]
    fn transient_statuses() {
        for code in [429, 408, 500, 502, 503, 504] {
            assert!(status(code, "").is_transient(), "{code}");
        }
        for code in [400, 401, 403, 404, 422] {
            assert!(!status(code, "").is_transient(), "{code}");
        }
        assert!(!status(429, r#"{"error":{"code":"insufficient_quota"}}"#).is_transient());
        assert!(
            HttpError::Timeout {
                url: "u".into(),
                timeout: Duration::ZERO
            }
            .is_transient()
        );
        assert!(
            !HttpError::Decode {
                url: "u".into(),
                message: String::new()
            }
            .is_transient()
        );
    }

    #[test]
    fn retry_after_forms() {
        let mut h = HeaderMap::new();
        assert_eq!(parse_retry_after(&h), None);
        h.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(parse_retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = HeaderMap::new();
        h.insert(
            "retry-after",
            HeaderValue::from_static("Wed, 21 Oct 2015 07:28:00 GMT"),
        );
        assert_eq!(
            parse_retry_after(&h),
            Some(Duration::ZERO),
            "a past date means now"
        );
        h.insert("retry-after", HeaderValue::from_static("soon"));
        assert_eq!(parse_retry_after(&h), None);
    }

    #[test]
    fn query_is_stripped() {
        assert_eq!(
            strip_query("http://h/search?q=x&api_key=k"),
            "http://h/search"
        );
    }

    #[test]
    fn url_password_is_redacted() {
        assert_eq!(
            strip_query("http://user:pa55word@h:8/v1/chat/completions?k=1"),
            "http://user:***@h:8/v1/chat/completions"
        );
    }

    #[test]
    fn context_overflows_are_told_from_other_refusals() {
        let llama_cpp_python = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, you requested 11617 tokens (9569 in the messages, 2048 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        let llama_server = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9569,"n_ctx":8192}}"#;
        assert!(is_context_overflow(400, llama_cpp_python));
        assert!(is_context_overflow(400, llama_server));
        assert!(!is_context_overflow(500, llama_server));
        assert!(!is_context_overflow(
            400,
            r#"{"error":{"message":"response_format is not supported"}}"#
        ));
    }

    #[test]
    fn the_context_and_the_prompt_are_read_as_each_server_states_them() {
        let stated = |context, prompt| StatedContext {
            context: Some(context),
            prompt: Some(prompt),
        };
        let llama_cpp_python = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 3081 tokens (3031 in the messages, 50 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(stated_context(llama_cpp_python), stated(2048, 3031));
        let llama_server = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9569,"n_ctx":8192}}"#;
        assert_eq!(stated_context(llama_server), stated(8192, 9569));
        let openai = r#"{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 130123 tokens. Please reduce the length of the messages.","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert_eq!(stated_context(openai), stated(128_000, 130_123));
        let vllm = r#"{"object":"error","message":"This model's maximum context length is 4096 tokens. However, your request has 5000 input tokens. Please reduce the length of the input messages.","type":"BadRequestError","code":400}"#;
        assert_eq!(stated_context(vllm), stated(4096, 5000));
        assert_eq!(
            stated_context(r#"{"error":{"message":"context window exceeded"}}"#),
            StatedContext::default()
        );
    }
}
