//! A streamed chat answer (`"stream": true`): the server-sent events read as they arrive, a
//! silence longer than `timeouts.idleMs` cut, and the pieces assembled into the body a whole
//! answer would have had, so that everything after (the answer's reader, the transcript, the
//! token accounting) is the same for both.
//!
//! The events are parsed by `sse-stream`. Each `data:` event holds a `chat.completion.chunk`:
//! its `delta.content` is appended, its `finish_reason` and `usage` (sent last when
//! `stream_options.include_usage` was asked) kept; `[DONE]` ends the answer. A stream that
//! ends without `[DONE]` is complete if a finish reason came, and cut short (an error the
//! retry policy repeats) if none did; so is an event that is not JSON, or an error sent in the
//! middle of an answer. One whose `[DONE]` came before any text or finish reason, or that
//! ended before its first event, is [`Answered::Hollow`]: the caller asks for the answer
//! whole. Dropping the response closes the connection: a cut stops a server that watches its
//! client.
//!
//! A stream that breaks after its server wrote part of the answer is [`Answered::Cut`]: the
//! error, and what the server bills for it (its own count when its usage chunk came, else
//! the prompt's estimate and the pieces, marked as estimated), which the caller counts.

use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::StreamExt;
use serde_json::{Value, json};
use sse_stream::SseStream;

use crate::http::HttpError;
use crate::http::send::{MAX_BODY_BYTES, read_body, too_large};
use crate::settings::{ApiKey, BaseUrl};
use crate::usage::Usage;

/// How far a streamed answer has come, as each piece arrives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// The pieces of text (or reasoning) received so far: a server sends about one token each.
    pub tokens: u64,
    /// From the request to the first piece.
    pub first_token: Option<Duration>,
    /// From the request to now.
    pub elapsed: Duration,
}

impl Progress {
    /// Tokens a second since the first one (`None` before the second token).
    pub fn tokens_per_second(&self) -> Option<f64> {
        let first = self.first_token?;
        let writing = self.elapsed.checked_sub(first)?.as_secs_f64();
        (self.tokens > 1 && writing > 0.0).then(|| (self.tokens - 1) as f64 / writing)
    }
}

/// How a streamed request was sent.
#[derive(Debug, Clone, Copy)]
pub struct Asked {
    pub sent: Instant,
    /// `timeouts.idleMs`: no byte for this long is [`HttpError::Silent`].
    pub idle: Duration,
    /// `timeouts.llmMs`, the request's whole timeout (for its error).
    pub total: Duration,
    /// The prompt's tokens as estimated before sending: counted when the server reports none.
    pub prompt_tokens: u64,
}

/// What a request asking for a stream got back.
#[derive(Debug)]
pub enum Answered {
    /// A stream: the body of the equivalent whole answer, and how the stream went.
    Streamed(String, Progress),
    /// A whole answer: the server does not stream.
    Whole(String),
    /// A stream that said `[DONE]` before any text or finish reason, or ended before its first
    /// event: no answer at all. llama-cpp-python 0.3.x did the first for some `json_object`
    /// requests with a schema every time (and answered the same request asked whole), and the
    /// second for a prompt longer than its context (asked whole, it says so in a 400).
    Hollow,
    /// A stream that broke (`error`, which the retry policy judges) after its server had
    /// written part of the answer, and what that cost.
    Cut { error: HttpError, spent: Spent },
}

/// The tokens a streamed attempt cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Spent {
    pub usage: Usage,
    /// The server sent no count: the prompt as estimated before sending, the pieces received.
    pub estimated: bool,
}

/// Sends `request` (for `url`, with `"stream": true` in its body) and reads its answer: a
/// stream as it comes, anything else whole, errors as [`read_body`] makes them (redacted of
/// `secrets`). With `silent_head`, the wait for the answer's head is cut at `asked.idle` as
/// well (for a server known to stream, which sends its head before it writes).
pub async fn send_streamed(
    request: reqwest::RequestBuilder,
    url: &BaseUrl,
    asked: Asked,
    silent_head: bool,
    secrets: &[ApiKey],
    watch: &(dyn Fn(&Progress) + Sync),
) -> Result<Answered, HttpError> {
    let send = request.timeout(asked.total).send();
    let head = match silent_head {
        true => tokio::time::timeout(asked.idle, send)
            .await
            .map_err(|_| HttpError::Silent {
                url: url.to_string(),
                idle: asked.idle,
            })?,
        false => send.await,
    };
    let response = head.map_err(|e| HttpError::from_reqwest(url, asked.total, e))?;
    crate::http::announced::heard(response.headers());
    let is_stream = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"));
    if !response.status().is_success() || !is_stream {
        return read_body(response, url, asked.total, secrets)
            .await
            .map(Answered::Whole);
    }
    read_stream(response, url, asked, watch).await
}

