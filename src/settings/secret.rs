//! A secret string (an API key) that never shows itself in `Debug` or `Display`, and what the
//! process's mask ([`crate::text::secrets`]) is taught of the settings and the environment.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty or blank key.
    pub fn new(raw: impl Into<String>) -> Option<ApiKey> {
        let raw = raw.into().trim().to_string();
        (!raw.is_empty()).then_some(ApiKey(raw))
    }

    /// A secret kept exactly as given (a URL's password, which may begin or end with a
    /// space); `None` only when empty.
    pub fn verbatim(raw: impl Into<String>) -> Option<ApiKey> {
        let raw = raw.into();
        (!raw.is_empty()).then_some(ApiKey(raw))
    }

    /// The key itself, for the one place that puts it in a request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// The variables of the process's own secrets that [`secret_variables`] names besides the
/// keys: the watch webhook's signing secret (`watch::notify::SECRET_VAR`) and the MCP server's
/// bearer token (`mcp::token::TOKEN_ENV`), whose tests hold them to these names.
pub const OWN_SECRET_VARIABLES: [&str; 2] =
    ["RESEARCHFLOW_WEBHOOK_SECRET", "RESEARCHFLOW_MCP_TOKEN"];

/// The environment variables that hold a secret whether or not a setting uses it: the model's
/// key, each web search provider's (a `.env` may set one that the config overrides), and
/// [`OWN_SECRET_VARIABLES`].
pub fn secret_variables() -> impl Iterator<Item = &'static str> {
    let providers = crate::web_providers::WEB_PROVIDERS.iter();
    std::iter::once("OPENAI_API_KEY")
        .chain(providers.map(|p| p.spec().key_env))
        .chain(OWN_SECRET_VARIABLES)
}

/// Teaches the process's mask ([`crate::text::secrets`]) the keys the environment holds
/// ([`secret_variables`]), so that every writer masks them even when nothing uses them.
pub fn remember_environment() {
    for value in secret_variables().filter_map(|name| std::env::var(name).ok()) {
        crate::text::secrets::remember(&value);
    }
}

/// Teaches the process's mask `secrets` (a key of the settings, a URL's password).
pub fn remember<'a>(secrets: impl IntoIterator<Item = &'a ApiKey>) {
    for key in secrets {
        crate::text::secrets::remember(&key.0);
    }
}

/// Replaces every occurrence of the given secrets in `text` with `***`, the longest first: a
/// secret that holds a shorter one (a Basic credential and a password that happens to be in
/// it, a key and a password) is masked whole, not cut around the shorter one.
pub fn redact<'a>(text: &str, secrets: impl IntoIterator<Item = &'a ApiKey>) -> String {
    let mut secrets: Vec<&ApiKey> = secrets.into_iter().filter(|k| k.0.len() >= 4).collect();
    secrets.sort_by_key(|k| std::cmp::Reverse(k.0.len()));
    let mut out = text.to_string();
    for key in secrets {
        out = out.replace(&key.0, "***");
    }
    out
}

/// `url` with the password of its user part (`http://user:pass@host`) replaced by `***`, for
/// anything we print or write. Text that is not a URL is returned as it is. Works on the text
/// (not a parsed URL), so a URL too broken to parse is redacted as well, and a good one keeps
/// its form.
pub fn redact_url(url: &str) -> String {
    crate::text::without_url_passwords(url).into_owned()
}

/// Byte range of the user part in `scheme://user:password@host...`, its `@` included: what
/// is left out of a request's address.
pub fn userinfo_span(url: &str) -> Option<(usize, usize)> {
    let authority_start = url.find("://")? + 3;
    let rest = &url[authority_start..];
    let authority_end = rest.find(['/', '\\', '?', '#']).unwrap_or(rest.len());
    let at = rest[..authority_end].rfind('@')?;
    Some((authority_start, authority_start + at + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_printed() {
        let key = ApiKey::new("sk-secret-123").expect("non-empty");
        assert!(!format!("{key:?} {key}").contains("secret"));
        assert_eq!(redact("bad key sk-secret-123!", [&key]), "bad key ***!");
        let inner = ApiKey::new("secret").expect("non-empty");
        assert_eq!(redact("sk-secret-123", [&inner, &key]), "***");
        assert!(ApiKey::new("  ").is_none());
    }

    #[test]
    fn url_passwords_are_redacted() {
        assert_eq!(
            redact_url("http://user:pa55@host:8080/v1"),
            "http://user:***@host:8080/v1"
        );
        assert_eq!(redact_url("http://user:pa55@host"), "http://user:***@host");
        assert_eq!(redact_url("https://api.x/v1"), "https://api.x/v1");
        assert_eq!(redact_url("not a url"), "not a url");
        assert_eq!(redact_url("http://u:p@ss@host/x"), "http://u:***@host/x");
        assert_eq!(redact_url("http://u:secret@"), "http://u:***@");
        assert_eq!(redact_url("http://host/a:b@c"), "http://host/a:b@c");
        assert_eq!(redact_url("http://user@host"), "http://user@host");
        assert_eq!(redact_url("https://u:pa%40ss@h"), "https://u:***@h");
        assert_eq!(userinfo_span("http://u:p@h/a@b"), Some((7, 11)));
        assert_eq!(userinfo_span("http://h/a@b"), None);
    }
}
