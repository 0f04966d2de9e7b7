//! What an MCP search tool answered, read as results: from its structured content, else from
//! JSON in its text content. MCP tools answer in many shapes, so this reads what they
//! commonly are: a list of results; an object holding such a list (under `results`, `hits`,
//! `items`, `data`, `organic`, `web`, `result`..., or its only list); one result per text block
//! (as a Python SDK server sends a returned list). A result is an object with a URL (`url`,
//! `link`, `href`, `uri`), a title (`title`, `name`) and a snippet (`snippet`, `content`,
//! `description`, `text`, `summary`, `body`, `excerpt`). What is read here is untrusted: the caller keeps only
//! results with a web URL, cleaned like any web hit ([`super::SearchHit::from_parts`]).

use serde_json::{Map, Value};

use crate::web_providers::WebHit;

/// Keys under which a list of results is commonly found, in the order they are tried.
const LIST_KEYS: &[&str] = &[
    "results",
    "hits",
    "items",
    "data",
    "organic",
    "web",
    "documents",
    "result",
    "sources",
];

/// A tool's answer as results: `None` when it holds no list of results at all.
pub fn results_of(structured: Option<&Value>, texts: &[&str]) -> Option<Vec<WebHit>> {
    if let Some(found) = structured.and_then(results_in) {
        return Some(found);
    }
    let mut found: Option<Vec<WebHit>> = None;
    for text in texts {
        let Ok(value) = serde_json::from_str::<Value>(text.trim()) else {
            continue;
        };
        let hits = match &value {
            Value::Object(map) if url_of(map).is_some() => vec![hit(map)],
            other => match results_in(other) {
                Some(hits) => hits,
                None => continue,
            },
        };
        found.get_or_insert_with(Vec::new).extend(hits);
    }
    found
}

/// The results in one JSON value: a list of objects, or an object holding one.
fn results_in(value: &Value) -> Option<Vec<WebHit>> {
    match value {
        Value::Array(items) => Some(items.iter().filter_map(Value::as_object).map(hit).collect()),
        Value::Object(map) => {
            let known = LIST_KEYS
                .iter()
                .find_map(|k| map.get(*k).and_then(results_in));
            known.or_else(|| {
                let lists: Vec<&Value> = map.values().filter(|v| v.is_array()).collect();
                match lists.as_slice() {
                    [only] => results_in(only),
                    _ => None,
                }
            })
        }
        _ => None,
    }
}

fn hit(map: &Map<String, Value>) -> WebHit {
    WebHit {
        url: url_of(map),
        title: first_text(map, &["title", "name"]),
        snippet: first_text(
            map,
            &[
                "snippet",
                "content",
                "description",
                "text",
                "summary",
                "body",
                "excerpt",
            ],
        ),
    }
}

fn url_of(map: &Map<String, Value>) -> Option<String> {
    first_text(map, &["url", "link", "href", "uri"])
}

fn first_text(map: &Map<String, Value>, keys: &[&str]) -> Option<String> {
    keys.iter()
        .find_map(|k| map.get(*k).and_then(Value::as_str))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn urls(found: Option<Vec<WebHit>>) -> Vec<String> {
        found
            .expect("a list")
            .into_iter()
            .map(|h| h.url.unwrap_or_default())
            .collect()
    }

    #[test]
    fn structured_content_in_the_common_shapes() {
        let list = json!([{"url": "https://a", "title": "A", "snippet": "s"}, {"link": "https://b", "name": "B"}]);
        assert_eq!(
            urls(results_of(Some(&list), &[])),
            ["https://a", "https://b"]
        );
        let wrapped = json!({"result": list.clone()});
        assert_eq!(
            urls(results_of(Some(&wrapped), &[])),
            ["https://a", "https://b"]
        );
        let ddg = json!([{"href": "https://d", "title": "D", "body": "the body"}]);
        let found = results_of(Some(&ddg), &[]).expect("a list");
        assert_eq!(found[0].snippet.as_deref(), Some("the body"));
        let named = json!({"query": "q", "results": [{"href": "https://c", "description": "d"}]});
        let found = results_of(Some(&named), &[]).expect("a list");
        assert_eq!(found[0].url.as_deref(), Some("https://c"));
        assert_eq!(found[0].snippet.as_deref(), Some("d"));
        let only = json!({"count": 1, "pages": [{"url": "https://e"}]});
        assert_eq!(urls(results_of(Some(&only), &[])), ["https://e"]);
        assert_eq!(
            urls(results_of(Some(&json!({"results": []})), &[])),
            Vec::<String>::new()
        );
    }

    #[test]
    fn text_content_as_one_list_or_one_result_per_block() {
        let one = r#"[{"url": "https://a", "title": "A"}]"#;
        assert_eq!(urls(results_of(None, &[one])), ["https://a"]);
        let blocks = [
            r#"{"url": "https://a"}"#,
            "not json",
            r#"{"url": "https://b"}"#,
        ];
        assert_eq!(urls(results_of(None, &blocks)), ["https://a", "https://b"]);
        let structured_without_list = json!({"answer": 42});
        assert_eq!(
            urls(results_of(Some(&structured_without_list), &[one])),
            ["https://a"]
        );
    }

    #[test]
    fn an_answer_without_a_list_is_none() {
        assert!(results_of(None, &["Here are some results: example.com"]).is_none());
        assert!(results_of(Some(&json!({"a": [1], "b": [2]})), &[]).is_none());
        assert!(results_of(Some(&json!("text")), &[]).is_none());
        assert!(results_of(None, &[]).is_none());
    }
}
