//! The context a plan-next answer was produced from (`--context context.json`, shaped like
//! `.thinkon/thinking-context.json`): `think` (the block being planned), `path` (its ancestors,
//! nearest first) and `max_depth`. Used for the depth rules and the no-repeat rule.
//!
//! What counts as a failed attempt in `think.done` (docs/SPEC.md leaves it open):
//! - a string entry that contains a failure word (see [`super::words::FAILURE_ZH`] and
//!   [`super::words::FAILURE_EN`], e.g. 失败, 报错, failed, error);
//! - an object entry whose `status` is a string containing a failure word (without a string
//!   `status`: whose `result`, `outcome` or `state` is one), or whose `success` or `ok` is
//!   `false`. An explicit status decides, so a `completed` entry whose result mentions an
//!   error is no failed attempt. Its `goal`, `plan` (strings) and
//!   `command` (or `executor_call.command`) describe what was tried.
//!
//! A malformed context (`path` not a list, `max_depth` not a non-negative integer, `think.done`
//! not a list) is an input error, not a finding. This module only reads; the rules live in
//! [`super::plan_next`].

use std::path::Path;

use serde_json::Value;

use super::document::{self, DocumentError};
use super::words;

/// Why a context cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ContextError {
    #[error(transparent)]
    Document(#[from] DocumentError),
    #[error("context `{source_name}`: {what}")]
    Invalid { source_name: String, what: String },
}

/// One failed attempt recorded in `think.done`.
#[derive(Debug, Clone, PartialEq)]
pub struct FailedAttempt {
    /// Position in `think.done`.
    pub index: usize,
    /// The entry itself when it is a string.
    pub text: Option<String>,
    pub goal: Option<Value>,
    pub plan: Option<Vec<String>>,
    pub command: Option<String>,
}

/// What the rules need from the context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanNextContext {
    /// `len(path)`.
    pub depth: usize,
    pub max_depth: Option<u64>,
    pub failed: Vec<FailedAttempt>,
}

impl PlanNextContext {
    pub fn load(path: &Path) -> Result<PlanNextContext, ContextError> {
        let value = document::read_document(path)?;
        PlanNextContext::from_value(&value, &path.display().to_string())
    }

    pub fn from_value(value: &Value, source_name: &str) -> Result<PlanNextContext, ContextError> {
        let invalid = |what: &str| ContextError::Invalid {
            source_name: source_name.to_string(),
            what: what.to_string(),
        };
        let Some(root) = value.as_object() else {
            return Err(invalid(
                "expected an object with `think`, `path` and `max_depth`",
            ));
        };
        let depth = match root.get("path") {
            None | Some(Value::Null) => 0,
            Some(Value::Array(items)) => items.len(),
            Some(_) => {
                return Err(invalid(
                    "`path` is not a list: write the ancestors as a list",
                ));
            }
        };
        let max_depth = match root.get("max_depth") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                invalid("`max_depth` is not a non-negative integer: write e.g. `4`")
            })?),
        };
        let done = match root.get("think").and_then(|t| t.get("done")) {
            None | Some(Value::Null) => &[][..],
            Some(Value::Array(items)) => items.as_slice(),
            Some(_) => return Err(invalid("`think.done` is not a list: write it as a list")),
        };
        let failed = done
            .iter()
            .enumerate()
            .filter_map(|(index, entry)| failed_attempt(index, entry))
            .collect();
        Ok(PlanNextContext {
            depth,
            max_depth,
            failed,
        })
    }
}

fn failed_attempt(index: usize, entry: &Value) -> Option<FailedAttempt> {
    match entry {
        Value::String(s) => words::failure_word(s).map(|_| FailedAttempt {
            index,
            text: Some(s.clone()),
            goal: None,
            plan: None,
            command: None,
        }),
        Value::Object(o) => {
            let failure_in = |k: &str| {
                o.get(k)
                    .and_then(Value::as_str)
                    .map(|s| words::failure_word(s).is_some())
            };
            // An explicit status decides: a completed step whose result mentions an error is
            // not a failed attempt.
            let says_failed = failure_in("status").unwrap_or_else(|| {
                ["result", "outcome", "state"]
                    .iter()
                    .any(|k| failure_in(k) == Some(true))
            }) || ["success", "ok"]
                .iter()
                .any(|k| o.get(*k) == Some(&Value::Bool(false)));
            if !says_failed {
                return None;
            }
            let plan = o.get("plan").and_then(Value::as_array).map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|s| s.trim().to_string())
                    .collect()
            });
            let command = o
                .get("command")
                .or_else(|| o.get("executor_call").and_then(|c| c.get("command")))
                .and_then(Value::as_str)
                .map(|s| s.trim().to_string());
            Some(FailedAttempt {
                index,
                text: None,
                goal: o.get("goal").cloned(),
                plan,
                command,
            })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_depth_and_failed_attempts() {
        let ctx = PlanNextContext::from_value(
            &json!({
                "think": {"goal": "g", "plan": [], "done": [
                    "读取配置：成功",
                    "shell: npm test 失败，退出码 1",
                    {"goal": "g1", "status": "failed", "plan": ["a", "b"]},
                    {"executor_call": {"command": "shell: make"}, "success": false},
                    {"goal": "g2", "status": "completed"},
                    {"goal": "g3", "status": "completed", "result": "no errors found"},
                    {"goal": "g4", "result": "the build failed"}
                ]},
                "path": [{}, {}],
                "max_depth": 3
            }),
            "ctx",
        )
        .expect("valid context");
        assert_eq!(ctx.depth, 2);
        assert_eq!(ctx.max_depth, Some(3));
        let idx: Vec<usize> = ctx.failed.iter().map(|f| f.index).collect();
        assert_eq!(idx, vec![1, 2, 3, 6]);
        assert_eq!(ctx.failed[1].plan, Some(vec!["a".into(), "b".into()]));
        assert_eq!(ctx.failed[2].command.as_deref(), Some("shell: make"));
    }

    #[test]
    fn malformed_contexts_are_errors() {
        for bad in [
            json!([]),
            json!({"path": "a"}),
            json!({"max_depth": -1}),
            json!({"max_depth": "3"}),
            json!({"think": {"done": "x"}}),
        ] {
            assert!(PlanNextContext::from_value(&bad, "x").is_err(), "{bad}");
        }
        assert_eq!(
            PlanNextContext::from_value(&json!({}), "x").expect("empty is fine"),
            PlanNextContext::default()
        );
    }
}
