//! Sending one HTTP request and reading its body: the single attempt that the retry policy
//! repeats, shared by the LLM client and the search providers.
//!
//! The rate budget the answer's headers announce goes to the endpoint's gate
//! ([`super::announced::heard`]). A non-2xx answer becomes [`HttpError::Status`] with its
//! `Retry-After`, and a body that is cut to a readable length and redacted of every secret,
//! since servers echo keys in error bodies. No answer is read beyond [`MAX_BODY_BYTES`].

use std::time::Duration;

use super::error::{HttpError, parse_retry_after};
use crate::settings::secret::redact;
use crate::settings::{ApiKey, BaseUrl};
use crate::text::{truncate, without_url_passwords};

/// How much of an error body is kept.
const ERROR_BODY_CHARS: usize = 600;

/// The largest answer read: a chat completion or a page of search results is far smaller, and
/// a server that sends more (or never stops) must not fill the memory.
pub const MAX_BODY_BYTES: usize = 32 * 1024 * 1024;

/// Sends `request` (its timeout set to `timeout`), built by [`super::request`] for `url`, and
/// returns the body of a 2xx answer. Errors show `url` as [`BaseUrl`] displays it (no query,
/// no password), and an error body is redacted of `secrets` and of the URL's own password.
pub async fn send_once(
    request: reqwest::RequestBuilder,
    url: &BaseUrl,
    timeout: Duration,
    secrets: &[ApiKey],
) -> Result<String, HttpError> {
    let response = request
        .timeout(timeout)
        .send()
        .await
        .map_err(|e| HttpError::from_reqwest(url, timeout, e))?;
    read_body(response, url, timeout, secrets).await
}

/// The body of `response` (a request to `url` sent with `timeout`): the text of a 2xx answer,
/// else [`HttpError::Status`] with the body redacted of `secrets` and cut short.
pub async fn read_body(
    mut response: reqwest::Response,
    url: &BaseUrl,
    timeout: Duration,
    secrets: &[ApiKey],
) -> Result<String, HttpError> {
    let status = response.status();
    let retry_after = parse_retry_after(response.headers());
    super::announced::heard(response.headers());
    let mut body: Vec<u8> = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| HttpError::from_reqwest(url, timeout, e))?
    {
        if body.len() + chunk.len() > MAX_BODY_BYTES {
            return Err(too_large(url));
        }
        body.extend_from_slice(&chunk);
    }
    // The APIs we call answer in UTF-8; anything else is kept readable, not refused.
    let text = String::from_utf8_lossy(&body).into_owned();
    if !status.is_success() {
        // Redacted before the cut, so that a cut cannot leave half a secret behind.
        let body = redact(
            &without_url_passwords(&text),
            secrets.iter().chain(url.secrets()),
        );
        return Err(HttpError::Status {
            url: url.to_string(),
            status: status.as_u16(),
            body: truncate(&body, ERROR_BODY_CHARS),
            retry_after,
        });
    }
    Ok(text)
}

/// The error of an answer larger than [`MAX_BODY_BYTES`].
pub fn too_large(url: &BaseUrl) -> HttpError {
    HttpError::Decode {
        url: url.to_string(),
        message: format!(
            "the answer is larger than {} MiB, which no API we call sends: check the URL",
            MAX_BODY_BYTES / (1024 * 1024)
        ),
    }
}
