//! The chat-completions client: one role's endpoint, the shared retry policy, token limits,
//! and the per-endpoint negotiation of what the server accepts ([`super::negotiate`]).
//!
//! Every request carries a token limit: the role's `maxTokens`, else the caller's default for
//! that kind of answer. A server that refuses a part of the request is asked again at once
//! without it (never retried as a transient error), and the whole process remembers. The
//! answer's `finish_reason` is kept, so callers can tell an answer cut off by the limit from a
//! complete one. The API key goes into the `Authorization` header and nowhere else; error
//! bodies are redacted. Every attempt waits at the endpoint's [`Gate`] (shared by every client
//! of the process through [`Gates`]), reserving its estimated tokens.

use std::sync::Arc;
use std::time::Duration;

use reqwest::Method;

use super::answer::{ChatAnswer, LlmError};
use super::negotiate::{
    Capabilities, Change, Form, Negotiator, Refusal, Sent, TokenParam, classify,
};
use super::observer::{CallObserver, FailedAttempt, Negotiated, Streamed};
use super::schema::JsonSchema;
use super::stream::{Answered, Asked, Progress, send_streamed};
use super::taped::{CallTape, Caller, replayed};
use super::types::{
    ChatRequest, ChatResponse, JsonSchemaFormat, Message, ResponseFormat, StreamOptions,
};
use crate::http::{AtGate, Gate, Gates, HttpError, send_once, with_retry_at_gate};
use crate::settings::{ApiKey, BaseUrl, LlmEndpoint, RetrySettings, Role, Settings, SettingsError};
use crate::transcript::{Site, Tape};

mod explain;

/// What shape of answer a call wants.
#[derive(Debug, Clone, Copy)]
pub enum Want<'a> {
    /// Free text (Markdown).
    Text,
    /// One JSON object following the schema, in whichever form the server accepts.
    Json(&'a JsonSchema),
}

/// A client bound to one role's endpoint.
#[derive(Debug)]
pub struct LlmClient {
    http: reqwest::Client,
    role: Role,
    endpoint: LlmEndpoint,
    timeout: Duration,
    idle: Duration,
    retry: RetrySettings,
    negotiator: Arc<Negotiator>,
    gate: Arc<Gate>,
    secrets: Vec<ApiKey>,
    tape: Tape,
}

/// The most times one call is sent again after a refusal: the ladders are short (three
/// forms, two token parameters, the temperature), so this is never reached by a real server.
const MAX_RENEGOTIATIONS: usize = 8;

impl LlmClient {
    /// A client for `role`; `negotiator` and `gates` are shared by every client of the
    /// process. Fails when no model is configured, with the error that says how to configure
    /// one.
    pub fn new(
        http: reqwest::Client,
        settings: &Settings,
        role: Role,
        negotiator: Arc<Negotiator>,
        gates: &Gates,
    ) -> Result<LlmClient, SettingsError> {
        let endpoint = settings.require_llm()?.get(role).clone();
        let key = endpoint_key(&endpoint);
        let gate = gates.gate(&key, &key, endpoint.limits);
        Ok(LlmClient {
            http,
            role,
            endpoint,
            timeout: settings.llm_timeout,
            idle: settings.llm_idle,
            retry: settings.retry,
            negotiator,
            gate,
            secrets: settings.secrets(),
            tape: Tape::off(),
        })
    }

    /// The same client, recording its calls on `tape` (or serving them from it).
    pub fn with_tape(mut self, tape: Tape) -> LlmClient {
        self.tape = tape;
        self
    }

    pub fn model(&self) -> &str {
        &self.endpoint.model
    }

    pub fn role(&self) -> Role {
        self.role
    }

    /// Reports an answer the server billed that no answer kept will count: the caller could
    /// not use it because the call that was to complete it failed (a cut-off answer whose
    /// shorter retry failed, an answer whose repair failed). The run counts it as it counts a
    /// broken stream's attempt (`llm_attempt_failed`), in its totals and its budget.
    pub fn unused(&self, usage: crate::usage::Usage, observer: &dyn CallObserver) {
        observer.on_attempt_failed(&FailedAttempt {
            role: self.role.as_str(),
            model: self.endpoint.model.clone(),
            spent: super::stream::Spent {
                usage,
                estimated: false,
            },
        });
    }

