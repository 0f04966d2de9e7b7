//! A file a client names as a plan, read for the tools without a word of it in any answer.
//! The roots hold other files too (a `.env`, `.git-credentials`, an SSH key): one that is not
//! a JSON object is refused before anything of it is shown, and of a plan that is wrong only
//! the field, the kind of value it holds and what it needs are named.
//!
//! `researchflow validate plan` quotes the offending values, which is what a person at their
//! own terminal wants; over MCP the reader is an agent whose transcript may go anywhere. So
//! the validator stays as it is and its findings are rendered here again from their code and
//! path alone ([`described`]), never from their message: no wording a validator adds later
//! can leak a value through this server. serde's errors (which quote values) are replaced by
//! the field they name.

use std::path::Path;

use serde_json::Value;

use super::roots::Roots;
use crate::diagnostics::{Diagnostics, Finding};
use crate::files::{DEFAULT_MAX_BYTES, read_opened};
use crate::plan::PlanFile;
use crate::plan::store::{StoreError, parse_plan};
use crate::validate::validate_plan_file;
use crate::workflow::plan_file::TOLERATED;

/// The file at `path` (a real path within the roots) as a JSON object: its text and value,
/// or why it is no plan file, in words that quote none of it. Opened by
/// [`Roots::open_inside`]: never a file elsewhere that a link swapped in leads to.
pub fn json_object(roots: &Roots, path: &Path) -> Result<(String, Value), String> {
    let shown = path.display();
    let (file, meta) = roots.open_inside(path)?;
    let text = read_opened(file, &meta, path, DEFAULT_MAX_BYTES).map_err(|e| e.to_string())?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "`{shown}` is not a plan file: it is not JSON (line {}, column {}): give the `.json` file of a run",
            e.line(),
            e.column()
        )
    })?;
    if !value.is_object() {
        return Err(format!(
            "`{shown}` is not a plan file: it holds {}, where a plan file is a JSON object with `nodes`",
            kind(&value)
        ));
    }
    Ok((text, value))
}

/// `validate plan`'s diagnostics of `doc`, each finding described without its values.
pub fn findings(doc: &Value) -> Diagnostics {
    let mut diagnostics = validate_plan_file(doc);
    for finding in diagnostics
        .errors
        .iter_mut()
        .chain(diagnostics.warnings.iter_mut())
    {
        *finding = described(doc, finding);
    }
    diagnostics
}

/// The plan file at `path` (a real path within the roots), as the read-only tools read it.
pub fn read_plan(roots: &Roots, path: &Path) -> Result<PlanFile, String> {
    read_plan_text(roots, path).map(|(plan, _)| plan)
}

/// The plan file at `path` and its text, read once.
pub fn read_plan_text(roots: &Roots, path: &Path) -> Result<(PlanFile, String), String> {
    let (text, doc) = json_object(roots, path)?;
    let plan = parse_plan(path, &text).map_err(|e| refusal(path, &doc, &e))?;
    Ok((plan, text))
}

/// Refuses, as a run would (but without values), a plan that `resume` cannot run: one that
/// does not read, or that has findings a run does not tolerate.
pub fn runnable(roots: &Roots, path: &Path) -> Result<(), String> {
    let (text, doc) = json_object(roots, path)?;
    let diagnostics = findings(&doc);
    let blocking: Vec<&Finding> = diagnostics
        .errors
        .iter()
        .filter(|f| !TOLERATED.contains(&f.code.as_str()))
        .collect();
    if let Some(first) = blocking.first() {
        return Err(format!(
            "`{}` is not a valid plan file, so it is left as it is: {} ({} in all; `validate_plan` lists them)",
            path.display(),
            first.message,
            blocking.len()
        ));
    }
    parse_plan(path, &text)
        .map(|_| ())
        .map_err(|e| refusal(path, &doc, &e))
}

/// Why `parse_plan` refused `doc`, naming the field but not its value.
fn refusal(path: &Path, doc: &Value, err: &StoreError) -> String {
    let shown = path.display();
    if let Some(first) = findings(doc).errors.first() {
        return format!(
            "`{shown}` is not a valid plan file: {} (`validate_plan` lists every finding)",
            first.message
        );
    }
    let field = match err {
        StoreError::NotAPlan { field, .. } => safe_path(field),
        _ => "(a field)".to_string(),
    };
    format!(
        "`{shown}` is not a plan file: `{field}` does not hold what a plan file holds there; see the plan file format in docs/src/file-formats.md"
    )
}

