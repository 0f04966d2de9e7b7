//! [`BearerToken`]: the secret every HTTP request must carry (`Authorization: Bearer TOKEN`)
//! when one is given: from `--token-file FILE`, else the environment's
//! `RESEARCHFLOW_MCP_TOKEN` (never a flag's value, which any user of the machine sees in the
//! process list). Required to serve on an address that is not loopback. Requests are compared
//! in constant time, digest against digest, so neither the token nor its length leaks through
//! how long a refusal takes. The token is never printed; the server masks it like a key.

use std::path::Path;

use axum::http::HeaderMap;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::files::read_bounded;
use crate::settings::secret::ApiKey;

/// The environment variable that holds the token when `--token-file` is not given.
pub const TOKEN_ENV: &str = "RESEARCHFLOW_MCP_TOKEN";

/// The shortest token accepted: a guessable one protects nothing.
pub const MIN_TOKEN_CHARS: usize = 16;

/// The bearer token of the HTTP transport.
#[derive(Clone)]
pub struct BearerToken {
    key: ApiKey,
    digest: [u8; 32],
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(***)")
    }
}

impl BearerToken {
    /// The token of `file` (its first line, trimmed), else of [`TOKEN_ENV`]; `None` when
    /// neither is given; an error when the one given is empty or short.
    pub fn load(file: Option<&Path>) -> Result<Option<BearerToken>, String> {
        let (raw, source) = match file {
            Some(file) => {
                let text = read_bounded(file, 64 * 1024).map_err(|e| {
                    format!("`--token-file {}` cannot be read: {e}", file.display())
                })?;
                let first = text.lines().next().unwrap_or_default().to_string();
                (first, format!("`--token-file {}`", file.display()))
            }
            None => match std::env::var(TOKEN_ENV) {
                Ok(raw) => (raw, format!("`{TOKEN_ENV}`")),
                Err(_) => return Ok(None),
            },
        };
        let Some(key) = ApiKey::new(raw) else {
            return Err(format!(
                "{source} holds no token: write one of at least {MIN_TOKEN_CHARS} characters, e.g. from `openssl rand -hex 32`"
            ));
        };
        if key.expose().chars().count() < MIN_TOKEN_CHARS {
            return Err(format!(
                "the token of {source} is too short: use at least {MIN_TOKEN_CHARS} characters, e.g. from `openssl rand -hex 32`"
            ));
        }
        Ok(Some(BearerToken::of(key)))
    }

    fn of(key: ApiKey) -> BearerToken {
        let digest = Sha256::digest(key.expose().as_bytes()).into();
        BearerToken { key, digest }
    }

    /// The token as a secret, for masking.
    pub fn key(&self) -> &ApiKey {
        &self.key
    }

    /// Whether `headers` carry this token as `Authorization: Bearer TOKEN`.
    pub fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(value) = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
        else {
            return false;
        };
        let Some((scheme, given)) = value.trim().split_once(' ') else {
            return false;
        };
        if !scheme.eq_ignore_ascii_case("bearer") {
            return false;
        }
        let given: [u8; 32] = Sha256::digest(given.trim().as_bytes()).into();
        given.ct_eq(&self.digest).into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_token_variable_is_one_the_process_masks() {
        let names: Vec<&str> = crate::settings::secret::secret_variables().collect();
        assert!(names.contains(&TOKEN_ENV), "{names:?}");
    }

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::AUTHORIZATION,
            HeaderValue::from_str(value).expect("header"),
        );
        headers
    }

    #[test]
    fn only_the_token_as_a_bearer_is_admitted() {
        let token = BearerToken::of(ApiKey::new("0123456789abcdef-x").expect("key"));
        assert!(token.admits(&headers("Bearer 0123456789abcdef-x")));
        assert!(token.admits(&headers("bearer 0123456789abcdef-x")));
        for wrong in [
            "Bearer 0123456789abcdef-",
            "Bearer 0123456789abcdef-xx",
            "Basic 0123456789abcdef-x",
            "0123456789abcdef-x",
            "Bearer",
        ] {
            assert!(!token.admits(&headers(wrong)), "{wrong}");
        }
        assert!(!token.admits(&HeaderMap::new()));
        assert!(!format!("{token:?}").contains("0123"));
    }

    #[test]
    fn a_token_file_gives_its_first_line_and_a_short_one_is_refused() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("token");
        std::fs::write(&file, "0123456789abcdef-x\n").expect("write");
        let token = BearerToken::load(Some(&file))
            .expect("read")
            .expect("a token");
        assert_eq!(token.key().expose(), "0123456789abcdef-x");
        std::fs::write(&file, "short\n").expect("write");
        let err = BearerToken::load(Some(&file)).expect_err("short");
        assert!(
            err.contains("too short") && !err.contains("short\n"),
            "{err}"
        );
        std::fs::write(&file, "\n").expect("write");
        assert!(BearerToken::load(Some(&file)).is_err());
    }
}
