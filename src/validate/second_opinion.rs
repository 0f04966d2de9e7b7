//! The `second_opinion` role's contract (docs/SPEC.md, "The review of a report"), applied to
//! a research report:
//!
//! `{ "ok": bool, "verdict": "ok" | "warn" | "block", "notes": str }`
//!
//! | code | rule | path |
//! |------|------|------|
//! | `INVALID_JSON` | (`validate second-opinion`) the file is exactly one JSON object | `` |
//! | `INVALID_TYPE` | the answer is an object; each field has its type | the field |
//! | `MISSING_FIELD` | `ok`, `verdict` and `notes` are present | the field |
//! | `INVALID_VERDICT` | `verdict` is `ok`, `warn` or `block` (case aside) | `verdict` |
//! | `EMPTY_FIELD` | `notes` holds a letter or digit | `notes` |
//! | `VERDICT_MISMATCH` | `ok` agrees with the verdict: `ok: true` is never `block`, `ok: false` never `ok` | `verdict` |
//! | `UNKNOWN_FIELD` | (warning) any other key | the key |
//!
//! `warn` goes with either value of `ok`: usable with caveats, or not as it stands. The
//! workflow's review stage and `validate second-opinion` both run [`second_opinion_findings`].

use serde::Serialize;
use serde_json::Value;

use super::answer::parse_answer;
use super::describe::{invalid_type, require_bool, require_string, warn_unknown};
use super::review::required_text;
use crate::diagnostics::Diagnostics;

/// The second opinion's verdict on a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum Verdict {
    /// The report can be used as it is.
    Ok,
    /// Usable, with caveats the notes name.
    Warn,
    /// Not to be used as it stands.
    Block,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// A second opinion that honours the contract.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SecondOpinion {
    pub ok: bool,
    pub verdict: Verdict,
    pub notes: String,
}

/// The findings on `value`, and the answer when there is no error.
pub fn second_opinion_findings(value: &Value) -> (Diagnostics, Option<SecondOpinion>) {
    let mut d = Diagnostics::new();
    let Some(obj) = value.as_object() else {
        invalid_type("", "the answer", value, "write one JSON object", &mut d);
        return (d, None);
    };
    warn_unknown(obj, "", &["ok", "verdict", "notes"], &mut d);
    let ok = require_bool(obj, "", "ok", &mut d);
    let verdict = require_string(obj, "", "verdict", &mut d).and_then(|raw| {
        let verdict = match raw.trim().to_ascii_lowercase().as_str() {
            "ok" => Some(Verdict::Ok),
            "warn" => Some(Verdict::Warn),
            "block" => Some(Verdict::Block),
            _ => None,
        };
        if verdict.is_none() {
            d.error(
                "INVALID_VERDICT",
                "verdict",
                format!(
                    "`verdict` is `{}`: write `ok`, `warn` or `block`",
                    crate::text::one_line(raw, 60)
                ),
            );
        }
        verdict
    });
    let notes = required_text(obj, "notes", &mut d);
    if let (Some(ok), Some(v)) = (ok, verdict)
        && matches!((ok, v), (true, Verdict::Block) | (false, Verdict::Ok))
    {
        d.error(
            "VERDICT_MISMATCH",
            "verdict",
            format!(
                "`ok` is {ok} but `verdict` is `{}`: `block` goes with `ok: false`, `ok` with `ok: true`",
                v.as_str()
            ),
        );
    }
    let answer = match (ok, verdict, notes) {
        (Some(ok), Some(verdict), Some(notes)) if d.is_valid() => {
            Some(SecondOpinion { ok, verdict, notes })
        }
        _ => None,
    };
    (d, answer)
}

/// The contract as the review stage checks it: the answer, or every violation.
pub fn check_second_opinion(value: &Value) -> Result<SecondOpinion, Diagnostics> {
    let (d, answer) = second_opinion_findings(value);
    answer.ok_or(d)
}

/// `validate second-opinion`: the text of an answer file.
pub fn validate_second_opinion_text(text: &str) -> Diagnostics {
    parse_answer(text).map_or_else(|d| d, |value| second_opinion_findings(&value).0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Review files store these names: they must never change.
    #[test]
    fn every_verdict_keeps_its_stored_name() {
        assert_eq!(crate::text::stored_names::<Verdict>(), "ok warn block");
    }

    fn errors(v: Value) -> Vec<(String, String)> {
        second_opinion_findings(&v)
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
    fn a_good_answer_passes_and_the_verdict_ignores_case() {
        let a = check_second_opinion(&json!({"ok": false, "verdict": " Block", "notes": "n"}))
            .expect("valid");
        assert_eq!(a.verdict, Verdict::Block);
        assert!(
            check_second_opinion(&json!({"ok": true, "verdict": "warn", "notes": "n"})).is_ok()
        );
        assert!(
            check_second_opinion(&json!({"ok": false, "verdict": "warn", "notes": "n"})).is_ok()
        );
    }

    #[test]
    fn each_violation_has_its_code_and_path() {
        assert_eq!(errors(json!("ok")), vec![pair("INVALID_TYPE", "")]);
        let e = errors(json!({"verdict": "maybe", "notes": 3, "x": 1}));
        assert!(e.contains(&pair("MISSING_FIELD", "ok")), "{e:?}");
        assert!(e.contains(&pair("INVALID_VERDICT", "verdict")), "{e:?}");
        assert!(e.contains(&pair("INVALID_TYPE", "notes")), "{e:?}");
        assert_eq!(
            errors(json!({"ok": true, "verdict": "block", "notes": "n"})),
            vec![pair("VERDICT_MISMATCH", "verdict")]
        );
        assert_eq!(
            errors(json!({"ok": false, "verdict": "ok", "notes": " "})),
            vec![
                pair("EMPTY_FIELD", "notes"),
                pair("VERDICT_MISMATCH", "verdict")
            ]
        );
    }
}
