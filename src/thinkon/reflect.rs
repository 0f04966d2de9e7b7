//! A block's return: one model call reads the block's goal, what
//! it expected and its `done`, and writes the result in the four Core4 sections: completion
//! (done, partly done or not, and what blocked it), deliverables, metric (passed or not, on
//! what evidence) and constraints (kept or not). The result is Markdown, one `###` heading per
//! section, which the parent's `done` receives.
//!
//! The answer is checked (through [`crate::llm::checked`], with the repair rounds of
//! `planner.repairAttempts`): completion and deliverables must say something, and no section
//! may be a copied placeholder such as `...` (what a small model does with the prompt's shape:
//! Gemma 3 270M answered `...` in all four). A section with no letter or digit is one.

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::block::Block;
use super::context::render_done;
use super::plan_next::Spent;
use crate::diagnostics::Diagnostics;
use crate::llm::CallObserver;
use crate::llm::checked::{CheckedError, Contract, ask_checked};
use crate::llm::{JsonSchema, LlmClient, LlmError, Message, Want};
use crate::settings::Prompt;
use crate::transcript::Site;

/// Token limit of a reflection, unless the role sets `maxTokens`.
pub const REFLECT_MAX_TOKENS: u32 = Prompt::ThinkonReflect.max_tokens();

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

/// The sections that must say something; the others may be empty ("(not stated)").
const REQUIRED: [&str; 2] = ["completion", "deliverables"];

/// The shape of a result, quoted at the end of a repair message.
const RESULT_SHAPE: &str = "{\"completion\": string, \"deliverables\": string, \"metric\": string, \"constraints\": string}, each in your own words about this block";

/// Writes a block's result.
pub struct Reflector<'a> {
    pub llm: &'a LlmClient,
    pub system_prompt: &'a str,
    /// Repair rounds after a broken answer (`planner.repairAttempts`).
    pub repair_attempts: u32,
}

/// Why a block has no result.
#[derive(Debug, thiserror::Error)]
pub enum ReflectError {
    #[error("{0}")]
    Llm(#[from] LlmError),
    #[error("the answer broke its contract after {attempts} attempt(s):\n{}", .diagnostics.to_text().trim_end())]
    Contract {
        diagnostics: Diagnostics,
        attempts: u32,
    },
}

impl From<CheckedError> for ReflectError {
    fn from(e: CheckedError) -> Self {
        match e {
            CheckedError::Llm { error, .. } => ReflectError::Llm(error),
            CheckedError::Contract {
                diagnostics,
                attempts,
                ..
            } => ReflectError::Contract {
                diagnostics,
                attempts,
            },
        }
    }
}

impl ReflectError {
    /// The endpoint cannot be used as configured, or a replay diverged: the run must stop.
    pub fn stops_the_run(&self) -> bool {
        matches!(self, ReflectError::Llm(e) if e.is_unusable() || e.is_diverged())
    }
}

impl Reflector<'_> {
    /// The result of `block`, whose work serves `question` (the root's goal).
    pub async fn reflect(
        &self,
        block: &Block,
        question: &str,
        spent: &mut Spent,
        observer: &dyn CallObserver,
    ) -> Result<String, ReflectError> {
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
        let messages = vec![Message::system(self.system_prompt), Message::user(user)];
        let contract = Contract {
            who: "reflect",
            check: &check_result,
            shape: RESULT_SHAPE,
            repair_attempts: self.repair_attempts,
            on_repair: None,
        };
        let site = Site::node(block.id.clone());
        let want = Want::Json(&REFLECT_SCHEMA);
        let asked = ask_checked(messages, &contract, |messages| {
            let site = &site;
            async move {
                self.llm
                    .chat(site, &messages, want, REFLECT_MAX_TOKENS, observer)
                    .await
            }
        })
        .await;
        let texts = spent.count(asked)?;
        Ok(sections(
            &texts.iter().map(String::as_str).collect::<Vec<_>>(),
        ))
    }
}

/// The four sections of an answer, cleaned, or what is wrong with it.
pub fn check_result(value: &Value) -> Result<Vec<String>, Diagnostics> {
    let mut d = Diagnostics::new();
    let mut texts = Vec::with_capacity(SECTIONS.len());
    for (key, _) in SECTIONS {
        let text = match value.get(key) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => crate::text::strip_controls(s).trim().to_string(),
            Some(other) => {
                d.error(
                    "WRONG_TYPE",
                    key,
                    format!("`{key}` is {}: write a string", json_kind(other)),
                );
                continue;
            }
        };
        if text.is_empty() && REQUIRED.contains(&key) {
            d.error(
                "MISSING_SECTION",
                key,
                format!("`{key}` is missing or empty"),
            );
        } else if !text.is_empty() && !text.chars().any(char::is_alphanumeric) {
            d.error(
                "PLACEHOLDER",
                key,
                format!("`{key}` is `{text}`, a placeholder: write what this block did"),
            );
        }
        texts.push(text);
    }
    if d.is_valid() { Ok(texts) } else { Err(d) }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
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
    fn placeholders_and_missing_sections_break_the_contract() {
        let texts = check_result(
            &serde_json::json!({"completion": " Done.", "deliverables": "A list",
            "metric": "", "constraints": null}),
        )
        .expect("valid");
        assert_eq!(
            sections(&texts.iter().map(String::as_str).collect::<Vec<_>>()),
            "### Completion\nDone.\n\n### Deliverables\nA list\n\n### Metric\n(not stated)\n\n### Constraints\n(not stated)\n"
        );
        let copied = serde_json::json!({"completion": "...", "deliverables": "…", "metric": "...",
            "constraints": 5});
        let d = check_result(&copied).expect_err("placeholders");
        let found: Vec<(&str, &str)> = d
            .errors
            .iter()
            .map(|f| (f.code.as_str(), f.path.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                ("PLACEHOLDER", "completion"),
                ("PLACEHOLDER", "deliverables"),
                ("PLACEHOLDER", "metric"),
                ("WRONG_TYPE", "constraints")
            ]
        );
        let d = check_result(&serde_json::json!({"metric": "ok"})).expect_err("missing");
        assert!(d.has_error("MISSING_SECTION"));
    }
}
