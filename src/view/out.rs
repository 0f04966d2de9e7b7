//! Where `researchflow view` may write: never over the plan it views or a file a run keeps
//! beside it (report, events, transcript, reviews, lock, copy), whatever the flags; and over
//! another existing file only when it is a page researchflow wrote (its `generator` mark, see
//! [`super::page::is_ours_at`]) or `--force` says so. Views and batch indexes are made from the
//! files on disk, so replacing one loses nothing; any other file may be someone's work.
//!
//! The writer replaces a file by renaming over its name ([`crate::atomic::write`]), never
//! through a link or a hard link, so it is the name `out` stands for that counts: its folder
//! resolved, its last part as it is.

use std::path::{Path, PathBuf};

use super::page::is_ours_at;
use super::run_files::ViewError;
use crate::plan::Beside;
use crate::plan::store::{copy_path, lock_path};

/// Whether the view of `plan` may be written at `out`; `force` allows replacing a file that
/// is not a page researchflow wrote, never the plan or a file beside it.
pub fn check_out(plan: &Path, out: &Path, force: bool) -> Result<(), ViewError> {
    let shown = || out.display().to_string();
    let at = location(out);
    let plan_files = plan_files(plan);
    let same_file = |p: &PathBuf| same_inode(out, p);
    if plan_files.contains(&at) || plan_files.iter().any(same_file) {
        return Err(ViewError::PlanFile {
            out: shown(),
            plan: plan.display().to_string(),
        });
    }
    let exists = std::fs::symlink_metadata(out).is_ok();
    if !exists || force || is_ours_at(out) {
        return Ok(());
    }
    Err(ViewError::NotAView { out: shown() })
}

/// The plan, as given and as the file it leads to, and every file a run keeps beside it but
/// its view.
fn plan_files(plan: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let given = location(plan);
    let real = std::fs::canonicalize(plan).unwrap_or_else(|_| given.clone());
    for base in [given, real] {
        let beside = Beside::of(&base);
        files.extend(
            beside
                .all()
                .into_iter()
                .filter(|p| *p != beside.html)
                .map(Path::to_path_buf),
        );
        files.push(lock_path(&base));
        files.push(copy_path(&base));
        files.push(base);
    }
    files
}

/// The name `path` stands for: its folder resolved, its last part kept (a link there is the
/// link, which the writer would replace, not what it leads to).
fn location(path: &Path) -> PathBuf {
    let Some(name) = path.file_name() else {
        return path.to_path_buf();
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::canonicalize(dir).map_or_else(|_| path.to_path_buf(), |d| d.join(name))
}

/// Whether `a` and `b` name one existing file (a hard link, or another spelling on a file
/// system that ignores case); links are not followed.
fn same_inode(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::symlink_metadata(a), std::fs::symlink_metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (a, b);
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_and_its_siblings_are_refused_even_forced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("p.json");
        std::fs::write(&plan, "{}").expect("plan");
        for name in [
            "p.json",
            "p.report.md",
            "p.events.ndjson",
            "p.transcript.jsonl",
            "p.plan-review.json",
            "p.review.json",
            "p.review.md",
            "p.json.lock",
            "p.copy.json",
        ] {
            let out = dir.path().join("sub/../").join(name);
            std::fs::create_dir_all(dir.path().join("sub")).expect("sub");
            let err = check_out(&plan, &out, true).expect_err(name);
            assert!(matches!(err, ViewError::PlanFile { .. }), "{name}: {err}");
        }
        check_out(&plan, &dir.path().join("p.html"), false).expect("the view's own name");
    }

    #[cfg(unix)]
    #[test]
    fn a_hard_link_to_the_plan_is_the_plan() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("p.json");
        std::fs::write(&plan, "{}").expect("plan");
        let other = dir.path().join("other.html");
        std::fs::hard_link(&plan, &other).expect("link");
        assert!(matches!(
            check_out(&plan, &other, true),
            Err(ViewError::PlanFile { .. })
        ));
    }

    #[test]
    fn only_our_pages_are_replaced_without_force() {
        let dir = tempfile::tempdir().expect("tempdir");
        let plan = dir.path().join("p.json");
        std::fs::write(&plan, "{}").expect("plan");
        let out = dir.path().join("x.html");
        check_out(&plan, &out, false).expect("a new file");
        std::fs::write(&out, "<html>mine</html>").expect("someone's page");
        assert!(matches!(
            check_out(&plan, &out, false),
            Err(ViewError::NotAView { .. })
        ));
        check_out(&plan, &out, true).expect("forced");
        std::fs::write(&out, super::super::page::document("t", "b")).expect("ours");
        check_out(&plan, &out, false).expect("a page we wrote");
    }
}
