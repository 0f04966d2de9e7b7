//! `documents`: the bounds of the process that parses untrusted documents (web pages and corpus
//! files): the memory one parser process may map, and how long one corpus file may take (a web
//! page's reading counts inside `search.read.timeoutMs`).

use std::time::Duration;

use serde::Deserialize;

/// `documents` as written.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DocumentsConfig {
    /// The memory one document may take in its parser process, in MB, beyond the parser's own
    /// (default 512): a document that needs more is skipped, with that cause.
    pub memory_mb: Option<u64>,
    /// The longest one corpus file may take to read, in ms (default 30000).
    pub timeout_ms: Option<u64>,
}

/// `documents`, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocumentSettings {
    pub memory_mb: u64,
    /// One corpus file's time.
    pub timeout: Duration,
}

impl Default for DocumentSettings {
    fn default() -> DocumentSettings {
        DocumentSettings {
            memory_mb: crate::isolate::DEFAULT_MEMORY_MB,
            timeout: Duration::from_secs(30),
        }
    }
}

/// A key of `documents` out of its range: the key, the value and what to use.
pub type Invalid = (&'static str, String, &'static str);

impl DocumentsConfig {
    /// The settings, each key checked against its range.
    pub fn resolve(&self) -> Result<DocumentSettings, Invalid> {
        let d = DocumentSettings::default();
        let memory_mb = self.memory_mb.unwrap_or(d.memory_mb);
        if !(64..=65_536).contains(&memory_mb) {
            let hint = "use 64 to 65536 (MB)";
            return Err(("documents.memoryMb", memory_mb.to_string(), hint));
        }
        let timeout = self.timeout_ms.map_or(d.timeout, Duration::from_millis);
        if !(Duration::from_millis(100)..=Duration::from_secs(3600)).contains(&timeout) {
            let shown = timeout.as_millis().to_string();
            return Err(("documents.timeoutMs", shown, "use 100 to 3600000 (an hour)"));
        }
        Ok(DocumentSettings { memory_mb, timeout })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_ranges() {
        assert_eq!(
            DocumentsConfig::default().resolve(),
            Ok(DocumentSettings::default())
        );
        let set = DocumentsConfig {
            memory_mb: Some(256),
            timeout_ms: Some(2_000),
        };
        assert_eq!(
            set.resolve(),
            Ok(DocumentSettings {
                memory_mb: 256,
                timeout: Duration::from_secs(2)
            })
        );
        let small = DocumentsConfig {
            memory_mb: Some(16),
            ..DocumentsConfig::default()
        };
        assert_eq!(
            small.resolve().expect_err("too small").0,
            "documents.memoryMb"
        );
        let quick = DocumentsConfig {
            timeout_ms: Some(5),
            ..DocumentsConfig::default()
        };
        assert_eq!(
            quick.resolve().expect_err("too short").0,
            "documents.timeoutMs"
        );
    }
}
