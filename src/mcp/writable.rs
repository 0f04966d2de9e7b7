//! The files a run writes beside its plan (its lock, report, event log, transcript, plan
//! review, review and view: [`Beside`]) and its page folder (`pages/`), checked before a tool
//! starts the run: each file must be absent or a regular file of one name, the folder absent
//! or a real folder. A symbolic link there (a cloned repository may hold one) would have the
//! run overwrite or append to whatever it leads to, `~/.bashrc` as well as a file under the
//! roots, and read and write the page cache out of the roots; a hard link is another name of
//! a file that may be anywhere, and appending to it appends there. So the call is refused and
//! names the link, never where it leads. The writers themselves do not write through links
//! either; this check is the server's own, so that a client is told why rather than finding
//! a file replaced.

use std::path::Path;

use crate::plan::Beside;
use crate::plan::store::lock_path;
use crate::read::cache::PageCache;

/// Refuses a run of the plan at `plan` (a real path) when a file it would write beside the
/// plan is a symbolic link or anything but a regular file.
pub fn check_beside(plan: &Path) -> Result<(), String> {
    let beside = Beside::of(plan);
    let files = [
        lock_path(plan),
        beside.report,
        beside.events,
        beside.transcript,
        beside.plan_review,
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
        } else if has_other_names(&meta) {
            "a file with other hard links"
        } else {
            continue;
        };
        return Err(format!(
            "`{}` beside the plan is {what}: a run writes that file, and would write wherever it leads; remove it (or put the file itself there) and call again",
            file.display()
        ));
    }
    let pages = PageCache::beside(plan);
    if let Ok(meta) = std::fs::symlink_metadata(pages.dir())
        && !meta.is_dir()
    {
        let what = match meta.file_type().is_symlink() {
            true => "a symbolic link",
            false => "not a folder",
        };
        return Err(format!(
            "`{}` beside the plan is {what}: a run keeps the pages it reads there, and would read and write them wherever it leads; remove it and call again",
            pages.dir().display()
        ));
    }
    Ok(())
}

/// Whether a file has hard links other than the path it was looked up by.
fn has_other_names(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        meta.nlink() > 1
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
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
        std::fs::remove_dir(dir.path().join("p.transcript.jsonl")).expect("rmdir");
        std::fs::hard_link(dir.path().join("p.report.md"), dir.path().join("other.md"))
            .expect("hard link");
        let err = check_beside(&plan).expect_err("two names");
        assert!(
            err.contains("p.report.md") && err.contains("hard links"),
            "{err}"
        );
        std::fs::remove_file(dir.path().join("other.md")).expect("unlink");
        std::os::unix::fs::symlink(&target, dir.path().join("pages")).expect("symlink");
        let err = check_beside(&plan).expect_err("a linked page folder");
        assert!(
            err.contains("pages") && err.contains("symbolic link"),
            "{err}"
        );
        std::fs::remove_file(dir.path().join("pages")).expect("unlink");
        std::fs::create_dir(dir.path().join("pages")).expect("mkdir");
        assert!(check_beside(&plan).is_ok(), "a real page folder is fine");
    }
}
