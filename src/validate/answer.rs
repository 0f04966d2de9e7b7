//! A model's answer as a validator reads it from a file: exactly one JSON document, with no
//! text or code fence around it. Anything else is the finding `INVALID_JSON` (the validation
//! fails, exit 1), not an input error: a model that wraps its answer broke the contract.

use serde_json::Value;

use crate::diagnostics::Diagnostics;

/// The answer in `text` as JSON, or the `INVALID_JSON` finding that says what to remove.
pub fn parse_answer(text: &str) -> Result<Value, Diagnostics> {
    serde_json::from_str::<Value>(text).map_err(|err| {
        let mut d = Diagnostics::new();
        let hint = if text.trim_start().starts_with("```") {
            "remove the Markdown code fence"
        } else {
            "output exactly one JSON object with no text before or after it"
        };
        d.error(
            "INVALID_JSON",
            "",
            format!("the answer is not one JSON object ({err}): {hint}"),
        );
        d
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_or_a_fence_around_the_object_is_invalid_json() {
        assert!(parse_answer(" {\"a\": 1}\n").is_ok());
        let fenced = parse_answer("```json\n{}\n```").expect_err("fenced");
        assert!(fenced.errors[0].message.contains("code fence"));
        let prose = parse_answer("Here: {}").expect_err("prose");
        assert_eq!(prose.errors[0].code, "INVALID_JSON");
    }
}
