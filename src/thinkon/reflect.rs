//! A block's return (seed 001 §4.2, `make_result`): one model call reads the block's goal, what
//! it expected and its `done`, and writes the result in the four Core4 sections: completion
//! (done, partly done or not, and what blocked it), deliverables, metric (passed or not, on
//! what evidence) and constraints (kept or not). The result is Markdown, one `###` heading per
//! section, which the parent's `done` receives.
//!
//! An answer that is not the asked-for JSON is kept as it is, when it says anything: the model
//! wrote a result, just not in the shape asked.

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::block::Block;
use super::context::render_done;
use super::planner::Spent;
use crate::http::RetryObserver;
use crate::llm::{JsonSchema, LlmClient, LlmError, Message, Want, extract_json};
use crate::transcript::Site;

/// Token limit of a reflection, unless the role sets `maxTokens`.
pub const REFLECT_MAX_TOKENS: u32 = 1536;

/// The longest text of one `done` entry the reflection reads.
const DONE_ENTRY_MAX_CHARS: usize = 3_000;

/// The four sections, in order: the answer's key and the heading written.
pub const SECTIONS: [(&str, &str); 4] = [
    ("completion", "Completion"),
    ("deliverables", "Deliverables"),
    ("metric", "Metric"),
    ("constraints", "Constraints"),
];

/// `{completion, deliverables, metric, constraints}`, all strings.
pub static REFLECT_SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    let schema = |text: Value| {
        let properties: serde_json::Map<String, Value> = SECTIONS
            .iter()
            .map(|(key, _)| ((*key).to_string(), text.clone()))
            .collect();
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": SECTIONS.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
            "properties": properties,
        })
    };
    JsonSchema::new("block_result", schema(json!({"type": "string"})))
        .with_grammar(schema(json!({"type": "string", "minLength": 1})))
});

/// Writes a block's result.
pub struct Reflector<'a> {
    pub llm: &'a LlmClient,
    pub system_prompt: &'a str,
}

impl Reflector<'_> {
    /// The result of `block`, whose work serves `question` (the root's goal).
    pub async fn reflect(
        &self,
        block: &Block,
        question: &str,
        spent: &mut Spent,
        observer: &dyn RetryObserver,
    ) -> Result<String, LlmError> {
        let mut expected = json!({"goal": block.goal});
        if let Some(signal) = &block.success_signal {
            expected["success_signal"] = json!(signal);
        }
        if let Some(observations) = block
            .executor_call
            .as_ref()
            .and_then(|c| c.get("expected_observations"))
        {
            expected["expected_observations"] = observations.clone();
        }
        let user = format!(
            "The question all of this serves: {}\n\nThe block that returns:\n{}\n\nWhat it has done:\n{}",
            question.trim(),
            serde_json::to_string_pretty(&expected).unwrap_or_default(),
            render_done(&block.done, DONE_ENTRY_MAX_CHARS),
        );
        let messages = [Message::system(self.system_prompt), Message::user(user)];
        let answer = self
            .llm
            .chat(
                &Site::node(block.id.clone()),
                &messages,
                Want::Json(&REFLECT_SCHEMA),
                REFLECT_MAX_TOKENS,
                observer,
            )
            .await?;
        spent.add(answer.usage);
        Ok(render(&answer.content))
    }
}

/// The answer as the four sections; prose (not a JSON object) kept as it is.
pub fn render(content: &str) -> String {
    let Ok(parsed) = extract_json(content) else {
        return crate::text::strip_controls(content.trim());
    };
    let texts: Vec<String> = SECTIONS
        .iter()
        .map(|(key, _)| {
            parsed
                .get(key)
                .and_then(Value::as_str)
                .map(|s| crate::text::strip_controls(s).trim().to_string())
                .unwrap_or_default()
        })
        .collect();
    sections(&texts.iter().map(String::as_str).collect::<Vec<_>>())
}

/// Markdown of the four sections; an empty one says so.
pub fn sections(texts: &[&str]) -> String {
    SECTIONS
        .iter()
        .zip(texts.iter().chain(std::iter::repeat(&"")))
        .map(|((_, heading), text)| {
            let text = if text.trim().is_empty() {
                "(not stated)"
            } else {
                text.trim()
            };
            format!("### {heading}\n{text}\n")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::schema::rule_violations;

    #[test]
    fn the_schema_keeps_the_rules_of_both_variants() {
        assert!(rule_violations(&REFLECT_SCHEMA.strict, true).is_empty());
        assert!(rule_violations(&REFLECT_SCHEMA.grammar, false).is_empty());
    }

    #[test]
    fn an_answer_becomes_four_sections_and_prose_is_kept() {
        let text = render(
            r#"{"completion": "Done.", "deliverables": "A list", "metric": "", "constraints": "Kept"}"#,
        );
        assert_eq!(
            text,
            "### Completion\nDone.\n\n### Deliverables\nA list\n\n### Metric\n(not stated)\n\n### Constraints\nKept\n"
        );
        assert_eq!(render("Plain words."), "Plain words.");
        assert!(render("{}").starts_with("### Completion\n(not stated)\n"));
    }
}
