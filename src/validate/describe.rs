//! Short descriptions of JSON values for diagnostic messages ("a number `3`"), cut to a
//! readable length, and the type checks every validator makes in the same words (a required
//! string, a list of strings, the INVALID_TYPE message). No rule lives here: callers decide
//! which field must have which type.

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

/// The kind of a value that may be absent: "missing" reads as well as "a number `3`" after
/// "`field` is".
pub fn kind_or_missing(v: Option<&Value>) -> String {
    v.map_or_else(|| "missing".to_string(), kind)
}

/// Records INVALID_TYPE at `path` as "`name` is <kind of `found`>: <fix>", so every validator
/// words a type error the same way.
pub fn invalid_type(
    path: impl Into<String>,
    name: &str,
    found: &Value,
    fix: &str,
    d: &mut Diagnostics,
) {
    d.error(
        "INVALID_TYPE",
        path,
        format!("`{name}` is {}: {fix}", kind(found)),
    );
}

/// Records `code` at `base[i]` for every item of `items` that is not a string, as "<label> is
/// <kind>: write a string".
pub fn require_string_items(
    items: &[Value],
    base: &str,
    code: &str,
    label: &str,
    d: &mut Diagnostics,
) {
    for (i, item) in items.iter().enumerate() {
        if !item.is_string() {
            d.error(
                code,
                json_path::index(base, i),
                format!("{label} is {}: write a string", kind(item)),
            );
        }
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
            invalid_type(path, field, other, "write a string", d);
            None
        }
    }
}

/// Records MISSING_FIELD / INVALID_TYPE unless `obj[field]` is `true` or `false`; returns it.
pub fn require_bool(
    obj: &Map<String, Value>,
    base: &str,
    field: &str,
    d: &mut Diagnostics,
) -> Option<bool> {
    let path = json_path::key(base, field);
    match obj.get(field) {
        Some(Value::Bool(b)) => Some(*b),
        None => {
            d.error(
                "MISSING_FIELD",
                path,
                format!("`{field}` is missing: add true or false"),
            );
            None
        }
        Some(other) => {
            invalid_type(path, field, other, "write true or false", d);
            None
        }
    }
}

/// Records the warning UNKNOWN_FIELD for every key of `obj` not in `known`.
pub fn warn_unknown(obj: &Map<String, Value>, base: &str, known: &[&str], d: &mut Diagnostics) {
    for key in obj.keys().filter(|k| !known.contains(&k.as_str())) {
        d.warn(
            "UNKNOWN_FIELD",
            json_path::key(base, key),
            format!("`{key}` is not part of the contract"),
        );
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
