//! Getting the JSON object out of a model's answer.
//!
//! Models wrap JSON in `<think>...</think>` reasoning, Markdown fences or prose. This module
//! removes the reasoning, prefers the content of a fenced block, and takes the first complete
//! JSON object it finds, reading a raw line break (or another control character) inside a
//! string as its escape when nothing parses without. It does not judge the object: each
//! caller checks its own contract.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

static THINK: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(r"(?is)<think>.*?</think>").expect("valid regex")
});

static FENCE: LazyLock<Regex> = LazyLock::new(|| {
    // A literal pattern: compiling it cannot fail.
    Regex::new(r"(?s)```[a-zA-Z0-9_-]*\s*\n?(.*?)```").expect("valid regex")
});

/// The first JSON object in the answer, or why there is none.
pub fn extract_json(answer: &str) -> Result<Value, String> {
    let mut text = THINK.replace_all(answer, "").into_owned();
    // An unclosed <think> (cut off answer): drop everything up to its end marker, if any.
    if let Some(start) = text.to_ascii_lowercase().find("<think>") {
        text = match text.to_ascii_lowercase().find("</think>") {
            Some(end) => text[end + "</think>".len()..].to_string(),
            None => text[start + "<think>".len()..].to_string(),
        };
    }
    let fenced: Vec<String> = FENCE
        .captures_iter(&text)
        .filter_map(|c| c.get(1).map(|m| m.as_str().to_string()))
        .collect();
    for candidate in fenced.iter().map(String::as_str).chain([text.as_str()]) {
        if let Some(obj) = first_object(candidate) {
            return Ok(obj);
        }
    }
    Err(if text.contains('{') {
        "the answer holds no complete, valid JSON object".into()
    } else {
        "the answer holds no JSON object".into()
    })
}

/// Tries every `{` in turn and returns the first position that starts a whole JSON object;
/// then, if none does and the text has control characters, every `{` again with those inside
/// strings escaped ([`escape_controls_in_strings`]).
fn first_object(text: &str) -> Option<Value> {
    let object = |text: &str| {
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v @ Value::Object(_))) => Some(v),
            _ => None,
        }
    };
    let starts = || text.match_indices('{').map(|(pos, _)| &text[pos..]);
    starts().find_map(object).or_else(|| {
        let controls = text.chars().any(|c| c < ' ');
        controls
            .then(|| starts().find_map(|t| object(&escape_controls_in_strings(t))))
            .flatten()
    })
}

/// `text` (from an object's `{`) with the control characters inside its strings escaped, as
/// JSON wants them: small models under a JSON grammar still put an analysis's points on lines
/// of their own, a raw line break inside a string that a strict parser refuses (Qwen2.5-Coder
/// 1.5B on llama.cpp, 2026-12-06: every analyst answer of a run). Outside strings (where white
/// space is allowed) nothing changes.
fn escape_controls_in_strings(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        if in_string && c < ' ' {
            match c {
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                c => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            }
            escaped = false;
            continue;
        }
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_object() {
        assert_eq!(extract_json(r#"{"a": 1}"#), Ok(json!({"a": 1})));
    }

    #[test]
    fn think_then_fence() {
        let text = "<think>maybe {\"a\": 0} is it?</think>\nHere:\n```json\n{\"a\": 2}\n```\nDone.";
        assert_eq!(extract_json(text), Ok(json!({"a": 2})));
    }

    #[test]
    fn prose_around_and_braces_in_strings() {
        let text = r#"Sure! {"t": "a } b {", "n": [1, {"x": 2}]} hope that helps {"#;
        assert_eq!(
            extract_json(text),
            Ok(json!({"t": "a } b {", "n": [1, {"x": 2}]}))
        );
    }

    #[test]
    fn raw_line_breaks_inside_strings_are_read_as_escapes() {
        // Qwen2.5-Coder 1.5B's analyst answer, shortened (llama.cpp, 2026-12-06).
        let text = "{\"summary\": \"Under 80 characters.\", \"analysis\": \"Points:\n1. **Docs** \\\"short\\\"\r\n\t2. end\u{1}\"}";
        assert_eq!(
            extract_json(text),
            Ok(
                json!({"summary": "Under 80 characters.", "analysis": "Points:\n1. **Docs** \"short\"\r\n\t2. end\u{1}"})
            )
        );
        let spaced = "{\n  \"a\": \"x\ny\",\n  \"b\": 1\n}";
        assert_eq!(extract_json(spaced), Ok(json!({"a": "x\ny", "b": 1})));
        assert!(
            extract_json("{\"a\": \"open\n").is_err(),
            "still a whole object or none"
        );
    }

    #[test]
    fn broken_json_is_an_error() {
        assert!(extract_json(r#"{"a": 1"#).is_err());
        assert!(extract_json("no json here").is_err());
        assert!(
            extract_json("<think>{\"a\":1}").is_ok(),
            "unclosed think keeps its text"
        );
    }
}
