//! Telling what changed by mail (`--notify mailto:ADDR`): one message per run, a plain-text
//! part and an HTML part, through the SMTP server of `notify.smtp` (lettre, rustls), retried
//! with the backoff of the config's `retry`. The password is read from the variable
//! `passwordEnv` names, at the moment of sending, and is written nowhere, even when the
//! server quotes it back in its reply ([`Secrets`]). The address is one plain address
//! ([`check_address`]), checked before the run starts.

use backon::{ExponentialBuilder, Retryable};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
use lettre::{Address, AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde_json::Value;

use super::secrets::Secrets;
use crate::settings::{RetrySettings, SmtpConfig, SmtpSecurity};
use crate::view::html::esc;

/// The address of a `mailto:` target, when it is one (checked by [`check_address`]).
pub fn mail_address(target: &str) -> Option<&str> {
    target.strip_prefix("mailto:")
}

/// `address` as a mail can be sent to it: one plain address that lettre's parser accepts,
/// nothing that could break the mail's headers or hide a second recipient; else why not.
pub fn check_address(address: &str) -> Result<Address, String> {
    let why = match () {
        _ if address.is_empty() => {
            "no address after `mailto:`: give one, as `mailto:team@example.org`"
        }
        _ if address.contains(char::is_control) => {
            "a control character has no place in an address (a line break would add a header to the mail): give the address alone"
        }
        _ if address.contains([';', ',']) => {
            "one address per `--notify` (no `;` or `,`): repeat `--notify` for each address"
        }
        _ if address.contains('?') => {
            "mailto headers (`?cc=`, `?subject=`) are not supported: give the address alone, and repeat `--notify` for each address"
        }
        _ if address.contains('%') => {
            "percent-encoding is not decoded here: write the address as it is"
        }
        _ if address.contains(|c: char| c.is_whitespace() || "<>\"()\\".contains(c)) => {
            "only the address itself, without a name, quotes, brackets or spaces: as `mailto:team@example.org`"
        }
        _ => {
            return address.parse::<Address>().map_err(|e| {
                format!(
                    "not an address a mail can be sent to ({e}): write it as `team@example.org`"
                )
            });
        }
    };
    Err(why.to_string())
}

/// The subject of the mail telling `body` (the webhook's JSON).
pub fn subject(body: &Value) -> String {
    let n = body["questions"].as_array().map_or(0, Vec::len);
    format!(
        "researchflow watch: {n} question(s) changed (run {})",
        body["run"].as_str().unwrap_or("?")
    )
}

/// The mail's plain text: each question, its status, and each change with its values.
pub fn text(body: &Value) -> String {
    let mut out = format!(
        "{}\n\nwatch folder: {}\n",
        subject(body),
        str_of(&body["watch"])
    );
    for q in body["questions"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "\n{}\n  status: {}; compared with run {}\n",
            str_of(&q["question"]),
            str_of(&q["status"]),
            str_of(&q["compared_with"])
        ));
        for c in q["changes"].as_array().into_iter().flatten() {
            out.push_str(&format!("  - {}\n", change_line(c)));
        }
        out.push_str(&format!("  changes: {}\n", str_of(&q["files"]["changes"])));
    }
    out
}

/// The mail's HTML: the same as [`text`], every value escaped.
pub fn html(body: &Value) -> String {
    let mut out = format!("<h1>{}</h1>", esc(&subject(body)));
    for q in body["questions"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "<h2>{}</h2><p>status: {}; compared with run {}</p><ul>",
            esc(str_of(&q["question"])),
            esc(str_of(&q["status"])),
            esc(str_of(&q["compared_with"]))
        ));
        for c in q["changes"].as_array().into_iter().flatten() {
            out.push_str(&format!("<li>{}</li>", esc(&change_line(c))));
        }
        out.push_str(&format!(
            "</ul><p>changes: <code>{}</code></p>",
            esc(str_of(&q["files"]["changes"]))
        ));
    }
    format!("<!DOCTYPE html><html><body>{out}</body></html>")
}

fn str_of(v: &Value) -> &str {
    v.as_str().unwrap_or("-")
}

