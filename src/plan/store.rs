//! Reading and writing plan files: an exclusive lock for the whole command, and atomic saves.
//!
//! The plan file the user names may be a symbolic link they made: the lock and every save
//! follow it to the file itself, so two paths to one plan share one lock. The files a run
//! writes beside that file (report, events, transcript, reviews, view, lock) never are: one
//! that is a link refuses the plan before anything is locked or written
//! ([`StoreError::Link`]), since it could lead anywhere (a cloned repository's
//! `runs/x.report.md -> ~/.bashrc`).
//!
//! The lock is taken on a sibling `<plan>.lock` file, not on the plan itself, because every save
//! renames a new file over the plan and a lock on the old inode would no longer exclude anyone.
//! Its holder removes it when done ([`crate::lockfile`]). A save goes through
//! [`crate::atomic::write`], so a crash leaves either the old file or the new one, never half
//! of one.

use crate::lockfile::{LockError, LockFile};
use std::path::{Path, PathBuf};

use super::beside::{Beside, is_link};
use super::model::PlanFile;

/// A plan file opened for this command, locked until dropped.
#[derive(Debug)]
pub struct PlanStore {
    path: PathBuf,
    real: PathBuf,
    _lock: LockFile,
    /// Saved without syncs ([`crate::atomic::write_scratch`]): what must last is kept
    /// elsewhere (a queue worker's database) before the run goes on.
    scratch: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "plan file `{0}` does not exist: pass an existing plan file, or start one with `researchflow workflow --query`"
    )]
    NotFound(PathBuf),
    #[error(
        "plan file `{path}` already exists: resume it with `--plan {path}` or choose another `--out`"
    )]
    AlreadyExists { path: PathBuf },
    #[error("cannot read plan file `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "plan file `{path}` is not valid JSON (line {line}, column {column}: {message}): fix it or restore it from a copy"
    )]
    InvalidJson {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error(
        "`{path}` is not a researchflow plan file: field `{field}`: {message}; see the plan file format in docs/src/file-formats.md"
    )]
    NotAPlan {
        path: PathBuf,
        field: String,
        message: String,
    },
    #[error(
        "plan file `{path}` is not a valid plan, so it is left as it is; `researchflow validate plan` shows the same findings:\n{findings}"
    )]
    Invalid { path: PathBuf, findings: String },
    #[error(
        "plan file `{path}` is in use by another researchflow process (lock `{lock}`): wait for it to finish, or use another file"
    )]
    Locked { path: PathBuf, lock: PathBuf },
    #[error(
        "`{link}` beside plan file `{path}` is a symbolic link, and researchflow never writes through one: remove the link"
    )]
    Link { path: PathBuf, link: PathBuf },
    #[error("cannot lock plan file `{path}` through `{lock}`: {source}")]
    Lock {
        path: PathBuf,
        lock: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write plan file `{path}`: {source}; the previous version is unchanged")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("plan `{path}`: the checkpoint cannot be kept: {message}")]
    Mirror { path: PathBuf, message: String },
    #[error("cannot copy `{from}` to `{to}`: {source}")]
    Copy {
        from: PathBuf,
        to: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "`{copy}` already exists and may hold work: plan on it with `researchflow plan {copy}`, or replace it with a fresh copy of `{from}` with `--on-copy --overwrite-copy`"
    )]
    CopyExists { from: PathBuf, copy: PathBuf },
}

/// A check of a plan file's raw JSON before it is used: `Some(findings)` refuses the file.
pub type Check<'a> = &'a dyn Fn(&serde_json::Value) -> Option<String>;

impl PlanStore {
    /// Locks an existing plan file and reads it.
    pub fn open(path: &Path) -> Result<(PlanStore, PlanFile), StoreError> {
        PlanStore::open_checked(path, &|_| None)
    }

    /// Locks an existing plan file, checks its raw JSON with `check` and reads it. A refused
    /// file is left as it is. The lock and every save follow symbolic links to the file
    /// itself, so two paths to one plan share one lock.
    pub fn open_checked(
        path: &Path,
        check: Check<'_>,
    ) -> Result<(PlanStore, PlanFile), StoreError> {
        if !path.exists() {
            return Err(StoreError::NotFound(path.to_path_buf()));
        }
        // Before the lock: no `<device>.lock` is ever created beside a device or a folder.
        if !path.is_file() {
            return Err(StoreError::Read {
                path: path.to_path_buf(),
                source: std::io::Error::other(
                    "not a regular file: pass the plan's `.json` file itself",
                ),
            });
        }
        let store = PlanStore::lock(path)?;
        let plan = read_plan(path, check)?;
        Ok((store, plan))
    }

