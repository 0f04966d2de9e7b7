//! Short descriptions of JSON values for diagnostic messages ("a number `3`"), cut to a
//! readable length. Only formatting; no rule lives here.

use serde_json::Value;

/// A JSON value's kind, for messages: "a number `3`".
pub fn kind(v: &Value) -> String {
    match v {
        Value::Null => "`null`".to_string(),
        Value::Bool(b) => format!("a boolean `{b}`"),
        Value::Number(n) => format!("a number `{n}`"),
        Value::String(s) => format!("a string `{}`", truncate(s, 60)),
        Value::Array(_) => "an array".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

/// At most `max` characters, with `...` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn describes_and_cuts_on_char_boundaries() {
        assert_eq!(kind(&json!(3)), "a number `3`");
        assert_eq!(kind(&json!([1])), "an array");
        assert_eq!(truncate("路径路径", 2), "路径...");
        assert_eq!(truncate("ab", 2), "ab");
    }
}
