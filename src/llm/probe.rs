//! Probing one chat-completions endpoint for `researchflow doctor`: is it reachable, is the key
//! accepted, is the model listed (`/models`, where served), which structured-output form and
//! token-limit parameter it takes, and how long one tiny round trip lasts.
//!
//! The round trip goes through the ordinary client, so what it learns is exactly what a run
//! would learn. Nothing here prints; the report never holds a key, and URLs are redacted.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use super::answer::LlmError;
use super::client::{LlmClient, Want};
use super::schema::JsonSchema;
use crate::http::{HttpError, NoObserver, Unusable};
use crate::settings::{ApiKey, LlmEndpoint};

/// What one endpoint was found to do.
#[derive(Debug, Clone, Serialize)]
pub struct EndpointReport {
    /// The roles that use this endpoint.
    pub roles: Vec<&'static str>,
    pub base_url: String,
    pub model: String,
    pub reachable: bool,
    /// `None` when the endpoint could not tell (it was not reached).
    pub key_accepted: Option<bool>,
    /// `None` when the endpoint serves no model list.
    pub model_listed: Option<bool>,
    pub structured_output: Option<&'static str>,
    pub token_limit: Option<&'static str>,
    pub latency_ms: Option<u64>,
    pub ok: bool,
    pub error: Option<String>,
    pub notes: Vec<String>,
}

static PROBE_SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    JsonSchema::new(
        "probe",
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["ok"],
            "properties": {"ok": {"type": "boolean"}}
        }),
    )
});

/// Probes the endpoint `client` talks to; `roles` are named in the report.
pub async fn probe(
    http: &reqwest::Client,
    client: &LlmClient,
    endpoint: &LlmEndpoint,
    timeout: Duration,
    roles: Vec<&'static str>,
) -> EndpointReport {
    let mut report = EndpointReport {
        roles,
        base_url: endpoint.base_url.to_string(),
        model: endpoint.model.clone(),
        reachable: false,
        key_accepted: None,
        model_listed: None,
        structured_output: None,
        token_limit: None,
        latency_ms: None,
        ok: false,
        error: None,
        notes: Vec::new(),
    };
    if !list_models(http, endpoint, timeout, &mut report).await {
        return report;
    }
    round_trip(client, &mut report).await;
    report
}

/// `GET /models`: reachability, the key, the model. Returns whether to go on.
async fn list_models(
    http: &reqwest::Client,
    endpoint: &LlmEndpoint,
    timeout: Duration,
    report: &mut EndpointReport,
) -> bool {
    let url = endpoint.base_url.join("/models");
    let bearer = endpoint.api_key.as_ref();
    let request = crate::http::request(http, reqwest::Method::GET, &url, bearer);
    let secrets: Vec<ApiKey> = endpoint.api_key.iter().cloned().collect();
    match crate::http::send_once(request, &url, timeout, &secrets).await {
        Ok(body) => {
            report.reachable = true;
            report.model_listed = model_ids(&body).map(|ids| ids.contains(&endpoint.model));
            if report.model_listed == Some(false) {
                report.notes.push(format!(
                    "`{}` is not in the server's model list",
                    endpoint.model
                ));
            }
            true
        }
        Err(HttpError::Status { status, .. }) if matches!(status, 401 | 403) => {
            report.reachable = true;
            report.key_accepted = Some(false);
            report.error = Some(if crate::http::auth::sends_user_part(&url, bearer) {
                format!(
                    "the user and password of the URL were refused (HTTP {status}, sent as Basic auth): correct them in `baseURL` (or the role's), or set `apiKey` if the server wants a key instead"
                )
            } else {
                format!(
                    "the key was refused (HTTP {status}): set `apiKey` (or the role's) or export `OPENAI_API_KEY`"
                )
            });
            false
        }
        Err(HttpError::Status { status, .. }) => {
            // Many compatible servers serve no model list; the round trip still tells.
            report.reachable = true;
            report
                .notes
                .push(format!("`/models` answered HTTP {status}: no model list"));
            true
        }
        Err(e) => {
            report.error = Some(format!("{e}: check `baseURL` and that the server runs"));
            false
        }
    }
}

/// The model ids of a `/models` answer, if it is one.
fn model_ids(body: &str) -> Option<Vec<String>> {
    let value: Value = serde_json::from_str(body).ok()?;
    let ids = value
        .get("data")?
        .as_array()?
        .iter()
        .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
        .collect();
    Some(ids)
}

/// One tiny structured request through the client, negotiating as a run would.
async fn round_trip(client: &LlmClient, report: &mut EndpointReport) {
    let started = Instant::now();
    let result = client
        .ask(
            &crate::transcript::Site::default(),
            "You check that a server works. Answer with the JSON object {\"ok\": true}.",
            "Are you there?".into(),
            Want::Json(&PROBE_SCHEMA),
            16,
            &NoObserver,
        )
        .await;
    let latency = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    let caps = client.capabilities();
    match result {
        Ok(answer) => {
            if super::extract_json(&answer.content).is_err() {
                report
                    .notes
                    .push("answered, but not with the JSON object asked for".into());
            }
            accepted(report, caps, latency);
        }
        Err(LlmError::Empty { .. }) => {
            report.notes.push("answered with an empty message".into());
            accepted(report, caps, latency);
        }
        Err(LlmError::Unusable { why, message }) => {
            if matches!(why, Unusable::KeyRefused(_)) {
                report.key_accepted = Some(false);
            }
            report.error = Some(message);
        }
        Err(e) => report.error = Some(e.to_string()),
    }
}

fn accepted(report: &mut EndpointReport, caps: super::negotiate::Capabilities, latency: u64) {
    report.reachable = true;
    report.key_accepted = Some(true);
    report.structured_output = Some(caps.form.as_str());
    report.token_limit = Some(caps.tokens.as_str());
    report.latency_ms = Some(latency);
    report.ok = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_are_read_when_they_are_one() {
        let ids = model_ids(r#"{"object":"list","data":[{"id":"gemma3"},{"id":"x"}]}"#);
        assert_eq!(ids, Some(vec!["gemma3".to_string(), "x".to_string()]));
        assert_eq!(model_ids("<html>"), None);
        assert_eq!(model_ids(r#"{"models": []}"#), None);
    }
}
