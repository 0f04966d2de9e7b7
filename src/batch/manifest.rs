//! `DIR/batch.json`, the manifest of a batch: one item per question with its status, files
//! and totals. While a batch runs, each question's start and end is appended to its journal
//! (`journal.rs`) and `batch.json` is rewritten only now and then (`manifest_writer.rs`); reading a
//! manifest folds the journal in, so every reader (a rerun skipping what is done, `watch`,
//! `batch export`) sees the latest state, mid-batch or after a crash, without writing
//! anything. `DIR/batch.lock` keeps two batches off one folder.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal;
use crate::events::{RunStatus, Totals};
use crate::lockfile::{LockError, LockFile};
use crate::review::ReviewSummary;

/// Where a question stands: waiting, running, or how its workflow ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum ItemStatus {
    Pending,
    Running,
    Completed,
    Partial,
    Degraded,
    FinalFailed,
    Interrupted,
    Failed,
}

impl ItemStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Done: a rerun leaves the question and its files alone (what was asked was delivered).
    pub fn is_done(self) -> bool {
        matches!(self, ItemStatus::Completed | ItemStatus::Partial)
    }
}

impl From<RunStatus> for ItemStatus {
    fn from(status: RunStatus) -> ItemStatus {
        match status {
            RunStatus::Completed => ItemStatus::Completed,
            RunStatus::Partial => ItemStatus::Partial,
            RunStatus::Degraded => ItemStatus::Degraded,
            RunStatus::FinalFailed => ItemStatus::FinalFailed,
            RunStatus::Interrupted => ItemStatus::Interrupted,
            RunStatus::Failed => ItemStatus::Failed,
        }
    }
}

/// One question's line in the manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: String,
    pub query: String,
    pub status: ItemStatus,
    pub plan_file: String,
    pub report: Option<String>,
    /// What its workflow spent; `null` until it ends.
    #[serde(default)]
    pub totals: Option<Totals>,
    /// Why it ended short of `completed`; `null` otherwise (every key is always written, as
    /// the book lists them, `docs/src/commands/batch.md`).
    #[serde(default)]
    pub reason: Option<String>,
    /// The review of its report, as the workflow printed it (`status`, `verdict`, `files`);
    /// `null` without one.
    #[serde(default)]
    pub review: Option<ReviewSummary>,
    /// Whether its report answers the question: `false` when it says its sources do not;
    /// `null` without a report (or in an older manifest).
    #[serde(default)]
    pub answered: Option<bool>,
}

impl Item {
    /// Whether the review's verdict on its report is `block`.
    pub fn is_blocked(&self) -> bool {
        self.review.as_ref().is_some_and(ReviewSummary::is_block)
    }

    /// Whether its report says its sources do not answer the question.
    pub fn is_unanswered(&self) -> bool {
        self.answered == Some(false)
    }

    /// Whether the question is done: a rerun leaves it and its files alone.
    pub fn is_done(&self) -> bool {
        self.status.is_done()
    }
}

/// The format version of `batch.json` (and of its journal's lines, which are its items) this
/// build writes ([`crate::format`]).
pub const VERSION: u32 = 1;

/// The whole manifest.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub items: Vec<Item>,
    /// The queue batch this folder was exported from (`batch export`); absent for a local
    /// batch. An export replaces only a folder exported from the same batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_batch: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read the batch manifest `{path}`: {message}; fix or remove it to start afresh")]
    Read { path: PathBuf, message: String },
    /// A manifest of a format this build does not read: left as it is.
    #[error("cannot read the batch manifest `{path}`: {source}")]
    Version {
        path: PathBuf,
        source: crate::format::VersionError,
    },
    #[error("cannot write the batch manifest `{path}`: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the batch folder `{dir}` is in use by another researchflow batch (lock `{lock}`): wait for it to finish, or use another folder"
    )]
    Locked { dir: PathBuf, lock: PathBuf },
    #[error("cannot lock the batch folder `{dir}`: {source}")]
    Lock {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The batch's writer could not write what it was told (its first error).
    #[error("the batch's record stopped: {0}")]
    Writer(String),
}

/// The manifest's path in `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join("batch.json")
}

/// Locks `dir` for this batch until the returned file is dropped (which removes it, safely:
/// see [`crate::lockfile`]).
pub fn lock(dir: &Path) -> Result<LockFile, ManifestError> {
    LockFile::take(&dir.join("batch.lock")).map_err(|e| match e {
        LockError::Held(lock) => ManifestError::Locked {
            dir: dir.to_path_buf(),
            lock,
        },
        LockError::Io { source, .. } => ManifestError::Lock {
            dir: dir.to_path_buf(),
            source,
        },
    })
}

impl Manifest {
    /// The manifest in `dir` with its journal's lines applied in order (the latest state, even
    /// mid-batch or after a crash), or an empty one when there is none yet. Writes nothing.
    pub fn load(dir: &Path) -> Result<Manifest, ManifestError> {
        let mut manifest = Manifest::load_file(dir)?;
        let lines: Vec<Item> = journal::read(dir).map_err(|e| ManifestError::Read {
            path: e.path,
            message: e.message,
        })?;
        manifest.put_all(lines);
        Ok(manifest)
    }

