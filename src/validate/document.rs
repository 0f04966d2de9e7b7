//! Reading the documents the validators check: JSON or YAML, chosen by file extension, else by
//! content. Errors name the file and say what to do. This module only parses; it checks no rule.
//!
//! Files are read through [`crate::files::read_bounded`] (regular files under a size cap), and
//! YAML nested deeper than [`yaml_depth::MAX_DEPTH`] is refused before the YAML parser, whose
//! time grows much faster than the input with nesting, sees it.

use std::path::Path;

use serde_json::Value;

use super::yaml_depth;
use crate::files::{DEFAULT_MAX_BYTES, FileError, read_bounded};

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
    #[error(transparent)]
    Read(#[from] FileError),
    #[error(
        "`{path}` nests deeper than {max} levels at line {line}: flatten it (a step plan, atom registry or executors file needs far less)"
    )]
    TooDeep {
        path: String,
        line: usize,
        max: usize,
    },
    #[error(
        "`{path}` is not valid {format}: {message}: fix the syntax (the format is chosen by the extension .json, .yaml or .yml)"
    )]
    Parse {
        path: String,
        format: &'static str,
        message: String,
    },
}

/// Reads a file as text: a regular file of at most [`DEFAULT_MAX_BYTES`].
pub fn read_text(path: &Path) -> Result<String, DocumentError> {
    Ok(read_bounded(path, DEFAULT_MAX_BYTES)?)
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
        Format::Yaml => {
            yaml_depth::check(text, yaml_depth::MAX_DEPTH).map_err(|deep| {
                DocumentError::TooDeep {
                    path: name.to_string(),
                    line: deep.line,
                    max: deep.max,
                }
            })?;
            serde_norway::from_str::<Value>(text).map_err(|e| e.to_string())
        }
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

    #[test]
    fn deeply_nested_yaml_is_refused_before_parsing() {
        let text = "[".repeat(100_000);
        let err = parse_document(&text, Format::Yaml, "deep.yaml").expect_err("too deep");
        assert_eq!(
            err.to_string(),
            "`deep.yaml` nests deeper than 64 levels at line 1: flatten it (a step plan, atom registry or executors file needs far less)"
        );
        let ten = "a:\n  b:\n    - c:\n        d: [1, {e: [2, {f: [3]}]}]\n";
        let value = parse_document(ten, Format::Yaml, "ten.yaml").expect("depth 10 parses");
        assert_eq!(value["a"]["b"][0]["c"]["d"][1]["e"][1]["f"][0], 3);
    }

    #[test]
    fn devices_are_refused_without_reading() {
        let err = read_document(Path::new("/dev/zero")).expect_err("a device");
        assert!(err.to_string().contains("not a regular file"), "{err}");
    }
}
