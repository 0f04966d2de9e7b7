//! Reading the documents the validators check: JSON or YAML, chosen by file extension, else by
//! content. Errors name the file and say what to do. This module only parses; it checks no rule.

use std::path::Path;

use serde_json::Value;

/// The syntax of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::Json => "JSON",
            Format::Yaml => "YAML",
        }
    }

    /// `.json` is JSON and `.yaml` / `.yml` are YAML; any other extension is decided by content:
    /// a document whose first non-blank character is `{` or `[` is JSON, anything else YAML.
    pub fn detect(path: &Path, text: &str) -> Format {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("json") => Format::Json,
            Some("yaml" | "yml") => Format::Yaml,
            _ if matches!(text.trim_start().chars().next(), Some('{' | '[')) => Format::Json,
            _ => Format::Yaml,
        }
    }
}

/// Why a document cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DocumentError {
    #[error("cannot read `{path}`: {error}: check the path and its permissions")]
    Read { path: String, error: std::io::Error },
    #[error(
        "`{path}` is not valid {format}: {message}: fix the syntax (the format is chosen by the extension .json, .yaml or .yml)"
    )]
    Parse {
        path: String,
        format: &'static str,
        message: String,
    },
}

/// Reads a file as text.
pub fn read_text(path: &Path) -> Result<String, DocumentError> {
    std::fs::read_to_string(path).map_err(|error| DocumentError::Read {
        path: path.display().to_string(),
        error,
    })
}

/// Reads and parses a JSON or YAML file.
pub fn read_document(path: &Path) -> Result<Value, DocumentError> {
    let text = read_text(path)?;
    parse_document(
        &text,
        Format::detect(path, &text),
        &path.display().to_string(),
    )
}

/// Parses `text` in the given format; `name` labels the document in errors.
pub fn parse_document(text: &str, format: Format, name: &str) -> Result<Value, DocumentError> {
    let parsed = match format {
        Format::Json => serde_json::from_str::<Value>(text).map_err(|e| e.to_string()),
        Format::Yaml => serde_norway::from_str::<Value>(text).map_err(|e| e.to_string()),
    };
    parsed.map_err(|message| DocumentError::Parse {
        path: name.to_string(),
        format: format.name(),
        message,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extension_wins_then_content() {
        assert_eq!(Format::detect(Path::new("a.JSON"), "x: 1"), Format::Json);
        assert_eq!(Format::detect(Path::new("a.yml"), "{}"), Format::Yaml);
        assert_eq!(
            Format::detect(Path::new("a.txt"), "  {\"a\":1}"),
            Format::Json
        );
        assert_eq!(Format::detect(Path::new("a"), "a: 1"), Format::Yaml);
    }

    #[test]
    fn yaml_and_json_give_the_same_value() {
        let y = parse_document("a: [1, {b: x}]\n", Format::Yaml, "y").expect("yaml");
        let j = parse_document(r#"{"a":[1,{"b":"x"}]}"#, Format::Json, "j").expect("json");
        assert_eq!(y, j);
    }

    #[test]
    fn errors_name_the_file() {
        let err = parse_document("{", Format::Json, "plan.json").expect_err("broken");
        assert!(
            err.to_string().starts_with("`plan.json` is not valid JSON"),
            "{err}"
        );
        let err = read_document(Path::new("/nonexistent/x.yaml")).expect_err("missing");
        assert!(
            err.to_string()
                .contains("cannot read `/nonexistent/x.yaml`"),
            "{err}"
        );
    }
}
