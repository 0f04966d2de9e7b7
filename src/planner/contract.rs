//! The planner's output contract, checked into [`Diagnostics`]:
//!
//! `{ "is_final": bool, "tasks": [ { "title": str, "type": "search"|"summary", "p_node": str } ]
//! (0-3), "next_check_list": [str] }`; `is_final: true` requires exactly one task, of type
//! summary. Unknown fields are warnings. The same diagnostics are quoted back to the model in
//! the repair round.
//!
//! Codes: `INVALID_JSON`, `INVALID_TYPE`, `MISSING_FIELD`, `TOO_MANY_TASKS`,
//! `INVALID_TASK_TYPE`, `EMPTY_TITLE` (no letter or digit, like `...`), `PLACEHOLDER_TITLE`
//! (`<...>` copied from a template), `FINAL_NEEDS_ONE_SUMMARY`; warning `UNKNOWN_FIELD`. The
//! round adds `EMPTY_ANSWER` and `TRUNCATED` (cut off at the token limit).

use serde::Serialize;
use serde_json::{Map, Value};

use super::schema::{MAX_TASKS, Stage};
use crate::diagnostics::Diagnostics;
use crate::plan::NodeType;
use crate::plan::refs::parse_list;
use crate::text::{normalized, one_line};

/// The longest task title kept; a longer one is cut (with an ellipsis).
pub const TITLE_MAX_CHARS: usize = 300;

/// A planner answer that honours the contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanAnswer {
    pub is_final: bool,
    pub tasks: Vec<PlannedTask>,
    pub next_check_list: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlannedTask {
    pub title: String,
    #[serde(rename = "type")]
    pub kind: NodeType,
    pub p_node: String,
}

/// Checks a parsed answer against the contract of a round of `stage`.
pub fn check(value: &Value, stage: Stage) -> Result<PlanAnswer, Diagnostics> {
    let mut diag = Diagnostics::new();
    let Some(obj) = value.as_object() else {
        diag.error("INVALID_TYPE", "", "the answer must be a JSON object");
        return Err(diag);
    };
    warn_unknown(
        &mut diag,
        obj,
        "",
        &["is_final", "tasks", "next_check_list"],
    );
    let is_final = check_is_final(&mut diag, obj);
    let tasks = check_tasks(&mut diag, obj);
    let next_check_list = check_next_check_list(&mut diag, obj);
    if is_final {
        check_final_shape(&mut diag, obj, &tasks);
    }
    if stage == Stage::Research {
        let planned = obj
            .get("tasks")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        check_research_first(&mut diag, is_final, planned);
    }
    if diag.is_valid() {
        Ok(PlanAnswer {
            is_final,
            tasks,
            next_check_list,
        })
    } else {
        Err(diag)
    }
}

fn check_is_final(diag: &mut Diagnostics, obj: &Map<String, Value>) -> bool {
    match obj.get("is_final") {
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            diag.error(
                "INVALID_TYPE",
                "is_final",
                format!("`is_final` must be true or false, not `{other}`"),
            );
            false
        }
        None => {
            diag.error("MISSING_FIELD", "is_final", "`is_final` is missing");
            false
        }
    }
}

fn check_tasks(diag: &mut Diagnostics, obj: &Map<String, Value>) -> Vec<PlannedTask> {
    let mut tasks = Vec::new();
    match obj.get("tasks") {
        Some(Value::Array(items)) => {
            if items.len() > MAX_TASKS {
                diag.error(
                    "TOO_MANY_TASKS",
                    "tasks",
                    format!("at most {MAX_TASKS} tasks per round, got {}", items.len()),
                );
            }
            for (i, item) in items.iter().enumerate() {
                if let Some(task) = check_task(diag, i, item) {
                    tasks.push(task);
                }
            }
        }
        Some(_) => {
            diag.error("INVALID_TYPE", "tasks", "`tasks` must be an array");
        }
        None => {
            diag.error(
                "MISSING_FIELD",
                "tasks",
                "`tasks` is missing (use [] for none)",
            );
        }
    }
    tasks
}

