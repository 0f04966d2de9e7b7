//! Exclusive lock files, the one way a researchflow process claims what it works on: a plan
//! file (`<plan>.lock`), a Thinkon folder (`thinkon.lock`), a batch folder (`batch.lock`).
//!
//! The lock is an advisory exclusive lock (std's `File::try_lock`: `flock` on Unix) on a
//! sibling file, held until the [`LockFile`] is dropped, also when the process dies. A second
//! process is refused at once, never made to wait.
//!
//! On Unix the holder removes the file when it lets go, while it still holds the lock, so a
//! finished run leaves no `.lock` behind (a killed one does; the next taker locks it as it is;
//! elsewhere the file stays: without inode numbers a taker could not tell the file it locked
//! from a new one at the path). That is
//! safe because a taker checks, once it has the lock, that the file it locked is still the one
//! at the path: another process may have opened the file just before its holder removed it,
//! and locking that removed file would exclude no one. Such a taker opens the path again.
//! The file is never opened through a symbolic link (a link could lead a lock, or its
//! removal, anywhere).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

/// A lock taken on the file at [`LockFile::path`], released (and the file removed) when
/// dropped.
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

/// How many times a taker opens the path again after finding that the file it locked was
/// removed by its holder; each time means another process took and let go of the lock in
/// between, so this many in a row is a file being removed by something else.
const ATTEMPTS: usize = 100;

impl LockFile {
    /// Creates `path` when missing (never truncating it) and locks it, or says who has it.
    pub fn take(path: &Path) -> Result<LockFile, LockError> {
        let io = |source| LockError::Io {
            path: path.to_path_buf(),
            source,
        };
        for _ in 0..ATTEMPTS {
            let file = open(path).map_err(io)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(LockError::Held(path.to_path_buf())),
                Err(TryLockError::Error(source)) => return Err(io(source)),
            }
            if is_at(&file, path).map_err(io)? {
                return Ok(LockFile {
                    path: path.to_path_buf(),
                    _file: file,
                });
            }
        }
        Err(io(std::io::Error::other(
            "the lock file keeps being removed while it is taken: check what else removes it",
        )))
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for LockFile {
    /// Removes the file while the lock is still held (the file closes after this), so no
    /// other process ever holds a lock on a file that is at the path while this one does.
    /// Only on Unix, where [`is_at`] lets a taker tell a removed file from the one there.
    #[cfg(unix)]
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_file(&self.path)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::debug!("cannot remove the lock `{}`: {e}", self.path.display());
        }
    }

    #[cfg(not(unix))]
    fn drop(&mut self) {}
}

/// The lock file at `path`, created when missing; never through a symbolic link.
fn open(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path).map_err(|e| {
        let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "it is a symbolic link, and researchflow never writes through one: remove the link",
            )
        } else {
            e
        }
    })
}

/// Whether `file` (locked) is still the file at `path`: its holder may have removed it, and
/// another taker put a new one there, between our open and our lock.
#[cfg(unix)]
fn is_at(file: &File, path: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::MetadataExt;
    let held = file.metadata()?;
    match std::fs::symlink_metadata(path) {
        Ok(now) => Ok(now.dev() == held.dev() && now.ino() == held.ino()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// Elsewhere the file is never removed, so the file at the path is the one opened.
#[cfg(not(unix))]
fn is_at(_file: &File, _path: &Path) -> std::io::Result<bool> {
    Ok(true)
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
        drop(again);
        #[cfg(unix)]
        assert!(!path.exists(), "the holder removes the lock file");
    }

    #[cfg(unix)]
    #[test]
    fn a_taker_that_locked_a_removed_file_takes_the_one_at_the_path() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let held = LockFile::take(&path).expect("first");
        // Opened by a second taker just before the holder lets go and removes it.
        let stale = open(&path).expect("open");
        drop(held);
        stale.try_lock().expect("the removed file locks");
        assert!(!is_at(&stale, &path).expect("check"));
        let fresh = LockFile::take(&path).expect("a new file at the path");
        assert!(matches!(LockFile::take(&path), Err(LockError::Held(_))));
        assert!(is_at(&open(&path).expect("open"), &path).expect("check"));
        drop(fresh);
    }

    /// Many takers at once, each letting go (and removing the file) at once: never two
    /// holders, which a lock on a file already removed would allow.
    #[cfg(unix)]
    #[test]
    fn takers_racing_with_removals_never_hold_it_together() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let holders = AtomicUsize::new(0);
        let taken = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..300 {
                        if let Ok(lock) = LockFile::take(&path) {
                            assert_eq!(holders.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                            taken.fetch_add(1, Ordering::SeqCst);
                            std::thread::yield_now();
                            holders.fetch_sub(1, Ordering::SeqCst);
                            drop(lock);
                        }
                    }
                });
            }
        });
        assert!(taken.load(Ordering::SeqCst) > 0);
        assert!(!path.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_lock_behind_a_symlink_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.lock");
        let target = dir.path().join("outside");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        let err = LockFile::take(&path).expect_err("a link");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!target.exists(), "nothing is created through the link");
    }

    #[test]
    fn a_lock_in_a_missing_folder_is_an_io_error_naming_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("missing/x.lock");
        let err = LockFile::take(&path).expect_err("no folder");
        assert!(err.to_string().contains("missing/x.lock"), "{err}");
    }
}