/// Reads the events of `response` (a 2xx `text/event-stream` answer from `url`), calling
/// `watch` after each piece, and returns the body of the equivalent whole answer and how the
/// stream went.
async fn read_stream(
    response: reqwest::Response,
    url: &BaseUrl,
    asked: Asked,
    watch: &(dyn Fn(&Progress) + Sync),
) -> Result<Answered, HttpError> {
    let (sent, idle) = (asked.sent, asked.idle);
    let events = SseStream::from_bytes_stream(chunks(response, url.clone(), idle, asked.total));
    let mut events = std::pin::pin!(events);
    let mut answer = Assembly::default();
    let mut progress = Progress {
        tokens: 0,
        first_token: None,
        elapsed: Duration::ZERO,
    };
    let mut heard = false;
    let read: Result<(), HttpError> = async {
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| stream_error(url, e))?;
            let Some(data) = event.data else {
                continue;
            };
            heard = true;
            if data.trim() == "[DONE]" {
                answer.done = true;
                break;
            }
            let pieces = answer
                .add(&data)
                .map_err(|message| cut_short(url, &message))?;
            if pieces > 0 {
                progress.elapsed = sent.elapsed();
                progress.first_token.get_or_insert(progress.elapsed);
                progress.tokens += pieces;
                watch(&progress);
            }
        }
        Ok(())
    }
    .await;
    progress.elapsed = sent.elapsed();
    if read.is_ok() && (answer.hollow() || !heard) {
        return Ok(Answered::Hollow);
    }
    let spent = answer.spent(asked.prompt_tokens, progress.tokens);
    match read.and_then(|()| answer.whole(spent.usage).map_err(|m| cut_short(url, &m))) {
        Ok(body) => Ok(Answered::Streamed(body, progress)),
        // Billed: the server counted it, or wrote some of the answer.
        Err(error) if spent.usage.completion_tokens > 0 || !spent.estimated => {
            Ok(Answered::Cut { error, spent })
        }
        Err(error) => Err(error),
    }
}

/// The body's bytes as they come, each wait for the next one bounded by `idle`, the whole
/// bounded by [`MAX_BODY_BYTES`]; ends at the first error.
fn chunks(
    response: reqwest::Response,
    url: BaseUrl,
    idle: Duration,
    total: Duration,
) -> impl futures_util::Stream<Item = Result<Bytes, HttpError>> {
    let start = (Some(response), 0usize);
    futures_util::stream::unfold(start, move |(response, read)| {
        let url = url.clone();
        async move {
            let mut response = response?;
            let next = match tokio::time::timeout(idle, response.chunk()).await {
                Err(_) => Err(HttpError::Silent {
                    url: url.to_string(),
                    idle,
                }),
                Ok(Ok(None)) => return None,
                Ok(Ok(Some(bytes))) if read + bytes.len() > MAX_BODY_BYTES => Err(too_large(&url)),
                Ok(Ok(Some(bytes))) => Ok(bytes),
                Ok(Err(e)) => Err(HttpError::from_reqwest(&url, total, e)),
            };
            match next {
                Ok(bytes) => {
                    let read = read + bytes.len();
                    Some((Ok(bytes), (Some(response), read)))
                }
                // Dropping the response here closes the connection at once.
                Err(err) => Some((Err(err), (None, read))),
            }
        }
    })
}

/// The error of the event stream: the body's own error as it was, a parse error as a stream
/// cut short.
fn stream_error(url: &BaseUrl, err: sse_stream::Error) -> HttpError {
    match err {
        sse_stream::Error::Body(body) => match body.downcast::<HttpError>() {
            Ok(http) => *http,
            Err(other) => cut_short(url, &other.to_string()),
        },
        other => cut_short(url, &format!("its events cannot be read ({other})")),
    }
}

/// A stream that ended or broke before its answer did: the connection's failure, which the
/// retry policy repeats.
fn cut_short(url: &BaseUrl, message: &str) -> HttpError {
    HttpError::Transport {
        url: url.to_string(),
        message: format!("the streamed answer was cut short: {message}"),
    }
}

/// The answer as its pieces come.
#[derive(Debug, Default)]
struct Assembly {
    content: String,
    finish_reason: Option<String>,
    usage: Option<Value>,
    done: bool,
}

impl Assembly {
    /// Takes one event's data; returns how many pieces of text it held (0 or 1).
    fn add(&mut self, data: &str) -> Result<u64, String> {
        let chunk: Value = serde_json::from_str(data).map_err(|e| {
            format!(
                "an event is not JSON ({e}): {}",
                crate::text::one_line(data, 120)
            )
        })?;
        if let Some(error) = chunk.get("error").filter(|e| !e.is_null()) {
            let message = error
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| error.to_string(), str::to_string);
            return Err(format!(
                "the server sent an error: {}",
                crate::text::one_line(&message, 300)
            ));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| !u.is_null()) {
            self.usage = Some(usage.clone());
        }
        let Some(choice) = chunk.pointer("/choices/0") else {
            return Ok(0);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        let delta = |key: &str| {
            choice
                .pointer(&format!("/delta/{key}"))
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
        };
        let mut pieces = 0;
        if let Some(text) = delta("content") {
            self.content.push_str(text);
            pieces = 1;
        }
        // A reasoning model's thinking is written, not answered: it counts as progress.
        if delta("reasoning_content")
            .or_else(|| delta("reasoning"))
            .is_some()
        {
            pieces = 1;
        }
        Ok(pieces)
    }

