//! The plan-next answer's schema as structured output, in the two variants the LLM client
//! sends ([`crate::llm::schema`]), and the one normalisation the strict variant makes
//! necessary.
//!
//! The plan-next schema (`src/validate/plan_next.schema.json`) has optional fields and a `oneOf`,
//! which OpenAI's strict mode cannot express: there every property is required. So the strict
//! variant requires `success_signal`, `executor_call` and `update_plan` but lets them be `null`,
//! and [`drop_nulls`] removes those nulls before the answer is checked against that
//! schema and the rules: a `null` optional field is an absent one. `executor_call.inputs` can only
//! be `{}` under a strict schema (an open object is not allowed); the command carries the
//! argument. The grammar variant says more: two alternatives, PLAN_* with 3 to 7 items and a
//! success signal, or EXECUTE with an empty plan and an executor call.

use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::llm::JsonSchema;

/// Optional top-level fields of an answer that the strict variant makes nullable.
const NULLABLE: [&str; 3] = ["success_signal", "executor_call", "update_plan"];

/// The plan-next answer's schema.
pub static PLAN_NEXT_SCHEMA: LazyLock<JsonSchema> =
    LazyLock::new(|| JsonSchema::new("plan_next_block", strict()).with_grammar(grammar()));

/// Removes the optional top-level fields whose value is `null`.
pub fn drop_nulls(answer: &mut Value) {
    if let Some(obj) = answer.as_object_mut() {
        for key in NULLABLE {
            if obj.get(key).is_some_and(Value::is_null) {
                obj.remove(key);
            }
        }
    }
}

fn object(properties: Value) -> Value {
    let required: Vec<String> = properties
        .as_object()
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default();
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": required,
        "properties": properties,
    })
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn core4() -> Value {
    object(json!({
        "intent": {"type": "string"},
        "deliverable": {"type": "string"},
        "metric": {"type": "string"},
        "constraint": {"type": "string"},
    }))
}

fn new_block(plan: Value) -> Value {
    object(json!({
        "goal": {"anyOf": [{"type": "string"}, core4()]},
        "plan": plan,
        "done": {"type": "array", "maxItems": 0, "items": {"type": "string"}},
    }))
}

fn executor_call() -> Value {
    object(json!({
        "command": {"type": "string"},
        "inputs": object(json!({})),
        "expected_observations": strings(),
    }))
}

fn nullable(schema: Value) -> Value {
    json!({"anyOf": [{"type": "null"}, schema]})
}

fn strict() -> Value {
    object(json!({
        "type": {"type": "string", "enum": ["plan-next"]},
        "plan_type": {"type": "string", "enum": ["PLAN_PROBES", "PLAN_STEPS", "EXECUTE"]},
        "new_block": new_block(strings()),
        "success_signal": nullable(json!({"type": "string"})),
        "executor_call": nullable(executor_call()),
        "update_plan": nullable(strings()),
    }))
}

fn grammar() -> Value {
    let items = |min: usize, max: usize| {
        json!({"type": "array", "minItems": min, "maxItems": max,
               "items": {"type": "string", "minLength": 1}})
    };
    let planning = object(json!({
        "type": {"type": "string", "enum": ["plan-next"]},
        "plan_type": {"type": "string", "enum": ["PLAN_PROBES", "PLAN_STEPS"]},
        "new_block": new_block(items(3, 7)),
        "success_signal": {"type": "string", "minLength": 1},
        "update_plan": nullable(strings()),
    }));
    let mut call = executor_call();
    call["properties"]["command"] = json!({"type": "string", "minLength": 1});
    let execute = object(json!({
        "type": {"type": "string", "enum": ["plan-next"]},
        "plan_type": {"type": "string", "enum": ["EXECUTE"]},
        "new_block": new_block(items(0, 0)),
        "executor_call": call,
        "update_plan": nullable(strings()),
    }));
    json!({"anyOf": [planning, execute]})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::schema::rule_violations;
    use crate::validate::plan_next_schema::conforms;

    #[test]
    fn both_variants_keep_the_rules_of_their_kind() {
        assert_eq!(
            rule_violations(&PLAN_NEXT_SCHEMA.strict, true),
            Vec::<String>::new()
        );
        assert_eq!(
            rule_violations(&PLAN_NEXT_SCHEMA.grammar, false),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_strict_answer_with_nulls_meets_the_schema_once_they_are_dropped() {
        let strict = jsonschema::validator_for(&PLAN_NEXT_SCHEMA.strict).expect("compiles");
        let grammar = jsonschema::validator_for(&PLAN_NEXT_SCHEMA.grammar).expect("compiles");
        let mut answer = json!({
            "type": "plan-next", "plan_type": "PLAN_STEPS",
            "new_block": {"goal": "g", "plan": ["a", "b", "c"], "done": []},
            "success_signal": "s", "executor_call": null, "update_plan": null
        });
        assert!(strict.is_valid(&answer));
        assert!(
            !grammar.is_valid(&answer),
            "a PLAN answer has no executor call there"
        );
        answer
            .as_object_mut()
            .expect("object")
            .remove("executor_call");
        assert!(grammar.is_valid(&answer));
        assert!(!conforms(&answer), "the schema refuses nulls");
        drop_nulls(&mut answer);
        assert!(conforms(&answer));
        let keys: Vec<&String> = answer.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["type", "plan_type", "new_block", "success_signal"]);
    }
}
