//! Telling what changed to a webhook (a mail is `mail.rs`'s): the run's digest POSTed as JSON
//! to each `--notify` URL, signed with
//! HMAC-SHA256 in `X-Researchflow-Signature` (`sha256=<hex>`) when
//! `RESEARCHFLOW_WEBHOOK_SECRET` is set, through the one retry policy every HTTP call takes.
//! Only a 2xx answer of the URL given is delivery: a redirect is not followed but reported.
//! A failure is returned to be recorded and reported, never a reason for the run to fail;
//! the secret is never written anywhere, nor the target's path ([`shown`]), even when the
//! receiver echoes them ([`Secrets`]).

use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::secrets::Secrets;
use crate::http::error::parse_retry_after;
use crate::http::{HttpError, NoObserver, client_without_redirects, with_retry};
use crate::settings::{BaseUrl, RetrySettings};

/// The variable that holds the webhook's signing secret.
pub const SECRET_VAR: &str = "RESEARCHFLOW_WEBHOOK_SECRET";

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "X-Researchflow-Signature";

/// How long one attempt may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `target` is one that can be notified: an `http(s)` URL, or `mailto:ADDR` when
/// `mail` (an SMTP server is configured).
pub fn check_target(target: &str, mail: bool) -> Result<(), String> {
    if let Some(address) = super::mail::mail_address(target) {
        super::mail::check_address(address)
            .map_err(|why| format!("`--notify {}`: {why}", escaped(target)))?;
        return match mail {
            true => Ok(()),
            false => Err(format!(
                "`--notify {target}` needs an SMTP server: add `notify.smtp` (host, port, security, from) to the config"
            )),
        };
    }
    if target.contains(char::is_control) {
        return Err(format!(
            "`--notify {}`: a control character has no place in a URL: give the hook's address alone",
            escaped(&shown(target))
        ));
    }
    match BaseUrl::parse(target) {
        Some(_) if target.starts_with("https://") || target.starts_with("http://") => Ok(()),
        _ => Err(format!(
            "`--notify {}`: give an `https://` URL to POST the digest to, or `mailto:ADDR`",
            shown(target)
        )),
    }
}

/// `text` with its control characters written as escapes (`\r`, `\n`), to be quoted on one
/// line.
fn escaped(text: &str) -> String {
    text.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// How a target is shown, logged and recorded: its scheme and host, and a short hash of the
/// whole URL that tells targets apart. A webhook's path is often its secret (a chat service's
/// hook URL is one), so no more of it is written anywhere.
pub fn shown(target: &str) -> String {
    use sha2::Digest;
    if target.starts_with("mailto:") {
        return target.to_string();
    }
    let hash = Sha256::digest(target.as_bytes());
    let short: String = hash.iter().take(4).map(|b| format!("{b:02x}")).collect();
    let origin = url::Url::parse(target)
        .ok()
        .map_or_else(|| "?".to_string(), |u| origin(&u));
    format!("{origin}/... #{short}")
}

/// `sha256=<hex>`: the HMAC-SHA256 of `body` with `secret`.
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(body);
    let bytes = mac.finalize().into_bytes();
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256={hex}")
}

/// POSTs `body` (JSON) to `target` exactly as given, retried by `retry`; the error when it
/// could not be delivered. Only a 2xx answer is delivery: a redirect is not followed. What
/// the receiver says back is cleaned of this hook's secrets ([`Secrets`]) before any retry
/// logs it. The body goes out as every writer's text does ([`crate::text::clean`]: no control
/// or invisible character, no secret), and is signed as sent.
pub async fn post(target: &str, body: &str, retry: &RetrySettings) -> Result<(), String> {
    let body = crate::text::clean(body);
    let body = body.as_str();
    let not_url = || format!("not a URL: {}", shown(target));
    let hook = url::Url::parse(target.trim()).map_err(|_| not_url())?;
    // Where the POST goes: the URL as written (a trailing slash kept), without its user part.
    let mut address = hook.clone();
    // Neither can fail on a URL with a host, which every http(s) URL has.
    let _ = address.set_username("");
    let _ = address.set_password(None);
    address.set_fragment(None);
    let origin = BaseUrl::parse(&hook.origin().ascii_serialization()).ok_or_else(not_url)?;
    let client = client_without_redirects().map_err(|e| e.to_string())?;
    let secret = std::env::var(SECRET_VAR).ok().filter(|s| !s.is_empty());
    let to = Hook {
        url: &hook,
        origin: &origin,
        secrets: Secrets::of_webhook(target, secret.as_deref()),
    };
    let send = || {
        let mut request = client
            .post(address.clone())
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(secret) = &secret {
            request = request.header(SIGNATURE_HEADER, signature(secret, body.as_bytes()));
        }
        to.attempt(request)
    };
    let what = format!("webhook {}", shown(target));
    with_retry(retry, &what, &NoObserver, send)
        .await
        .map_err(|e| {
            // Errors name the origin, never the path; what the receiver said is cleaned.
            let said = e.to_string().replace(address.as_str(), &shown(target));
            crate::text::one_line(&said.replace(target, &shown(target)), 600)
        })
}

