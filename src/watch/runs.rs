//! A watch folder's runs: one folder per run, named by its UTC start time
//! (`20261127T130501Z`, so that names sort as times), each with its record
//! ([`super::record`]); `latest`, a symbolic link to the newest finished one; and the
//! pruning of old runs. Plain file work: it runs no question.
//!
//! A run is a folder `watch` made: its name is a run's and its record names it. Anything else
//! in the watch folder is the user's, even when named like a run (a copy `<run>-keep`, a
//! folder put there): never resumed, compared with nor pruned ([`Runs::strangers`] lists
//! those named like runs, to be warned of). A `latest` or `index.html` that `watch` did not
//! make is left as it is.

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

/// Whether `name` looks like a run folder's name: `YYYYMMDDTHHMMSSZ`, perhaps with `-` and
/// more after. Only a folder whose record names it is a run ([`Runs::names`]).
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
        let mut names: Vec<String> = self
            .named_like_runs()?
            .into_iter()
            .filter(|n| self.is_run(n))
            .collect();
        names.sort_by(|a, b| run_order(a).cmp(&run_order(b)));
        Ok(names)
    }

    /// The folders named like runs that are not runs of this folder: no record, or one that
    /// names another folder (a copy). Sorted.
    pub fn strangers(&self) -> io::Result<Vec<String>> {
        let mut names: Vec<String> = self
            .named_like_runs()?
            .into_iter()
            .filter(|n| !self.is_run(n))
            .collect();
        names.sort();
        Ok(names)
    }

    /// The folders (not links) whose names look like runs'.
    fn named_like_runs(&self) -> io::Result<Vec<String>> {
        Ok(std::fs::read_dir(&self.dir)?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| is_run_name(n))
            .collect())
    }

    /// Whether the folder `name` is a run `watch` made here: its record names it. A record
    /// written before records named their run counts when the folder's name is one `watch`
    /// gives (`STAMP` or `STAMP-N`) and the record started in that second or the next.
    fn is_run(&self, name: &str) -> bool {
        let Some(record) = Record::read(&self.path(name)) else {
            return false;
        };
        match &record.run {
            Some(run) => run == name,
            None => started_as_named(name, &record.started),
        }
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
        while std::fs::symlink_metadata(self.path(&name)).is_ok() {
            name = format!("{stamp}-{n}");
            n += 1;
        }
        name
    }

    /// Points `DIR/latest` at run `name` (a relative link, so the folder can move), replacing
    /// the old link in one rename. A `latest` that is not a link (a folder or file of the
    /// user's) is left as it is: an error, and no temporary link stays behind.
    pub fn point_latest(&self, name: &str) -> io::Result<()> {
        let latest = self.dir.join(LATEST);
        #[cfg(unix)]
        if std::fs::symlink_metadata(&latest).is_ok_and(|m| !m.file_type().is_symlink()) {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "`{}` is not the link `watch` keeps there, so it is left as it is: move it away to have `latest` again",
                    latest.display()
                ),
            ));
        }
        let temporary = self.dir.join(format!(".{LATEST}.{}", std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        link(name, &temporary)?;
        std::fs::rename(&temporary, &latest).inspect_err(|_| {
            let _ = std::fs::remove_file(&temporary);
        })
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

/// Whether a record that names no run started when the folder `name` was named: `name` is
/// `STAMP` or `STAMP-N`, and `started` falls in that second or the next.
fn started_as_named(name: &str, started: &str) -> bool {
    let stamp = match name.split_once('-') {
        None => name,
        Some((stamp, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => stamp,
        Some(_) => return false,
    };
    let Ok(started) = chrono::DateTime::parse_from_rfc3339(started) else {
        return false;
    };
    let started = started.with_timezone(&chrono::Utc);
    [started, started - chrono::Duration::seconds(1)]
        .iter()
        .any(|t| t.format("%Y%m%dT%H%M%SZ").to_string() == stamp)
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
        let make = |name: &str| {
            std::fs::create_dir(runs.path(name)).expect("mkdir");
            Record::start(name).write(&runs.path(name)).expect("record");
        };
        for name in [
            "20261127T010000Z-10",
            "20261127T010000Z",
            "20261126T010000Z",
        ] {
            make(name);
        }
        std::fs::create_dir(dir.path().join("notes")).expect("mkdir");
        make("20261127T010000Z-2");
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

    #[test]
    fn only_folders_whose_record_names_them_are_runs() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = Runs::new(dir.path());
        let run = "20261127T010000Z";
        std::fs::create_dir(runs.path(run)).expect("mkdir");
        Record::start(run).write(&runs.path(run)).expect("record");
        let copy = format!("{run}-keep");
        std::fs::create_dir(runs.path(&copy)).expect("mkdir");
        std::fs::copy(
            runs.path(run).join(super::super::record::RECORD_FILE),
            runs.path(&copy).join(super::super::record::RECORD_FILE),
        )
        .expect("copy");
        std::fs::create_dir(runs.path("20261128T010000Z")).expect("a folder of the user's");
        let legacy = |name: &str, started: &str| {
            std::fs::create_dir(runs.path(name)).expect("mkdir");
            let record = Record {
                started: started.into(),
                ..Record::default()
            };
            record.write(&runs.path(name)).expect("record");
        };
        legacy("20261125T010000Z", "2026-11-25T01:00:01Z");
        legacy("20261125T010000Z-2", "2026-11-25T01:00:00Z");
        legacy("20261124T010000Z", "2026-11-24T09:00:00Z");
        legacy("20261123T010000Z-old", "2026-11-23T01:00:00Z");
        assert_eq!(
            runs.names().expect("names"),
            ["20261125T010000Z", "20261125T010000Z-2", run]
        );
        assert_eq!(
            runs.strangers().expect("strangers"),
            [
                "20261123T010000Z-old",
                "20261124T010000Z",
                copy.as_str(),
                "20261128T010000Z"
            ]
        );
        assert_eq!(runs.unfinished().expect("unfinished"), Some(run.into()));
        assert_eq!(runs.prune(0, &BTreeSet::new()).expect("prune").len(), 3);
        assert_eq!(runs.strangers().expect("strangers").len(), 4, "left alone");
    }

    #[cfg(unix)]
    #[test]
    fn a_latest_that_is_not_a_link_is_left_alone_and_no_temporary_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let runs = Runs::new(dir.path());
        std::fs::create_dir(dir.path().join(LATEST)).expect("a folder of the user's");
        std::fs::write(dir.path().join(LATEST).join("mine.txt"), "mine").expect("write");
        let err = runs
            .point_latest("20261127T010000Z")
            .expect_err("not a link");
        assert!(err.to_string().contains("left as it is"), "{err}");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|e| e.expect("entry").file_name())
            .collect();
        assert_eq!(names, [LATEST], "no `.latest.<pid>` left");
        assert!(dir.path().join(LATEST).join("mine.txt").is_file());
    }
}
