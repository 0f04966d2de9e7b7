//! A run's files as a view reads them: the plan (required), and beside it the report, the event
//! log, the plan review and the review of the report, each optional. Every file is read
//! through the bounded reader; one that is missing is simply absent, one that cannot be read or
//! parsed is a note the page shows, never a failure: a view of what exists is better than none.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::events::RunEvents;
use crate::files::{DEFAULT_MAX_BYTES, FileError, read_bounded};
use crate::plan::store::parse_plan;
use crate::plan::{Beside, PlanFile, StoreError};

/// The largest report, plan review or review file read; larger ones are noted and left out.
pub const SIDE_FILE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Why a view cannot be made: the plan file itself.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error(transparent)]
    Read(#[from] FileError),
    #[error(transparent)]
    Plan(#[from] StoreError),
    #[error(
        "`--out {out}` is the plan file `{plan}` or a file beside it: a view is never written over one; choose another `--out`"
    )]
    PlanFile { out: String, plan: String },
    #[error(
        "`{out}` exists and is not a page researchflow wrote: give `--force` to replace it, or choose another `--out`"
    )]
    NotAView { out: String },
    #[error("cannot write the view `{path}`: {source}")]
    Write {
        path: String,
        source: std::io::Error,
    },
}

/// Everything a view shows, read.
#[derive(Debug, Clone)]
pub struct RunFiles {
    pub plan_path: PathBuf,
    pub plan: PlanFile,
    pub report: Option<String>,
    pub events: RunEvents,
    /// Whether an event log was found.
    pub has_events: bool,
    /// `<stem>.plan-review.json`: the latest round's plan review.
    pub plan_review: Option<Value>,
    /// `<stem>.review.json`: the review of the report.
    pub review: Option<Value>,
    /// What could not be read, one line each.
    pub notes: Vec<String>,
}

/// The plan file at `path`, read (bounded) and parsed without a lock.
pub fn read_plan(path: &Path) -> Result<PlanFile, ViewError> {
    let text = read_bounded(path, DEFAULT_MAX_BYTES)?;
    Ok(parse_plan(path, &text)?)
}

impl RunFiles {
    /// Reads the plan at `plan_path` and the files beside it: beside the file itself when
    /// `plan_path` is a symbolic link, where a run through the link wrote them.
    pub fn load(plan_path: &Path) -> Result<RunFiles, ViewError> {
        let plan = read_plan(plan_path)?;
        let beside = Beside::of(&real_path(plan_path));
        let mut notes = Vec::new();
        let report = side_text(&beside.report, &mut notes);
        let plan_review = side_json(&beside.plan_review, &mut notes);
        let review = side_json(&beside.review_json, &mut notes);
        let (events, has_events) = read_events(&beside.events, &mut notes);
        if events.bad_lines > 0 {
            notes.push(format!(
                "{} line(s) of the event log are not JSON and were skipped",
                events.bad_lines
            ));
        }
        Ok(RunFiles {
            plan_path: plan_path.to_path_buf(),
            plan,
            report,
            events,
            has_events,
            plan_review,
            review,
            notes,
        })
    }
}

/// The file `path` leads to, symbolic links resolved (as a run names the files beside its
/// plan); `path` itself when it cannot be resolved.
pub fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// The event log, line by line (it may be longer than any file read whole). It is opened
/// without blocking and read only when it is a regular file: a FIFO left in its place would
/// otherwise hang the view.
fn read_events(path: &Path, notes: &mut Vec<String>) -> (RunEvents, bool) {
    let shown = path.display();
    let opened =
        open_without_blocking(path).and_then(|file| Ok((file.metadata()?.is_file(), file)));
    match opened {
        Ok((true, file)) => (RunEvents::read(BufReader::new(file)), true),
        Ok((false, _)) => {
            notes.push(format!("`{shown}` is not a regular file: left out"));
            (RunEvents::default(), false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (RunEvents::default(), false),
        Err(e) => {
            notes.push(format!("cannot read `{shown}`: {e}"));
            (RunEvents::default(), false)
        }
    }
}

/// `path` opened for reading; on Unix with `O_NONBLOCK`, so that opening a FIFO returns at once
/// (the flag changes nothing for a regular file).
fn open_without_blocking(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// The text of a file beside the plan; `None` when it is not there (or, noted, unreadable).
fn side_text(path: &Path, notes: &mut Vec<String>) -> Option<String> {
    match read_bounded(path, SIDE_FILE_MAX_BYTES) {
        Ok(text) => Some(text),
        Err(FileError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => {
            notes.push(e.to_string());
            None
        }
    }
}

/// A JSON object beside the plan; `None` when it is not there (or, noted, not JSON).
fn side_json(path: &Path, notes: &mut Vec<String>) -> Option<Value> {
    let text = side_text(path, notes)?;
    match serde_json::from_str::<Value>(&text) {
        Ok(v @ Value::Object(_)) => Some(v),
        Ok(_) | Err(_) => {
            notes.push(format!("`{}` is not a JSON object", path.display()));
            None
        }
    }
}
