//! What a failed call means for the user: the errors no retry can mend, told as what to fix
//! in the config (a key, a URL, a model name, credit, a shorter prompt).

use super::LlmClient;
use crate::http::auth::sends_user_part;
use crate::http::error::{is_context_overflow, stated_context};
use crate::http::{HttpError, Unusable};
use crate::llm::answer::LlmError;

impl LlmClient {
    /// `err` as [`LlmError::Unusable`] when the endpoint cannot be used as configured.
    pub(super) fn explain(&self, err: LlmError) -> LlmError {
        let LlmError::Http(http) = &err else {
            return err;
        };
        let role = self.role.as_str();
        let url = self.url();
        if let HttpError::Status { status, body, .. } = http
            && is_context_overflow(*status, body)
        {
            return LlmError::TooLong {
                message: format!(
                    "the {role} model `{}` at `{url}` cannot take this request: the messages and the token limit do not fit in its context (HTTP {status}: {}); use a model with a longer context, a lower `maxTokens` (or `roles.{role}.maxTokens`), or shorter prompts (`promptsDir`)",
                    self.endpoint.model,
                    server_message(body)
                ),
                stated: stated_context(body),
            };
        }
        let Some(why) = http.unusable() else {
            return err;
        };
        let message = match why {
            Unusable::Unreachable => format!(
                "cannot reach the {role} model server at `{url}`: check `baseURL` (or `roles.{role}.baseURL`) and that the server runs"
            ),
            Unusable::KeyRefused(status)
                if sends_user_part(&self.endpoint.base_url, self.endpoint.api_key.as_ref()) =>
            {
                format!(
                    "the {role} model server `{url}` refused the user and password of its URL (HTTP {status}, sent as Basic auth): correct them in `baseURL` (or `roles.{role}.baseURL`), or set `apiKey` if the server wants a key instead"
                )
            }
            Unusable::KeyRefused(status) => format!(
                "the {role} model server `{url}` refused the API key (HTTP {status}): set `apiKey` (or `roles.{role}.apiKey`) or export `OPENAI_API_KEY`"
            ),
            Unusable::NotFound => format!(
                "the {role} model server `{url}` answered HTTP 404: it has no model `{}` there; check `model` (or `roles.{role}.model`) and `baseURL`",
                self.endpoint.model
            ),
            Unusable::QuotaExhausted => format!(
                "the {role} model server `{url}` says the account's quota is exhausted (HTTP 429 insufficient_quota): add credit or use another key"
            ),
        };
        LlmError::Unusable { why, message }
    }
}

/// The `error.message` of a JSON error body, or the body itself, on one line and cut short.
fn server_message(body: &str) -> String {
    let message = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| body.to_string());
    crate::text::one_line(&message, 300)
}
