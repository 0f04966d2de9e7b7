//! SearXNG's JSON API: `GET {baseURL}/search?q=..&format=json`, answered with
//! `{"results":[{"url","title","content"}]}`.
//!
//! SearXNG is self-hosted, so there is no default address, and a key is optional (some
//! instances sit behind a proxy that wants one); when given it goes in the `Authorization`
//! header, never in the URL. SearXNG takes no result count: the client keeps the first ones.

use serde::{Deserialize, Serialize};

use super::SearchHit;
use crate::settings::{ApiKey, BaseUrl};

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

/// The request of one search; `url` is the endpoint without the query.
pub fn request(
    http: &reqwest::Client,
    url: &BaseUrl,
    key: Option<&ApiKey>,
    query: &str,
) -> reqwest::RequestBuilder {
    crate::http::request(http, reqwest::Method::GET, url, key).query(&SearxngQuery {
        q: query,
        format: "json",
    })
}

/// The first `max` results that have a URL.
pub fn parse(text: &str, max: usize) -> Result<Vec<SearchHit>, serde_json::Error> {
    let response: SearxngResponse = serde_json::from_str(text)?;
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
    fn skips_results_without_url_and_keeps_the_first_max() {
        let text = r#"{"query":"q","results":[
            {"title":"no url","content":"x"},
            {"url":"https://a","title":"A","content":"a","engine":"e"},
            {"url":"","title":"empty url"},
            {"url":"https://b","title":"B"},
            {"url":"https://c","title":"C","content":"c"}]}"#;
        let hits = parse(text, 2).expect("valid");
        assert_eq!(
            hits,
            vec![
                SearchHit {
                    title: "A".into(),
                    url: "https://a".into(),
                    snippet: "a".into()
                },
                SearchHit {
                    title: "B".into(),
                    url: "https://b".into(),
                    snippet: String::new()
                },
            ]
        );
    }

    #[test]
    fn a_body_without_results_is_an_error() {
        let err = parse(r#"{"error":"x"}"#, 5).expect_err("no results");
        assert!(err.to_string().contains("missing field `results`"), "{err}");
    }
}