/// One change on one line: its kind, and what it was and is.
fn change_line(c: &Value) -> String {
    let values = |key: &str| {
        let list: Vec<&str> = c[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        list.join(", ")
    };
    let one = |s: &str| crate::text::one_line(s, 300);
    match (c["before"].as_str(), c["after"].as_str()) {
        _ if c["kind"] == "fact_changed" => format!(
            "fact changed: {} -> {} ({})",
            values("values_before"),
            values("values_after"),
            one(str_of(&c["after"]))
        ),
        (Some(before), Some(after)) => {
            format!("{}: {} -> {}", str_of(&c["kind"]), one(before), one(after))
        }
        (_, Some(after)) => format!("{}: {}", str_of(&c["kind"]), one(after)),
        (Some(before), _) => format!("{}: {}", str_of(&c["kind"]), one(before)),
        _ => str_of(&c["kind"]).to_string(),
    }
}

/// Sends the mail telling `body` to `to` through `smtp`, retried by `retry`; the error when
/// it could not be sent.
pub async fn send(
    to: &str,
    smtp: &SmtpConfig,
    body: &Value,
    retry: &RetrySettings,
) -> Result<(), String> {
    let from: Mailbox = smtp
        .from
        .parse()
        .map_err(|e| format!("`notify.smtp.from`: {e}"))?;
    let to = check_address(to).map_err(|e| format!("`mailto:{}`: {e}", to.escape_debug()))?;
    // The writer's hygiene: no control or invisible character, no secret of the process.
    let clean = crate::text::clean;
    let message = Message::builder()
        .from(from)
        .to(Mailbox::new(None, to))
        .subject(clean(&subject(body)))
        .multipart(MultiPart::alternative_plain_html(
            clean(&text(body)),
            clean(&html(body)),
        ))
        .map_err(|e| e.to_string())?;
    let login = login(smtp)?;
    let secrets = login
        .as_ref()
        .map_or_else(Secrets::default, |l| Secrets::of_login(&l.0, &l.1));
    let transport = transport(smtp, login)?;
    let backoff = ExponentialBuilder::default()
        .with_min_delay(retry.base_delay)
        .with_max_delay(retry.max_delay)
        .with_max_times(retry.max_retries)
        .with_jitter();
    (|| transport.send(message.clone()))
        .retry(backoff)
        .sleep(tokio::time::sleep)
        // TLS that cannot even be set up will not be a second later (a certificate refused
        // in the handshake comes back as a connection error, and is retried as one).
        .when(|e| !e.is_tls() && (e.is_transient() || e.is_timeout() || e.status().is_none()))
        .await
        .map(|_| ())
        // The reply is the server's text, which may quote the login it refused.
        .map_err(|e| {
            let said = secrets.clean(&crate::text::error_chain(&e));
            format!("SMTP server {}:{}: {said}", smtp.host, smtp.port())
        })
}

/// The user and password to log in with, the password read from the variable `passwordEnv`
/// names; none without a login.
fn login(smtp: &SmtpConfig) -> Result<Option<(String, String)>, String> {
    let (Some(user), Some(var)) = (&smtp.user, &smtp.password_env) else {
        return Ok(None);
    };
    let password = std::env::var(var)
        .ok()
        .filter(|p| !p.is_empty())
        .ok_or_else(|| format!("`notify.smtp.passwordEnv` names `{var}`, which is not set: set it to the SMTP password"))?;
    Ok(Some((user.clone(), password)))
}

fn transport(
    smtp: &SmtpConfig,
    login: Option<(String, String)>,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let tls = match smtp.security() {
        SmtpSecurity::Tls => Tls::Wrapper(tls_parameters(smtp)?),
        SmtpSecurity::Starttls => Tls::Required(tls_parameters(smtp)?),
        SmtpSecurity::None => Tls::None,
    };
    let builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&smtp.host)
        .tls(tls)
        .port(smtp.port())
        .timeout(Some(std::time::Duration::from_secs(30)));
    let builder = match login {
        Some((user, password)) => builder.credentials(Credentials::new(user, password)),
        None => builder,
    };
    Ok(builder.build())
}

/// TLS to `smtp.host`, trusting the system's certificates and those of `caFile`.
fn tls_parameters(smtp: &SmtpConfig) -> Result<TlsParameters, String> {
    let mut builder = TlsParameters::builder(smtp.host.clone());
    if let Some(path) = &smtp.ca_file {
        let pem = std::fs::read(path).map_err(|e| format!("`notify.smtp.caFile` `{path}`: {e}"))?;
        let roots = Certificate::from_pem(&pem)
            .map_err(|e| format!("`notify.smtp.caFile` `{path}`: {e}"))?;
        builder = builder.add_root_certificate(roots);
    }
    builder.build_rustls().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_mail_says_each_change_in_text_and_in_escaped_html() {
        let body = json!({"watch": "/w", "run": "20261127T020000Z", "questions": [{
            "question": "Cells <now>?", "status": "completed", "compared_with": "r1",
            "changes": [{"kind": "fact_changed", "after": "It holds 290 Wh/kg.",
                         "values_before": ["270 wh/kg"], "values_after": ["290 wh/kg"]}],
            "files": {"changes": "/w/x.changes.md"}}]});
        assert_eq!(
            subject(&body),
            "researchflow watch: 1 question(s) changed (run 20261127T020000Z)"
        );
        assert!(text(&body).contains("fact changed: 270 wh/kg -> 290 wh/kg (It holds 290 Wh/kg.)"));
        assert!(html(&body).contains("<h2>Cells &lt;now&gt;?</h2>"));
    }

    #[test]
    fn a_mailto_is_one_plain_address_that_lettre_accepts() {
        assert_eq!(mail_address("mailto:a@b.example"), Some("a@b.example"));
        assert_eq!(mail_address("https://x"), None);
        assert!(check_address("a.b+c@b.example").is_ok());
        for bad in [
            "",
            "a@b.example;c@d.example",
            "a@b.example,c@d",
            "a@b.example\r\nBcc: c@d",
            "a@b.example?cc=c@d",
            "a%40b.example",
            "Team <a@b.example>",
            "a b@c.example",
            "not-an-address",
            "a@@b.example",
        ] {
            assert!(check_address(bad).is_err(), "{bad:?}");
        }
    }
}
