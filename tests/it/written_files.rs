//! How researchflow writes files, through the real binary and the offline engine (no model):
//! never through a symbolic link beside a plan (a cloned repository's
//! `runs/x.report.md -> ~/.bashrc`), while the plan the user names may be a link they made;
//! new files with the mode the umask gives; and no lock file left behind once a run, a batch
//! or a planning round ends.

use std::path::Path;

use crate::support::fixtures::offline;

const QUESTION: &str = "How do solid-state batteries compare with lithium-ion?";

/// A finished offline run of `runs/unf.json` in a fresh folder.
async fn finished_run() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    offline(dir.path(), &["workflow"])
        .args(["--query", QUESTION, "--out", "runs/unf.json"])
        .run()
        .await
        .success();
    dir
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// regression: with `runs/unf.report.md`, `.html`, `.events.ndjson` and `.transcript.jsonl`
/// linked to files elsewhere, resuming the plan overwrote the report and the view there and
/// appended to the logs. Now the run is refused before anything is written, naming the link,
/// whichever file it is, and what the links lead to is left as it was; a link to nothing
/// creates nothing.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_beside_a_plan_that_are_links_are_never_written_through() {
    let dir = finished_run().await;
    let (runs, outside) = (dir.path().join("runs"), dir.path().join("outside"));
    std::fs::create_dir(&outside).expect("outside/");
    let link = |name: &str| {
        let target = outside.join(name);
        std::fs::write(&target, format!("{name} of someone else\n")).expect("target");
        let at = runs.join(name);
        let _ = std::fs::remove_file(&at);
        std::os::unix::fs::symlink(&target, &at).expect("symlink");
    };
    let untouched = |name: &str| {
        assert_eq!(
            std::fs::read_to_string(outside.join(name)).expect("target"),
            format!("{name} of someone else\n"),
            "what `{name}` leads to is unchanged"
        );
    };
    let resume = || {
        offline(dir.path(), &["workflow"])
            .args(["--plan", "runs/unf.json"])
            .run()
    };

    let all = [
        "unf.report.md",
        "unf.html",
        "unf.events.ndjson",
        "unf.transcript.jsonl",
    ];
    for name in all {
        link(name);
    }
    let out = resume().await;
    out.code(2)
        .stderr_contains("unf.report.md")
        .stderr_contains("symbolic link");
    all.iter().for_each(|name| untouched(name));

    for name in all {
        std::fs::remove_file(runs.join(name)).expect("unlink");
    }
    for name in all
        .into_iter()
        .chain(["unf.plan-review.json", "unf.review.json", "unf.json.lock"])
    {
        link(name);
        let out = resume().await;
        out.code(2)
            .stderr_contains(&format!("`{}`", runs.join(name).display()))
            .stderr_contains("remove the link");
        untouched(name);
        std::fs::remove_file(runs.join(name)).expect("unlink");
    }

    std::os::unix::fs::symlink(outside.join("made.md"), runs.join("unf.report.md"))
        .expect("dangling");
    resume().await.code(2);
    assert!(!outside.join("made.md").exists(), "nothing made through it");
    std::fs::remove_file(runs.join("unf.report.md")).expect("unlink");

    resume().await.success();
    let report = std::fs::symlink_metadata(runs.join("unf.report.md")).expect("report");
    assert!(report.is_file(), "written as a file of its own");
}

/// The plan file the user names may be a link they made: the run saves the file it leads to
/// and writes its files beside that, and the link stays a link.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_named_through_a_link_is_saved_through_it() {
    let dir = finished_run().await;
    let link = dir.path().join("mine.json");
    std::os::unix::fs::symlink(dir.path().join("runs/unf.json"), &link).expect("symlink");
    let before = std::fs::read_to_string(dir.path().join("runs/unf.events.ndjson")).expect("e");
    offline(dir.path(), &["workflow"])
        .args(["--plan", "mine.json"])
        .run()
        .await
        .success();
    assert!(
        std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink()
    );
    let after = std::fs::read_to_string(dir.path().join("runs/unf.events.ndjson")).expect("e");
    assert!(after.len() > before.len(), "the run's log beside the plan");
    assert!(!dir.path().join("mine.events.ndjson").exists());
}

/// The mode of every regular file under `dir`, by name relative to it.
#[cfg(unix)]
fn modes(dir: &Path) -> Vec<(String, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d)
            .expect("folder")
            .filter_map(Result::ok)
        {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).expect("meta");
            if meta.is_dir() {
                stack.push(path);
            } else {
                let name = path.strip_prefix(dir).expect("inside");
                out.push((
                    name.display().to_string(),
                    meta.permissions().mode() & 0o777,
                ));
            }
        }
    }
    out.sort();
    out
}

/// regression: the plan, report, reviews and view were 0600 whatever the umask (a report
/// served from a shared folder could not be read) while the logs were 0644, and every run left
/// a 0-byte `X.json.lock` beside its plan. Now every file a run, a batch or a planning round
/// writes has the mode the umask gives, and no lock stays once it ends.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_have_the_mode_the_umask_gives_and_no_lock_stays() {
    for (mask, mode) in [(0o022, 0o644), (0o027, 0o640)] {
        let dir = tempfile::tempdir().expect("tempdir");
        offline(dir.path(), &["workflow"])
            .args(["--query", QUESTION, "--out", "runs/unf.json"])
            .umask(mask)
            .run()
            .await
            .success();
        std::fs::write(dir.path().join("q.txt"), "First question?\nSecond one?\n").expect("q");
        offline(dir.path(), &["batch", "q.txt", "--out-dir", "batch"])
            .umask(mask)
            .run()
            .await
            .success();
        offline(dir.path(), &["plan", "runs/unf.json", "--on-copy"])
            .umask(mask)
            .run()
            .await
            .success();
        for root in ["runs", "batch"] {
            let files = modes(&dir.path().join(root));
            assert!(files.len() >= 6, "{files:?}");
            for (name, got) in &files {
                assert_eq!(*got, mode, "`{root}/{name}` under umask {mask:03o}");
                assert!(!name.ends_with(".lock"), "`{root}/{name}` is left behind");
            }
        }
        assert!(names(&dir.path().join("runs")).contains(&"unf.copy.json".to_string()));
    }
}