    /// Creates a new plan file (and its folder); refuses to overwrite an existing one.
    pub fn create(path: &Path, plan: &PlanFile) -> Result<PlanStore, StoreError> {
        if let Some(dir) = parent_dir(path) {
            std::fs::create_dir_all(dir).map_err(|source| StoreError::Write {
                path: path.to_path_buf(),
                source,
            })?;
        }
        let store = PlanStore::lock(path)?;
        if path.exists() {
            return Err(StoreError::AlreadyExists {
                path: path.to_path_buf(),
            });
        }
        store.save(plan)?;
        Ok(store)
    }

    /// Locks `<file>.lock` beside the file `path` leads to (symbolic links resolved), once no
    /// file a run writes beside it is a link.
    fn lock(path: &Path) -> Result<PlanStore, StoreError> {
        let real = real_path(path)?;
        let lock = lock_path(&real);
        let beside = Beside::of(&real);
        if let Some(link) = beside
            .link()
            .or(Some(lock.as_path()).filter(|p| is_link(p)))
        {
            return Err(StoreError::Link {
                path: path.to_path_buf(),
                link: link.to_path_buf(),
            });
        }
        match LockFile::take(&lock) {
            Ok(lock) => Ok(PlanStore {
                path: path.to_path_buf(),
                real,
                _lock: lock,
                scratch: false,
            }),
            Err(LockError::Held(lock)) => Err(StoreError::Locked {
                path: path.to_path_buf(),
                lock,
            }),
            Err(LockError::Io { path: lock, source }) => Err(StoreError::Lock {
                path: path.to_path_buf(),
                lock,
                source,
            }),
        }
    }

    /// The path as the user gave it (for messages).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file itself, symbolic links resolved: one name per plan for its lock and outputs.
    pub fn real_path(&self) -> &Path {
        &self.real
    }

    /// Reads and parses the plan file.
    pub fn load(&self) -> Result<PlanFile, StoreError> {
        read_plan(&self.path, &|_| None)
    }

    /// Writes the plan atomically (see [`crate::atomic::write`]) to the file itself: a
    /// symbolic link the user named stays one.
    pub fn save(&self, plan: &PlanFile) -> Result<(), StoreError> {
        let write_err = |source| StoreError::Write {
            path: self.path.clone(),
            source,
        };
        let mut text = serde_json::to_string_pretty(plan).map_err(|e| write_err(e.into()))?;
        text.push('\n');
        let write = match self.scratch {
            true => crate::atomic::write_scratch,
            false => crate::atomic::write,
        };
        write(&self.real, text.as_bytes()).map_err(write_err)
    }

    /// This store, its saves from now on without syncs: a queue worker's copy of a question's
    /// plan, whose every checkpoint the database holds before the run goes on.
    pub fn scratch(mut self) -> PlanStore {
        self.scratch = true;
        self
    }
}

/// Reads, checks and parses a plan file; the caller holds the lock.
/// Reads a plan file without locking it, for a reader that never saves it (scoring, views).
/// Saves are atomic, so what it reads is a whole file.
pub fn read(path: &Path) -> Result<PlanFile, StoreError> {
    read_plan(path, &|_| None)
}

fn read_plan(path: &Path, check: Check<'_>) -> Result<PlanFile, StoreError> {
    checked_plan(path, &read_text(path)?, check)
}

/// The text of a plan file. Bounded: a FIFO, a device or a huge file is refused before
/// anything is read.
fn read_text(path: &Path) -> Result<String, StoreError> {
    crate::files::read_bounded(path, crate::files::DEFAULT_MAX_BYTES).map_err(|e| {
        let source = e.into_io();
        match source.kind() {
            std::io::ErrorKind::NotFound => StoreError::NotFound(path.to_path_buf()),
            _ => StoreError::Read {
                path: path.to_path_buf(),
                source,
            },
        }
    })
}

/// Plan file text, checked with `check` and parsed; `path` names it in errors.
fn checked_plan(path: &Path, text: &str, check: Check<'_>) -> Result<PlanFile, StoreError> {
    let value = parse_value(path, text)?;
    // A file that is not a plan at all gets the plain "not a plan" error below.
    let looks_like_a_plan = value.get("nodes").is_some();
    if let Some(findings) = check(&value).filter(|_| looks_like_a_plan) {
        return Err(StoreError::Invalid {
            path: path.to_path_buf(),
            findings,
        });
    }
    plan_from_value(path, value)
}

