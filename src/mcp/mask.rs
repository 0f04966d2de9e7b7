//! [`Mask`]: every secret the server knows, masked (`***`) in everything it sends a client:
//! tool results and errors, resources, progress notes. The tools already quote no file that
//! is not a plan and no value of a wrong one (`plan_check.rs`); this is the second line, as
//! the files, the logs and the transcript have theirs, for a key that reaches an answer some
//! other way (a plan whose question quotes it, a report, a server's error echoed in a reason).
//!
//! The masking is the process's one ([`crate::text::secrets`]), which every writer uses: the
//! secrets of the settings (each role's key, the search key, the passwords of the URLs), the
//! keys in the environment even when no setting uses them (`OPENAI_API_KEY` of a `.env` the
//! server loaded without a model configured, each web provider's key variable), and, taught
//! here, the server's own bearer token.

use rmcp::model::CallToolResult;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::settings::Settings;
use crate::settings::secret::{self, ApiKey};

/// The masking of the server's secrets.
#[derive(Debug, Clone, Default)]
pub struct Mask {
    _taught: (),
}

impl Mask {
    /// Teaches the process's mask the secrets of `settings`, of the key variables in the
    /// environment, and `token`.
    pub fn known(settings: &Settings, token: Option<&ApiKey>) -> Mask {
        secret::remember(&settings.secrets());
        secret::remember_environment();
        secret::remember(token);
        Mask { _taught: () }
    }

    /// `text` with every secret masked.
    pub fn text(&self, text: &str) -> String {
        crate::text::secrets::mask(text).into_owned()
    }

    /// `value` with every string in it (and every key) masked.
    pub fn value(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.value(v)))
                    .collect(),
            ),
            other => other,
        }
    }

    /// A tool's result masked; one that cannot be re-encoded is replaced by an error result,
    /// never sent unmasked.
    pub fn tool_result(&self, result: CallToolResult) -> CallToolResult {
        self.message(&result).unwrap_or_else(|| {
            CallToolResult::error(vec![rmcp::model::ContentBlock::text(
                "cannot send this answer: it could not be checked for secrets",
            )])
        })
    }

    /// Any message (a resource, a list of them) masked through its JSON; `None` when it does
    /// not encode and decode again, so that nothing is sent unmasked.
    pub fn message<T: Serialize + DeserializeOwned>(&self, value: &T) -> Option<T> {
        let json = serde_json::to_value(value).ok()?;
        serde_json::from_value(self.value(json)).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_string_and_key_of_an_answer_is_masked() {
        let file = crate::settings::ConfigFile::default();
        let settings =
            Settings::resolve(std::path::Path::new("c.json"), file, &|_| None).expect("settings");
        let key = ApiKey::new("sk-MCP-MASK-1").expect("key");
        let mask = Mask::known(&settings, Some(&key));
        let answer =
            json!({"question": "is sk-MCP-MASK-1 here?", "sk-MCP-MASK-1": [1, "sk-MCP-MASK-1"]});
        let masked = mask.value(answer);
        assert_eq!(
            masked,
            json!({"question": "is *** here?", "***": [1, "***"]})
        );
        let result = CallToolResult::structured(json!({"report": "a sk-MCP-MASK-1 b"}));
        let text = serde_json::to_string(&mask.tool_result(result)).expect("json");
        assert!(!text.contains("MASK") && text.contains("a *** b"), "{text}");
    }
}
