//! The version of a file researchflow keeps between runs (`batch.json` and its journal,
//! `watch.json`, the page cache's entries), written as its first key, `"version": N`, so that
//! a file of a format this build does not know is never misread. A file without one is of
//! version 1, the format written before versions were. Each kind of file declares the version
//! it writes; [`check`] tells a reader whether it can read what it found.

use serde::Serialize;
use serde_json::{Map, Value};

/// Why a file's version cannot be read.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VersionError {
    #[error(
        "it is of format version {found}, written by a newer researchflow; this one reads up to version {reads}: upgrade researchflow"
    )]
    Newer { found: u64, reads: u32 },
    #[error("its `version` is {0}, not a format version (a whole number from 1)")]
    Invalid(String),
}

/// The format version of the JSON `text` (1 when it names none), when this build, which writes
/// version `reads`, can read it; text that is not a JSON object passes, for the reader's own
/// parse to refuse.
pub fn check(text: &str, reads: u32) -> Result<u32, VersionError> {
    #[derive(serde::Deserialize)]
    struct Probe {
        version: Option<Value>,
    }
    let Ok(Probe { version }) = serde_json::from_str::<Probe>(text) else {
        return Ok(1);
    };
    match version {
        None => Ok(1),
        Some(v) => match v.as_u64() {
            Some(found @ 1..) if found <= u64::from(reads) => Ok(found as u32),
            Some(found @ 1..) => Err(VersionError::Newer { found, reads }),
            _ => Err(VersionError::Invalid(v.to_string())),
        },
    }
}

/// `value` as a JSON object with `"version": version` as its first key.
pub fn stamped(value: &impl Serialize, version: u32) -> serde_json::Result<Value> {
    let mut out = Map::new();
    out.insert("version".to_string(), Value::from(version));
    match serde_json::to_value(value)? {
        Value::Object(fields) => out.extend(fields.into_iter().filter(|(k, _)| k != "version")),
        other => return Ok(other),
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_version_is_the_first_and_a_newer_one_is_refused_by_name() {
        assert_eq!(check(r#"{"items": []}"#, 1), Ok(1));
        assert_eq!(check(r#"{"version": 2, "items": []}"#, 2), Ok(2));
        let newer = check(r#"{"version": 3}"#, 2).expect_err("newer");
        assert!(newer.to_string().contains("format version 3"), "{newer}");
        assert!(
            newer.to_string().contains("upgrade researchflow"),
            "{newer}"
        );
        assert!(matches!(
            check(r#"{"version": "two"}"#, 2),
            Err(VersionError::Invalid(_))
        ));
        assert!(matches!(
            check(r#"{"version": 0}"#, 2),
            Err(VersionError::Invalid(_))
        ));
        assert_eq!(check("not json", 1), Ok(1));
    }

    #[test]
    fn the_version_is_written_first() {
        let value = stamped(&serde_json::json!({"items": [1], "version": 9}), 2).expect("json");
        let text = serde_json::to_string(&value).expect("text");
        assert_eq!(text, r#"{"version":2,"items":[1]}"#);
    }
}