/// Parses plan file text; `path` is only used in error messages.
pub fn parse_plan(path: &Path, text: &str) -> Result<PlanFile, StoreError> {
    plan_from_value(path, parse_value(path, text)?)
}

/// The text as JSON, or where it breaks.
fn parse_value(path: &Path, text: &str) -> Result<serde_json::Value, StoreError> {
    serde_json::from_str(text).map_err(|e| StoreError::InvalidJson {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })
}

/// The JSON as a plan file, or the field that is wrong.
fn plan_from_value(path: &Path, value: serde_json::Value) -> Result<PlanFile, StoreError> {
    match value.as_object() {
        Some(obj) if obj.contains_key("nodes") => {}
        Some(_) => {
            return Err(StoreError::NotAPlan {
                path: path.to_path_buf(),
                field: "nodes".into(),
                message: "missing: a plan file holds `nodes` and `check_list`".into(),
            });
        }
        None => {
            return Err(StoreError::NotAPlan {
                path: path.to_path_buf(),
                field: "(top level)".into(),
                message: "expected a JSON object with `nodes` and `check_list`".into(),
            });
        }
    }
    let plan: PlanFile = serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        StoreError::NotAPlan {
            path: path.to_path_buf(),
            field: if field == "." {
                "(top level)".into()
            } else {
                field
            },
            message: e.into_inner().to_string(),
        }
    })?;
    Ok(plan)
}

/// `x.copy.json` beside `x.json`.
pub fn copy_path(path: &Path) -> PathBuf {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!("{stem}.copy.json"))
}

/// Copies `x.json` to `x.copy.json` beside it and opens the copy: its store, locked, and the
/// plan. The copy's lock is taken before anything is written, so a copy that another process
/// works on is never touched (`Locked`); an existing copy is replaced only with `overwrite`
/// (`CopyExists` otherwise), atomically, under that lock. The original is read without a lock
/// (every save is an atomic rename, so a read sees one whole version) and refused by `check`
/// before anything is copied.
pub fn copy_beside(
    path: &Path,
    overwrite: bool,
    check: Check<'_>,
) -> Result<(PlanStore, PlanFile), StoreError> {
    if !path.exists() {
        return Err(StoreError::NotFound(path.to_path_buf()));
    }
    let copy = copy_path(path);
    // The copy is a file we name, not one the user linked: never written through a link.
    if is_link(&copy) {
        return Err(StoreError::Link {
            path: path.to_path_buf(),
            link: copy,
        });
    }
    // Before the lock: no `<device>.lock` is ever created beside a device or a folder.
    if copy.exists() && !copy.is_file() {
        return Err(StoreError::Read {
            path: copy,
            source: std::io::Error::other("not a regular file: move it away to copy over it"),
        });
    }
    let store = PlanStore::lock(&copy)?;
    if copy.exists() && !overwrite {
        return Err(StoreError::CopyExists {
            from: path.to_path_buf(),
            copy,
        });
    }
    let text = read_text(path)?;
    let plan = checked_plan(path, &text, check)?;
    if copy.exists() {
        forget_runs(&copy)?;
    }
    crate::atomic::write(&copy, text.as_bytes()).map_err(|source| StoreError::Copy {
        from: path.to_path_buf(),
        to: copy.clone(),
        source,
    })?;
    Ok((store, plan))
}

/// Removes what runs on the copy at `copy` left beside it (events, transcript, report,
/// reviews, view), before a fresh copy replaces it: they tell of a plan that is gone, and a
/// run on the fresh copy must neither append to them nor be answered from the old transcript
/// (a resumed run's salvage would serve the replaced copy's answers to a planner meant to be
/// sampled again). Before the copy is written: a crash between the two leaves the old copy
/// without its files, never the fresh one with the old files.
fn forget_runs(copy: &Path) -> Result<(), StoreError> {
    for file in super::Beside::of(copy).all() {
        match std::fs::remove_file(file) {
            Ok(()) => tracing::info!("`{}` removed with the copy it belonged to", file.display()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(StoreError::Write {
                    path: file.to_path_buf(),
                    source,
                });
            }
        }
    }
    Ok(())
}

