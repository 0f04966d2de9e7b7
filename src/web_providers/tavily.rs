//! Tavily's search API: `POST {baseURL}/search` with a JSON body, answered with
//! `{"results":[{"title","url","content","score"}]}`.
//!
//! The key goes in the `Authorization: Bearer` header, not in the body (Tavily accepts both;
//! a body is easier to leak into a log).

use reqwest::{Method, RequestBuilder};
use serde::{Deserialize, Serialize};

use super::{KeySentAs, WebHit, WebProvider};

/// The `tavily` provider.
#[derive(Debug, Clone, Copy)]
pub struct Tavily;

/// Where Tavily lives when `search.baseURL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.tavily.com";

/// The JSON body of one search.
#[derive(Debug, Serialize)]
pub struct TavilyRequest<'a> {
    pub query: &'a str,
    pub max_results: u32,
    /// `basic` costs one credit; `advanced` two.
    pub search_depth: &'static str,
}

#[derive(Debug, Deserialize)]
pub struct TavilyResponse {
    pub results: Vec<TavilyResult>,
}

#[derive(Debug, Deserialize)]
pub struct TavilyResult {
    pub url: Option<String>,
    pub title: Option<String>,
    pub content: Option<String>,
    /// Relevance in 0..1; unused, Tavily already sorts by it.
    pub score: Option<f64>,
}

impl WebProvider for Tavily {
    fn name(&self) -> &'static str {
        "tavily"
    }

    fn default_base_url(&self) -> Option<&'static str> {
        Some(DEFAULT_BASE_URL)
    }

    fn path(&self) -> &'static str {
        "/search"
    }

    fn method(&self) -> Method {
        Method::POST
    }

    fn key_env(&self) -> &'static str {
        "TAVILY_API_KEY"
    }

    fn key_required(&self) -> bool {
        true
    }

    fn key_sent_as(&self) -> KeySentAs {
        KeySentAs::Bearer
    }

    fn request(&self, request: RequestBuilder, query: &str, max_results: u32) -> RequestBuilder {
        request.json(&TavilyRequest {
            query,
            max_results,
            search_depth: "basic",
        })
    }

    fn parse(&self, body: &str) -> Result<Vec<WebHit>, serde_json::Error> {
        let response: TavilyResponse = serde_json::from_str(body)?;
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

    #[test]
    fn request_body_is_exactly_the_three_fields() {
        let http = reqwest::Client::new();
        let request = Tavily
            .request(http.post("http://t/search"), "q", 4)
            .build()
            .expect("builds");
        let body = request.body().and_then(|b| b.as_bytes()).expect("a body");
        assert_eq!(
            std::str::from_utf8(body).expect("utf-8"),
            r#"{"query":"q","max_results":4,"search_depth":"basic"}"#
        );
    }

    #[test]
    fn parses_results() {
        let text = r#"{"query":"q","results":[{"title":"T","url":"https://t","content":"c","score":0.5}],"response_time":0.1}"#;
        assert_eq!(
            Tavily.parse(text).expect("valid"),
            vec![WebHit {
                title: Some("T".into()),
                url: Some("https://t".into()),
                snippet: Some("c".into())
            }]
        );
    }
}
