//! The JSON Schemas of the review stage's two answers, in the two variants the LLM client
//! sends (see [`crate::llm::schema`]). The contracts themselves, and their checks, are in
//! [`crate::validate::review`] and [`crate::validate::second_opinion`]; what a schema cannot
//! say (entries with a letter in them), the check still catches.

use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::llm::JsonSchema;
use crate::llm::schema::GRAMMAR_MAX_REPEAT;

/// `{ok, summary, risks, gaps, suggestions}`. Strict mode requires every property, so `gaps`
/// (optional in the contract) is always asked for; the grammar variant also bounds the lengths.
pub static REVIEW_SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    let schema = |text: Value, entry: Value| {
        let list = json!({"type": "array", "items": entry});
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["ok", "summary", "risks", "gaps", "suggestions"],
            "properties": {
                "ok": {"type": "boolean"},
                "summary": text,
                "risks": list,
                "gaps": list,
                "suggestions": list,
            }
        })
    };
    let bounded = |max: u64| json!({"type": "string", "minLength": 2, "maxLength": max});
    JsonSchema::new(
        "review",
        schema(json!({"type": "string"}), json!({"type": "string"})),
    )
    .with_grammar(schema(bounded(GRAMMAR_MAX_REPEAT), bounded(600)))
});

/// `{ok, verdict, notes}`. The grammar variant couples `ok` to the verdict (`block` only with
/// `ok: false`, `ok` only with `ok: true`), which strict mode cannot say at the root.
pub static SECOND_OPINION_SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    let schema = |ok: Value, verdicts: &[&str], notes: Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["ok", "verdict", "notes"],
            "properties": {
                "ok": ok,
                "verdict": {"type": "string", "enum": verdicts},
                "notes": notes,
            }
        })
    };
    let notes = json!({"type": "string", "minLength": 2, "maxLength": GRAMMAR_MAX_REPEAT});
    let grammar = json!({"anyOf": [
        schema(json!({"type": "boolean", "enum": [true]}), &["ok", "warn"], notes.clone()),
        schema(json!({"type": "boolean", "enum": [false]}), &["warn", "block"], notes),
    ]});
    JsonSchema::new(
        "second_opinion",
        schema(
            json!({"type": "boolean"}),
            &["ok", "warn", "block"],
            json!({"type": "string"}),
        ),
    )
    .with_grammar(grammar)
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::schema::rule_violations;
    use crate::validate::{check_review, check_second_opinion};

    fn compiled(schema: &JsonSchema) -> (jsonschema::Validator, jsonschema::Validator) {
        assert_eq!(rule_violations(&schema.strict, true), Vec::<String>::new());
        assert_eq!(
            rule_violations(&schema.grammar, false),
            Vec::<String>::new()
        );
        (
            jsonschema::draft7::new(&schema.strict).expect("strict compiles"),
            jsonschema::draft7::new(&schema.grammar).expect("grammar compiles"),
        )
    }

    #[test]
    fn the_review_schema_keeps_its_rules_and_agrees_with_the_contract() {
        let (strict, grammar) = compiled(&REVIEW_SCHEMA);
        let good = json!({"ok": false, "summary": "Thin on costs.", "risks": ["[2] is a blog"],
            "gaps": ["no prices"], "suggestions": ["cite a survey"]});
        assert!(strict.is_valid(&good) && grammar.is_valid(&good));
        assert!(check_review(&good).is_ok());
        let blank = json!({"ok": true, "summary": "", "risks": [], "gaps": [], "suggestions": []});
        assert!(strict.is_valid(&blank) && !grammar.is_valid(&blank));
        assert!(check_review(&blank).is_err());
    }

    #[test]
    fn the_second_opinion_grammar_couples_ok_to_the_verdict_as_the_contract_does() {
        let (strict, grammar) = compiled(&SECOND_OPINION_SCHEMA);
        for (ok, verdict, allowed) in [
            (true, "ok", true),
            (true, "warn", true),
            (false, "warn", true),
            (false, "block", true),
            (true, "block", false),
            (false, "ok", false),
        ] {
            let v = json!({"ok": ok, "verdict": verdict, "notes": "Because."});
            assert!(strict.is_valid(&v), "{v}");
            assert_eq!(grammar.is_valid(&v), allowed, "{v}");
            assert_eq!(check_second_opinion(&v).is_ok(), allowed, "{v}");
        }
    }
}
