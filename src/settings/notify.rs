//! The config's `notify` block: how `watch --notify mailto:ADDR` sends its mail
//! (`notify.smtp`). The password is never in the file: `passwordEnv` names the environment
//! variable that holds it.

use serde::Deserialize;

/// `notify` in the config file.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NotifyConfig {
    /// The SMTP server `watch` sends mail through.
    pub smtp: Option<SmtpConfig>,
}

/// An SMTP server.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SmtpConfig {
    /// Its host name.
    pub host: String,
    /// Its port [default: 587 with `starttls`, 465 with `tls`, 25 with `none`].
    pub port: Option<u16>,
    /// `starttls` (default: plain, then upgraded; no upgrade, no mail), `tls` (TLS from the
    /// start), or `none` (no encryption: only to a server on this machine).
    pub security: Option<SmtpSecurity>,
    /// The user to log in as (with `passwordEnv`); none: no login.
    pub user: Option<String>,
    /// The environment variable that holds the password.
    pub password_env: Option<String>,
    /// The sender's address (`researchflow <watch@example.org>`).
    pub from: String,
    /// A PEM file of certificates to trust besides the system's, for a server whose
    /// certificate a private authority signed (or that signed its own); relative to the
    /// config file's folder.
    pub ca_file: Option<String>,
}

/// How the connection to the SMTP server is encrypted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SmtpSecurity {
    Starttls,
    Tls,
    None,
}

impl SmtpConfig {
    /// How the connection is encrypted.
    pub fn security(&self) -> SmtpSecurity {
        self.security.unwrap_or(SmtpSecurity::Starttls)
    }

    /// The port, by default the one of its security.
    pub fn port(&self) -> u16 {
        self.port.unwrap_or(match self.security() {
            SmtpSecurity::Starttls => 587,
            SmtpSecurity::Tls => 465,
            SmtpSecurity::None => 25,
        })
    }

    /// Why it cannot be used as written: the key to fix, its value, and what to do.
    pub fn problem(&self) -> Option<(&'static str, String, String)> {
        let loopback = matches!(self.host.as_str(), "localhost" | "127.0.0.1" | "::1");
        if self.security() == SmtpSecurity::None && !loopback {
            return Some((
                "notify.smtp.security",
                "none".into(),
                "`none` sends mail (and any password) in the clear: only to a server on this machine (localhost); use `starttls` or `tls`".into(),
            ));
        }
        if self.user.is_some() != self.password_env.is_some() {
            return Some((
                "notify.smtp.passwordEnv",
                self.password_env.clone().unwrap_or_default(),
                "a login needs both `user` and `passwordEnv` (the variable that holds the password)".into(),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_encryption_only_to_this_machine_and_a_login_needs_its_password_variable() {
        let smtp = |json: serde_json::Value| -> SmtpConfig {
            serde_json::from_value(json).expect("smtp config")
        };
        let local = smtp(
            serde_json::json!({"host": "localhost", "security": "none", "from": "a@b.example"}),
        );
        assert_eq!((local.problem(), local.port()), (None, 25));
        let remote = smtp(
            serde_json::json!({"host": "smtp.example.org", "security": "none", "from": "a@b.example"}),
        );
        assert_eq!(remote.problem().map(|p| p.0), Some("notify.smtp.security"));
        let login = smtp(
            serde_json::json!({"host": "smtp.example.org", "user": "u", "from": "a@b.example"}),
        );
        assert_eq!(
            login.problem().map(|p| p.0),
            Some("notify.smtp.passwordEnv")
        );
        assert_eq!(login.port(), 587, "starttls by default");
    }
}