    /// The chat-completions URL; it displays without a password (`user:***@`).
    pub fn url(&self) -> BaseUrl {
        self.endpoint.base_url.join("/chat/completions")
    }

    /// What the negotiation learnt of this endpoint so far.
    pub fn capabilities(&self) -> Capabilities {
        self.negotiator.get(&self.key())
    }

    fn key(&self) -> String {
        endpoint_key(&self.endpoint)
    }

    /// One system prompt and one user message: the shape of every sub-agent call.
    pub async fn ask(
        &self,
        site: &Site,
        system: &str,
        user: String,
        want: Want<'_>,
        max_tokens: u32,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let messages = [Message::system(system), Message::user(user)];
        self.chat(site, &messages, want, max_tokens, observer).await
    }

    /// Sends the messages, retrying transient failures and renegotiating refused parts, and
    /// returns the answer. `max_tokens` is the caller's default limit for this kind of answer;
    /// the role's `maxTokens` replaces it when set. A failure that no retry can mend becomes
    /// [`LlmError::Unusable`], naming the endpoint and what to fix. `site` says whose call it
    /// is, for the run's transcript; a replaying client answers from the transcript instead.
    pub async fn chat(
        &self,
        site: &Site,
        messages: &[Message],
        want: Want<'_>,
        max_tokens: u32,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let caller = Caller {
            role: self.role.as_str(),
            model: &self.endpoint.model,
            url: self.url().to_string(),
            site,
        };
        if let Some(answer) = replayed(&self.tape, &caller, messages) {
            return answer.map_err(|e| self.explain(e));
        }
        let tape = CallTape::start(&self.tape, caller);
        self.negotiated_chat(messages, want, max_tokens, tape.as_ref(), observer)
            .await
            .map_err(|e| self.explain(e))
    }

    async fn negotiated_chat(
        &self,
        messages: &[Message],
        want: Want<'_>,
        max_tokens: u32,
        tape: Option<&CallTape<'_>>,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let limit = self.endpoint.max_tokens.unwrap_or(max_tokens);
        let key = self.key();
        let mut tried = 0;
        loop {
            let caps = self.negotiator.get(&key);
            let result = self
                .chat_with(messages, want, limit, caps, tape, observer)
                .await;
            let Err(LlmError::Http(HttpError::Refused { status, body, .. })) = &result else {
                return result;
            };
            tried += 1;
            let stream = caps.stream && self.endpoint.stream;
            let sent = sent(caps, want, self.endpoint.temperature.is_some(), stream);
            let next = classify(*status, body, sent)
                .and_then(|refusal| self.negotiator.refused(&key, caps, refusal));
            let Some((_, change)) = next.filter(|_| tried < MAX_RENEGOTIATIONS) else {
                return result;
            };
            if let Some(change) = change {
                tracing::warn!(
                    "{} LLM `{}` refused the {} `{}` (HTTP {status}); using `{}` from now on",
                    self.role.as_str(),
                    self.endpoint.model,
                    change.refused.as_str(),
                    change.from,
                    change.to,
                );
                observer.on_negotiated(&self.negotiated(change, *status));
            }
        }
    }

    async fn chat_with(
        &self,
        messages: &[Message],
        want: Want<'_>,
        limit: u32,
        caps: Capabilities,
        tape: Option<&CallTape<'_>>,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let key = self.key();
        // Streamed unless the server showed, meanwhile, that it does not stream: an attempt
        // after a hollow stream asks for the answer whole.
        let stream = || caps.stream && self.endpoint.stream && self.negotiator.get(&key).stream;
        let url = self.url();
        let what = format!("{} LLM", self.role.as_str());
        let gate = AtGate {
            gate: &self.gate,
            tokens: estimated_tokens(messages, limit),
        };
        let prompt_tokens = u64::from(estimated_tokens(messages, 0));
        let (text, progress) =
            with_retry_at_gate(&self.retry, &what, observer, Some(gate), || async {
                let body = self.body(messages, want, limit, caps, stream());
                let sent = sent(caps, want, body.temperature.is_some(), body.stream);
                let started = std::time::Instant::now();
                let result = self
                    .send_once(&url, &body, sent, prompt_tokens, observer)
                    .await;
                if let Some(tape) = tape {
                    tape.attempted(&body, &result, started.elapsed());
                }
                result
            })
            .await?;
        let body = self.body(messages, want, limit, caps, stream());
        let answer = read_answer(&text, &url.to_string());
        if let (Some(progress), Ok(answer)) = (progress, &answer) {
            observer.on_streamed(&Streamed {
                role: self.role.as_str(),
                model: self.endpoint.model.clone(),
                progress,
                completion_tokens: answer.usage.completion_tokens,
            });
        }
        if let Some(tape) = tape {
            tape.answered(&body, &answer);
        }
        answer
    }

