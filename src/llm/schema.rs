//! The JSON Schema of a structured answer, in the two variants servers need:
//!
//! - `strict`: sent as `response_format: json_schema` with `strict: true`. It must be valid in
//!   OpenAI's strict mode: every object closed (`additionalProperties: false`) with all its
//!   properties required, no `anyOf` at the root, and among the constraints only `enum`,
//!   `pattern`, `minItems` and `maxItems`.
//! - `grammar`: sent inside `response_format: json_object` to servers that turn it into a
//!   decoding grammar (llama-cpp-python and others). It may say more (an `anyOf` at the root,
//!   string lengths), so that even a small model cannot break the contract.
//!
//! Patterns in both keep to the subset every grammar converter accepts: literals, classes like
//! `[a-z]`, groups, `|`, `?`, `*`, `+` and `{m,n}`, anchored with `^...$`; no shorthand such as
//! `\s` or `\d` (llama-cpp-python crashes on them); and no `maxLength` or `maxItems` over
//! [`GRAMMAR_MAX_REPEAT`] (the same server dies on the grammar it would make). [`rule_violations`] checks all of this, and
//! the tests of every contract run it. What a schema cannot express, the caller's contract
//! check still catches.

use serde_json::Value;

/// A structured answer's schema, in both variants.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonSchema {
    /// Sent as `json_schema.name`.
    pub name: &'static str,
    pub strict: Value,
    pub grammar: Value,
}

impl JsonSchema {
    /// A schema that is the same in both variants.
    pub fn new(name: &'static str, schema: Value) -> JsonSchema {
        JsonSchema {
            name,
            grammar: schema.clone(),
            strict: schema,
        }
    }

    /// Replaces the grammar variant.
    pub fn with_grammar(mut self, grammar: Value) -> JsonSchema {
        self.grammar = grammar;
        self
    }
}

/// Keywords OpenAI's strict mode accepts (beyond structure).
const STRICT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "pattern",
    "minItems",
    "maxItems",
    "description",
    "anyOf",
];

/// The largest `maxLength` or `maxItems`: a grammar converter turns a bound into one optional
/// rule per repetition, and llama.cpp's grammar parser refuses (llama-cpp-python 0.3.x dies)
/// somewhere between 1,000, which it served, and 1,200, which killed it.
pub const GRAMMAR_MAX_REPEAT: u64 = 1000;

/// Every way `schema` breaks the rules of its variant (`strict` or not), as messages with the
/// JSON path. Empty when it keeps them all.
pub fn rule_violations(schema: &Value, strict: bool) -> Vec<String> {
    let mut found = Vec::new();
    if strict && schema.get("anyOf").is_some() {
        found.push("$: strict mode allows no `anyOf` at the root".to_string());
    }
    walk(schema, "$", strict, &mut found);
    found
}

fn walk(node: &Value, path: &str, strict: bool, found: &mut Vec<String>) {
    let Some(obj) = node.as_object() else {
        return;
    };
    for key in obj.keys() {
        if strict && !STRICT_KEYWORDS.contains(&key.as_str()) {
            found.push(format!("{path}: strict mode does not allow `{key}`"));
        }
    }
    if let Some(pattern) = obj.get("pattern").and_then(Value::as_str)
        && let Err(why) = grammar_safe(pattern)
    {
        found.push(format!("{path}.pattern: {why}"));
    }
    for bound in ["maxLength", "maxItems"] {
        if let Some(n) = obj.get(bound).and_then(Value::as_u64)
            && n > GRAMMAR_MAX_REPEAT
        {
            found.push(format!(
                "{path}.{bound}: {n} is over {GRAMMAR_MAX_REPEAT}, which a grammar converter expands into more rules than its parser takes"
            ));
        }
    }
    if obj.get("type").and_then(Value::as_str) == Some("object") {
        if obj.get("additionalProperties") != Some(&Value::Bool(false)) {
            found.push(format!(
                "{path}: objects must set `additionalProperties: false`"
            ));
        }
        let props: Vec<&String> = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for p in props {
            if !required.contains(&p.as_str()) {
                found.push(format!("{path}: property `{p}` must be required"));
            }
        }
    }
    for (key, child) in obj {
        match child {
            Value::Object(_) if key == "properties" => {
                for (name, prop) in child.as_object().into_iter().flatten() {
                    walk(prop, &format!("{path}.{name}"), strict, found);
                }
            }
            Value::Object(_) => walk(child, &format!("{path}.{key}"), strict, found),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    walk(item, &format!("{path}.{key}[{i}]"), strict, found);
                }
            }
            _ => {}
        }
    }
}

/// Whether a pattern keeps to the subset that grammar converters accept.
pub fn grammar_safe(pattern: &str) -> Result<(), String> {
    if !pattern.starts_with('^') || !pattern.ends_with('$') {
        return Err(format!("`{pattern}` must be anchored with `^...$`"));
    }
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e) if "[](){}.*+?|^$\\-,:".contains(e) => {}
                Some(e) => return Err(format!("`{pattern}` uses the shorthand `\\{e}`")),
                None => return Err(format!("`{pattern}` ends in a lone backslash")),
            }
        }
        if c == '(' && chars.peek() == Some(&'?') {
            return Err(format!("`{pattern}` uses a `(?...)` group"));
        }
    }
    regex::Regex::new(pattern)
        .map(|_| ())
        .map_err(|e| format!("`{pattern}` is not a regular expression: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shorthands_and_unanchored_patterns_are_refused() {
        assert!(grammar_safe("^[a-z]+(, ?[a-z]+)*$").is_ok());
        assert!(grammar_safe("^info\\[(llm|all)\\]$").is_ok());
        assert!(grammar_safe("^\\s+$").is_err());
        assert!(grammar_safe("^\\d{2}$").is_err());
        assert!(grammar_safe("[a-z]+").is_err());
        assert!(grammar_safe("^(?i)x$").is_err());
    }

    #[test]
    fn strict_rules_are_checked_at_every_depth() {
        let good = json!({"type": "object", "additionalProperties": false, "required": ["a"],
            "properties": {"a": {"type": "array", "maxItems": 2, "items": {"type": "string", "pattern": "^x$"}}}});
        assert_eq!(rule_violations(&good, true), Vec::<String>::new());
        let bad = json!({"anyOf": [good.clone()]});
        assert!(rule_violations(&bad, true)[0].contains("anyOf"));
        assert!(
            rule_violations(&bad, false).is_empty(),
            "grammar variants may branch"
        );
        let open =
            json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}});
        let found = rule_violations(&open, true);
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            rule_violations(&open, false).len(),
            2,
            "lengths are fine in a grammar"
        );
    }

    #[test]
    fn bounds_a_grammar_converter_cannot_expand_are_refused() {
        let bounded = |n: u64| json!({"type": "string", "maxLength": n});
        assert!(rule_violations(&bounded(GRAMMAR_MAX_REPEAT), false).is_empty());
        let found = rule_violations(&bounded(1200), false);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(
            found[0].starts_with("$.maxLength: 1200 is over 1000"),
            "{found:?}"
        );
        let items = json!({"type": "array", "maxItems": 5000, "items": {"type": "string"}});
        assert_eq!(rule_violations(&items, false).len(), 1);
    }
}
