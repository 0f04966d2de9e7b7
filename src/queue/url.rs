//! [`QueueUrl`]: the `--queue` URL of a queue on PostgreSQL, checked and held with its
//! password apart: what is shown (messages, logs, `batch status`) never carries it, and every
//! message that quotes the server or the driver goes through [`QueueUrl::redact`] first.
//!
//! The password may stand in the user part (`postgres://rf:PW@host/db`) or, as libpq allows,
//! in the query (`postgres:///db?password=PW&host=...`), as may `sslpassword`: both are masked
//! in the one text that is shown, [`QueueUrl::shown`].

use std::str::FromStr;

use sqlx::ConnectOptions;
use sqlx::postgres::PgConnectOptions;

/// A `postgres://` URL, parsed.
#[derive(Clone)]
pub struct QueueUrl {
    options: PgConnectOptions,
    /// `postgres://user@host:port/db`: the URL without its password.
    shown: String,
    /// The password as written and as decoded, to be masked wherever a message quotes it.
    secrets: Vec<String>,
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
}

impl std::fmt::Debug for QueueUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

impl QueueUrl {
    /// Parses `text`; the error is one line that says what to fix, without the password.
    pub fn parse(text: &str) -> Result<QueueUrl, String> {
        let text = text.trim();
        let parsed = reqwest::Url::parse(text).map_err(|e| {
            format!(
                "`--queue` is not a URL ({e}): write `postgres://<user>:<password>@<host>:<port>/<database>`"
            )
        })?;
        let query = SecretQuery::of(text);
        let mut shown_url = reqwest::Url::parse(&query.shown).unwrap_or_else(|_| parsed.clone());
        let _ = shown_url.set_password(None);
        let shown = shown_url.to_string();
        if !matches!(parsed.scheme(), "postgres" | "postgresql") {
            return Err(format!(
                "`--queue {shown}`: the scheme `{}` is not PostgreSQL's: write `postgres://<user>:<password>@<host>:<port>/<database>`",
                parsed.scheme()
            ));
        }
        let mut secrets = query.secrets;
        if let Some(password) = parsed.password().filter(|p| !p.is_empty()) {
            secrets.push(password.to_string());
            let decoded = percent_encoding::percent_decode_str(password)
                .decode_utf8_lossy()
                .into_owned();
            if decoded != password {
                secrets.push(decoded);
            }
        }
        // The longest first: one secret may hold another (`s@cret` in `s@cret+PW`).
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        if query.dropped {
            tracing::warn!(
                "`--queue {shown}`: `sslpassword` is not used: the PostgreSQL driver reads only an unencrypted `sslkey`; decrypt the key if it has a password"
            );
        }
        let options = PgConnectOptions::from_str(&query.for_driver)
            .map_err(|e| {
                let redact = QueueUrl::redacted_with(&secrets);
                format!("`--queue {shown}`: {}", redact(&e.to_string()))
            })?
            .application_name("researchflow")
            // The server's notices ("already exists, skipping") are no news to a user; a
            // transaction left open by a worker cut off from the server (its row locks held,
            // a takeover of its question waiting on them) is ended by the server after 15 s:
            // ours never wait on anything inside one, and one a stalled worker loses so is
            // tried again (`db::is_transient`).
            .options([
                ("client_min_messages", "warning"),
                ("idle_in_transaction_session_timeout", "15s"),
            ])
            .disable_statement_logging();
        let database = options.get_database().unwrap_or("").to_string();
        Ok(QueueUrl {
            host: options.get_host().to_string(),
            port: options.get_port(),
            user: options.get_username().to_string(),
            database: if database.is_empty() {
                options.get_username().to_string()
            } else {
                database
            },
            options,
            shown,
            secrets,
        })
    }

    /// The URL without its password.
    pub fn shown(&self) -> &str {
        &self.shown
    }

    /// `host:port`.
    pub fn server(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn options(&self) -> &PgConnectOptions {
        &self.options
    }

    /// `text` with the password, and any URL's password, masked.
    pub fn redact(&self, text: &str) -> String {
        QueueUrl::redacted_with(&self.secrets)(text)
    }

    fn redacted_with(secrets: &[String]) -> impl Fn(&str) -> String + '_ {
        move |text: &str| {
            let mut out = crate::text::without_url_passwords(text).into_owned();
            for secret in secrets {
                out = out.replace(secret.as_str(), "***");
            }
            out
        }
    }
}

/// libpq's connection parameters whose value is a secret.
const SECRET_PARAMETERS: [&str; 2] = ["password", "sslpassword"];

/// The query of a `--queue` URL, its secret parameters found.
struct SecretQuery {
    /// The URL with the value of each secret parameter as `***`.
    shown: String,
    /// The URL without `sslpassword`, which the driver does not read: it would log the
    /// parameter it ignores, value and all.
    for_driver: String,
    /// Whether `sslpassword` was left out.
    dropped: bool,
    /// The secret values as written, percent-decoded and form-decoded (`+` a space).
    secrets: Vec<String>,
}

