//! What each endpoint accepts, learnt from its refusals and kept for the rest of the run.
//!
//! Servers differ in what they take: the form of structured output (`json_schema`, then
//! `json_object` with the schema attached, then plain `json_object`, then the prompt alone),
//! the name of the token limit (`max_tokens`, or `max_completion_tokens` for OpenAI's
//! reasoning models, or none), whether a temperature may be set, and whether answers are
//! streamed (`"stream": true`, with `stream_options.include_usage` for the token counts): a
//! server that refuses `stream_options` is asked without it, one that refuses `stream` or
//! answers a streamed request with a whole JSON answer is asked for whole answers from then
//! on. A refusal is an answer of
//! 400 or more (400, 422 and 500 are all seen in the wild) whose body names the part of the
//! request it refuses. It is never retried as a transient error: the next form is tried at
//! once, and every client of the process then starts from it ([`Negotiator`] is shared).

use crate::sync::Locked;
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use serde::Serialize;

use crate::settings::StructuredOutput;

/// A way of asking for JSON, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum Form {
    JsonSchema,
    JsonObjectSchema,
    JsonObject,
    None,
}

impl Form {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    fn next(self) -> Option<Form> {
        match self {
            Form::JsonSchema => Some(Form::JsonObjectSchema),
            Form::JsonObjectSchema => Some(Form::JsonObject),
            Form::JsonObject => Some(Form::None),
            Form::None => None,
        }
    }

    fn first(start: StructuredOutput) -> Form {
        match start {
            StructuredOutput::Auto | StructuredOutput::JsonSchema => Form::JsonSchema,
            StructuredOutput::JsonObjectSchema => Form::JsonObjectSchema,
            StructuredOutput::JsonObject => Form::JsonObject,
            StructuredOutput::None => Form::None,
        }
    }
}

/// How the token limit is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum TokenParam {
    MaxTokens,
    MaxCompletionTokens,
    /// The endpoint takes neither: answers are bounded by the timeout alone.
    None,
}

impl TokenParam {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// What an endpoint is asked with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    pub form: Form,
    pub tokens: TokenParam,
    /// Whether a configured temperature is sent.
    pub temperature: bool,
    /// Whether the answer is asked for as a stream (`"stream": true`).
    pub stream: bool,
    /// Whether a stream asks for its token counts (`stream_options.include_usage`).
    pub stream_usage: bool,
}

/// What one request carried of the negotiable parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sent {
    /// `None` when the request asked for no structured output (free text).
    pub form: Option<Form>,
    pub tokens: TokenParam,
    pub temperature: bool,
    pub stream: bool,
    pub stream_usage: bool,
}

/// The part of a request a server refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    Format,
    Tokens,
    Temperature,
    /// `stream_options`.
    StreamOptions,
    /// `stream`, refused, or ignored (a whole answer came back).
    Stream,
}

impl Refusal {
    pub fn as_str(self) -> &'static str {
        match self {
            Refusal::Format => "response_format",
            Refusal::Tokens => "token limit",
            Refusal::Temperature => "temperature",
            Refusal::StreamOptions => "stream_options",
            Refusal::Stream => "stream",
        }
    }
}

/// The negotiable part of `sent` that an error answer refuses, if any. Statuses that mean
/// something else (auth, unknown model, rate limits, timeouts, size) are never refusals.
pub fn classify(status: u16, body: &str, sent: Sent) -> Option<Refusal> {
    if status < 400 || matches!(status, 401 | 403 | 404 | 408 | 413 | 429) {
        return None;
    }
    let body = body.to_ascii_lowercase();
    let names = |w: &str| body.contains(w);
    let format_sent = matches!(sent.form, Some(f) if f != Form::None);
    if format_sent && (names("response_format") || names("json_schema") || names("schema")) {
        return Some(Refusal::Format);
    }
    match sent.tokens {
        TokenParam::MaxTokens if names("max_tokens") => return Some(Refusal::Tokens),
        TokenParam::MaxCompletionTokens if names("max_completion_tokens") => {
            return Some(Refusal::Tokens);
        }
        _ => {}
    }
    if sent.stream_usage && names("stream_options") {
        return Some(Refusal::StreamOptions);
    }
    if sent.stream && names_word(&body, "stream") {
        return Some(Refusal::Stream);
    }
    (sent.temperature && names("temperature")).then_some(Refusal::Temperature)
}

