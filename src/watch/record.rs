//! A run's record, `<run>/watch.json`: when it started and finished, each question's
//! status, the run it was compared with and its changes by kind, and every notification sent
//! or failed. Written when the run starts (unfinished: a later `watch` resumes it) and again
//! at each step of its end, atomically. `index.html` draws the history from these records.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The record's file name in a run's folder.
pub const RECORD_FILE: &str = "watch.json";

/// The format version of `watch.json` this build writes ([`crate::format`]).
pub const VERSION: u32 = 1;

/// The largest record read: a few hundred bytes a question.
const MAX_RECORD_BYTES: u64 = 64 * 1024 * 1024;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The name `watch` gave the run's folder when it made it: what tells a run from a folder
    /// that only looks like one (a copy, `cp -r <run> <run>-keep`, holds the old name; a
    /// folder someone else made holds no record). Absent from records written before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    pub started: String,
    /// When its questions ended and their changes were written; `null` while in progress.
    #[serde(default)]
    pub finished: Option<String>,
    #[serde(default)]
    pub questions: Vec<QuestionRecord>,
    #[serde(default)]
    pub notifications: Vec<Notification>,
}

/// One question in one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionRecord {
    pub id: String,
    pub name: String,
    pub status: String,
    /// The run it was compared with; `null` for the first run that answered it.
    pub compared_with: Option<String>,
    /// How many changes of each kind (`fact_changed`, `source_new`, ...).
    #[serde(default)]
    pub changes: std::collections::BTreeMap<String, usize>,
    /// Whether a change worth telling (`--notify-on`) is among them.
    #[serde(default)]
    pub worth_telling: bool,
}

/// One notification of this run's changes to one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notification {
    /// The target as shown ([`super::notify::shown`]): scheme, host and a hash of the URL.
    pub target: String,
    pub at: String,
    pub sent: bool,
    /// Why it failed, when it did (secrets redacted).
    #[serde(default)]
    pub error: Option<String>,
}

impl Record {
    /// The record of a new run in the folder `name`, started now.
    pub fn start(name: &str) -> Record {
        Record {
            run: Some(name.to_string()),
            started: crate::clock::now(),
            ..Record::default()
        }
    }

    /// The record of the run in `run`, if it has a readable one (a regular file, not a link).
    pub fn read(run: &Path) -> Option<Record> {
        let path = run.join(RECORD_FILE);
        if !std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
            return None;
        }
        let text = crate::files::read_bounded(&path, MAX_RECORD_BYTES).ok()?;
        if let Err(e) = crate::format::check(&text, VERSION) {
            // Not a run this build may resume, compare with or prune: left alone.
            tracing::warn!("`{}` is not read: {e}", path.display());
            return None;
        }
        serde_json::from_str(&text).ok()
    }

    /// Whether the run in `run` finished.
    pub fn finished_in(run: &Path) -> bool {
        Record::read(run).is_some_and(|r| r.finished.is_some())
    }

    /// Writes it in `run`, atomically.
    pub fn write(&self, run: &Path) -> std::io::Result<()> {
        let text = crate::format::stamped(self, VERSION)
            .and_then(|v| serde_json::to_string_pretty(&v))
            .map_err(std::io::Error::other)?;
        crate::atomic::write(&run.join(RECORD_FILE), format!("{text}\n").as_bytes())
    }

    /// Whether this run's changes were already sent to `target` (as shown; a resumed run does
    /// not send them twice).
    pub fn sent_to(&self, target: &str) -> bool {
        self.notifications
            .iter()
            .any(|n| n.sent && n.target == target)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record written before versions were is read; one of a newer format is not (its run
    /// is left alone: never resumed, compared with nor pruned).
    #[test]
    fn a_record_is_read_by_its_format_version() {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = dir.path();
        Record::start("20261205T000000Z").write(run).expect("write");
        let text = std::fs::read_to_string(run.join(RECORD_FILE)).expect("read");
        assert!(text.starts_with("{\n  \"version\": 1,"), "{text}");
        assert_eq!(
            Record::read(run).and_then(|r| r.run).as_deref(),
            Some("20261205T000000Z")
        );
        let legacy = r#"{"started": "2026-12-05T00:00:00Z"}"#;
        std::fs::write(run.join(RECORD_FILE), legacy).expect("write");
        assert_eq!(
            Record::read(run).expect("legacy").started,
            "2026-12-05T00:00:00Z"
        );
        let newer = r#"{"version": 2, "started": "2026-12-05T00:00:00Z"}"#;
        std::fs::write(run.join(RECORD_FILE), newer).expect("write");
        assert_eq!(Record::read(run), None);
    }
}