    /// Whether the stream said `[DONE]` before any text or finish reason ([`Answered::Hollow`]).
    fn hollow(&self) -> bool {
        self.done && self.finish_reason.is_none() && self.content.is_empty()
    }

    /// What the stream cost: the server's count when its usage chunk came (and reads as one),
    /// else `prompt_tokens` (estimated before sending) and the `pieces` received, estimated.
    fn spent(&self, prompt_tokens: u64, pieces: u64) -> Spent {
        let told = self.usage.as_ref();
        match told.and_then(|u| serde_json::from_value::<Usage>(u.clone()).ok()) {
            Some(usage) => Spent {
                usage,
                estimated: false,
            },
            None => Spent {
                usage: Usage {
                    prompt_tokens,
                    completion_tokens: pieces,
                    total_tokens: prompt_tokens + pieces,
                },
                estimated: true,
            },
        }
    }

    /// The body of the whole answer, with `usage` ([`Assembly::spent`]) unless the server sent
    /// its own; an error when the stream ended before the answer did.
    fn whole(&self, usage: Usage) -> Result<String, String> {
        if !self.done && self.finish_reason.is_none() {
            return Err("it ended with neither a finish reason nor [DONE]".into());
        }
        let mut body = json!({
            "choices": [{
                "message": {"role": "assistant", "content": self.content},
                "finish_reason": self.finish_reason,
            }],
        });
        body["usage"] = match &self.usage {
            Some(told) => told.clone(),
            None => json!(usage),
        };
        Ok(body.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(delta: Value, finish: Option<&str>) -> String {
        json!({"object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
        .to_string()
    }

    #[test]
    fn the_pieces_make_the_answer_a_whole_call_returns() {
        let mut a = Assembly::default();
        assert_eq!(
            a.add(&chunk(json!({"role": "assistant", "content": ""}), None)),
            Ok(0)
        );
        assert_eq!(a.add(&chunk(json!({"content": "{\"a\": "}), None)), Ok(1));
        assert_eq!(a.add(&chunk(json!({"content": "\"é\"}"}), None)), Ok(1));
        assert_eq!(a.add(&chunk(json!({}), Some("stop"))), Ok(0));
        let usage = json!({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}});
        assert_eq!(a.add(&usage.to_string()), Ok(0));
        let spent = a.spent(9, 2);
        let usage = spent.usage;
        assert_eq!(
            (usage.total_tokens, spent.estimated),
            (7, false),
            "the server's count"
        );
        let body: Value = serde_json::from_str(&a.whole(usage).expect("whole")).expect("json");
        assert_eq!(body["choices"][0]["message"]["content"], "{\"a\": \"é\"}");
        assert_eq!(body["choices"][0]["finish_reason"], "stop");
        assert_eq!(body["usage"]["completion_tokens"], 2);
    }

    #[test]
    fn a_stream_without_its_end_or_with_a_broken_event_is_cut_short() {
        let mut a = Assembly::default();
        a.add(&chunk(json!({"content": "half"}), None))
            .expect("piece");
        let spent = a.spent(5, 1);
        assert!(a.whole(spent.usage).is_err(), "no finish reason, no [DONE]");
        let usage = spent.usage;
        assert_eq!((usage.completion_tokens, usage.total_tokens), (1, 6));
        assert!(
            spent.estimated,
            "no count came: the pieces and the estimate"
        );
        let mut a = Assembly::default();
        a.add(&chunk(json!({"role": "assistant"}), None))
            .expect("role");
        assert!(!a.hollow(), "not ended yet");
        a.done = true;
        assert!(a.hollow(), "[DONE] alone ends no answer");
        let mut a = Assembly::default();
        a.add(&chunk(json!({"content": "all"}), Some("length")))
            .expect("piece");
        let body: Value = serde_json::from_str(
            &a.whole(a.spent(9, 1).usage)
                .expect("a finish reason ends it"),
        )
        .expect("json");
        assert_eq!(
            body["usage"],
            json!({"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}),
            "no usage sent: the pieces and the estimate count"
        );
        let mut a = Assembly::default();
        let err = a.add("{\"choices\": [{\"delta\"").expect_err("not JSON");
        assert!(err.contains("not JSON"), "{err}");
        let err = a
            .add(r#"{"error": {"message": "overloaded", "type": "server_error"}}"#)
            .expect_err("an error event");
        assert!(err.contains("overloaded"), "{err}");
    }

    #[test]
    fn the_rate_counts_from_the_first_token() {
        let p = Progress {
            tokens: 11,
            first_token: Some(Duration::from_secs(2)),
            elapsed: Duration::from_secs(4),
        };
        assert_eq!(p.tokens_per_second(), Some(5.0));
        let one = Progress { tokens: 1, ..p };
        assert_eq!(one.tokens_per_second(), None);
    }
}
