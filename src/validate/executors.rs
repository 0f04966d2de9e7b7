//! The executors a plan-next `executor_call.command` may name, read from `executors.yaml`.
//!
//! Accepted shapes: `executors:` holding a list, or a top-level list; each entry is an object
//! with a string `id` (other fields such as `guarantees` or `limits` are ignored) or a bare id
//! string. `executors:` may also be a map keyed by id. A command names an executor when it
//! equals its id or starts with `<id>:` or `<id> ` (`git: status`, `pytest -q`). The generic
//! form `shell: <command>` is always allowed (where a capability is missing, the generic form
//! is the way: docs/SPEC.md, "Plan-next answers (Thinkon)"). This module loads and matches; it
//! does not decide which findings to report.

use std::path::Path;

use serde_json::Value;

use super::document::{self, DocumentError};

/// Why an executors file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ExecutorsError {
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error("executors file `{source_name}`: {what}")]
    Invalid { source_name: String, what: String },
}

/// The declared executor ids.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Executors {
    ids: Vec<String>,
}

impl Executors {
    /// Reads an executors file (YAML or JSON).
    pub fn load(path: &Path) -> Result<Executors, ExecutorsError> {
        let value = document::read_document(path)?;
        Executors::from_value(&value, &path.display().to_string())
    }

    /// Executors from a parsed document; `source_name` labels it in errors.
    pub fn from_value(value: &Value, source_name: &str) -> Result<Executors, ExecutorsError> {
        let invalid = |what: String| ExecutorsError::Invalid {
            source_name: source_name.to_string(),
            what,
        };
        let list = match value {
            Value::Array(items) => items,
            Value::Object(map) => match map.get("executors") {
                Some(Value::Array(items)) => items,
                Some(Value::Object(by_id)) => {
                    return Ok(Executors {
                        ids: by_id.keys().cloned().collect(),
                    });
                }
                _ => {
                    return Err(invalid(
                        "expected `executors:` with a list of `{id: ...}` entries, or a top-level list".into(),
                    ));
                }
            },
            _ => {
                return Err(invalid(
                    "expected `executors:` with a list of `{id: ...}` entries, or a top-level list"
                        .into(),
                ));
            }
        };
        let mut ids = Vec::with_capacity(list.len());
        for (i, item) in list.iter().enumerate() {
            let id = match item {
                Value::String(id) => id,
                Value::Object(o) => match o.get("id") {
                    Some(Value::String(id)) => id,
                    _ => return Err(invalid(format!("entry [{i}] has no string `id`: add one"))),
                },
                other => {
                    return Err(invalid(format!(
                        "entry [{i}] is `{other}`: write an object with an `id`"
                    )));
                }
            };
            if id.trim().is_empty() {
                return Err(invalid(format!("entry [{i}] has an empty `id`: name it")));
            }
            ids.push(id.trim().to_string());
        }
        Ok(Executors { ids })
    }

    pub fn ids(&self) -> &[String] {
        &self.ids
    }

    /// The declared executor `command` names, if any.
    pub fn matching(&self, command: &str) -> Option<&str> {
        let command = command.trim();
        self.ids
            .iter()
            .find(|id| {
                command
                    .strip_prefix(id.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with([':', ' ']))
            })
            .map(String::as_str)
    }
}

/// The command after `shell:` when `command` uses the generic shell form (prefix case-insensitive).
pub fn shell_command(command: &str) -> Option<&str> {
    let command = command.trim_start();
    let prefix = command.get(..6)?;
    prefix
        .eq_ignore_ascii_case("shell:")
        .then(|| command[6..].trim())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn both_shapes_and_matching() {
        let a = Executors::from_value(
            &json!({"executors": [{"id": "pytest", "limits": "x"}, {"id": "git"}]}),
            "a",
        )
        .expect("list under executors");
        let b = Executors::from_value(&json!(["pytest", {"id": "git"}]), "b").expect("top list");
        assert_eq!(a, b);
        assert_eq!(a.matching("pytest -q tests"), Some("pytest"));
        assert_eq!(a.matching("git: status"), Some("git"));
        assert_eq!(a.matching("git"), Some("git"));
        assert_eq!(a.matching("gitk"), None);
        assert_eq!(a.matching("curl x"), None);
        let c = Executors::from_value(&json!({"executors": {"git": {}}}), "c").expect("map");
        assert_eq!(c.matching("git log"), Some("git"));
    }

    #[test]
    fn bad_shapes_are_errors() {
        for bad in [
            json!(3),
            json!({"tools": []}),
            json!([{"name": "x"}]),
            json!([" "]),
            json!([1]),
        ] {
            assert!(Executors::from_value(&bad, "x").is_err(), "{bad}");
        }
    }

    #[test]
    fn shell_form() {
        assert_eq!(shell_command("shell: ls -la"), Some("ls -la"));
        assert_eq!(shell_command("  SHELL:ls"), Some("ls"));
        assert_eq!(shell_command("shell:"), Some(""));
        assert_eq!(shell_command("shellx: ls"), None);
        assert_eq!(shell_command("路径"), None);
    }
}
