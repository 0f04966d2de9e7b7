//! A question's files on a worker's disk: its plan `<name>.json` and the files beside it
//! (named by [`crate::plan::Beside`]), written from what the queue holds before a run resumes,
//! and read back whole when it ends. The same names serve `batch export`.

use std::path::{Path, PathBuf};

use super::claim::Files;
use super::writer::APPENDED;

/// How a file is written: [`crate::atomic::write`], or on a worker's disk
/// [`crate::atomic::write_scratch`].
pub type WriteFile = fn(&Path, &[u8]) -> std::io::Result<()>;
use crate::plan::Beside;

/// `(suffix, path)` of every file beside the plan at `plan`: `report.md`, `events.ndjson`, ...
pub fn beside(plan: &Path) -> Vec<(String, PathBuf)> {
    let b = Beside::of(plan);
    let stem = plan
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    [
        b.report,
        b.events,
        b.transcript,
        b.plan_review,
        b.review_json,
        b.review_notes,
    ]
    .into_iter()
    .filter_map(|path| {
        let name = path.file_name()?.to_string_lossy().into_owned();
        let suffix = name.strip_prefix(&format!("{stem}."))?.to_string();
        Some((suffix, path))
    })
    .collect()
}

/// What a question's end stores: the plan's text and every file beside it that exists, but
/// the appended ones (the worker's writer stored their lines as they came).
pub fn read_ended(plan: &Path) -> Files {
    Files {
        plan: std::fs::read_to_string(plan).ok(),
        beside: beside(plan)
            .into_iter()
            .filter(|(suffix, _)| !APPENDED.contains(&suffix.as_str()))
            .filter_map(|(suffix, path)| std::fs::read(path).ok().map(|bytes| (suffix, bytes)))
            .collect(),
        next: Default::default(),
    }
}

/// Writes `files` with `write` as the plan at `plan` and the files beside it, after removing
/// whatever an earlier run of the question left there.
pub fn write_all(plan: &Path, files: &Files, write: WriteFile) -> std::io::Result<()> {
    if let Some(dir) = plan.parent() {
        std::fs::create_dir_all(dir)?;
    }
    remove_all(plan)?;
    for (suffix, path) in beside(plan) {
        if let Some((_, bytes)) = files.beside.iter().find(|(s, _)| *s == suffix) {
            write(&path, bytes)?;
        }
    }
    if let Some(text) = &files.plan {
        write(plan, text.as_bytes())?;
    }
    Ok(())
}

/// Removes the plan at `plan` and every file beside it (those that exist).
pub fn remove_all(plan: &Path) -> std::io::Result<()> {
    for (_, path) in beside(plan) {
        remove(&path)?;
    }
    remove(plan)
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_written_then_read_back_the_same() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("q-1.json");
        let names: Vec<String> = beside(&plan).into_iter().map(|(s, _)| s).collect();
        assert!(names.contains(&"events.ndjson".to_string()), "{names:?}");
        assert!(names.contains(&"report.md".to_string()), "{names:?}");
        std::fs::write(dir.path().join("q-1.review.md"), "stale").expect("stale");
        let files = Files {
            plan: Some("{}\n".into()),
            beside: vec![
                ("report.md".into(), b"# Q\n".to_vec()),
                ("events.ndjson".into(), b"{\"event\":1}\n".to_vec()),
            ],
            next: Default::default(),
        };
        write_all(&plan, &files, crate::atomic::write_scratch).expect("write");
        assert!(dir.path().join("q-1.events.ndjson").exists());
        let back = read_ended(&plan);
        assert_eq!(back.plan, files.plan);
        assert_eq!(
            back.beside,
            files.beside[..1],
            "the stale review is gone; the event log's lines are stored already"
        );
    }
}
