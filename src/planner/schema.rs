//! The JSON Schema of the planner's answer, per round stage, in the two variants the LLM client
//! sends (see [`crate::llm::schema`]): what a decoding grammar can enforce of the contract.
//! The contract itself, and its check, are in `contract.rs`; what a schema cannot express, the
//! check still catches.

use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::llm::JsonSchema;

/// The most tasks one round may plan.
pub const MAX_TASKS: usize = 3;

/// One ref of the grammar, as a pattern in the subset every grammar converter accepts.
const REF: &str = "[a-z]+:(summary|info(\\[(llm|search|all)\\])?)";

/// `p_node`: refs separated by a comma and at most one space, or nothing.
pub fn p_node_pattern() -> String {
    format!("^({REF}(, ?{REF})*)?$")
}

/// One entry of `next_check_list`: a ref to an existing node or to NEW1..NEW3.
pub fn check_list_pattern() -> String {
    "^(NEW[1-3]|[a-z]+):(summary|info(\\[(llm|search|all)\\])?)$".to_string()
}

/// What a round may answer, from the state of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Nothing has been researched yet: 1 to 3 tasks, and not the final summary (a report
    /// over nothing is no answer).
    Research,
    /// Anything the contract allows.
    Open,
    /// The last round: the final summary. Only the schema says so; a planner that does not
    /// comply has its tasks discarded by the workflow, which then adds the final itself.
    Finalise,
}

/// The answer's schema for a round of `stage`. The strict variant (for `json_schema`) carries
/// the shapes, the enum of task types, the number of tasks and the ref patterns; the grammar
/// variant also couples `is_final: true` to exactly one summary task (two alternatives under
/// `anyOf`) and bounds the title, which strict mode cannot say. [`super::contract::check`]
/// enforces the contract either way.
pub fn answer_schema(stage: Stage) -> &'static JsonSchema {
    static RESEARCH: LazyLock<JsonSchema> = LazyLock::new(|| build_schema(Stage::Research));
    static OPEN: LazyLock<JsonSchema> = LazyLock::new(|| build_schema(Stage::Open));
    static FINALISE: LazyLock<JsonSchema> = LazyLock::new(|| build_schema(Stage::Finalise));
    match stage {
        Stage::Research => &RESEARCH,
        Stage::Open => &OPEN,
        Stage::Finalise => &FINALISE,
    }
}

fn build_schema(stage: Stage) -> JsonSchema {
    let task = |kinds: &[&str], title: Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["title", "type", "p_node"],
            "properties": {
                "title": title,
                "type": {"type": "string", "enum": kinds},
                "p_node": {"type": "string", "pattern": p_node_pattern()}
            }
        })
    };
    let answer = |is_final: Value, min_tasks: usize, max_tasks: usize, task: Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["is_final", "tasks", "next_check_list"],
            "properties": {
                "is_final": is_final,
                "tasks": {"type": "array", "minItems": min_tasks, "maxItems": max_tasks, "items": task},
                "next_check_list": {
                    "type": "array",
                    "items": {"type": "string", "pattern": check_list_pattern()}
                }
            }
        })
    };
    let title = json!({"type": "string"});
    let bounded = json!({"type": "string", "pattern": GRAMMAR_TITLE});
    let both = ["search", "summary"];
    let go_on = |min, title: &Value| {
        answer(
            json!({"type": "boolean", "enum": [false]}),
            min,
            MAX_TASKS,
            task(&both, title.clone()),
        )
    };
    let finish = |title: &Value| {
        answer(
            json!({"type": "boolean", "enum": [true]}),
            1,
            1,
            task(&["summary"], title.clone()),
        )
    };
    match stage {
        Stage::Research => {
            JsonSchema::new("plan_next", go_on(1, &title)).with_grammar(go_on(1, &bounded))
        }
        Stage::Finalise => {
            JsonSchema::new("plan_next", finish(&title)).with_grammar(finish(&bounded))
        }
        Stage::Open => JsonSchema::new(
            "plan_next",
            answer(json!({"type": "boolean"}), 0, MAX_TASKS, task(&both, title)),
        )
        .with_grammar(json!({"anyOf": [go_on(0, &bounded), finish(&bounded)]})),
    }
}

/// A task title as a decoding grammar lets a model write it: 3 to 160 characters, no
/// reference syntax (`:`) or template brackets, not starting with punctuation. Small models
/// otherwise copy `a:info` or a prompt's placeholder as the title. (Quote and backslash are
/// excluded so the string stays valid JSON.)
pub const GRAMMAR_TITLE: &str = "^[^ :\"\\\\<>{}\\[\\]#*.,;!?/'-][^:\"\\\\<>{}\\[\\]]{2,159}$";
