//! What `watch` finds in its folder that it did not make: a copy of a run (`cp -r <run>
//! <run>-keep`) and a folder of the user's named like a run are neither resumed, written
//! into, compared with nor pruned, and each is named in a warning; the user's own
//! `index.html` is not replaced, and a `latest` that is a real folder is left as it is with no
//! stray link beside it.

use std::path::Path;

use serde_json::{Value, json};

use super::Folder;

/// Copies the folder `from` to `to`, files and folders (what `cp -r` does).
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from)
        .expect("read")
        .filter_map(Result::ok)
    {
        let (path, target) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&path, &target);
        } else if entry.file_type().expect("type").is_file() {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// Every file under `dir` with its bytes, sorted: what must not change.
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read").filter_map(Result::ok) {
        let path = entry.path();
        if entry.file_type().expect("type").is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.push((
                path.display().to_string(),
                std::fs::read(&path).expect("read"),
            ));
        }
    }
    out.sort();
    out
}

/// Issue 56: any `YYYYMMDDTHHMMSSZ-<anything>` counted as a run, so `--keep` pruned a user's
/// copy `<run>-keep`, and a folder of the user's named like a run (here the newest) was
/// resumed, written into, then pruned with the user's files. A run is now a folder whose
/// record `watch` wrote naming it: the others are left alone and named in a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keep_prunes_and_resumes_only_the_runs_watch_made() {
    let f = Folder::new();
    let (code, first, _) = f.watch(&[]).await;
    assert_eq!(code, 0, "{first}");
    let w = f.root.join("w");
    let run = first["run"].as_str().expect("run").to_string();
    let copy = w.join(format!("{run}-keep"));
    copy_dir(&w.join(&run), &copy);
    let mine = w.join("29991231T000000Z");
    std::fs::create_dir_all(&mine).expect("mkdir");
    std::fs::write(mine.join("notes.md"), "# my notes\n").expect("notes");
    let (copy_before, mine_before) = (snapshot(&copy), snapshot(&mine));

    let mut pruned = Vec::new();
    for _ in 0..2 {
        let (code, printed, stderr) = f.watch(&["--keep", "1"]).await;
        assert_eq!(code, 0, "{printed}\n{stderr}");
        assert_eq!(
            printed["resumed"], false,
            "nothing of the user's resumed: {printed}"
        );
        assert_ne!(printed["run"], json!("29991231T000000Z"), "{printed}");
        for name in [format!("{run}-keep"), "29991231T000000Z".to_string()] {
            assert!(
                stderr.contains(&name) && stderr.contains("left alone"),
                "`{name}` is warned of: {stderr}"
            );
        }
        pruned.extend(printed["pruned"].as_array().cloned().unwrap_or_default());
    }
    assert_eq!(pruned, [json!(run)], "only the runs watch made are pruned");
    assert_eq!(snapshot(&copy), copy_before, "the copy is as it was");
    assert_eq!(
        snapshot(&mine),
        mine_before,
        "the user's folder is as it was"
    );
}

/// Issue 56: `watch` replaced a user's `DIR/index.html` without asking (`batch export`
/// refuses), and a `latest` that is a real folder left a stray `.latest.<pid>` link. Now
/// both are left as they are, the run finishes, and the warning says what to move away.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_index_and_latest_folder_are_left_as_they_are() {
    let f = Folder::new();
    let w = f.root.join("w");
    std::fs::create_dir_all(w.join("latest")).expect("mkdir");
    std::fs::write(w.join("latest/todo.md"), "- read the runs\n").expect("todo");
    std::fs::write(w.join("index.html"), "<html><p>My own index</p></html>\n").expect("index");
    let before = snapshot(&w);
    let (code, printed, stderr) = f.watch(&[]).await;
    assert_eq!(code, 0, "{printed}\n{stderr}");
    assert_eq!(printed["index"], Value::Null, "{printed}");
    assert!(
        stderr.contains("index.html") && stderr.contains("not a page researchflow wrote"),
        "{stderr}"
    );
    assert!(
        stderr.contains("latest") && stderr.contains("left as it is"),
        "{stderr}"
    );
    let after: Vec<_> = snapshot(&w)
        .into_iter()
        .filter(|(path, _)| !path.contains(printed["run"].as_str().expect("run")))
        .collect();
    assert_eq!(after, before, "index.html and latest/ are as they were");
    let strays: Vec<String> = std::fs::read_dir(&w)
        .expect("w")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".latest"))
        .collect();
    assert_eq!(strays, Vec::<String>::new(), "no stray link");
    let record = crate::support::scenario::read_json(&f.run_dir(&printed).join("watch.json"));
    assert!(record["finished"].is_string(), "the run finished: {record}");
}