/// The file a path leads to, symbolic links resolved; for a file that does not exist yet, its
/// resolved folder and its name.
fn real_path(path: &Path) -> Result<PathBuf, StoreError> {
    let resolve = |p: &Path| {
        std::fs::canonicalize(p).map_err(|source| StoreError::Read {
            path: path.to_path_buf(),
            source,
        })
    };
    if path.exists() {
        return resolve(path);
    }
    match (parent_dir(path), path.file_name()) {
        (Some(dir), Some(name)) => Ok(resolve(dir)?.join(name)),
        (None, Some(name)) => Ok(resolve(Path::new("."))?.join(name)),
        _ => Ok(path.to_path_buf()),
    }
}

/// The sibling lock file of a plan file.
pub fn lock_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    path.with_file_name(name)
}

fn parent_dir(path: &Path) -> Option<&Path> {
    path.parent().filter(|p| !p.as_os_str().is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_then_open_round_trips_and_second_lock_fails() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.json");
        let plan = PlanFile::new("Q?", "wf".into(), "t".into());
        let store = PlanStore::create(&path, &plan).expect("create");
        assert!(matches!(
            PlanStore::open(&path),
            Err(StoreError::Locked { .. })
        ));
        drop(store);
        let (_store, back) = PlanStore::open(&path).expect("open");
        assert_eq!(back, plan);
        let leftovers: Vec<_> = std::fs::read_dir(dir.path())
            .expect("read dir")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "no temporary file is left behind");
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let path = Path::new("x.json");
        let err = parse_plan(path, "{").expect_err("invalid json");
        assert!(
            matches!(err, StoreError::InvalidJson { line: 1, .. }),
            "{err}"
        );
        let err = parse_plan(path, "[1]").expect_err("not an object");
        assert!(err.to_string().contains("not a researchflow plan file"));
        let err = parse_plan(
            path,
            r#"{"nodes":[{"node_id":"a","title":"Q","batch":1,"type":"start","status":"done"}]}"#,
        )
        .expect_err("bad status");
        let text = err.to_string();
        assert!(
            text.contains("`x.json`") && text.contains("nodes[0].status"),
            "{text}"
        );
    }

    #[test]
    fn a_copy_is_made_under_its_lock_and_replaced_only_when_asked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.json");
        let plan = PlanFile::new("Q?", "wf".into(), "t".into());
        drop(PlanStore::create(&path, &plan).expect("create"));
        let (store, copied) = copy_beside(&path, false, &|_| None).expect("first copy");
        assert_eq!(copied, plan);
        let copy = copy_path(&path);
        assert_eq!(copy, dir.path().join("p.copy.json"));
        let text = std::fs::read_to_string(&copy).expect("copy");
        // Held: not even `overwrite` replaces it.
        assert!(matches!(
            copy_beside(&path, true, &|_| None),
            Err(StoreError::Locked { .. })
        ));
        drop(store);
        std::fs::write(&copy, "{\"work\": 1}").expect("work in the copy");
        let err = copy_beside(&path, false, &|_| None).expect_err("exists");
        assert!(
            matches!(err, StoreError::CopyExists { .. })
                && err.to_string().contains("--overwrite-copy"),
            "{err}"
        );
        assert_eq!(
            std::fs::read_to_string(&copy).expect("copy"),
            "{\"work\": 1}"
        );
        // A refused original is not copied.
        let refused = copy_beside(&path, true, &|_| Some("broken".into())).expect_err("check");
        assert!(matches!(refused, StoreError::Invalid { .. }), "{refused}");
        assert_eq!(
            std::fs::read_to_string(&copy).expect("copy"),
            "{\"work\": 1}"
        );
        // What runs on the replaced copy left beside it goes with it; other files stay.
        let beside = super::super::Beside::of(&copy);
        for file in [&beside.transcript, &beside.events, &beside.report] {
            std::fs::write(file, "old run\n").expect("an old run's file");
        }
        std::fs::write(dir.path().join("p.transcript.jsonl"), "original's\n").expect("write");
        drop(copy_beside(&path, true, &|_| None).expect("replaced"));
        assert_eq!(std::fs::read_to_string(&copy).expect("copy"), text);
        for file in [&beside.transcript, &beside.events, &beside.report] {
            assert!(!file.exists(), "{} is left", file.display());
        }
        assert!(
            dir.path().join("p.transcript.jsonl").exists(),
            "the original's files stay"
        );
    }

    #[test]
    fn create_refuses_to_overwrite() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.json");
        std::fs::write(&path, "{}").expect("write");
        let plan = PlanFile::new("Q?", "wf".into(), "t".into());
        assert!(matches!(
            PlanStore::create(&path, &plan),
            Err(StoreError::AlreadyExists { .. })
        ));
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "{}");
    }
}