/// Whether `word` stands in `text` as a word of its own (`"stream"`, `'stream'`, `stream:`),
/// not inside another one (`upstream`, `stream_options`, `streaming`).
fn names_word(text: &str, word: &str) -> bool {
    let part = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(part) && !after.is_some_and(part)
    })
}

impl Capabilities {
    /// The capabilities after `refusal`; `None` when nothing is left to give up.
    fn after(self, refusal: Refusal) -> Option<Capabilities> {
        let mut next = self;
        match refusal {
            Refusal::Format => next.form = self.form.next()?,
            Refusal::Tokens => {
                next.tokens = match self.tokens {
                    TokenParam::MaxTokens => TokenParam::MaxCompletionTokens,
                    TokenParam::MaxCompletionTokens => TokenParam::None,
                    TokenParam::None => return None,
                }
            }
            Refusal::Temperature if self.temperature => next.temperature = false,
            Refusal::Temperature => return None,
            Refusal::StreamOptions if self.stream_usage => next.stream_usage = false,
            Refusal::Stream if self.stream => {
                next.stream = false;
                next.stream_usage = false;
            }
            Refusal::StreamOptions | Refusal::Stream => return None,
        }
        Some(next)
    }
}

/// The capabilities of every endpoint of a process (keyed by base URL and model), shared by
/// the clients of all roles so that one refusal teaches them all.
#[derive(Debug)]
pub struct Negotiator {
    start: Capabilities,
    endpoints: Mutex<HashMap<String, Capabilities>>,
    /// The endpoints seen to stream an answer: their silence before the first byte is cut
    /// too (a server that might answer whole has none to give until it is done).
    streaming: Mutex<HashSet<String>>,
}

/// A change the negotiator made, for the log and the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub refused: Refusal,
    pub from: String,
    pub to: String,
}

impl Negotiator {
    pub fn new(start: StructuredOutput) -> Negotiator {
        Negotiator {
            start: Capabilities {
                form: Form::first(start),
                tokens: TokenParam::MaxTokens,
                temperature: true,
                stream: true,
                stream_usage: true,
            },
            endpoints: Mutex::new(HashMap::new()),
            streaming: Mutex::new(HashSet::new()),
        }
    }

    /// Records that `endpoint` streamed an answer.
    pub fn streamed(&self, endpoint: &str) {
        let mut seen = self.streaming.locked();
        if !seen.contains(endpoint) {
            seen.insert(endpoint.to_string());
        }
    }

    /// Whether `endpoint` has streamed an answer in this process.
    pub fn streams(&self, endpoint: &str) -> bool {
        let seen = self.streaming.locked();
        seen.contains(endpoint)
    }

    /// What `endpoint` is asked with now.
    pub fn get(&self, endpoint: &str) -> Capabilities {
        let map = self.endpoints.locked();
        map.get(endpoint).copied().unwrap_or(self.start)
    }

