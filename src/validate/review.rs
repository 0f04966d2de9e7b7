//! The `review` role's contract (docs/SPEC.md, "The review of a report"), applied to a research
//! report:
//!
//! `{ "ok": bool, "summary": str, "risks": [str], "suggestions": [str], "gaps"?: [str] }`
//!
//! | code | rule | path |
//! |------|------|------|
//! | `INVALID_JSON` | (`validate review`) the file is exactly one JSON object | `` |
//! | `INVALID_TYPE` | the answer is an object; each field has its type | the field, `risks[i]` |
//! | `MISSING_FIELD` | `ok`, `summary`, `risks` and `suggestions` are present | the field |
//! | `EMPTY_FIELD` | `summary` holds a letter or digit | `summary` |
//! | `EMPTY_ENTRY` | every entry of a list holds a letter or digit | `risks[i]` |
//! | `NO_RISKS` | `ok: false` names at least one risk or gap: a rejection must say why | `risks` |
//! | `UNKNOWN_FIELD` | (warning) any other key | the key |
//!
//! Decisions where the contract is silent: `gaps` (what the report leaves unanswered) is
//! optional and defaults to `[]`; lists may be empty when `ok` is true. The answer kept has
//! every string trimmed and without control characters. The workflow's review stage and
//! `validate review` both run [`review_findings`].

use serde::Serialize;
use serde_json::{Map, Value};

use super::answer::parse_answer;
use super::describe::{invalid_type, kind, require_bool, require_string, warn_unknown};
use super::json_path;
use crate::diagnostics::Diagnostics;
use crate::text::{normalized, strip_controls};

/// A review answer that honours the contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReviewAnswer {
    /// Whether the report can be relied on as it is.
    pub ok: bool,
    pub summary: String,
    pub risks: Vec<String>,
    /// What the report leaves unanswered of the question.
    pub gaps: Vec<String>,
    pub suggestions: Vec<String>,
}

const FIELDS: &[&str] = &["ok", "summary", "risks", "suggestions", "gaps"];

/// The findings on `value`, and the answer when there is no error.
pub fn review_findings(value: &Value) -> (Diagnostics, Option<ReviewAnswer>) {
    let mut d = Diagnostics::new();
    let Some(obj) = value.as_object() else {
        invalid_type("", "the answer", value, "write one JSON object", &mut d);
        return (d, None);
    };
    warn_unknown(obj, "", FIELDS, &mut d);
    let ok = require_bool(obj, "", "ok", &mut d);
    let summary = required_text(obj, "summary", &mut d);
    let risks = text_list(obj, "risks", true, &mut d);
    let suggestions = text_list(obj, "suggestions", true, &mut d);
    let gaps = text_list(obj, "gaps", false, &mut d);
    let none = |list: &Option<Vec<String>>| list.as_ref().is_some_and(Vec::is_empty);
    if ok == Some(false) && none(&risks) && none(&gaps) {
        d.error(
            "NO_RISKS",
            "risks",
            "`ok` is false but no risk or gap is named: list what is wrong in `risks`",
        );
    }
    let answer = match (ok, summary, risks, suggestions, gaps) {
        (Some(ok), Some(summary), Some(risks), Some(suggestions), Some(gaps)) if d.is_valid() => {
            Some(ReviewAnswer {
                ok,
                summary,
                risks,
                gaps,
                suggestions,
            })
        }
        _ => None,
    };
    (d, answer)
}

/// The contract as the review stage checks it: the answer, or every violation.
pub fn check_review(value: &Value) -> Result<ReviewAnswer, Diagnostics> {
    let (d, answer) = review_findings(value);
    answer.ok_or(d)
}

/// `validate review`: the text of an answer file.
pub fn validate_review_text(text: &str) -> Diagnostics {
    parse_answer(text).map_or_else(|d| d, |value| review_findings(&value).0)
}

