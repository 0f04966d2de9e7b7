//! The Thinkon folder (`.thinkon` unless `--dir` says otherwise) and what is in it:
//!
//! | file | what |
//! |---|---|
//! | `thinkon.json` | the tree: its goal as given, root, `max_depth`, status |
//! | `blocks/<id>.json` | one block each ([`super::block::Block`]) |
//! | `thinking-context.json` | the Context JSON of the planner's latest call |
//! | `executors/executors.yaml` | the executors the planner may call |
//! | `work/` | where `shell:` commands run |
//! | `result.md` | the root's result |
//! | `events.ndjson`, `transcript.jsonl` | the event log and the run record |
//! | `thinkon.lock` | held by the process working on the folder, removed when it lets go |
//!
//! Every file is replaced atomically ([`crate::atomic`]); a crash loses at most the block in
//! flight. A second process on the same folder is refused at once (the lock). This module
//! reads and writes; it decides nothing about the loop.

use crate::lockfile::{LockError, LockFile};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::block::Block;

/// The tree file format's version.
pub const TREE_VERSION: u32 = 1;

/// The largest block file read (a block holds at most a few results, each capped).
const BLOCK_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// `thinkon.json`: what the folder works on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TreeMeta {
    pub version: u32,
    pub run_id: String,
    /// The goal as the user gave it.
    pub goal: String,
    pub root: String,
    pub max_depth: u32,
    /// `running`, then how the last invocation ended: `completed`, `failed`, `partial`,
    /// `interrupted`.
    pub status: String,
    pub created_at: String,
    pub updated_at: String,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "cannot create the thinkon folder `{path}`: {source}: check the path and its permissions"
    )]
    Create {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the thinkon folder `{path}` is in use by another researchflow process (lock `{lock}`): wait for it to finish, or use another `--dir`"
    )]
    Locked { path: PathBuf, lock: PathBuf },
    #[error("cannot read `{path}`: {message}: fix or remove the file")]
    Read { path: PathBuf, message: String },
    #[error("cannot write `{path}`: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// The folder, locked while this value lives.
#[derive(Debug)]
pub struct TreeStore {
    dir: PathBuf,
    _lock: LockFile,
}

impl TreeStore {
    /// Creates the folder and its sub-folders when missing, and locks it.
    pub fn open(dir: &Path) -> Result<TreeStore, StoreError> {
        for sub in ["", "blocks", "work", "executors"] {
            let path = dir.join(sub);
            std::fs::create_dir_all(&path).map_err(|source| StoreError::Create {
                path: path.clone(),
                source,
            })?;
        }
        match LockFile::take(&dir.join("thinkon.lock")) {
            Ok(lock) => Ok(TreeStore {
                dir: dir.to_path_buf(),
                _lock: lock,
            }),
            Err(LockError::Held(lock)) => Err(StoreError::Locked {
                path: dir.to_path_buf(),
                lock,
            }),
            Err(LockError::Io { path, source }) => Err(StoreError::Create { path, source }),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn work_dir(&self) -> PathBuf {
        self.dir.join("work")
    }

    pub fn events_path(&self) -> PathBuf {
        self.dir.join("events.ndjson")
    }

    pub fn transcript_path(&self) -> PathBuf {
        self.dir.join("transcript.jsonl")
    }

    pub fn result_path(&self) -> PathBuf {
        self.dir.join("result.md")
    }

    pub fn context_path(&self) -> PathBuf {
        self.dir.join("thinking-context.json")
    }

    /// Where the executors are read from unless `--executors` names a file.
    pub fn default_executors_path(&self) -> PathBuf {
        self.dir.join("executors").join("executors.yaml")
    }

    fn meta_path(&self) -> PathBuf {
        self.dir.join("thinkon.json")
    }

    fn block_path(&self, id: &str) -> PathBuf {
        self.dir.join("blocks").join(format!("{id}.json"))
    }

    /// The tree's `thinkon.json`, or `None` in a fresh folder.
    pub fn meta(&self) -> Result<Option<TreeMeta>, StoreError> {
        let path = self.meta_path();
        if !path.exists() {
            return Ok(None);
        }
        read_json(&path).map(Some)
    }

    pub fn save_meta(&self, meta: &TreeMeta) -> Result<(), StoreError> {
        self.write_json(&self.meta_path(), meta)
    }

    /// Every block file of the folder, in no particular order. Temporary files a crash left
    /// behind are not blocks.
    pub fn load_blocks(&self) -> Result<Vec<Block>, StoreError> {
        let dir = self.dir.join("blocks");
        let entries = std::fs::read_dir(&dir).map_err(|e| StoreError::Read {
            path: dir.clone(),
            message: e.to_string(),
        })?;
        let mut blocks = Vec::new();
        for entry in entries {
            let path = entry
                .map_err(|e| StoreError::Read {
                    path: dir.clone(),
                    message: e.to_string(),
                })?
                .path();
            let is_block = path.extension().is_some_and(|e| e == "json")
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| !n.starts_with('.'));
            if is_block {
                blocks.push(read_json::<Block>(&path)?);
            }
        }
        Ok(blocks)
    }

    /// Saves one block, atomically.
    pub fn save(&self, block: &Block) -> Result<(), StoreError> {
        self.write_json(&self.block_path(&block.id), block)
    }

    /// Replaces a file of the folder with `text`, atomically.
    pub fn write_text(&self, path: &Path, text: &str) -> Result<(), StoreError> {
        crate::atomic::write(path, text.as_bytes()).map_err(|source| StoreError::Write {
            path: path.to_path_buf(),
            source,
        })
    }

    fn write_json(&self, path: &Path, value: &impl Serialize) -> Result<(), StoreError> {
        let text = serde_json::to_string_pretty(value).map_err(|e| StoreError::Write {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        })?;
        self.write_text(path, &(text + "\n"))
    }
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, StoreError> {
    let text = crate::files::read_bounded(path, BLOCK_MAX_BYTES).map_err(|e| StoreError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    serde_json::from_str(&text).map_err(|e| StoreError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_are_saved_and_loaded_and_the_folder_is_locked() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = tmp.path().join(".thinkon");
        let store = TreeStore::open(&dir).expect("open");
        assert!(dir.join("work").is_dir() && dir.join("executors").is_dir());
        let block = Block::new("a".into(), None, 0, json!("goal"));
        store.save(&block).expect("save");
        std::fs::write(dir.join("blocks/.researchflow-x.tmp"), "half").expect("temp");
        assert_eq!(store.load_blocks().expect("load"), vec![block]);
        assert!(matches!(
            TreeStore::open(&dir),
            Err(StoreError::Locked { .. })
        ));
        drop(store);
        // Another test of this process may fork (a shell command) while the lock is held: the
        // child holds it until it execs, which takes a moment.
        let reopened = (0..100).any(|_| {
            let ok = TreeStore::open(&dir).is_ok();
            if !ok {
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            ok
        });
        assert!(reopened, "the lock is free once the store is dropped");
    }

    #[test]
    fn a_broken_block_file_is_named() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let store = TreeStore::open(tmp.path()).expect("open");
        std::fs::write(tmp.path().join("blocks/b.json"), "{").expect("write");
        let err = store.load_blocks().expect_err("broken");
        assert!(err.to_string().contains("b.json"), "{err}");
    }
}
