//! A watch folder's runs: one folder per run, named by its UTC start time
//! (`20261127T130501Z`, so that names sort as times), each with its record
//! ([`super::record`]); `latest`, a symbolic link to the newest finished one; and the
//! pruning of old runs. Plain file work: it runs no question.

use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};

use super::record::Record;

/// The link to the newest finished run.
pub const LATEST: &str = "latest";

/// A watch folder.
#[derive(Debug, Clone)]
pub struct Runs {
    dir: PathBuf,
}

/// The name of a run starting now: the UTC time to the second (`20261127T130501Z`).
pub fn stamp_now() -> String {
    chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string()
}

/// Whether `name` is a run folder's name: `YYYYMMDDTHHMMSSZ`, perhaps with `-N` after.
pub fn is_run_name(name: &str) -> bool {
    let stamp = name.split_once('-').map_or(name, |(stamp, _)| stamp);
    let b = stamp.as_bytes();
    b.len() == 16
        && b[8] == b'T'
        && b[15] == b'Z'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
}

impl Runs {
    pub fn new(dir: &Path) -> Runs {
        Runs {
            dir: dir.to_path_buf(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Every run's name, oldest first.
    pub fn names(&self) -> io::Result<Vec<String>> {
        let mut names: Vec<String> = std::fs::read_dir(&self.dir)?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| is_run_name(n))
            .collect();
        names.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
        Ok(names)
    }

    /// The folder of run `name`.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// The newest run that started and did not finish, to resume instead of starting
    /// another; `None` when the newest finished (or there is none).
    pub fn unfinished(&self) -> io::Result<Option<String>> {
        let names = self.names()?;
        let newest = names.last().filter(|n| !Record::finished_in(&self.path(n)));
        Ok(newest.cloned())
    }

    /// The finished runs, newest first, but `except`.
    pub fn finished_newest_first(&self, except: &str) -> io::Result<Vec<String>> {
        let mut names = self.names()?;
        names.retain(|n| n != except && Record::finished_in(&self.path(n)));
        names.reverse();
        Ok(names)
    }

    /// A new run's name for the time `stamp` (`20261127T130501Z`): the stamp, or with `-2`,
    /// `-3` ... when a run of that second exists.
    pub fn new_name(&self, stamp: &str) -> String {
        let mut name = stamp.to_string();
        let mut n = 2;
        while self.path(&name).exists() {
            name = format!("{stamp}-{n}");
            n += 1;
        }
        name
    }

    /// Points `DIR/latest` at run `name` (a relative link, so the folder can move), replacing
    /// the old link in one rename.
    pub fn point_latest(&self, name: &str) -> io::Result<()> {
        let temporary = self.dir.join(format!(".{LATEST}.{}", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        link(name, &temporary)?;
        std::fs::rename(&temporary, self.dir.join(LATEST))
    }

    /// Deletes the oldest runs beyond the newest `keep`, never one of `protected` (the run
    /// compared with, the one in progress); the names deleted.
    pub fn prune(&self, keep: usize, protected: &BTreeSet<String>) -> io::Result<Vec<String>> {
        let names = self.names()?;
        let excess = names.len().saturating_sub(keep);
        let mut deleted = Vec::new();
        for name in names.iter().take(excess) {
            if protected.contains(name) {
                continue;
            }
            std::fs::remove_dir_all(self.path(name))?;
            deleted.push(name.clone());
        }
        Ok(deleted)
    }
}

/// The order of run names: by stamp, then by the `-N` after it as a number.
fn run_order(name: &str) -> (&str, u64) {
    match name.split_once('-') {
        Some((stamp, n)) => (stamp, n.parse().unwrap_or(0)),
        None => (name, 1),
    }
}

#[cfg(unix)]
fn link(target: &str, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

/// Where there are no symbolic links to make, `latest` is a file holding the run's name.
#[cfg(not(unix))]
fn link(target: &str, at: &Path) -> io::Result<()> {
    std::fs::write(at, format!("{target}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_sort_as_times_and_pruning_spares_the_protected() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = Runs::new(dir.path());
        for name in [
            "20261127T010000Z-10",
            "20261127T010000Z",
            "20261126T010000Z",
        ] {
            std::fs::create_dir(runs.path(name)).expect("mkdir");
        }
        std::fs::create_dir(dir.path().join("notes")).expect("mkdir");
        std::fs::create_dir(runs.path("20261127T010000Z-2")).expect("mkdir");
        assert_eq!(
            runs.names().expect("names"),
            [
                "20261126T010000Z",
                "20261127T010000Z",
                "20261127T010000Z-2",
                "20261127T010000Z-10"
            ]
        );
        assert_eq!(runs.new_name("20261127T010000Z"), "20261127T010000Z-3");
        let protected = BTreeSet::from(["20261126T010000Z".to_string()]);
        let deleted = runs.prune(2, &protected).expect("prune");
        assert_eq!(deleted, ["20261127T010000Z"]);
        assert!(runs.path("20261126T010000Z").is_dir() && dir.path().join("notes").is_dir());
        runs.point_latest("20261127T010000Z-10").expect("latest");
        runs.point_latest("20261127T010000Z-2")
            .expect("latest again");
        let target = std::fs::read_link(dir.path().join(LATEST)).expect("link");
        assert_eq!(target, Path::new("20261127T010000Z-2"));
        assert!(!is_run_name("2026112T010000Z") && !is_run_name("latest"));
        assert!(is_run_name(&stamp_now()));
    }
}
