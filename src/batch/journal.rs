//! `DIR/batch.journal.ndjson`, the batch's journal: one JSON line per question's start or end,
//! each holding the question's manifest item as it then is, appended as it happens, so that
//! recording a question costs the same in a batch of ten questions as in one of ten thousand.
//! `batch.json` plus the journal's lines, applied in order, is the batch's state.
//!
//! This file knows lines, not what they mean: it appends them, reads them back, and removes the
//! journal once `batch.json` holds it all (`manifest.rs` folds it, `manifest_writer.rs` writes it).
//! A last line without its newline is an append cut short by a crash: it is not read, and no
//! error.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// The journal's path in `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join("batch.journal.ndjson")
}

/// Why the journal cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read the batch journal `{path}`: {message}; remove it to keep only `batch.json`")]
pub struct JournalError {
    pub path: PathBuf,
    pub message: String,
}

/// Every whole line of the journal in `dir`, in order; none when there is no journal. A line
/// that is not a `T` is skipped with a warning: it holds one update of one question, and
/// without it that question is as the lines before it say (at worst run again).
pub fn read<T: DeserializeOwned>(dir: &Path) -> Result<Vec<T>, JournalError> {
    let path = path_in(dir);
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(Vec::new());
    }
    let bytes =
        crate::files::read_bounded_bytes(&path, crate::files::DEFAULT_MAX_BYTES).map_err(|e| {
            JournalError {
                path: path.clone(),
                message: e.to_string(),
            }
        })?;
    // What follows the last newline is an append a crash cut short (or one under way), maybe
    // inside a character: only whole lines are read.
    let whole = bytes
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(&[][..], |end| &bytes[..end]);
    let mut lines = Vec::new();
    for (n, line) in whole.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice(line) {
            Ok(value) => lines.push(value),
            Err(e) => tracing::warn!(
                "`{}` line {}: skipped, not a manifest item: {e}",
                path.display(),
                n + 1
            ),
        }
    }
    Ok(lines)
}

/// Removes the journal of `dir`, once `batch.json` holds everything it says. A journal that
/// is not there is no error. The removal is not synced: a journal that comes back after a
/// power cut only says again what `batch.json` already holds.
pub fn remove(dir: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path_in(dir)) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// The journal of a batch, open for appending (never through a symbolic link).
pub struct Journal {
    file: File,
    path: PathBuf,
    /// Lines appended since the last [`Journal::sync`].
    unsynced: usize,
}

impl Journal {
    /// Opens (or creates) the journal of `dir` for appending.
    pub fn open(dir: &Path) -> std::io::Result<Journal> {
        let path = path_in(dir);
        let file = crate::atomic::append(&path, false)?;
        Ok(Journal {
            file,
            path,
            unsynced: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `value` as one line, in one write, so that a reader sees the whole line or
    /// none of it (or a part without its newline, which it skips).
    pub fn append<T: Serialize>(&mut self, value: &T) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(value)?;
        line.push(b'\n');
        self.file.write_all(&line)?;
        self.unsynced += 1;
        Ok(())
    }

    /// Makes the lines appended so far durable (one `fdatasync` for all of them).
    pub fn sync(&mut self) -> std::io::Result<()> {
        if self.unsynced > 0 {
            self.file.sync_data()?;
            self.unsynced = 0;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Line {
        id: String,
        n: u32,
    }

    fn line(id: &str, n: u32) -> Line {
        Line { id: id.into(), n }
    }

    #[test]
    fn lines_appended_are_read_back_in_order_and_a_removed_journal_is_empty() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(read::<Line>(dir.path()).expect("none").is_empty());
        let mut journal = Journal::open(dir.path()).expect("open");
        journal.append(&line("a", 1)).expect("append");
        journal.append(&line("b", 1)).expect("append");
        journal.sync().expect("sync");
        drop(journal);
        // Opened again, it appends after what is there.
        let mut journal = Journal::open(dir.path()).expect("open again");
        journal.append(&line("a", 2)).expect("append");
        let lines: Vec<Line> = read(dir.path()).expect("read");
        assert_eq!(lines, vec![line("a", 1), line("b", 1), line("a", 2)]);
        remove(dir.path()).expect("remove");
        remove(dir.path()).expect("removing none is no error");
        assert!(read::<Line>(dir.path()).expect("gone").is_empty());
    }

    #[test]
    fn a_torn_last_line_is_ignored_without_an_error() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut journal = Journal::open(dir.path()).expect("open");
        journal.append(&line("a", 1)).expect("append");
        drop(journal);
        let mut file = crate::atomic::append(&path_in(dir.path()), false).expect("open");
        file.write_all(br#"{"id": "b", "n"#).expect("a torn line");
        assert_eq!(read::<Line>(dir.path()).expect("read"), vec![line("a", 1)]);
        // Even a torn line that happens to be whole JSON: without its newline, the append
        // did not finish.
        std::fs::write(path_in(dir.path()), "{\"id\": \"a\", \"n\": 1}").expect("write");
        assert!(read::<Line>(dir.path()).expect("read").is_empty());
        // Cut inside a character: the whole lines before it are still read.
        let mut bytes = b"{\"id\": \"a\", \"n\": 1}\n{\"id\": \"".to_vec();
        bytes.extend_from_slice(&"\u{e9}".as_bytes()[..1]);
        std::fs::write(path_in(dir.path()), bytes).expect("write");
        assert_eq!(read::<Line>(dir.path()).expect("read"), vec![line("a", 1)]);
    }

    #[test]
    fn a_line_that_is_no_item_is_skipped_and_the_others_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let text = "{\"id\": \"a\", \"n\": 1}\n\0\0\0garbage\n\n{\"id\": \"a\", \"n\": 2}\n";
        std::fs::write(path_in(dir.path()), text).expect("write");
        assert_eq!(
            read::<Line>(dir.path()).expect("read"),
            vec![line("a", 1), line("a", 2)]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_journal_behind_a_symbolic_link_is_not_appended_to() {
        let dir = tempfile::tempdir().expect("tempdir");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, "").expect("seed");
        std::os::unix::fs::symlink(&elsewhere, path_in(dir.path())).expect("symlink");
        assert!(Journal::open(dir.path()).is_err());
        assert_eq!(std::fs::read_to_string(&elsewhere).expect("read"), "");
    }
}
