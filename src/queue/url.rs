//! [`QueueUrl`]: the `--queue` URL of a queue on PostgreSQL, checked and held with its
//! password apart: what is shown (messages, logs, `batch status`) never carries it, and every
//! message that quotes the server or the driver goes through [`QueueUrl::redact`] first.

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
        let mut shown_url = parsed.clone();
        let _ = shown_url.set_password(None);
        let shown = shown_url.to_string();
        if !matches!(parsed.scheme(), "postgres" | "postgresql") {
            return Err(format!(
                "`--queue {shown}`: the scheme `{}` is not PostgreSQL's: write `postgres://<user>:<password>@<host>:<port>/<database>`",
                parsed.scheme()
            ));
        }
        let mut secrets = Vec::new();
        if let Some(password) = parsed.password().filter(|p| !p.is_empty()) {
            secrets.push(password.to_string());
            let decoded = percent_encoding::percent_decode_str(password)
                .decode_utf8_lossy()
                .into_owned();
            if decoded != password {
                secrets.push(decoded);
            }
        }
        let options = PgConnectOptions::from_str(text)
            .map_err(|e| {
                let redact = QueueUrl::redacted_with(&secrets);
                format!("`--queue {shown}`: {}", redact(&e.to_string()))
            })?
            .application_name("researchflow")
            // The server's notices ("already exists, skipping") are no news to a user; a
            // transaction left open by a worker cut off from the server (its row locks held)
            // is ended by the server after a minute: ours never wait on anything inside one.
            .options([
                ("client_min_messages", "warning"),
                ("idle_in_transaction_session_timeout", "60s"),
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
            sessions.contains("idle_in_transaction_session_timeout=60s"),
            "{sessions}"
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