/// Where one webhook's POST goes, and the secrets of it that its receiver may echo.
struct Hook<'a> {
    url: &'a url::Url,
    origin: &'a BaseUrl,
    secrets: Secrets,
}

/// How much of a receiver's answer is read: it is only ever quoted, cut, in an error.
const MAX_SAID_BYTES: usize = 64 * 1024;

impl Hook<'_> {
    /// One POST: delivered on a 2xx; else the status, with what the receiver said (cleaned),
    /// or for a redirect where it leads (scheme and host only).
    async fn attempt(&self, request: reqwest::RequestBuilder) -> Result<(), HttpError> {
        let response = request
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| HttpError::from_reqwest(self.origin, TIMEOUT, e))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let retry_after = parse_retry_after(response.headers());
        let body = match status.is_redirection() {
            true => self.redirect(&response),
            false => self.secrets.clean(&said(response).await),
        };
        Err(HttpError::Status {
            url: self.origin.to_string(),
            status: status.as_u16(),
            body,
            retry_after,
        })
    }

    /// Why a redirect is no delivery, and where it leads: the scheme and host of its
    /// `Location` (its path may be as secret as the hook's).
    fn redirect(&self, response: &reqwest::Response) -> String {
        let to = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .and_then(|l| self.url.join(l).ok())
            .filter(|u| u.has_host());
        match to {
            Some(to) => format!(
                "a redirect to `{}`, not followed (a redirect makes the POST an empty GET, or sends the digest elsewhere): give `--notify` the address it leads to",
                origin(&to)
            ),
            None => {
                "a redirect without a usable `Location`, not followed: check the hook's address"
                    .into()
            }
        }
    }
}

/// The start of what the receiver said, read up to [`MAX_SAID_BYTES`]; what could not be read
/// is left out (the status tells enough).
async fn said(mut response: reqwest::Response) -> String {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        body.extend_from_slice(&chunk);
        if body.len() >= MAX_SAID_BYTES {
            break;
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}

/// `scheme://host[:port]` of `url`.
fn origin(url: &url::Url) -> String {
    let port = url.port().map_or(String::new(), |p| format!(":{p}"));
    format!(
        "{}://{}{port}",
        url.scheme(),
        url.host_str().unwrap_or_default()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_the_hmac_sha256_of_the_body_in_hex() {
        // RFC 4231, test case 2.
        assert_eq!(
            signature("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        assert!(check_target("https://hooks.example/x", false).is_ok());
        assert!(check_target("mailto:a@b.example", false).is_err());
        assert!(check_target("mailto:a@b.example", true).is_ok());
        assert!(check_target("ftp://x.example/", true).is_err());
        let broken = check_target("https://x.example/a\r\nb", false).unwrap_err();
        assert!(
            broken.contains("x.example") && !broken.contains(['\r', '\n']),
            "{broken}"
        );
        let bad = check_target("mailto:a@b.example\nBcc: c@d", true).unwrap_err();
        assert!(
            bad.starts_with("`--notify mailto:a@b.example\\nBcc: c@d`"),
            "{bad}"
        );
        let hook = "https://hooks.example:8443/services/T0/B0/s3cretpath";
        let at = shown(hook);
        assert!(at.starts_with("https://hooks.example:8443/... #") && !at.contains("s3cret"));
        assert_ne!(at, shown("https://hooks.example:8443/services/other"));
    }

    #[test]
    fn the_signing_secret_is_one_the_process_masks() {
        let names: Vec<&str> = crate::settings::secret::secret_variables().collect();
        assert!(names.contains(&SECRET_VAR), "{names:?}");
    }
}