fn check_next_check_list(diag: &mut Diagnostics, obj: &Map<String, Value>) -> Vec<String> {
    let mut next_check_list = Vec::new();
    match obj.get("next_check_list") {
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                match item.as_str() {
                    Some(s) => next_check_list.push(s.to_string()),
                    None => {
                        diag.error(
                            "INVALID_TYPE",
                            format!("next_check_list[{i}]"),
                            "every reference must be a string like `b:summary`",
                        );
                    }
                }
            }
        }
        Some(_) => {
            diag.error(
                "INVALID_TYPE",
                "next_check_list",
                "`next_check_list` must be an array of strings",
            );
        }
        None => {
            diag.error(
                "MISSING_FIELD",
                "next_check_list",
                "`next_check_list` is missing",
            );
        }
    }
    next_check_list
}

/// Before anything was researched, the round must plan work, not the report.
fn check_research_first(diag: &mut Diagnostics, is_final: bool, planned: usize) {
    if is_final {
        diag.error(
            "FINAL_BEFORE_RESEARCH",
            "is_final",
            "nothing has been researched yet: set `is_final` to false and plan 1 to 3 tasks first",
        );
    } else if planned == 0 {
        diag.error(
            "NO_TASKS",
            "tasks",
            "nothing has been researched yet: plan 1 to 3 tasks",
        );
    }
}

/// `is_final: true` needs exactly one task, of type summary.
fn check_final_shape(diag: &mut Diagnostics, obj: &Map<String, Value>, tasks: &[PlannedTask]) {
    let count = obj
        .get("tasks")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let is_summary = tasks.first().is_some_and(|t| t.kind == NodeType::Summary);
    if count != 1 || !is_summary {
        diag.error(
            "FINAL_NEEDS_ONE_SUMMARY",
            "tasks",
            format!(
                "`is_final: true` needs exactly one task of type `summary`, got {count} task(s)"
            ),
        );
    }
}

fn check_task(diag: &mut Diagnostics, i: usize, item: &Value) -> Option<PlannedTask> {
    let path = format!("tasks[{i}]");
    let Some(obj) = item.as_object() else {
        diag.error(
            "INVALID_TYPE",
            path,
            "a task must be an object with title, type and p_node",
        );
        return None;
    };
    warn_unknown(diag, obj, &path, &["title", "type", "p_node"]);
    let before = diag.errors.len();
    let title = check_title(diag, obj, &path);
    let kind = match obj.get("type").and_then(Value::as_str).map(str::trim) {
        Some(t) if t.eq_ignore_ascii_case("search") => Some(NodeType::Search),
        Some(t) if t.eq_ignore_ascii_case("summary") => Some(NodeType::Summary),
        Some(t) => {
            diag.error(
                "INVALID_TASK_TYPE",
                format!("{path}.type"),
                format!("`type` must be `search` or `summary`, not `{t}`"),
            );
            None
        }
        None if obj.contains_key("type") => {
            diag.error(
                "INVALID_TYPE",
                format!("{path}.type"),
                "`type` must be a string",
            );
            None
        }
        None => {
            diag.error("MISSING_FIELD", format!("{path}.type"), "`type` is missing");
            None
        }
    };
    let p_node = match obj.get("p_node") {
        Some(Value::String(s)) => s.clone(),
        Some(_) => {
            diag.error(
                "INVALID_TYPE",
                format!("{path}.p_node"),
                "`p_node` must be a string of comma separated references",
            );
            String::new()
        }
        None => {
            diag.error(
                "MISSING_FIELD",
                format!("{path}.p_node"),
                "`p_node` is missing (use \"a:info\" to start from the question)",
            );
            String::new()
        }
    };
    (diag.errors.len() == before).then_some(PlannedTask {
        title,
        kind: kind?,
        p_node,
    })
}

