//! SearXNG's JSON API: `GET {baseURL}/search?q=..&format=json`, answered with
//! `{"results":[{"url","title","content"}]}`.
//!
//! SearXNG is self-hosted, so there is no default address, and a key is optional (some
//! instances sit behind a proxy that wants one); when given it goes in the `Authorization`
//! header, never in the URL. SearXNG takes no result count: the client keeps the first ones.

use reqwest::{Method, RequestBuilder};
use serde::{Deserialize, Serialize};

use super::{KeySentAs, ProviderSpec, WebHit, WebProvider};

/// The `searxng` provider.
#[derive(Debug, Clone, Copy)]
pub struct Searxng;

/// The `searxng` provider's constants.
pub const SPEC: ProviderSpec = ProviderSpec {
    name: "searxng",
    default_base_url: None,
    path: "/search",
    method: Method::GET,
    key_env: "SEARXNG_API_KEY",
    key_required: false,
    key_sent_as: KeySentAs::Bearer,
};

/// The query string of one search.
#[derive(Debug, Serialize)]
pub struct SearxngQuery<'a> {
    pub q: &'a str,
    /// Must be `json`; an instance without the JSON format enabled answers 403.
    pub format: &'static str,
}

#[derive(Debug, Deserialize)]
pub struct SearxngResponse {
    pub results: Vec<SearxngResult>,
}

#[derive(Debug, Deserialize)]
pub struct SearxngResult {
    pub url: Option<String>,
    pub title: Option<String>,
    pub content: Option<String>,
}

impl WebProvider for Searxng {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn request(&self, request: RequestBuilder, query: &str, _max_results: u32) -> RequestBuilder {
        request.query(&SearxngQuery {
            q: query,
            format: "json",
        })
    }

    fn parse(&self, body: &str) -> Result<Vec<WebHit>, serde_json::Error> {
        let response: SearxngResponse = serde_json::from_str(body)?;
        Ok(response
            .results
            .into_iter()
            .map(|r| WebHit {
                title: r.title,
                url: r.url,
                snippet: r.content,
            })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(title: Option<&str>, url: Option<&str>, snippet: Option<&str>) -> WebHit {
        WebHit {
            title: title.map(String::from),
            url: url.map(String::from),
            snippet: snippet.map(String::from),
        }
    }

    #[test]
    fn every_result_is_passed_on_in_order() {
        let text = r#"{"query":"q","results":[
            {"title":"no url","content":"x"},
            {"url":"https://a","title":"A","content":"a","engine":"e"},
            {"url":"https://b","title":"B"}]}"#;
        assert_eq!(
            Searxng.parse(text).expect("valid"),
            vec![
                hit(Some("no url"), None, Some("x")),
                hit(Some("A"), Some("https://a"), Some("a")),
                hit(Some("B"), Some("https://b"), None),
            ]
        );
    }

    #[test]
    fn a_body_without_results_is_an_error() {
        let err = Searxng.parse(r#"{"error":"x"}"#).expect_err("no results");
        assert!(err.to_string().contains("missing field `results`"), "{err}");
    }

    #[test]
    fn the_request_asks_for_json_and_no_count() {
        let http = reqwest::Client::new();
        let request = Searxng
            .request(http.get("http://s/search"), "a b", 4)
            .build()
            .expect("builds");
        assert_eq!(request.url().as_str(), "http://s/search?q=a+b&format=json");
    }
}
