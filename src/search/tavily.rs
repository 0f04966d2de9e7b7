//! Tavily's search API: `POST {baseURL}/search` with a JSON body, answered with
//! `{"results":[{"title","url","content","score"}]}`.
//!
//! The key goes in the `Authorization: Bearer` header, not in the body (Tavily accepts both;
//! a body is easier to leak into a log).

use serde::{Deserialize, Serialize};

use super::SearchHit;
use crate::settings::{ApiKey, BaseUrl};

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

/// The request of one search; `url` is `{baseURL}/search`.
pub fn request(
    http: &reqwest::Client,
    url: &BaseUrl,
    key: &ApiKey,
    query: &str,
    max_results: u32,
) -> reqwest::RequestBuilder {
    crate::http::request(http, reqwest::Method::POST, url, Some(key)).json(&TavilyRequest {
        query,
        max_results,
        search_depth: "basic",
    })
}

/// The first `max` results that have a URL.
pub fn parse(text: &str, max: usize) -> Result<Vec<SearchHit>, serde_json::Error> {
    let response: TavilyResponse = serde_json::from_str(text)?;
    Ok(response
        .results
        .into_iter()
        .filter_map(|r| SearchHit::from_parts(r.title, r.url, r.content))
        .take(max)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_body_is_exactly_the_three_fields() {
        let body = serde_json::to_value(TavilyRequest {
            query: "q",
            max_results: 4,
            search_depth: "basic",
        })
        .expect("serialises");
        assert_eq!(
            body,
            serde_json::json!({"query": "q", "max_results": 4, "search_depth": "basic"})
        );
    }

    #[test]
    fn parses_results() {
        let text = r#"{"query":"q","results":[{"title":"T","url":"https://t","content":"c","score":0.5}],"response_time":0.1}"#;
        let hits = parse(text, 5).expect("valid");
        assert_eq!(
            hits,
            vec![SearchHit {
                title: "T".into(),
                url: "https://t".into(),
                snippet: "c".into()
            }]
        );
    }
}