/// A required string with a letter or digit in it, cleaned; `EMPTY_FIELD` when it has none.
pub(super) fn required_text(
    obj: &Map<String, Value>,
    field: &str,
    d: &mut Diagnostics,
) -> Option<String> {
    let text = require_string(obj, "", field, d)?;
    let clean = strip_controls(text).trim().to_string();
    if normalized(&clean).is_empty() {
        d.error(
            "EMPTY_FIELD",
            json_path::key("", field),
            format!("`{field}` is empty: write it in words"),
        );
        return None;
    }
    Some(clean)
}

/// A list of non-empty strings, cleaned. A missing optional list is `[]`.
fn text_list(
    obj: &Map<String, Value>,
    field: &str,
    required: bool,
    d: &mut Diagnostics,
) -> Option<Vec<String>> {
    let path = json_path::key("", field);
    let items = match obj.get(field) {
        Some(Value::Array(items)) => items,
        None if !required => return Some(Vec::new()),
        None => {
            d.error(
                "MISSING_FIELD",
                path,
                format!("`{field}` is missing: add a list of strings (`[]` for none)"),
            );
            return None;
        }
        Some(other) => {
            invalid_type(path, field, other, "write a list of strings", d);
            return None;
        }
    };
    let before = d.errors.len();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = json_path::index(&path, i);
        match item.as_str().map(|s| strip_controls(s).trim().to_string()) {
            Some(text) if normalized(&text).is_empty() => {
                d.error(
                    "EMPTY_ENTRY",
                    at,
                    "the entry is empty: write it in words, or leave it out",
                );
            }
            Some(text) => out.push(text),
            None => {
                d.error(
                    "INVALID_TYPE",
                    at,
                    format!("an entry of `{field}` is {}: write a string", kind(item)),
                );
            }
        }
    }
    (d.errors.len() == before).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(v: Value) -> Vec<(String, String)> {
        review_findings(&v)
            .0
            .errors
            .into_iter()
            .map(|f| (f.code, f.path))
            .collect()
    }

    fn pair(code: &str, path: &str) -> (String, String) {
        (code.to_string(), path.to_string())
    }

    #[test]
    fn a_good_answer_passes_cleaned_and_gaps_are_optional() {
        let v = json!({"ok": true, "summary": " Sound \u{1b}[31mreport ", "risks": ["r"],
            "suggestions": [], "extra": 1});
        let (d, answer) = review_findings(&v);
        let answer = answer.expect("valid");
        assert_eq!(answer.summary, "Sound report");
        assert_eq!(answer.gaps, Vec::<String>::new());
        assert_eq!(d.warnings[0].code, "UNKNOWN_FIELD");
        assert_eq!(d.warnings[0].path, "extra");
    }

    #[test]
    fn each_violation_has_its_code_and_path() {
        assert_eq!(errors(json!([])), vec![pair("INVALID_TYPE", "")]);
        let e = errors(json!({"ok": "yes", "summary": "...", "risks": "none"}));
        assert!(e.contains(&pair("INVALID_TYPE", "ok")), "{e:?}");
        assert!(e.contains(&pair("EMPTY_FIELD", "summary")), "{e:?}");
        assert!(e.contains(&pair("INVALID_TYPE", "risks")), "{e:?}");
        assert!(e.contains(&pair("MISSING_FIELD", "suggestions")), "{e:?}");
        let e = errors(json!({"ok": true, "summary": "s", "risks": ["a", 3, " "],
            "suggestions": [], "gaps": {}}));
        assert!(e.contains(&pair("INVALID_TYPE", "risks[1]")), "{e:?}");
        assert!(e.contains(&pair("EMPTY_ENTRY", "risks[2]")), "{e:?}");
        assert!(e.contains(&pair("INVALID_TYPE", "gaps")), "{e:?}");
        let e = errors(json!({"ok": false, "summary": "s", "risks": [], "suggestions": []}));
        assert_eq!(e, vec![pair("NO_RISKS", "risks")]);
        let gap_only = json!({"ok": false, "summary": "s", "risks": [], "gaps": ["g"],
            "suggestions": []});
        assert!(check_review(&gap_only).is_ok());
    }
}