    /// Records that `endpoint`, asked with `tried`, refused `refusal`. Returns what to ask with
    /// next, and the change when this call made it (another call may have made it first, so a
    /// change is reported once); `None` when nothing is left to give up.
    pub fn refused(
        &self,
        endpoint: &str,
        tried: Capabilities,
        refusal: Refusal,
    ) -> Option<(Capabilities, Option<Change>)> {
        let mut map = self.endpoints.locked();
        let current = map.get(endpoint).copied().unwrap_or(self.start);
        if current != tried {
            return Some((current, None));
        }
        let next = tried.after(refusal)?;
        map.insert(endpoint.to_string(), next);
        let describe = |c: Capabilities| match refusal {
            Refusal::Format => c.form.as_str().to_string(),
            Refusal::Tokens => c.tokens.as_str().to_string(),
            Refusal::Temperature => if c.temperature { "sent" } else { "not sent" }.to_string(),
            Refusal::StreamOptions => if c.stream_usage { "sent" } else { "not sent" }.to_string(),
            Refusal::Stream => if c.stream { "streamed" } else { "whole" }.to_string(),
        };
        let change = Change {
            refused: refusal,
            from: describe(tried),
            to: describe(next),
        };
        Some((next, Some(change)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Events store these names: they must never change.
    #[test]
    fn every_form_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<Form>(),
            "json_schema json_object_schema json_object none"
        );
    }

    /// Events store these names: they must never change.
    #[test]
    fn every_token_param_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<TokenParam>(),
            "max_tokens max_completion_tokens none"
        );
    }

    const LLAMA_CPP_PYTHON: &str = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}","type":"internal_server_error"}}"#;
    const OPENAI_MAX_TOKENS: &str = r#"{"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens"}}"#;

    fn sent(form: Form) -> Sent {
        Sent {
            form: Some(form),
            tokens: TokenParam::MaxTokens,
            temperature: true,
            stream: true,
            stream_usage: true,
        }
    }

    #[test]
    fn refusals_are_told_by_the_body_not_the_status() {
        assert_eq!(
            classify(500, LLAMA_CPP_PYTHON, sent(Form::JsonSchema)),
            Some(Refusal::Format)
        );
        assert_eq!(
            classify(
                422,
                "field response_format: extra inputs",
                sent(Form::JsonObject)
            ),
            Some(Refusal::Format)
        );
        assert_eq!(
            classify(400, OPENAI_MAX_TOKENS, sent(Form::None)),
            Some(Refusal::Tokens),
            "a request without response_format cannot have it refused"
        );
        assert_eq!(
            classify(500, "internal error", sent(Form::JsonSchema)),
            None
        );
        assert_eq!(
            classify(429, "response_format", sent(Form::JsonSchema)),
            None
        );
        assert_eq!(
            classify(401, "response_format", sent(Form::JsonSchema)),
            None
        );
    }

    #[test]
    fn streaming_refusals_are_told_by_the_word_stream_standing_alone() {
        let unrecognized = r#"{"error": {"message": "Unrecognized request argument supplied: stream_options", "param": "stream_options"}}"#;
        assert_eq!(
            classify(400, unrecognized, sent(Form::None)),
            Some(Refusal::StreamOptions)
        );
        let mut no_options = sent(Form::None);
        no_options.stream_usage = false;
        assert_eq!(classify(400, unrecognized, no_options), None);
        assert_eq!(
            classify(422, "extra inputs are not permitted: 'stream'", no_options),
            Some(Refusal::Stream)
        );
        assert_eq!(
            classify(502, "upstream connect error or disconnect", no_options),
            None,
            "upstream is not stream"
        );
        assert_eq!(classify(500, "streaming failed", no_options), None);
        let n = Negotiator::new(StructuredOutput::Auto);
        let (caps, change) = n
            .refused("e", n.get("e"), Refusal::Stream)
            .expect("whole answers");
        assert!(!caps.stream && !caps.stream_usage);
        assert_eq!(
            change.map(|c| (c.from, c.to)),
            Some(("streamed".into(), "whole".into()))
        );
        assert!(
            n.refused("e", caps, Refusal::Stream).is_none(),
            "nothing left"
        );
        assert!(!n.streams("e"));
        n.streamed("e");
        assert!(n.streams("e") && !n.streams("other"));
    }

    #[test]
    fn the_ladder_goes_down_once_per_refusal_and_is_shared() {
        let n = Negotiator::new(StructuredOutput::Auto);
        let first = n.get("e");
        assert_eq!(first.form, Form::JsonSchema);
        let (next, change) = n.refused("e", first, Refusal::Format).expect("a next form");
        assert_eq!(next.form, Form::JsonObjectSchema);
        assert_eq!(change.map(|c| c.to), Some("json_object_schema".into()));
        // A second call that tried the old form learns the new one without another change.
        let (again, change) = n.refused("e", first, Refusal::Format).expect("current");
        assert_eq!((again, change), (next, None));
        assert_eq!(n.get("other").form, Form::JsonSchema, "per endpoint");
        let (t, _) = n.refused("e", next, Refusal::Tokens).expect("tokens");
        assert_eq!(t.tokens, TokenParam::MaxCompletionTokens);
        let (t, _) = n.refused("e", t, Refusal::Tokens).expect("none");
        assert_eq!(t.tokens, TokenParam::None);
        assert!(n.refused("e", t, Refusal::Tokens).is_none());
        let (f, _) = n.refused("e", t, Refusal::Format).expect("json_object");
        let (f, _) = n.refused("e", f, Refusal::Format).expect("none");
        assert_eq!(f.form, Form::None);
        assert!(n.refused("e", f, Refusal::Format).is_none(), "nothing left");
    }
}
