//! A secret string (an API key) that never shows itself in `Debug` or `Display`.

use std::fmt;

#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty or blank key.
    pub fn new(raw: impl Into<String>) -> Option<ApiKey> {
        let raw = raw.into().trim().to_string();
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

/// Replaces every occurrence of the given secrets in `text` with `***`.
pub fn redact<'a>(text: &str, secrets: impl IntoIterator<Item = &'a ApiKey>) -> String {
    let mut out = text.to_string();
    for key in secrets {
        if key.0.len() >= 4 {
            out = out.replace(&key.0, "***");
        }
    }
    out
}

/// `url` with the password of its user part (`http://user:pass@host`) replaced by `***`, for
/// anything we print or write. Text that is not a URL is returned as it is.
pub fn redact_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            // Setting a password only fails for URLs that cannot have one, and this one has.
            let _ = parsed.set_password(Some("***"));
            let text = parsed.to_string();
            // `Url` adds a slash to a bare host; keep the caller's form otherwise.
            if !url.ends_with('/') && text.ends_with('/') && parsed.path() == "/" {
                text.trim_end_matches('/').to_string()
            } else {
                text
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_printed() {
        let key = ApiKey::new("sk-secret-123").expect("non-empty");
        assert!(!format!("{key:?} {key}").contains("secret"));
        assert_eq!(redact("bad key sk-secret-123!", [&key]), "bad key ***!");
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
    }
}
