//! `${step_id.outputs.name}` references inside step input values.
//!
//! A reference may sit anywhere in a value: a whole string, part of a longer string, or a string
//! nested in objects and arrays. Only strings are searched, never object keys. A `${...}` whose
//! content mentions `output` but does not have the form `<step_id>.outputs.<name>` is reported
//! as malformed (likely a typo such as `${a.output.x}`); any other `${...}` (an environment
//! variable, a template) is not a step reference and is left alone. This module only extracts;
//! it does not decide whether a reference resolves.

use serde_json::Value;

use super::json_path;

/// One reference found in a document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRef {
    /// Where the string holding the reference is, e.g. `plan.steps[2].inputs.text`.
    pub path: String,
    pub step: String,
    pub output: String,
}

/// What one `${...}` holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placeholder<'a> {
    Ref {
        step: &'a str,
        output: &'a str,
    },
    /// Mentions outputs but has not the reference form; carries the whole `${...}` text.
    Malformed(&'a str),
}

/// Every `${...}` placeholder in `text` that is, or looks meant to be, a step reference.
pub fn placeholders(text: &str) -> Vec<Placeholder<'_>> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let inner = after[..end].trim();
        let whole = &rest[start..start + 2 + end + 1];
        match parse_inner(inner) {
            Some((step, output)) => found.push(Placeholder::Ref { step, output }),
            None if inner.contains("output") => found.push(Placeholder::Malformed(whole)),
            None => {}
        }
        rest = &after[end + 1..];
    }
    found
}

fn parse_inner(inner: &str) -> Option<(&str, &str)> {
    let (step, output) = inner.split_once(".outputs.")?;
    let ok = |s: &str| !s.is_empty() && !s.chars().any(|c| c.is_whitespace() || c == '{');
    (ok(step) && ok(output)).then_some((step, output))
}

/// Collects the references in `value` (at `path`) into `refs`, and the malformed placeholders,
/// with their paths, into `malformed`.
pub fn collect(
    value: &Value,
    path: &str,
    refs: &mut Vec<StepRef>,
    malformed: &mut Vec<(String, String)>,
) {
    match value {
        Value::String(s) => {
            // Cheap pre-check: most strings hold no placeholder.
            if !s.contains("${") {
                return;
            }
            for p in placeholders(s) {
                match p {
                    Placeholder::Ref { step, output } => refs.push(StepRef {
                        path: path.to_string(),
                        step: step.to_string(),
                        output: output.to_string(),
                    }),
                    Placeholder::Malformed(text) => {
                        malformed.push((path.to_string(), text.to_string()))
                    }
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                collect(item, &json_path::index(path, i), refs, malformed);
            }
        }
        Value::Object(map) => {
            for (k, v) in map {
                collect(v, &json_path::key(path, k), refs, malformed);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_refs_in_longer_strings() {
        let got = placeholders("cat ${load.outputs.path} > ${ 1.outputs.text }; echo ${HOME}");
        assert_eq!(
            got,
            vec![
                Placeholder::Ref {
                    step: "load",
                    output: "path"
                },
                Placeholder::Ref {
                    step: "1",
                    output: "text"
                },
            ]
        );
    }

    #[test]
    fn malformed_refs_are_reported_not_resolved() {
        assert_eq!(
            placeholders("${a.output.x} ${.outputs.x} ${a.outputs.}"),
            vec![
                Placeholder::Malformed("${a.output.x}"),
                Placeholder::Malformed("${.outputs.x}"),
                Placeholder::Malformed("${a.outputs.}"),
            ]
        );
        assert_eq!(placeholders("${unterminated.outputs.x"), vec![]);
    }

    #[test]
    fn walks_nested_values_with_paths() {
        let v = json!({"a": {"list": [1, "${s.outputs.o}"]}, "b": "x ${t.outputs.p} y"});
        let (mut refs, mut bad) = (Vec::new(), Vec::new());
        collect(&v, "inputs", &mut refs, &mut bad);
        let got: Vec<_> = refs
            .iter()
            .map(|r| (r.path.as_str(), r.step.as_str()))
            .collect();
        assert_eq!(got, vec![("inputs.a.list[1]", "s"), ("inputs.b", "t")]);
        assert!(bad.is_empty());
    }
}
