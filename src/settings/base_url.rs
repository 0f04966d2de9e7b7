//! [`BaseUrl`]: a configured endpoint address (`baseURL`, `roles.*.baseURL`,
//! `search.baseURL`) with its user part (`http://user:password@host`) held apart.
//!
//! Every base URL is carried as a `BaseUrl` from the settings to the request, so that no
//! message, log line, event or file built from an endpoint can hold its password: the only
//! text it gives out is [`Display`](std::fmt::Display) (`user:***@`, without query or
//! fragment) and [`BaseUrl::address`] (without the user part at all). The user and password
//! leave only through [`BaseUrl::user`], for the `Authorization` header (see `http::auth`).

use std::fmt;

use super::secret::{ApiKey, redact_url, userinfo_span};

/// An http(s) URL without a trailing slash, its user part held apart.
#[derive(Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// Where requests go: the URL as configured, without its user part.
    address: String,
    /// As messages show it: without query or fragment, the password as `***`.
    shown: String,
    /// Boxed: most URLs have none, and settings carry one URL per role.
    user: Option<Box<UserPart>>,
}

/// `user:password@`, percent-decoded, and for redaction (servers echo any of them) the
/// password as written and the credential of the `Basic` header they make.
#[derive(Clone, PartialEq, Eq)]
struct UserPart {
    name: String,
    password: Option<ApiKey>,
    written: Option<ApiKey>,
    /// `base64(user:password)` as `http::auth` sends it, and without its `=` padding.
    basic: Vec<ApiKey>,
}

impl UserPart {
    fn new(name: String, password: Option<ApiKey>, written: Option<ApiKey>) -> UserPart {
        use base64::Engine as _;
        let pair = format!("{name}:{}", password.as_ref().map_or("", ApiKey::expose));
        let padded = base64::engine::general_purpose::STANDARD.encode(pair);
        let unpadded = padded.trim_end_matches('=').to_string();
        let basic = [padded, unpadded].into_iter();
        UserPart {
            name,
            password,
            written,
            basic: basic.filter_map(ApiKey::verbatim).collect(),
        }
    }
}

impl BaseUrl {
    /// An http(s) URL with a host, trimmed of white space and trailing slashes; `None` for
    /// anything else.
    pub fn parse(raw: &str) -> Option<BaseUrl> {
        let trimmed = raw.trim().trim_end_matches('/');
        let url = reqwest::Url::parse(trimmed).ok()?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return None;
        }
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        };
        let user = (!url.username().is_empty() || url.password().is_some()).then(|| {
            Box::new(UserPart::new(
                decode(url.username()),
                url.password().and_then(|p| ApiKey::verbatim(decode(p))),
                url.password().and_then(ApiKey::verbatim),
            ))
        });
        let address = match userinfo_span(trimmed) {
            Some((start, end)) => format!("{}{}", &trimmed[..start], &trimmed[end..]),
            None => trimmed.to_string(),
        };
        let without_query = trimmed.split(['?', '#']).next().unwrap_or(trimmed);
        let without_query = without_query.trim_end_matches('/');
        Some(BaseUrl {
            address,
            shown: redact_url(without_query),
            user,
        })
    }

    /// The URL of `path` under this one (`/chat/completions`), with the same user part.
    pub fn join(&self, path: &str) -> BaseUrl {
        BaseUrl {
            address: format!("{}{path}", self.address),
            shown: format!("{}{path}", self.shown),
            user: self.user.clone(),
        }
    }

    /// Where requests go: without the user part (which reqwest would otherwise send as a
    /// second `Authorization` header of its own).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The user and password of `http://user:password@host`, percent-decoded, for Basic auth.
    pub fn user(&self) -> Option<(&str, Option<&ApiKey>)> {
        self.user
            .as_ref()
            .map(|u| (u.name.as_str(), u.password.as_ref()))
    }

    /// The password as written and percent-decoded, and the credential of the `Basic` header
    /// made of the user part (`base64(user:password)`, with and without padding), for
    /// redacting what servers echo: `Authorization: Basic ***`, as an echoed key is `Bearer ***`.
    pub fn secrets(&self) -> impl Iterator<Item = &ApiKey> {
        self.user.iter().flat_map(|u| {
            let passwords = u.written.iter().chain(u.password.iter());
            u.basic.iter().chain(passwords)
        })
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

impl fmt::Debug for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BaseUrl({})", self.shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_password_is_held_apart_and_never_shown() {
        let url = BaseUrl::parse(" http://us%40er:pa%2Fss@127.0.0.1:8/v1/?k=1 ").expect("valid");
        assert_eq!(url.to_string(), "http://us%40er:***@127.0.0.1:8/v1");
        assert!(!format!("{url:?}").contains("pa"), "{url:?}");
        let chat = url.join("/chat/completions");
        assert_eq!(
            chat.to_string(),
            "http://us%40er:***@127.0.0.1:8/v1/chat/completions"
        );
        assert_eq!(
            chat.address(),
            "http://127.0.0.1:8/v1/?k=1/chat/completions"
        );
        let (user, password) = chat.user().expect("a user part");
        assert_eq!(user, "us@er");
        assert_eq!(password.map(ApiKey::expose), Some("pa/ss"));
        let secrets: Vec<&str> = chat.secrets().map(ApiKey::expose).collect();
        // base64 of `us@er:pa/ss`, what the `Basic` header carries.
        assert_eq!(
            secrets,
            ["dXNAZXI6cGEvc3M=", "dXNAZXI6cGEvc3M", "pa%2Fss", "pa/ss"]
        );
    }

    #[test]
    fn urls_without_a_user_part_are_kept_as_written() {
        let url = BaseUrl::parse("https://api.x/v1/").expect("valid");
        assert_eq!(url.to_string(), "https://api.x/v1");
        assert_eq!(url.address(), "https://api.x/v1");
        assert!(url.user().is_none());
        let url = BaseUrl::parse("http://token@h").expect("valid");
        assert_eq!(
            (url.address(), url.user()),
            ("http://h", Some(("token", None)))
        );
        for bad in ["", "not a url", "ftp://h/x", "http://", "file:///etc"] {
            assert_eq!(BaseUrl::parse(bad), None, "{bad}");
        }
    }
}