    /// The request's body, with the parts `caps` allows, asking for a stream when `stream`.
    fn body<'b>(
        &'b self,
        messages: &'b [Message],
        want: Want<'b>,
        limit: u32,
        caps: Capabilities,
        stream: bool,
    ) -> ChatRequest<'b> {
        ChatRequest {
            model: &self.endpoint.model,
            messages,
            response_format: match want {
                Want::Text => None,
                Want::Json(schema) => response_format(schema, caps.form),
            },
            max_tokens: (caps.tokens == TokenParam::MaxTokens).then_some(limit),
            max_completion_tokens: (caps.tokens == TokenParam::MaxCompletionTokens)
                .then_some(limit),
            temperature: self.endpoint.temperature.filter(|_| caps.temperature),
            stream,
            stream_options: (stream && caps.stream_usage).then_some(StreamOptions {
                include_usage: true,
            }),
        }
    }

    /// One attempt: the body of the answer, and how its stream went when it was streamed. An
    /// error answer that refuses a negotiable part of the request becomes
    /// [`HttpError::Refused`], which the retry policy does not repeat; a whole answer to a
    /// request for a stream teaches the negotiator that this server does not stream.
    async fn send_once(
        &self,
        url: &BaseUrl,
        body: &ChatRequest<'_>,
        sent: Sent,
        prompt_tokens: u64,
        observer: &dyn CallObserver,
    ) -> Result<(String, Option<Progress>), HttpError> {
        let bearer = self.endpoint.api_key.as_ref();
        let request = crate::http::request(&self.http, Method::POST, url, bearer).json(body);
        let answered = if body.stream {
            let asked = Asked {
                sent: std::time::Instant::now(),
                idle: self.idle,
                total: self.timeout,
                prompt_tokens,
            };
            let head = self.negotiator.streams(&self.key());
            let watch = |progress: &Progress| observer.on_tokens(progress);
            send_streamed(request, url, asked, head, &self.secrets, &watch).await
        } else {
            send_once(request, url, self.timeout, &self.secrets)
                .await
                .map(Answered::Whole)
        };
        match answered {
            Ok(Answered::Streamed(text, progress)) => {
                self.negotiator.streamed(&self.key());
                Ok((text, Some(progress)))
            }
            Ok(Answered::Whole(text)) => {
                if body.stream {
                    self.not_streamed(
                        observer,
                        "answered a request for a stream with a whole answer",
                    );
                }
                Ok((text, None))
            }
            Ok(Answered::Cut { error, spent }) => {
                let (role, model) = (self.role.as_str(), self.endpoint.model.clone());
                observer.on_attempt_failed(&FailedAttempt { role, model, spent });
                Err(error)
            }
            Ok(Answered::Hollow) => {
                self.not_streamed(observer, "ended a stream before any text or finish reason");
                Err(HttpError::Hollow {
                    url: url.to_string(),
                })
            }
            Err(HttpError::Status {
                url, status, body, ..
            }) if classify(status, &body, sent).is_some() => {
                Err(HttpError::Refused { url, status, body })
            }
            Err(other) => Err(other),
        }
    }

    /// The server answered a request for a stream whole, or streamed no answer (`why`): it is
    /// asked for whole answers from now on (said once, as a negotiated change).
    fn not_streamed(&self, observer: &dyn CallObserver, why: &str) {
        let key = self.key();
        let caps = self.negotiator.get(&key);
        let Some((_, Some(change))) = self.negotiator.refused(&key, caps, Refusal::Stream) else {
            return;
        };
        tracing::info!(
            "{} LLM `{}` {why}; asking for whole answers from now on",
            self.role.as_str(),
            self.endpoint.model,
        );
        observer.on_negotiated(&self.negotiated(change, 200));
    }

    /// A change the negotiator made on this endpoint, as the run's events tell it.
    fn negotiated(&self, change: Change, status: u16) -> Negotiated {
        Negotiated {
            role: self.role.as_str(),
            model: self.endpoint.model.clone(),
            url: self.url().to_string(),
            refused: change.refused.as_str(),
            from: change.from,
            to: change.to,
            status,
        }
    }
}

