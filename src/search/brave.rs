//! Brave's Web Search API: `GET {baseURL}/res/v1/web/search?q=..&count=..`, answered with
//! `{"web":{"results":[{"title","url","description"}]}}`.
//!
//! The key goes in the `X-Subscription-Token` header. Brave marks the matched words in titles
//! and descriptions with HTML (`<strong>`) and escapes some characters as entities; both are
//! turned back into plain text here. An answer without `web` (no web results) is zero hits.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use super::SearchHit;
use crate::settings::{ApiKey, BaseUrl};

/// Where Brave lives when `search.baseURL` is not set.
pub const DEFAULT_BASE_URL: &str = "https://api.search.brave.com";

/// The query string of one search.
#[derive(Debug, Serialize)]
pub struct BraveQuery<'a> {
    pub q: &'a str,
    /// 1 to 20.
    pub count: u32,
}

#[derive(Debug, Deserialize)]
pub struct BraveResponse {
    /// Absent when the query found no web results.
    pub web: Option<BraveWeb>,
}

#[derive(Debug, Deserialize)]
pub struct BraveWeb {
    #[serde(default)]
    pub results: Vec<BraveResult>,
}

#[derive(Debug, Deserialize)]
pub struct BraveResult {
    pub url: Option<String>,
    pub title: Option<String>,
    pub description: Option<String>,
}

/// The request of one search; `url` is the endpoint without the query.
pub fn request(
    http: &reqwest::Client,
    url: &BaseUrl,
    key: &ApiKey,
    query: &str,
    max_results: u32,
) -> reqwest::RequestBuilder {
    // The key goes in its own header, so the `Authorization` header is the URL's user part.
    crate::http::request(http, reqwest::Method::GET, url, None)
        .query(&BraveQuery {
            q: query,
            count: max_results,
        })
        .header("X-Subscription-Token", key.expose())
        .header(reqwest::header::ACCEPT, "application/json")
}

/// The first `max` results that have a URL, as plain text.
pub fn parse(text: &str, max: usize) -> Result<Vec<SearchHit>, serde_json::Error> {
    let response: BraveResponse = serde_json::from_str(text)?;
    let results = response.web.map(|w| w.results).unwrap_or_default();
    Ok(results
        .into_iter()
        .filter_map(|r| {
            SearchHit::from_parts(
                r.title.as_deref().map(plain_text),
                r.url,
                r.description.as_deref().map(plain_text),
            )
        })
        .take(max)
        .collect())
}

/// Removes HTML tags (`<strong>`, `</b>`, `<br/>`) and decodes the common entities. Only
/// tag-shaped text is removed, so `a < b` survives.
pub fn plain_text(html: &str) -> String {
    // A constant pattern: it either always compiles or the unit tests fail.
    static TAG: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"</?[A-Za-z][A-Za-z0-9]*(\s[^<>]*)?/?>").expect("valid"));
    let text = TAG.replace_all(html, "");
    // `&amp;` last, so `&amp;lt;` becomes `&lt;` rather than `<`.
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#x27;", "'")
        .replace("&#39;", "'")
        .replace("&nbsp;", " ")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_tags_and_decodes_entities() {
        assert_eq!(
            plain_text("The <strong>Rust</strong> book&#x27;s <b class=\"x\">guide</b><br/>"),
            "The Rust book's guide"
        );
        assert_eq!(plain_text("a < b &amp;&amp; c > d"), "a < b && c > d");
        assert_eq!(plain_text("&amp;lt;tag&amp;gt;"), "&lt;tag&gt;");
    }

    #[test]
    fn no_web_section_is_zero_hits() {
        assert_eq!(parse(r#"{"type":"search"}"#, 5).expect("valid"), vec![]);
        assert_eq!(parse(r#"{"web":{}}"#, 5).expect("valid"), vec![]);
    }

    #[test]
    fn parses_and_cleans_results() {
        let text = r#"{"type":"search","web":{"type":"search","results":[
            {"title":"<strong>T</strong>","url":"https://t","description":"about <strong>t</strong>"},
            {"title":"no url"},
            {"title":"U","url":"https://u","description":"u"}]}}"#;
        let hits = parse(text, 1).expect("valid");
        assert_eq!(
            hits,
            vec![SearchHit {
                title: "T".into(),
                url: "https://t".into(),
                snippet: "about t".into()
            }]
        );
    }
}