    /// `batch.json` alone, without the journal.
    fn load_file(dir: &Path) -> Result<Manifest, ManifestError> {
        let path = path_in(dir);
        if !path.exists() {
            return Ok(Manifest::default());
        }
        let read_err = |message: String| ManifestError::Read {
            path: path.clone(),
            message,
        };
        let text = crate::files::read_bounded(&path, crate::files::DEFAULT_MAX_BYTES)
            .map_err(|e| read_err(e.to_string()))?;
        crate::format::check(&text, VERSION).map_err(|source| ManifestError::Version {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|e| read_err(e.to_string()))
    }

    /// Saves the manifest in `dir` as the batch's whole state: `batch.json` written durably,
    /// then the journal, which it now holds, removed.
    pub fn save(&self, dir: &Path) -> Result<(), ManifestError> {
        self.write_file(dir)?;
        journal::remove(dir).map_err(|source| ManifestError::Write {
            path: journal::path_in(dir),
            source,
        })
    }

    /// Writes `batch.json` atomically, leaving the journal as it is (a snapshot while the
    /// batch runs: the journal still says what came after); returns the bytes written.
    pub fn write_file(&self, dir: &Path) -> Result<usize, ManifestError> {
        let path = path_in(dir);
        let write_err = |source| ManifestError::Write {
            path: path.clone(),
            source,
        };
        let text =
            crate::format::stamped(self, VERSION).and_then(|v| serde_json::to_string_pretty(&v));
        let mut text = text.map_err(|e| write_err(e.into()))?;
        text.push('\n');
        crate::atomic::write(&path, text.as_bytes()).map_err(write_err)?;
        Ok(text.len())
    }

    /// The item of question `id`.
    pub fn item(&self, id: &str) -> Option<&Item> {
        self.items.iter().find(|i| i.id == id)
    }

    /// Sets (or adds) the item of the same id.
    pub fn put(&mut self, item: Item) {
        match self.items.iter_mut().find(|i| i.id == item.id) {
            Some(slot) => *slot = item,
            None => self.items.push(item),
        }
    }

    /// Puts each of `items` in turn, as [`Manifest::put`] would, finding each slot at once.
    pub fn put_all(&mut self, items: impl IntoIterator<Item = Item>) {
        let mut slots = Slots::of(self);
        for item in items {
            slots.put(self, item);
        }
    }
}

/// Where each question's item is in a manifest's `items`, for many puts in a row: each finds
/// its slot at once instead of scanning the list.
#[derive(Debug, Default)]
pub struct Slots(HashMap<String, usize>);

impl Slots {
    /// The slots of `manifest` as it is (the first item of an id, as [`Manifest::item`]).
    pub fn of(manifest: &Manifest) -> Slots {
        let mut slots = HashMap::new();
        for (n, item) in manifest.items.iter().enumerate() {
            slots.entry(item.id.clone()).or_insert(n);
        }
        Slots(slots)
    }

    /// [`Manifest::put`] on `manifest`, whose slots these are.
    pub fn put(&mut self, manifest: &mut Manifest, item: Item) {
        match self.0.get(&item.id) {
            Some(&n) => manifest.items[n] = item,
            None => {
                self.0.insert(item.id.clone(), manifest.items.len());
                manifest.items.push(item);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Batch manifests store these names: they must never change.
    #[test]
    fn every_item_status_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<ItemStatus>(),
            "pending running completed partial degraded final_failed interrupted failed"
        );
    }

    fn item(id: &str, status: ItemStatus) -> Item {
        Item {
            id: id.into(),
            query: "Q?".into(),
            status,
            plan_file: format!("{id}.json"),
            report: None,
            totals: None,
            reason: None,
            review: None,
            answered: None,
        }
    }

    #[test]
    fn saved_then_loaded_and_updated_in_place() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert_eq!(
            Manifest::load(dir.path()).expect("none yet"),
            Manifest::default()
        );
        let mut m = Manifest::default();
        m.put(item("a", ItemStatus::Running));
        m.put(item("b", ItemStatus::Pending));
        m.put(item("a", ItemStatus::Completed));
        m.save(dir.path()).expect("save");
        let back = Manifest::load(dir.path()).expect("load");
        assert_eq!(back.items.len(), 2);
        assert!(back.item("a").expect("a").is_done());
        assert!(!back.item("b").expect("b").is_done());
        let text = std::fs::read_to_string(path_in(dir.path())).expect("read");
        assert!(text.contains(r#""status": "completed""#), "{text}");
        assert!(text.contains(r#""totals": null"#), "{text}");
        assert!(text.starts_with("{\n  \"version\": 1,"), "{text}");
    }

    #[test]
    fn a_manifest_without_a_version_is_read_and_a_newer_one_refused_untouched() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = path_in(dir.path());
        std::fs::write(&path, r#"{"items": []}"#).expect("write");
        assert_eq!(
            Manifest::load(dir.path()).expect("legacy"),
            Manifest::default()
        );
        let newer = r#"{"version": 2, "items": [], "shards": 4}"#;
        std::fs::write(&path, newer).expect("write");
        let err = Manifest::load(dir.path()).expect_err("newer").to_string();
        assert!(err.contains("batch.json"), "{err}");
        assert!(err.contains("format version 2"), "{err}");
        assert!(err.contains("upgrade researchflow"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), newer);
    }

    #[test]
    fn one_batch_per_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let held = lock(dir.path()).expect("first");
        assert!(matches!(
            lock(dir.path()),
            Err(ManifestError::Locked { .. })
        ));
        drop(held);
        assert!(lock(dir.path()).is_ok());
    }
}