/// A JSON value's kind, without the value: what a message may say of a file's content.
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "`null`",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The fields a plan file's findings name; a path through any other key is not shown.
const FIELDS: &[&str] = &[
    "nodes",
    "check_list",
    "node_id",
    "title",
    "type",
    "status",
    "batch",
    "summary",
    "info",
    "p_node",
    "version",
    "workflow_id",
    "latest_id",
    "latest_batch",
    "refs",
    "outcome",
    "rounds",
    "created_at",
    "finished_at",
    "reason",
    "sources",
];

/// `path` (`nodes[3].p_node`) when every key in it is a field of the plan file format, else
/// `(a field)`: a key is text of the file too.
fn safe_path(path: &str) -> String {
    let known = path.is_empty()
        || path.split('.').all(|segment| {
            let name = segment.split('[').next().unwrap_or_default();
            let indices = &segment[name.len()..];
            FIELDS.contains(&name)
                && indices
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == '[' || c == ']')
        });
    if known {
        path.to_string()
    } else {
        "(a field)".to_string()
    }
}

/// `finding` in words of its code and path only, with the kind (not the value) of what the
/// path holds.
pub fn described(doc: &Value, finding: &Finding) -> Finding {
    let path = safe_path(&finding.path);
    let field = if path.is_empty() {
        "the plan file".to_string()
    } else {
        format!("`{path}`")
    };
    let needs = expected(&path);
    let message = match finding.code.as_str() {
        "INVALID_TYPE" => {
            let found = at(doc, &path).map_or("missing", kind);
            format!("{field} is {found}: write {needs}")
        }
        "MISSING_FIELD" => format!("{field} is missing: add {needs}"),
        "INVALID_NODE_ID" => format!("{field} is not a node id: use letters like `b` or `aa`"),
        "DUPLICATE_NODE_ID" => {
            format!("{field} is the id of an earlier node too: give each node its own id")
        }
        "INVALID_NODE_TYPE" => {
            format!("{field} is not a node type: use start, search, summary or end")
        }
        "INVALID_STATUS" => {
            format!("{field} is not a status: use planned, running, completed or failed")
        }
        "INVALID_BATCH" => {
            format!("{field} is not a batch: use 1 or more, or -1 for the final summary")
        }
        "NO_START_NODE" => {
            "no node has type `start`: the first node should be the question, type start, batch 1"
                .to_string()
        }
        "MULTIPLE_START_NODES" => format!(
            "{field}: an earlier node is the start node already: give this node another type"
        ),
        "START_NODE_BATCH" => format!("{field}: the start node must be in batch 1"),
        "MULTIPLE_FINAL_NODES" => format!(
            "{field}: an earlier node is the final node (batch -1) already: only one node may have batch -1"
        ),
        "LATEST_ID_BEHIND" => format!(
            "{field} is lower than the highest node id: set it to that id or later so ids are never reused"
        ),
        "LATEST_BATCH_MISMATCH" => format!(
            "{field} is not the highest batch (-1 once a final node exists): set it to that"
        ),
        "INVALID_REF" => format!(
            "{field} holds a ref that does not follow the ref grammar (`b:summary`, `b:info`, `b`), or keeps `:title` or a `NEW` placeholder"
        ),
        "UNKNOWN_REF_TARGET" => format!(
            "{field} holds a ref that names no node of this file: fix the id or drop the ref"
        ),
        "REF_NOT_EARLIER" => format!(
            "{field} holds a ref to a node that is not earlier in the file: a task may only read nodes written before it"
        ),
        other => format!("{field} breaks the rule `{other}` of the plan file format"),
    };
    Finding {
        code: finding.code.clone(),
        message,
        path,
    }
}

/// What the field at `path` must hold, in the plan file format.
fn expected(path: &str) -> &'static str {
    let last = path.rsplit('.').next().unwrap_or_default();
    if last.ends_with(']') {
        return if last.starts_with("refs") {
            "a string like `b:summary`"
        } else {
            "an object (a node)"
        };
    }
    match last {
        "" => "an object with `check_list` and `nodes`",
        "nodes" => "a list of nodes, starting with the start node",
        "check_list" => "an object",
        "refs" => "a list of refs",
        "batch" | "latest_batch" => "an integer",
        "version" => "a non-negative integer",
        "node_id" | "latest_id" => "a node id, a string like `b`",
        _ => "a string",
    }
}

