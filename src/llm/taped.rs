//! The LLM client's side of the run's [`Tape`]: each attempt of a call written to the
//! transcript, and a replayed call's answer read back from one.

use crate::sync::Locked;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::answer::{ChatAnswer, LlmError};
use super::types::{ChatRequest, Message};
use crate::http::HttpError;
use crate::http::error::is_context_overflow;
use crate::transcript::{Line, LlmLine, Recorder, Site, Tape};
use crate::usage::Usage;

/// Who asks, as the transcript names it: the client's role, model and URL, and the call's
/// site.
pub(super) struct Caller<'a> {
    pub role: &'a str,
    pub model: &'a str,
    pub url: String,
    pub site: &'a Site,
}

/// One call being recorded: its number, and its attempts so far.
pub(super) struct CallTape<'a> {
    recorder: &'a Recorder,
    caller: Caller<'a>,
    call: u32,
    attempts: AtomicU32,
    /// How long the last attempt took.
    latency: Mutex<Duration>,
}

impl<'a> CallTape<'a> {
    /// The recording of the next call of `caller`, when the run records.
    pub fn start(tape: &'a Tape, caller: Caller<'a>) -> Option<CallTape<'a>> {
        let recorder = tape.recorder.as_deref()?;
        let call = tape.next_llm_call(caller.role, caller.site);
        Some(CallTape {
            recorder,
            caller,
            call,
            attempts: AtomicU32::new(0),
            latency: Mutex::new(Duration::ZERO),
        })
    }

    /// An attempt took `took`; a failed one is written now, a successful one once its answer
    /// is read ([`Self::answered`]).
    pub fn attempted<T>(
        &self,
        body: &ChatRequest<'_>,
        result: &Result<T, HttpError>,
        took: Duration,
    ) {
        self.attempts.fetch_add(1, Ordering::SeqCst);
        *self.latency.locked() = took;
        if let Err(err) = result {
            let mut line = self.line(body);
            line.status = status_of(err);
            line.error = Some(err.to_string());
            line.error_kind = Some("http".into());
            self.recorder.write(&Line::Llm(Box::new(line)));
        }
    }

    /// The last attempt's answer, read (or found not to be one).
    pub fn answered(&self, body: &ChatRequest<'_>, result: &Result<ChatAnswer, LlmError>) {
        let mut line = self.line(body);
        line.status = Some(200);
        fill(&mut line, result);
        self.recorder.write(&Line::Llm(Box::new(line)));
    }

    fn line(&self, body: &ChatRequest<'_>) -> LlmLine {
        let latency = *self.latency.locked();
        let mut line = base_line(
            self.recorder.session(),
            &self.caller,
            self.call,
            body.messages,
        );
        line.attempt = self.attempts.load(Ordering::SeqCst);
        line.response_format = body
            .response_format
            .as_ref()
            .and_then(|f| serde_json::to_value(f).ok());
        line.max_tokens = body.max_tokens.or(body.max_completion_tokens);
        line.latency_ms = u64::try_from(latency.as_millis()).unwrap_or(u64::MAX);
        line
    }
}

