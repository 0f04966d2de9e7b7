//! The JSON Schema of plan-next answers (docs/SPEC.md, "Plan-next answers (Thinkon)"; embedded
//! verbatim from `plan_next.schema.json`), checked with the `jsonschema` crate under draft 7.
//!
//! Schema errors become `(path, message)` pairs with dotted paths (`new_block.plan[2]`); an
//! `additionalProperties` error is split into one pair per unexpected key, at that key's path.
//! Messages mask instance values so a long answer is not echoed back. This module applies the
//! schema only; the semantic rules are in [`super::plan_next`].

use std::sync::LazyLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::paths::LocationSegment;
use serde_json::Value;

use super::json_path;

/// The schema text, verbatim.
pub const SCHEMA: &str = include_str!("plan_next.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    // Both `expect`s depend only on the embedded constant, which the unit tests below compile;
    // no input can make them fail.
    let schema: Value = serde_json::from_str(SCHEMA).expect("the embedded schema is JSON");
    jsonschema::draft7::new(&schema).expect("the embedded schema is a valid draft-7 schema")
});

/// Whether `doc` satisfies the schema.
pub fn conforms(doc: &Value) -> bool {
    VALIDATOR.is_valid(doc)
}

/// Every schema violation in `doc` as `(path, message)`.
pub fn violations(doc: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for error in VALIDATOR.iter_errors(doc) {
        let mut path = String::new();
        for segment in error.instance_path().iter() {
            path = match segment {
                LocationSegment::Property(p) => json_path::key(&path, &p),
                LocationSegment::Index(i) => json_path::index(&path, i),
            };
        }
        match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    out.push((
                        json_path::key(&path, key),
                        format!("schema: property `{key}` is not allowed here: remove it"),
                    ));
                }
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or_default();
                out.push((
                    json_path::key(&path, name),
                    format!("schema: required property `{name}` is missing: add it"),
                ));
            }
            _ => out.push((path, format!("schema: {}", error.masked()))),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_embedded_schema_compiles_and_accepts_an_execute_answer() {
        let doc = json!({
            "type": "plan-next", "plan_type": "EXECUTE",
            "new_block": {"goal": "g", "plan": [], "done": []},
            "executor_call": {"command": "shell: ls", "inputs": {}, "expected_observations": ["退出码 0"]}
        });
        assert!(conforms(&doc));
        assert!(violations(&doc).is_empty());
    }

    #[test]
    fn violations_have_dotted_paths() {
        let doc = json!({
            "type": "plan-next", "plan_type": "EXECUTE", "extra": 1,
            "new_block": {"goal": "g", "plan": ["a", 3], "done": [1]}
        });
        let got = violations(&doc);
        let paths: Vec<&str> = got.iter().map(|(p, _)| p.as_str()).collect();
        assert!(paths.contains(&"extra"), "{got:?}");
        assert!(paths.contains(&"new_block.plan[1]"), "{got:?}");
        assert!(paths.contains(&"new_block.done"), "{got:?}");
        let missing = violations(&json!({"type": "plan-next", "plan_type": "EXECUTE"}));
        assert_eq!(missing[0].0, "new_block", "{missing:?}");
    }
}
