//! The chat-completions client: one endpoint (a role's), the shared retry policy, and the
//! structured-output negotiation.
//!
//! With `structuredOutput: json_schema`, a 400 that complains about `response_format` makes the
//! client fall back to `json_object` once and remember it for later calls. The API key goes
//! into the `Authorization` header and nowhere else; error bodies are redacted.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use super::types::{ChatRequest, ChatResponse, JsonSchemaFormat, Message, ResponseFormat, Usage};
use crate::http::{HttpError, RetryObserver, send_once, with_retry};
use crate::settings::{ApiKey, LlmEndpoint, RetrySettings, Role, Settings, StructuredOutput};

/// What shape of answer a call wants.
#[derive(Debug, Clone, Copy)]
pub enum Want<'a> {
    /// Free text (Markdown).
    Text,
    /// One JSON object; the schema is sent when the server takes `json_schema`.
    Json { name: &'a str, schema: &'a Value },
}

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatAnswer {
    pub content: String,
    pub usage: Usage,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error("`{url}` answered with something that is not a chat completion: {message}")]
    Malformed { url: String, message: String },
    #[error("`{url}` answered with an empty message")]
    Empty { url: String },
}

impl LlmError {
    /// Whether the server was never reached (connection refused, DNS, timeout).
    pub fn is_unreachable(&self) -> bool {
        matches!(self, LlmError::Http(e) if e.is_unreachable())
    }

    /// Whether the failure is the caller's to fix (bad key, model, URL, quota).
    pub fn is_configuration(&self) -> bool {
        match self {
            LlmError::Http(HttpError::Status { status, .. }) => {
                matches!(status, 400 | 401 | 403 | 404 | 429)
            }
            _ => false,
        }
    }
}

/// A client bound to one role's endpoint.
#[derive(Debug)]
pub struct LlmClient {
    http: reqwest::Client,
    role: Role,
    endpoint: LlmEndpoint,
    timeout: Duration,
    retry: RetrySettings,
    format: Mutex<StructuredOutput>,
    secrets: Vec<ApiKey>,
}

impl LlmClient {
    pub fn new(http: reqwest::Client, settings: &Settings, role: Role) -> LlmClient {
        LlmClient {
            http,
            role,
            endpoint: settings.endpoint(role).clone(),
            timeout: settings.llm_timeout,
            retry: settings.retry,
            format: Mutex::new(settings.structured_output),
            secrets: settings.secrets(),
        }
    }

    pub fn model(&self) -> &str {
        &self.endpoint.model
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.endpoint.base_url)
    }

    fn current_format(&self) -> StructuredOutput {
        // A poisoned lock only means another call panicked; the value is still a plain enum.
        *self.format.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// One system prompt and one user message: the shape of every sub-agent call.
    pub async fn ask(
        &self,
        system: &str,
        user: String,
        want: Want<'_>,
        observer: &dyn RetryObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let messages = [Message::system(system), Message::user(user)];
        self.chat(&messages, want, observer).await
    }

    /// Sends the messages, retrying transient failures, and returns the answer's text.
    pub async fn chat(
        &self,
        messages: &[Message],
        want: Want<'_>,
        observer: &dyn RetryObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let format = self.current_format();
        match self.chat_with(messages, want, format, observer).await {
            Err(LlmError::Http(HttpError::Status {
                status: 400, body, ..
            })) if format == StructuredOutput::JsonSchema
                && matches!(want, Want::Json { .. })
                && mentions_response_format(&body) =>
            {
                tracing::warn!(
                    "{} LLM `{}` rejected response_format json_schema; using json_object from now on",
                    self.role.as_str(),
                    self.endpoint.model
                );
                *self.format.lock().unwrap_or_else(|p| p.into_inner()) =
                    StructuredOutput::JsonObject;
                self.chat_with(messages, want, StructuredOutput::JsonObject, observer)
                    .await
            }
            other => other,
        }
    }

    async fn chat_with(
        &self,
        messages: &[Message],
        want: Want<'_>,
        format: StructuredOutput,
        observer: &dyn RetryObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let response_format = match (want, format) {
            (Want::Text, _) | (_, StructuredOutput::None) => None,
            (Want::Json { .. }, StructuredOutput::JsonObject) => Some(ResponseFormat::JsonObject),
            (Want::Json { name, schema }, StructuredOutput::JsonSchema) => {
                Some(ResponseFormat::JsonSchema {
                    json_schema: JsonSchemaFormat {
                        name,
                        schema,
                        strict: true,
                    },
                })
            }
        };
        let body = ChatRequest {
            model: &self.endpoint.model,
            messages,
            response_format,
            temperature: None,
        };
        let url = self.url();
        let what = format!("{} LLM", self.role.as_str());
        let text = with_retry(&self.retry, &what, observer, || self.send_once(&url, &body)).await?;
        let parsed: ChatResponse =
            serde_json::from_str(&text).map_err(|e| LlmError::Malformed {
                url: url.clone(),
                message: e.to_string(),
            })?;
        let content = parsed
            .choices
            .into_iter()
            .next()
            .and_then(|c| c.message.content)
            .filter(|c| !c.trim().is_empty())
            .ok_or_else(|| LlmError::Empty { url: url.clone() })?;
        Ok(ChatAnswer {
            content,
            usage: parsed.usage.unwrap_or_default(),
        })
    }

    async fn send_once(&self, url: &str, body: &ChatRequest<'_>) -> Result<String, HttpError> {
        let mut request = self.http.post(url).json(body);
        if let Some(key) = &self.endpoint.api_key {
            request = request.bearer_auth(key.expose());
        }
        send_once(request, url, self.timeout, &self.secrets).await
    }
}

fn mentions_response_format(body: &str) -> bool {
    let lower = body.to_ascii_lowercase();
    lower.contains("response_format") || lower.contains("json_schema")
}