impl SecretQuery {
    /// `text` (`...?a=1&password=PW#f`) read as text, not re-encoded, so what is shown keeps
    /// the form it was written in.
    fn of(text: &str) -> SecretQuery {
        let end = text.find('#').unwrap_or(text.len());
        let (head, query, tail) = match text[..end].split_once('?') {
            Some((head, query)) => (head, query, &text[end..]),
            None => (text, "", ""),
        };
        let (mut shown, mut for_driver) = (Vec::new(), Vec::new());
        let (mut dropped, mut secrets) = (false, Vec::new());
        for part in query.split('&') {
            let (key, value) = part.split_once('=').unwrap_or((part, ""));
            let decode = |s: &str| {
                let spaced = s.replace('+', " ");
                percent_encoding::percent_decode_str(&spaced)
                    .decode_utf8_lossy()
                    .into_owned()
            };
            let name = decode(key);
            if !SECRET_PARAMETERS.contains(&name.as_str()) {
                shown.push(part.to_string());
                for_driver.push(part);
                continue;
            }
            shown.push(format!("{key}=***"));
            let percent = percent_encoding::percent_decode_str(value)
                .decode_utf8_lossy()
                .into_owned();
            for secret in [value.to_string(), percent, decode(value)] {
                if !secret.is_empty() && !secrets.contains(&secret) {
                    secrets.push(secret);
                }
            }
            if name == "sslpassword" {
                dropped = true;
            } else {
                for_driver.push(part);
            }
        }
        if query.is_empty() {
            return SecretQuery {
                shown: text.to_string(),
                for_driver: text.to_string(),
                dropped,
                secrets,
            };
        }
        let join = |parts: Vec<&str>| {
            if parts.is_empty() {
                format!("{head}{tail}")
            } else {
                format!("{head}?{}{tail}", parts.join("&"))
            }
        };
        SecretQuery {
            shown: join(shown.iter().map(String::as_str).collect()),
            for_driver: join(for_driver),
            dropped,
            secrets,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_held_apart_and_masked() {
        let url = QueueUrl::parse("postgres://rf:s%40cret-PW@127.0.0.1:5433/jobs").expect("ok");
        assert_eq!(url.shown(), "postgres://rf@127.0.0.1:5433/jobs");
        assert_eq!((url.user.as_str(), url.database.as_str()), ("rf", "jobs"));
        assert_eq!(url.server(), "127.0.0.1:5433");
        assert_eq!(url.redact("pw s@cret-PW and s%40cret-PW"), "pw *** and ***");
        assert!(!format!("{url:?}").contains("cret"));
        let sessions = url.options().get_options().unwrap_or_default();
        assert!(
            sessions.contains("idle_in_transaction_session_timeout=15s"),
            "{sessions}"
        );
    }

    #[test]
    fn a_password_in_the_query_is_masked_and_sslpassword_not_given_to_the_driver() {
        let url = QueueUrl::parse(
            "postgres:///jobs?user=rf&password=s%40cret+PW&host=127.0.0.1&sslpassword=k3y-PW#x",
        )
        .expect("ok");
        assert_eq!(
            url.shown(),
            "postgres:///jobs?user=rf&password=***&host=127.0.0.1&sslpassword=***#x"
        );
        assert_eq!((url.user.as_str(), url.host.as_str()), ("rf", "127.0.0.1"));
        assert_eq!(
            url.redact("a s@cret PW, s%40cret+PW, s@cret+PW and k3y-PW"),
            "a ***, ***, *** and ***"
        );
        let query = SecretQuery::of("postgres://h/d?sslpassword=k&port=5");
        assert_eq!(query.for_driver, "postgres://h/d?port=5");
        assert!(query.dropped);
        let plain = SecretQuery::of("postgres://rf:pw@h/d");
        assert_eq!(
            (plain.shown.as_str(), plain.dropped),
            ("postgres://rf:pw@h/d", false)
        );
        let err = QueueUrl::parse("mysql:///d?password=hunter2").expect_err("scheme");
        assert!(
            err.contains("password=***") && !err.contains("hunter2"),
            "{err}"
        );
    }

    #[test]
    fn a_wrong_scheme_or_no_url_is_named_without_the_password() {
        let err = QueueUrl::parse("mysql://rf:hunter2@db/x").expect_err("scheme");
        assert!(err.contains("`mysql`") && !err.contains("hunter2"), "{err}");
        let err = QueueUrl::parse("db.example:5432").expect_err("no URL");
        assert!(err.contains("postgres://<user>:<password>@<host>"), "{err}");
    }
}