/// The task's title: a string with a letter or digit that is not a copied placeholder.
fn check_title(diag: &mut Diagnostics, obj: &Map<String, Value>, path: &str) -> String {
    match obj.get("title") {
        Some(Value::String(s)) if is_placeholder(s) => {
            diag.error(
                "PLACEHOLDER_TITLE",
                format!("{path}.title"),
                format!(
                    "`{}` is a placeholder or a reference, not a task: write the task's own title",
                    s.trim()
                ),
            );
            String::new()
        }
        // Stored and shown everywhere: one clean line, whatever the model wrote.
        Some(Value::String(s)) if !normalized(s).is_empty() => one_line(s, TITLE_MAX_CHARS),
        Some(Value::String(_)) => {
            diag.error(
                "EMPTY_TITLE",
                format!("{path}.title"),
                "the title is empty (it has no letter or digit)",
            );
            String::new()
        }
        Some(_) => {
            diag.error(
                "INVALID_TYPE",
                format!("{path}.title"),
                "`title` must be a string",
            );
            String::new()
        }
        None => {
            diag.error(
                "MISSING_FIELD",
                format!("{path}.title"),
                "`title` is missing",
            );
            String::new()
        }
    }
}

/// A title copied instead of written: `<...>`, `[...]` or `{...}` around the whole title, or
/// a reference such as `a:info` (small models copy what the prompt shows them literally).
fn is_placeholder(title: &str) -> bool {
    let t = title.trim();
    let wrapped = [('<', '>'), ('[', ']'), ('{', '}')]
        .iter()
        .any(|(open, close)| t.starts_with(*open) && t.ends_with(*close));
    let (refs, errors) = parse_list(t);
    wrapped || (!refs.is_empty() && errors.is_empty())
}

fn warn_unknown(diag: &mut Diagnostics, obj: &Map<String, Value>, path: &str, known: &[&str]) {
    for key in obj.keys().filter(|k| !known.contains(&k.as_str())) {
        let at = if path.is_empty() {
            key.clone()
        } else {
            format!("{path}.{key}")
        };
        diag.warn(
            "UNKNOWN_FIELD",
            at,
            format!("`{key}` is not part of the contract"),
        );
    }
}

