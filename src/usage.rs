//! [`Usage`]: the tokens of model calls, one type for the LLM client that reads them from a
//! server's answer and for the plan file that records them per node (`usage`), so the two
//! can never drift apart. It sits on the bottom floor because the clients must not import
//! the plan, nor the plan the clients.

use serde::{Deserialize, Serialize};

/// Token usage as OpenAI-compatible servers report it, and as the plan file records a node's
/// (absent fields count as 0).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Usage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub total_tokens: u64,
}

impl Usage {
    /// Adds `other`'s tokens to these.
    pub fn add(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_fields_count_as_zero_and_usages_add_up() {
        let mut usage: Usage = serde_json::from_str(r#"{"prompt_tokens": 3}"#).expect("usage");
        usage.add(Usage {
            prompt_tokens: 1,
            completion_tokens: 2,
            total_tokens: 6,
        });
        assert_eq!(
            serde_json::to_value(usage).expect("json"),
            serde_json::json!({"prompt_tokens": 4, "completion_tokens": 2, "total_tokens": 6})
        );
    }
}
