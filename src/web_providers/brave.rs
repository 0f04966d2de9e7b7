//! Brave's Web Search API: `GET {baseURL}/res/v1/web/search?q=..&count=..`, answered with
//! `{"web":{"results":[{"title","url","description"}]}}`.
//!
//! The key goes in the `X-Subscription-Token` header. Brave marks the matched words in titles
//! and descriptions with HTML (`<strong>`) and escapes some characters as entities; both are
//! turned back into plain text here. An answer without `web` (no web results) is zero hits.

use std::sync::LazyLock;

use regex::Regex;
use reqwest::{Method, RequestBuilder};
use serde::{Deserialize, Serialize};

use super::{KeySentAs, ProviderSpec, WebHit, WebProvider};

/// The `brave` provider.
#[derive(Debug, Clone, Copy)]
pub struct Brave;

/// The `brave` provider's constants.
pub const SPEC: ProviderSpec = ProviderSpec {
    name: "brave",
    default_base_url: Some("https://api.search.brave.com"),
    path: "/res/v1/web/search",
    method: Method::GET,
    key_env: "BRAVE_API_KEY",
    key_required: true,
    key_sent_as: KeySentAs::Header("X-Subscription-Token"),
};

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

impl WebProvider for Brave {
    fn spec(&self) -> &'static ProviderSpec {
        &SPEC
    }

    fn request(&self, request: RequestBuilder, query: &str, max_results: u32) -> RequestBuilder {
        request
            .query(&BraveQuery {
                q: query,
                count: max_results,
            })
            .header(reqwest::header::ACCEPT, "application/json")
    }

    /// The results as plain text.
    fn parse(&self, body: &str) -> Result<Vec<WebHit>, serde_json::Error> {
        let response: BraveResponse = serde_json::from_str(body)?;
        let results = response.web.map(|w| w.results).unwrap_or_default();
        Ok(results
            .into_iter()
            .map(|r| WebHit {
                title: r.title.as_deref().map(plain_text),
                url: r.url,
                snippet: r.description.as_deref().map(plain_text),
            })
            .collect())
    }
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
        assert_eq!(Brave.parse(r#"{"type":"search"}"#).expect("valid"), vec![]);
        assert_eq!(Brave.parse(r#"{"web":{}}"#).expect("valid"), vec![]);
    }

    #[test]
    fn parses_and_cleans_results() {
        let text = r#"{"type":"search","web":{"type":"search","results":[
            {"title":"<strong>T</strong>","url":"https://t","description":"about <strong>t</strong>"},
            {"title":"no url"}]}}"#;
        assert_eq!(
            Brave.parse(text).expect("valid"),
            vec![
                WebHit {
                    title: Some("T".into()),
                    url: Some("https://t".into()),
                    snippet: Some("about t".into())
                },
                WebHit {
                    title: Some("no url".into()),
                    ..WebHit::default()
                },
            ]
        );
    }

    #[test]
    fn the_request_asks_for_the_count_in_json() {
        let http = reqwest::Client::new();
        let request = Brave
            .request(http.get("http://b/res/v1/web/search"), "a b", 7)
            .build()
            .expect("builds");
        assert_eq!(
            request.url().as_str(),
            "http://b/res/v1/web/search?q=a+b&count=7"
        );
        assert_eq!(request.headers()["accept"], "application/json");
    }
}
