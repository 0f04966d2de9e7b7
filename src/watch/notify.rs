//! Telling what changed to a webhook (a mail is `mail.rs`'s): the run's digest POSTed as JSON
//! to each `--notify` URL, signed with
//! HMAC-SHA256 in `X-Researchflow-Signature` (`sha256=<hex>`) when
//! `RESEARCHFLOW_WEBHOOK_SECRET` is set, through the one retry policy every HTTP call takes.
//! A failure is returned to be recorded and reported, never a reason for the run to fail;
//! the secret is never written anywhere, nor the target's path ([`shown`]).

use std::time::Duration;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::http::{NoObserver, client, send_once, with_retry};
use crate::settings::{ApiKey, BaseUrl, RetrySettings};

/// The variable that holds the webhook's signing secret.
pub const SECRET_VAR: &str = "RESEARCHFLOW_WEBHOOK_SECRET";

/// The header that carries the signature.
pub const SIGNATURE_HEADER: &str = "X-Researchflow-Signature";

/// How long one attempt may take.
const TIMEOUT: Duration = Duration::from_secs(30);

/// Whether `target` is one that can be notified: an `http(s)` URL, or `mailto:ADDR` when
/// `mail` (an SMTP server is configured).
pub fn check_target(target: &str, mail: bool) -> Result<(), String> {
    if super::mail::mail_address(target).is_some() {
        return match mail {
            true => Ok(()),
            false => Err(format!(
                "`--notify {target}` needs an SMTP server: add `notify.smtp` (host, port, security, from) to the config"
            )),
        };
    }
    match BaseUrl::parse(target) {
        Some(_) if target.starts_with("https://") || target.starts_with("http://") => Ok(()),
        _ => Err(format!(
            "`--notify {}`: give an `https://` URL to POST the digest to, or `mailto:ADDR`",
            shown(target)
        )),
    }
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
    let origin = url::Url::parse(target).ok().map_or_else(
        || "?".to_string(),
        |u| {
            let port = u.port().map_or(String::new(), |p| format!(":{p}"));
            format!(
                "{}://{}{port}",
                u.scheme(),
                u.host_str().unwrap_or_default()
            )
        },
    );
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

/// POSTs `body` (JSON) to `target`, retried by `retry`; the error, redacted, when it could
/// not be delivered. The body goes out as every writer's text does ([`crate::text::clean`]: no
/// control or invisible character, no secret), and is signed as sent.
pub async fn post(target: &str, body: &str, retry: &RetrySettings) -> Result<(), String> {
    let body = crate::text::clean(body);
    let body = body.as_str();
    let url = BaseUrl::parse(target).ok_or_else(|| format!("not a URL: {}", shown(target)))?;
    let origin = url::Url::parse(target)
        .ok()
        .and_then(|u| BaseUrl::parse(&u.origin().ascii_serialization()))
        .ok_or_else(|| format!("not a URL: {}", shown(target)))?;
    let client = client().map_err(|e| e.to_string())?;
    let secret = std::env::var(SECRET_VAR).ok().filter(|s| !s.is_empty());
    let secrets: Vec<ApiKey> = secret
        .iter()
        .filter_map(|s| ApiKey::new(s.clone()))
        .collect();
    let send = || {
        let mut request = client
            .post(url.address())
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(secret) = &secret {
            request = request.header(SIGNATURE_HEADER, signature(secret, body.as_bytes()));
        }
        // Errors (and the retries logged on the way) name the origin, never the path.
        send_once(request, &origin, TIMEOUT, &secrets)
    };
    let what = format!("webhook {}", shown(target));
    with_retry(retry, &what, &NoObserver, send)
        .await
        .map(|_| ())
        .map_err(|e| {
            let said = e.to_string().replace(url.address(), &shown(target));
            crate::settings::secret::redact(&said.replace(target, &shown(target)), &secrets)
        })
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
