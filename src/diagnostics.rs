//! One diagnostics shape for every check: the validators and the planning round's contract.
//!
//! `{ "valid": true, "warnings": [...], "execution_order": [...] }` or
//! `{ "valid": false, "errors": [{ "code", "message", "path" }], "warnings": [...] }`, with paths
//! like `plan.steps[1].inputs.file_path` or `tasks[0].type`. This module only collects and
//! renders findings; it knows no rule.

use serde::{Deserialize, Serialize};

/// One error or warning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Finding {
    pub code: String,
    pub message: String,
    pub path: String,
}

/// The result of a check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostics {
    pub valid: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<Finding>,
    #[serde(default)]
    pub warnings: Vec<Finding>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_order: Option<Vec<String>>,
}

impl Default for Diagnostics {
    fn default() -> Self {
        Diagnostics::new()
    }
}

impl Diagnostics {
    /// No finding yet: valid.
    pub fn new() -> Diagnostics {
        Diagnostics {
            valid: true,
            errors: Vec::new(),
            warnings: Vec::new(),
            execution_order: None,
        }
    }

    /// Records an error; the diagnostics become invalid.
    pub fn error(
        &mut self,
        code: &str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> &mut Self {
        self.valid = false;
        self.errors.push(Finding {
            code: code.to_string(),
            message: message.into(),
            path: path.into(),
        });
        self
    }

    /// Records a warning; validity is unchanged.
    pub fn warn(
        &mut self,
        code: &str,
        path: impl Into<String>,
        message: impl Into<String>,
    ) -> &mut Self {
        self.warnings.push(Finding {
            code: code.to_string(),
            message: message.into(),
            path: path.into(),
        });
        self
    }

    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Whether an error with this code was recorded.
    pub fn has_error(&self, code: &str) -> bool {
        self.errors.iter().any(|f| f.code == code)
    }

    /// One line per finding: `error CODE at PATH: MESSAGE`, then a closing verdict line.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (kind, list) in [("error", &self.errors), ("warning", &self.warnings)] {
            for f in list {
                let path = if f.path.is_empty() { "(root)" } else { &f.path };
                out.push_str(&format!("{kind} {} at {path}: {}\n", f.code, f.message));
            }
        }
        if let Some(order) = &self.execution_order {
            out.push_str(&format!("execution order: {}\n", order.join(", ")));
        }
        out.push_str(&format!(
            "{}: {} error(s), {} warning(s)\n",
            if self.valid { "valid" } else { "invalid" },
            self.errors.len(),
            self.warnings.len()
        ));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_shape_follows_validity() {
        let mut ok = Diagnostics::new();
        ok.warn("W", "a.b", "w");
        ok.execution_order = Some(vec!["0".into()]);
        let v = serde_json::to_value(&ok).expect("serialises");
        assert_eq!(v["valid"], true);
        assert!(v.get("errors").is_none());
        assert_eq!(v["warnings"][0]["path"], "a.b");
        assert_eq!(v["execution_order"][0], "0");

        let mut bad = Diagnostics::new();
        bad.error("MISSING_FIELD", "target", "`target` is missing");
        let v = serde_json::to_value(&bad).expect("serialises");
        assert_eq!(v["valid"], false);
        assert_eq!(v["errors"][0]["code"], "MISSING_FIELD");
        assert!(bad.has_error("MISSING_FIELD"));
        assert!(bad.to_text().contains("error MISSING_FIELD at target: `target` is missing"));
    }
}