/// The shape of an answer, quoted at the end of a repair message.
pub const ANSWER_SHAPE: &str = "{\"is_final\": bool, \"tasks\": [{\"title\", \"type\", \"p_node\"}] (0-3), \"next_check_list\": [string]}";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::schema::rule_violations;
    use crate::planner::schema::{GRAMMAR_TITLE, answer_schema};
    use serde_json::json;

    fn check_open(v: &Value) -> Result<PlanAnswer, Diagnostics> {
        check(v, Stage::Open)
    }

    fn codes(v: Value) -> Vec<(String, String)> {
        check(&v, Stage::Open)
            .expect_err("invalid")
            .errors
            .into_iter()
            .map(|f| (f.code, f.path))
            .collect()
    }

    #[test]
    fn a_good_answer_passes() {
        let a = check_open(&json!({
            "is_final": false,
            "tasks": [{"title": "T", "type": "search", "p_node": "a:info"}],
            "next_check_list": ["NEW1:summary"]
        }))
        .expect("valid");
        assert_eq!(a.tasks[0].kind, NodeType::Search);
        assert_eq!(a.next_check_list, vec!["NEW1:summary"]);
    }

    #[test]
    fn each_violation_has_its_code_and_path() {
        let c = |v| codes(v);
        assert_eq!(c(json!([])), vec![("INVALID_TYPE".into(), "".into())]);
        assert!(
            c(json!({"tasks": [], "next_check_list": []}))
                .contains(&("MISSING_FIELD".into(), "is_final".into()))
        );
        assert!(
            c(json!({"is_final": "no", "tasks": [], "next_check_list": []}))
                .contains(&("INVALID_TYPE".into(), "is_final".into()))
        );
        let four = json!({"title": "T", "type": "search", "p_node": ""});
        assert!(
            c(json!({"is_final": false, "tasks": [four, four, four, four], "next_check_list": []}))
                .contains(&("TOO_MANY_TASKS".into(), "tasks".into()))
        );
        assert!(c(json!({"is_final": false, "tasks": [{"title": "T", "type": "browse", "p_node": ""}], "next_check_list": []}))
            .contains(&("INVALID_TASK_TYPE".into(), "tasks[0].type".into())));
        assert!(c(json!({"is_final": false, "tasks": [{"title": " ", "type": "search", "p_node": ""}], "next_check_list": []}))
            .contains(&("EMPTY_TITLE".into(), "tasks[0].title".into())));
        assert!(c(json!({"is_final": false, "tasks": [{"title": "...", "type": "search", "p_node": ""}], "next_check_list": []}))
            .contains(&("EMPTY_TITLE".into(), "tasks[0].title".into())));
        assert!(c(json!({"is_final": false, "tasks": [{"title": "<your direction>", "type": "search", "p_node": ""}], "next_check_list": []}))
            .contains(&("PLACEHOLDER_TITLE".into(), "tasks[0].title".into())));
        assert!(c(json!({"is_final": false, "tasks": [{"title": "a:info", "type": "search", "p_node": ""}], "next_check_list": []}))
            .contains(&("PLACEHOLDER_TITLE".into(), "tasks[0].title".into())));
        assert!(c(json!({"is_final": false, "tasks": [{"title": "T", "type": "search"}], "next_check_list": []}))
            .contains(&("MISSING_FIELD".into(), "tasks[0].p_node".into())));
        assert!(
            c(json!({"is_final": false, "tasks": [], "next_check_list": [1]}))
                .contains(&("INVALID_TYPE".into(), "next_check_list[0]".into()))
        );
        assert!(
            c(json!({"is_final": true, "tasks": [], "next_check_list": []}))
                .contains(&("FINAL_NEEDS_ONE_SUMMARY".into(), "tasks".into()))
        );
        assert!(c(json!({"is_final": true, "tasks": [{"title": "T", "type": "search", "p_node": ""}], "next_check_list": []}))
            .contains(&("FINAL_NEEDS_ONE_SUMMARY".into(), "tasks".into())));
    }

    #[test]
    fn titles_are_one_clean_line() {
        let a = check_open(&json!({
            "is_final": false,
            "tasks": [{"title": " Cost\n\u{1b}]0;pwned\u{7} of cells ", "type": "search", "p_node": "a:info"}],
            "next_check_list": []
        }))
        .expect("valid");
        assert_eq!(a.tasks[0].title, "Cost of cells");
    }

    #[test]
    fn unknown_fields_warn_only_and_repair_quotes_errors() {
        let ok = json!({"is_final": false, "tasks": [], "next_check_list": [], "why": "x"});
        assert!(check(&ok, Stage::Open).is_ok());
        let bad = check_open(&json!({"is_final": true, "tasks": [], "next_check_list": []}))
            .expect_err("invalid");
        let msg = crate::llm::checked::repair_message(&bad, "output contract", ANSWER_SHAPE);
        assert!(msg.contains("FINAL_NEEDS_ONE_SUMMARY at tasks"), "{msg}");
    }

    #[test]
    fn both_schema_variants_keep_their_rules_and_agree_with_the_contract() {
        let schema = answer_schema(Stage::Open);
        assert_eq!(rule_violations(&schema.strict, true), Vec::<String>::new());
        assert_eq!(
            rule_violations(&schema.grammar, false),
            Vec::<String>::new()
        );
        let strict = jsonschema::draft7::new(&schema.strict).expect("strict compiles");
        let grammar = jsonschema::draft7::new(&schema.grammar).expect("grammar compiles");
        let go_on = json!({"is_final": false,
            "tasks": [{"title": "Cell costs", "type": "search", "p_node": "a:info, b:info[llm]"}],
            "next_check_list": ["b:summary", "NEW1:summary", "c:info[search]"]});
        let finish = json!({"is_final": true,
            "tasks": [{"title": "Final report", "type": "summary", "p_node": "b:summary,c:summary"}],
            "next_check_list": []});
        for good in [&go_on, &finish] {
            assert!(check(good, Stage::Open).is_ok());
            assert!(strict.is_valid(good) && grammar.is_valid(good), "{good}");
        }
        // What only the grammar can forbid, and what both forbid; the contract catches all.
        let final_search = json!({"is_final": true,
            "tasks": [{"title": "More", "type": "search", "p_node": "a:info"}],
            "next_check_list": []});
        assert!(strict.is_valid(&final_search) && !grammar.is_valid(&final_search));
        assert!(check(&final_search, Stage::Open).is_err());
        let bad_ref = json!({"is_final": false,
            "tasks": [{"title": "T t t", "type": "search", "p_node": "b:title"}],
            "next_check_list": ["new1:summary"]});
        assert!(!strict.is_valid(&bad_ref) && !grammar.is_valid(&bad_ref));
        let four = json!({"is_final": false,
            "tasks": [go_on["tasks"][0], go_on["tasks"][0], go_on["tasks"][0], go_on["tasks"][0]],
            "next_check_list": []});
        assert!(
            !strict.is_valid(&four)
                && !grammar.is_valid(&four)
                && check(&four, Stage::Open).is_err()
        );
    }

    #[test]
    fn before_any_research_the_round_must_plan_work() {
        let fin = json!({"is_final": true,
            "tasks": [{"title": "Final report", "type": "summary", "p_node": "a:info"}],
            "next_check_list": []});
        let codes = |v: &Value, stage| {
            check(v, stage)
                .expect_err("invalid")
                .errors
                .into_iter()
                .map(|f| f.code)
                .collect::<Vec<_>>()
        };
        assert_eq!(codes(&fin, Stage::Research), vec!["FINAL_BEFORE_RESEARCH"]);
        assert!(check(&fin, Stage::Open).is_ok());
        let none = json!({"is_final": false, "tasks": [], "next_check_list": []});
        assert_eq!(codes(&none, Stage::Research), vec!["NO_TASKS"]);
        assert!(check(&none, Stage::Open).is_ok());

        // The schemas say the same, in both variants.
        for stage in [Stage::Research, Stage::Open, Stage::Finalise] {
            let schema = answer_schema(stage);
            assert_eq!(
                rule_violations(&schema.strict, true),
                Vec::<String>::new(),
                "{stage:?}"
            );
            assert_eq!(
                rule_violations(&schema.grammar, false),
                Vec::<String>::new(),
                "{stage:?}"
            );
        }
        let research = answer_schema(Stage::Research);
        for variant in [&research.strict, &research.grammar] {
            let v = jsonschema::draft7::new(variant).expect("compiles");
            assert!(!v.is_valid(&fin) && !v.is_valid(&none));
        }
        let finalise = answer_schema(Stage::Finalise);
        let v = jsonschema::draft7::new(&finalise.grammar).expect("compiles");
        assert!(v.is_valid(&fin) && !v.is_valid(&none));
    }

    #[test]
    fn the_grammar_title_keeps_out_what_small_models_copy() {
        let title = regex::Regex::new(GRAMMAR_TITLE).expect("compiles");
        for good in [
            "Solid-state battery costs in 2026",
            "固态电池成本",
            "LFP vs NMC (safety)",
        ] {
            assert!(title.is_match(good), "{good}");
        }
        for bad in [
            "a:info",
            "<your direction>",
            "...",
            "[x]",
            " lead",
            "ab",
            "say \"hi\"",
        ] {
            assert!(!title.is_match(bad), "{bad}");
        }
    }
}
