//! The files a run writes beside its plan (its lock, report, event log, transcript, plan
//! review, review and view: [`Beside`]), checked before a tool starts the run: each must be
//! absent or a regular file. A symbolic link there (a cloned repository may hold one) would
//! have the run overwrite or append to whatever it leads to, `~/.bashrc` as well as a file
//! under the roots, so the call is refused and names the link, never where it leads. The
//! writers themselves do not follow links either; this check is the server's own, so that a
//! client is told why rather than finding a file replaced.

use std::path::Path;

use crate::plan::Beside;
use crate::plan::store::lock_path;

/// Refuses a run of the plan at `plan` (a real path) when a file it would write beside the
/// plan is a symbolic link or anything but a regular file.
pub fn check_beside(plan: &Path) -> Result<(), String> {
    let beside = Beside::of(plan);
    let files = [
        lock_path(plan),
        beside.report,
        beside.events,
        beside.transcript,
        beside.gate_verdict,
        beside.review_json,
        beside.review_notes,
        beside.html,
    ];
    for file in &files {
        let Ok(meta) = std::fs::symlink_metadata(file) else {
            continue;
        };
        let what = if meta.file_type().is_symlink() {
            "a symbolic link"
        } else if !meta.is_file() {
            "not a regular file"
        } else {
            continue;
        };
        return Err(format!(
            "`{}` beside the plan is {what}: a run writes that file, and would write wherever it leads; remove it (or put the file itself there) and call again",
            file.display()
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_link_beside_the_plan_is_named_and_where_it_leads_is_not() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("p.json");
        std::fs::write(&plan, "{}").expect("write");
        std::fs::write(dir.path().join("p.report.md"), "# r").expect("write");
        assert!(check_beside(&plan).is_ok(), "regular files are fine");
        let target = dir.path().join("elsewhere-secret.txt");
        for name in ["p.html", "p.json.lock", "p.events.ndjson"] {
            let link = dir.path().join(name);
            std::os::unix::fs::symlink(&target, &link).expect("symlink");
            let err = check_beside(&plan).expect_err(name);
            assert!(err.contains(name) && err.contains("symbolic link"), "{err}");
            assert!(!err.contains("elsewhere-secret"), "{err}");
            std::fs::remove_file(&link).expect("unlink");
        }
        std::fs::create_dir(dir.path().join("p.transcript.jsonl")).expect("mkdir");
        let err = check_beside(&plan).expect_err("a folder");
        assert!(err.contains("not a regular file"), "{err}");
    }
}
