//! [`Scratch`]: a worker's folder for the files of the questions it runs, in the system's
//! temporary folder (`TMPDIR`), removed when the worker ends. A worker that dies without
//! ending (SIGKILL, the OOM killer, a power cut) cannot remove it, so each worker holds a lock
//! in its folder for its whole life, and a worker starting on the same machine removes the
//! folders of the dead: those whose lock it can take. Everything in such a folder is in the
//! database already (each checkpoint is stored there before the run goes on), so nothing is
//! lost with it, and nothing in it is synced to disk.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::lockfile::LockFile;

/// The start of every worker folder's name.
const PREFIX: &str = "researchflow-worker-";
/// The lock a worker holds in its folder.
const LOCK: &str = "worker.lock";
/// A folder younger than this is left alone: its worker may be between making it and
/// locking it.
const YOUNGEST_SWEPT: Duration = Duration::from_secs(60);

/// A worker's folder, locked while it lives; removed when dropped. Its plans are saved
/// without syncs ([`crate::atomic::write_scratch`]): the database holds what must last.
pub struct Scratch {
    // The lock first: it is let go before the folder goes.
    _lock: LockFile,
    dir: tempfile::TempDir,
}

impl Scratch {
    /// Makes and locks this worker's folder, then removes the folders that dead workers left
    /// beside it in the temporary folder (owned as this one is).
    pub fn create() -> std::io::Result<Scratch> {
        let temp = std::env::temp_dir();
        let dir = tempfile::Builder::new().prefix(PREFIX).tempdir_in(&temp)?;
        let lock = LockFile::take(&dir.path().join(LOCK)).map_err(std::io::Error::other)?;
        for dead in sweep(&temp, dir.path()) {
            tracing::info!(
                "removed `{}`, the folder of a worker that died (its questions are in the database)",
                dead.display()
            );
        }
        Ok(Scratch { _lock: lock, dir })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes the worker folders in `temp` whose worker is gone (their lock can be taken), that
/// are older than [`YOUNGEST_SWEPT`] and have the owner of `own` (this worker's folder);
/// returns them. A folder without a lock (a worker of an older version, which may still be
/// running) is left alone.
fn sweep(temp: &Path, own: &Path) -> Vec<PathBuf> {
    let (Ok(entries), Ok(own)) = (std::fs::read_dir(temp), std::fs::symlink_metadata(own)) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(PREFIX))
        .map(|e| e.path())
        .filter(|dir| is_old_folder_owned_as(dir, &own))
        .filter(|dir| remove_if_dead(dir))
        .collect()
}

/// A real folder (not a link), owned as `own` is, unchanged for [`YOUNGEST_SWEPT`].
fn is_old_folder_owned_as(dir: &Path, own: &std::fs::Metadata) -> bool {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != own.uid() {
            return false;
        }
    }
    #[cfg(not(unix))]
    let _ = own;
    let age = meta.modified().ok().and_then(|m| m.elapsed().ok());
    meta.is_dir() && age.is_some_and(|age| age >= YOUNGEST_SWEPT)
}

/// Removes `dir` when its lock can be taken (its worker died); whether it did.
fn remove_if_dead(dir: &Path) -> bool {
    let lock_path = dir.join(LOCK);
    if std::fs::symlink_metadata(&lock_path).is_err() {
        return false;
    }
    let Ok(lock) = LockFile::take(&lock_path) else {
        return false; // held: its worker is alive
    };
    let removed = std::fs::remove_dir_all(dir);
    drop(lock);
    match removed {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!("cannot remove `{}`: {e}", dir.display());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn age(dir: &Path, by: Duration) {
        let then = std::time::SystemTime::now() - by;
        std::fs::File::open(dir)
            .and_then(|f| f.set_modified(then))
            .expect("set the folder's time");
    }

    #[test]
    fn only_the_old_folders_of_dead_workers_are_removed() {
        let temp = tempfile::tempdir().expect("temp");
        let folder = |name: &str, locked: bool| {
            let dir = temp.path().join(name);
            std::fs::create_dir(&dir).expect("folder");
            std::fs::write(dir.join("q.json"), "{}").expect("a plan");
            if locked {
                std::fs::write(dir.join(LOCK), "").expect("lock file");
            }
            dir
        };
        let dead = folder("researchflow-worker-dead", true);
        let alive = folder("researchflow-worker-alive", true);
        let young = folder("researchflow-worker-young", true);
        let older_version = folder("researchflow-worker-unlocked", false);
        let other = folder("something-else", true);
        let held = LockFile::take(&alive.join(LOCK)).expect("the live worker's lock");
        for dir in [&dead, &alive, &older_version, &other] {
            age(dir, Duration::from_secs(3600));
        }
        assert_eq!(sweep(temp.path(), &young), vec![dead.clone()]);
        assert!(!dead.exists());
        for kept in [&alive, &young, &older_version, &other] {
            assert!(kept.join("q.json").exists(), "{} kept", kept.display());
        }
        drop(held);
    }
}
