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
}
