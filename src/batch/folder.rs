//! A batch's folder, as a command opens it: created if need be, made absolute (so that the
//! manifest's paths hold wherever it is read from), locked against a second batch, its
//! manifest read; and the folder of an earlier batch that a flag names (`--previous`,
//! `--replay`), checked before any question runs.

use std::path::{Path, PathBuf};

use super::{Manifest, manifest};
use crate::exit::CommandError;
use crate::lockfile::LockFile;

/// The batch folder `path`, open: its absolute path, its lock (held until dropped) and its
/// manifest (empty for a new folder).
pub fn open(path: &Path) -> Result<(PathBuf, LockFile, Manifest), CommandError> {
    std::fs::create_dir_all(path).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "cannot create the batch folder `{}`: {e}",
            path.display()
        ))
    })?;
    let dir = std::fs::canonicalize(path).map_err(|e| {
        CommandError::usage(anyhow::anyhow!("cannot use `{}`: {e}", path.display()))
    })?;
    let lock = manifest::lock(&dir).map_err(CommandError::usage)?;
    let manifest = Manifest::load(&dir).map_err(CommandError::usage)?;
    Ok((dir, lock, manifest))
}

/// The earlier batch's folder that `flag` names, absolute; one that is not there is a usage
/// error, found before any question runs rather than by a batch that silently uses nothing.
pub fn earlier(flag: &str, path: &Path) -> Result<PathBuf, CommandError> {
    let shown = path.display();
    match std::fs::canonicalize(path) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(CommandError::usage(anyhow::anyhow!(
            "`{flag} {shown}`: `{shown}` is not a folder: give the `--out-dir` of an earlier run"
        ))),
        Err(e) => Err(CommandError::usage(anyhow::anyhow!(
            "`{flag} {shown}`: cannot use `{shown}`: {e}: give the `--out-dir` of an earlier run"
        ))),
    }
}