/// The answer to the next call of `caller` as the transcript holds it, if the run asks what
/// the recorded run asked (else [`LlmError::Diverged`]). Written to the run's own transcript
/// too, marked replayed.
///
/// Without a replay, a resumed run's interrupted task is answered the same way from its own
/// transcript when the call was answered before it was interrupted ([`Salvage`]); otherwise
/// `None`, and the call goes to the server.
///
/// [`Salvage`]: crate::transcript::Salvage
pub(super) fn replayed(
    tape: &Tape,
    caller: &Caller<'_>,
    messages: &[Message],
) -> Option<Result<ChatAnswer, LlmError>> {
    let asked: Vec<Value> = messages.iter().map(to_value).collect();
    let (call, result) = match (&tape.replayer, &tape.salvage) {
        (Some(replayer), _) => {
            let call = tape.next_llm_call(caller.role, caller.site);
            match replayer.llm(caller.role, caller.site, call, &asked) {
                Err(diverged) => return Some(Err(LlmError::Diverged(diverged.to_string()))),
                Ok(line) => (call, answer_of(line, &caller.url)),
            }
        }
        (None, Some(salvage)) => {
            let call = tape.peek_llm_call(caller.role, caller.site);
            let line = salvage.llm(caller.role, caller.site, call, &asked)?;
            tape.next_llm_call(caller.role, caller.site);
            tracing::info!(
                "{}: answered by the interrupted run's transcript, not asked again",
                caller
                    .site
                    .describe(&format!("{} LLM call", caller.role), call)
            );
            (call, answer_of(line, &caller.url))
        }
        (None, None) => return None,
    };
    if let Some(recorder) = tape.recorder.as_deref() {
        let mut line = base_line(recorder.session(), caller, call, messages);
        line.attempt = 1;
        line.replayed = true;
        fill(&mut line, &result);
        recorder.write(&Line::Llm(Box::new(line)));
    }
    Some(result)
}

/// A recorded attempt as the answer (or the error) the client returns.
fn answer_of(line: &LlmLine, url: &str) -> Result<ChatAnswer, LlmError> {
    match (&line.content, line.error_kind.as_deref()) {
        (Some(content), _) => Ok(ChatAnswer {
            content: content.clone(),
            usage: line
                .usage
                .clone()
                .and_then(|u| serde_json::from_value::<Usage>(u).ok())
                .unwrap_or_default(),
            finish_reason: line.finish_reason.clone(),
        }),
        (None, Some("empty")) => Err(LlmError::Empty {
            url: url.to_string(),
        }),
        (None, _) => Err(context_refusal(line, url).unwrap_or_else(|| {
            LlmError::Recorded(line.error.clone().unwrap_or_else(|| "no answer".into()))
        })),
    }
}

/// A recorded refusal for the context's length as the server gave it, so that the caller makes
/// its input smaller as it did when the call was made.
fn context_refusal(line: &LlmLine, url: &str) -> Option<LlmError> {
    let (error, status) = (line.error.as_deref()?, line.status?);
    is_context_overflow(status, error).then(|| {
        LlmError::Http(HttpError::Status {
            url: url.to_string(),
            status,
            body: error.to_string(),
            retry_after: None,
        })
    })
}

fn base_line(session: u32, caller: &Caller<'_>, call: u32, messages: &[Message]) -> LlmLine {
    LlmLine {
        session,
        at: crate::clock::now_millis(),
        role: caller.role.to_string(),
        node: caller.site.node.clone(),
        round: caller.site.round,
        call,
        attempt: 0,
        model: caller.model.to_string(),
        url: caller.url.clone(),
        messages: messages.iter().map(to_value).collect(),
        response_format: None,
        max_tokens: None,
        status: None,
        content: None,
        finish_reason: None,
        usage: None,
        error: None,
        error_kind: None,
        latency_ms: 0,
        replayed: false,
    }
}

/// The answer, or the error, into `line`.
fn fill(line: &mut LlmLine, result: &Result<ChatAnswer, LlmError>) {
    match result {
        Ok(answer) => {
            line.content = Some(answer.content.clone());
            line.finish_reason = answer.finish_reason.clone();
            line.usage = serde_json::to_value(answer.usage).ok();
        }
        Err(err) => {
            line.error = Some(err.to_string());
            line.error_kind = Some(
                match err {
                    LlmError::Empty { .. } => "empty",
                    LlmError::Malformed { .. } => "malformed",
                    LlmError::Unusable { .. } => "unusable",
                    _ => "http",
                }
                .into(),
            );
        }
    }
}

fn to_value(message: &Message) -> Value {
    serde_json::to_value(message).unwrap_or(Value::Null)
}

fn status_of(err: &HttpError) -> Option<u16> {
    match err {
        HttpError::Status { status, .. } | HttpError::Refused { status, .. } => Some(*status),
        _ => None,
    }
}
