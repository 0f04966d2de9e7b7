//! Exclusive lock files, the one way a researchflow process claims what it works on: a plan
//! file (`<plan>.lock`), a Thinkon folder (`thinkon.lock`), a batch folder (`batch.lock`).
//!
//! The lock is an advisory exclusive lock (std's `File::try_lock`: `flock` on Unix) on a
//! sibling file, held until the [`LockFile`] is dropped, also when the process dies. A second
//! process is refused at once, never made to wait. The file is left in place on exit:
//! deleting it would let two processes lock two different files of the same name.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// A lock taken on the file at [`LockFile::path`], released when dropped.
#[derive(Debug)]
pub struct LockFile {
    path: PathBuf,
    _file: File,
}

/// Why a lock could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds it.
    #[error("the lock `{}` is held by another process", .0.display())]
    Held(PathBuf),
    /// The lock file cannot be created or locked.
    #[error("cannot lock `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

impl LockFile {
    /// Creates `path` when missing (never truncating it) and locks it, or says who has it.
    pub fn take(path: &Path) -> Result<LockFile, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(LockFile {
                path: path.to_path_buf(),
                _file: file,
            }),
            Err(TryLockError::WouldBlock) => Err(LockError::Held(path.to_path_buf())),
            Err(TryLockError::Error(source)) => Err(io(source)),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let held = LockFile::take(&path).expect("first");
        assert!(matches!(LockFile::take(&path), Err(LockError::Held(p)) if p == path));
        drop(held);
        let again = LockFile::take(&path).expect("free again");
        assert_eq!(again.path(), path);
        assert!(path.exists(), "the lock file stays");
    }

    #[test]
    fn a_lock_in_a_missing_folder_is_an_io_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("missing/x.lock");
        let err = LockFile::take(&path).expect_err("no folder");
        assert!(err.to_string().contains("missing/x.lock"), "{err}");
    }
}
