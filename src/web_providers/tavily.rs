//! Tavily's search API: `POST {baseURL}/search` with a JSON body, answered with
//! `{"results":[{"title","url","content","score"}]}`.
//!
//! The key goes in the `Authorization: Bearer` header, not in the body (Tavily accepts both;
//! a body is easier to leak into a log).

use reqwest::{Method, RequestBuilder};
use serde::{Deserialize, Serialize};

use super::{KeySentAs, ProviderSpec, WebHit, WebProvider};

/// The `tavily` provider.
#[derive(Debug, Clone, Copy)]
pub struct Tavily;

/// The `tavily` provider's constants.
pub const SPEC: ProviderSpec = ProviderSpec {
    name: "tavily",
    default_base_url: Some("https://api.tavily.com"),
    path: "/search",
    method: Method::POST,
    key_env: "TAVILY_API_KEY",
    key_required: true,
    key_sent_as: KeySentAs::Bearer,
};

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
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
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
