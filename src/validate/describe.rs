//! Short descriptions of JSON values for diagnostic messages ("a number `3`"), cut to a
//! readable length, and the required-string check every validator makes. No rule lives here.

use serde_json::{Map, Value};

use super::json_path;
use crate::diagnostics::Diagnostics;
use crate::text::truncate;

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

/// Records MISSING_FIELD / INVALID_TYPE unless `obj[field]` is a string; returns it.
pub fn require_string<'a>(
    obj: &'a Map<String, Value>,
    base: &str,
    field: &str,
    d: &mut Diagnostics,
) -> Option<&'a str> {
    let path = json_path::key(base, field);
    match obj.get(field) {
        Some(Value::String(s)) => Some(s),
        None => {
            d.error(
                "MISSING_FIELD",
                path,
                format!("`{field}` is missing: add a string"),
            );
            None
        }
        Some(other) => {
            d.error(
                "INVALID_TYPE",
                path,
                format!("`{field}` is {}: write a string", kind(other)),
            );
            None
        }
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
        assert_eq!(kind(&json!("路径路径")), "a string `路径路径`");
        let mut d = Diagnostics::new();
        let obj = json!({"a": "x", "b": 1});
        let obj = obj.as_object().expect("object");
        assert_eq!(require_string(obj, "root", "a", &mut d), Some("x"));
        assert_eq!(require_string(obj, "root", "b", &mut d), None);
        assert_eq!(require_string(obj, "root", "c", &mut d), None);
        assert!(d.has_error("INVALID_TYPE") && d.has_error("MISSING_FIELD"));
        assert_eq!(d.errors[0].path, "root.b");
    }
}