/// The answer in a chat-completions body (`url` names the server in errors).
fn read_answer(text: &str, url: &str) -> Result<ChatAnswer, LlmError> {
    let parsed: ChatResponse = serde_json::from_str(text).map_err(|e| LlmError::Malformed {
        url: url.to_string(),
        message: e.to_string(),
    })?;
    let usage = parsed.usage.unwrap_or_default();
    let choice = parsed.choices.into_iter().next();
    let finish_reason = choice.as_ref().and_then(|c| c.finish_reason.clone());
    let content = choice
        .and_then(|c| c.message.content)
        .filter(|c| !c.trim().is_empty())
        .ok_or_else(|| LlmError::Empty {
            url: url.to_string(),
        })?;
    Ok(ChatAnswer {
        content,
        usage,
        finish_reason,
    })
}

/// What negotiation and the rate budget know an endpoint by, and how a rate-limit message
/// names it: its base URL (without password) and model.
fn endpoint_key(endpoint: &LlmEndpoint) -> String {
    format!("{} {}", endpoint.base_url, endpoint.model)
}

/// The tokens a request may cost, reserved from the endpoint's budget before it is sent: the
/// prompt at about four characters a token, plus the longest answer allowed.
fn estimated_tokens(messages: &[Message], limit: u32) -> u32 {
    let chars: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    u32::try_from(chars / 4)
        .unwrap_or(u32::MAX)
        .saturating_add(limit)
}

/// What a request with these capabilities carries of the negotiable parts.
fn sent(caps: Capabilities, want: Want<'_>, temperature: bool, stream: bool) -> Sent {
    Sent {
        form: match want {
            Want::Text => None,
            Want::Json(_) => Some(caps.form),
        },
        tokens: caps.tokens,
        temperature: temperature && caps.temperature,
        stream,
        stream_usage: stream && caps.stream_usage,
    }
}

fn response_format(schema: &JsonSchema, form: Form) -> Option<ResponseFormat<'_>> {
    match form {
        Form::JsonSchema => Some(ResponseFormat::JsonSchema {
            json_schema: JsonSchemaFormat {
                name: schema.name,
                schema: &schema.strict,
                strict: true,
            },
        }),
        Form::JsonObjectSchema => Some(ResponseFormat::JsonObject {
            schema: Some(&schema.grammar),
        }),
        Form::JsonObject => Some(ResponseFormat::JsonObject { schema: None }),
        Form::None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_request_reserves_its_prompt_at_four_characters_a_token_and_its_answer() {
        let messages = [
            Message::system("a".repeat(400)),
            Message::user("é".repeat(40)),
        ];
        assert_eq!(estimated_tokens(&messages, 256), 100 + 10 + 256);
        assert_eq!(estimated_tokens(&[], u32::MAX), u32::MAX);
    }

    #[test]
    fn each_form_puts_the_right_schema_where_servers_read_it() {
        let schema = JsonSchema::new("t", json!({"type": "object"}))
            .with_grammar(json!({"anyOf": [{"type": "object"}]}));
        let as_json = |form| serde_json::to_value(response_format(&schema, form)).expect("json");
        assert_eq!(
            as_json(Form::JsonSchema),
            json!({"type": "json_schema", "json_schema": {"name": "t", "schema": {"type": "object"}, "strict": true}})
        );
        assert_eq!(
            as_json(Form::JsonObjectSchema),
            json!({"type": "json_object", "schema": {"anyOf": [{"type": "object"}]}})
        );
        assert_eq!(as_json(Form::JsonObject), json!({"type": "json_object"}));
        assert_eq!(as_json(Form::None), serde_json::Value::Null);
    }
}
