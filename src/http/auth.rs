//! The one way a request is addressed and authorised: to a [`BaseUrl`]'s address (never its
//! user part) with at most one `Authorization` header.
//!
//! The rule: a key sent as a bearer token (the model's `apiKey`, SearXNG's and Tavily's key)
//! is the `Authorization` header; without one, the user and password of
//! `http://user:password@host` are sent as Basic auth, as a browser or curl would. reqwest
//! would turn a user part in the address into a Basic header of its own, next to our bearer
//! token: two `Authorization` headers, which servers read differently. So the address we hand
//! reqwest never has one.

use reqwest::{Client, Method, RequestBuilder};

use crate::settings::{ApiKey, BaseUrl};

/// A request to `url` carrying `bearer` as its `Authorization`, or else the URL's user and
/// password as Basic auth.
pub fn request(
    http: &Client,
    method: Method,
    url: &BaseUrl,
    bearer: Option<&ApiKey>,
) -> RequestBuilder {
    let request = http.request(method, url.address());
    match (bearer, url.user()) {
        (Some(key), _) => request.bearer_auth(key.expose()),
        (None, Some((user, password))) => request.basic_auth(user, password.map(ApiKey::expose)),
        (None, None) => request,
    }
}

/// Whether [`request`] sends `url`'s user and password as Basic auth (no bearer key is sent):
/// then a 401 or 403 refused them, and the message that says so names them, not a key.
pub fn sends_user_part(url: &BaseUrl, bearer: Option<&ApiKey>) -> bool {
    bearer.is_none() && url.user().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn authorizations(url: &str, bearer: Option<&str>) -> (String, Vec<String>) {
        let url = BaseUrl::parse(url).expect("valid");
        let key = bearer.and_then(ApiKey::new);
        let http = crate::http::client().expect("client");
        let built = request(&http, Method::GET, &url, key.as_ref())
            .build()
            .expect("builds");
        let headers = built
            .headers()
            .get_all(reqwest::header::AUTHORIZATION)
            .iter()
            .map(|v| v.to_str().unwrap_or_default().to_string())
            .collect();
        (built.url().to_string(), headers)
    }

    #[test]
    fn one_authorization_header_the_key_first_then_the_user_part() {
        assert_eq!(
            authorizations("http://u:p%40ss@h/v1", Some("sk-1")),
            ("http://h/v1".to_string(), vec!["Bearer sk-1".to_string()])
        );
        // base64 of `u:p@ss`.
        assert_eq!(
            authorizations("http://u:p%40ss@h/v1", None),
            (
                "http://h/v1".to_string(),
                vec!["Basic dTpwQHNz".to_string()]
            )
        );
        assert_eq!(
            authorizations("http://h/v1", None),
            ("http://h/v1".to_string(), vec![])
        );
    }
}