/// The value at `path` (`nodes[3].p_node`, as [`safe_path`] keeps it) of `doc`.
fn at<'a>(doc: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return Some(doc);
    }
    let mut here = doc;
    for segment in path.split('.') {
        let mut parts = segment.split('[');
        here = here.get(parts.next()?)?;
        for index in parts {
            here = here.get(index.trim_end_matches(']').parse::<usize>().ok()?)?;
        }
    }
    Some(here)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SECRET: &str = "sk-SECRET-1234";

    #[test]
    fn findings_name_the_field_and_its_kind_never_the_value() {
        let doc = json!({
            "version": SECRET,
            "check_list": {"latest_id": SECRET, "latest_batch": SECRET, "refs": [SECRET, 7]},
            "nodes": [
                {"node_id": "a", "title": "q", "batch": 1, "type": "start", "status": "completed"},
                {"node_id": SECRET, "title": 3, "batch": SECRET, "type": SECRET,
                 "status": SECRET, "p_node": SECRET},
                {"node_id": "SECRET", "title": "t", "batch": -7, "type": "search",
                 "status": "planned", "p_node": "zz:summary"},
                {"node_id": "secret", "title": "t", "batch": 1, "type": "start",
                 "status": "planned", "p_node": "c:summary"},
                SECRET
            ]
        });
        let diagnostics = findings(&doc);
        let text = serde_json::to_string(&diagnostics).expect("json");
        assert!(
            !text.contains("SECRET") && !text.contains("secret"),
            "{text}"
        );
        assert!(!text.contains("-7") && !text.contains("zz"), "{text}");
        let version = &diagnostics.errors[0];
        assert_eq!(version.path, "version");
        assert_eq!(
            version.message,
            "`version` is a string: write a non-negative integer"
        );
        for code in [
            "INVALID_TYPE",
            "INVALID_NODE_ID",
            "INVALID_NODE_TYPE",
            "INVALID_STATUS",
            "INVALID_BATCH",
            "MULTIPLE_START_NODES",
            "INVALID_REF",
        ] {
            assert!(diagnostics.has_error(code), "{code}: {text}");
        }
    }

    #[test]
    fn every_code_of_the_plan_file_check_has_words_of_its_own() {
        let table = include_str!("../validate/plan_file.rs");
        let codes: Vec<&str> = table
            .lines()
            .filter_map(|l| l.strip_prefix("//! | `"))
            .filter_map(|l| l.split('`').next())
            .collect();
        assert!(codes.len() >= 15, "{codes:?}");
        for code in codes {
            let finding = Finding {
                code: code.to_string(),
                message: SECRET.to_string(),
                path: "nodes[1].type".to_string(),
            };
            let described = described(&json!({}), &finding);
            assert!(
                !described.message.contains("breaks the rule"),
                "`{code}` has no words of its own"
            );
            assert!(!described.message.contains(SECRET));
        }
    }

    #[test]
    fn a_path_through_a_key_the_format_does_not_have_is_not_shown() {
        assert_eq!(safe_path("nodes[3].p_node"), "nodes[3].p_node");
        assert_eq!(safe_path("check_list.refs[0]"), "check_list.refs[0]");
        assert_eq!(safe_path(""), "");
        assert_eq!(safe_path("sk-SECRET.nodes"), "(a field)");
        assert_eq!(safe_path("nodes[x]"), "(a field)");
    }

    #[test]
    fn a_file_that_is_no_json_object_is_refused_without_a_word_of_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let roots = Roots::new(&[dir.path().to_path_buf()]).expect("roots");
        for (name, text) in [
            (".env", format!("OPENAI_API_KEY={SECRET}\n")),
            ("s.json", format!("\"{SECRET}\"")),
            ("n.json", format!("{{\"nodes\": \"{SECRET}\"}}")),
            (
                "t.json",
                format!("{{\"nodes\": [], \"rounds\": \"{SECRET}\"}}"),
            ),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write");
            let err = read_plan(&roots, &path).expect_err(name);
            assert!(!err.contains("SECRET"), "{name}: {err}");
            assert!(err.contains("plan file"), "{name}: {err}");
            let err = runnable(&roots, &path).expect_err(name);
            assert!(!err.contains("SECRET"), "{name}: {err}");
        }
    }
}
