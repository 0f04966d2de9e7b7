//! `researchflow mcp` against links in the folders it reads and writes, through the real
//! binary spoken to without an SDK (`support::mcp`): a page folder `runs/pages` that is a
//! symbolic link out of the root, a report swapped for a link while `get_report` reads it,
//! and hard links beside a plan to files outside the root. Nothing outside is read, shown or
//! written; each refusal names the file, never where it leads.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use crate::support::fixtures::copy_corpus;
use crate::support::mcp::{Stdio, error_text, server_args};
use crate::support::reading::Reading;

/// A plan file with only its start node: a run that has not begun.
fn unstarted_plan(question: &str) -> Value {
    json!({
        "version": 1,
        "workflow_id": "wf-test",
        "created_at": "2026-01-01T00:00:00Z",
        "check_list": {"latest_id": "a", "latest_batch": 1, "refs": []},
        "nodes": [{"node_id": "a", "title": question, "summary": "", "info": "", "p_node": "",
                   "batch": 1, "type": "start", "status": "completed"}]
    })
}

/// A plan file of a run that has ended `completed`.
fn finished_plan(question: &str) -> Value {
    let mut plan = unstarted_plan(question);
    plan["outcome"] = json!({"status": "completed", "finished_at": "2026-01-01T00:01:00Z"});
    plan
}

fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, value.to_string()).expect("write");
}

/// A root (with the project's corpus as `docs` and a `runs/`) and a folder outside it.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let world = World {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        copy_corpus(&world.root().join("docs"));
        std::fs::create_dir_all(world.runs()).expect("mkdir");
        std::fs::create_dir_all(world.outside()).expect("mkdir");
        world
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside")
    }

    fn runs(&self) -> PathBuf {
        self.root().join("runs")
    }

    /// `researchflow mcp` on this root, with no config.
    fn args(&self) -> Vec<OsString> {
        let index = self.dir.path().join("index");
        server_args(&[], &self.root(), &[("--index-dir", &index)])
    }
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Issue 56: MCP runs read and wrote the page cache through `runs/pages`, a symbolic link out
/// of the root (the checks of the files beside a plan skipped `pages/`). Now `research` and
/// `resume` are refused before anything runs, naming `pages` and not where it leads; nothing
/// is written there. Without the link the same call runs and keeps its pages in the root.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_page_folder_linked_out_of_the_root_is_refused() {
    let r = Reading::start().await;
    let (root, outside) = (r.s.path().join("root"), r.s.path().join("outside"));
    std::fs::create_dir_all(root.join("runs")).expect("mkdir");
    std::fs::create_dir_all(&outside).expect("mkdir");
    std::os::unix::fs::symlink(&outside, root.join("runs/pages")).expect("link");
    write_json(
        &root.join("runs/unf.json"),
        &unstarted_plan("What limits a client?"),
    );
    let config = r.s.path().join("agent.config.json");
    let args = server_args(&[], &root, &[("--config", &config)]);
    let mut mcp = Stdio::start(args, &root, &[]).await;
    let query = json!({"query": "What limits a qemu-nbd client?"});
    let refused = mcp.call("research", query.clone()).await;
    let resumed = mcp
        .call("resume", json!({"plan_file": "runs/unf.json"}))
        .await;
    for answer in [&refused, &resumed] {
        let text = error_text(answer);
        assert!(
            text.contains("pages") && text.contains("symbolic link"),
            "{text}"
        );
        assert!(!text.contains(&outside.display().to_string()), "{text}");
    }
    assert_eq!(
        names(&outside),
        Vec::<String>::new(),
        "nothing written there"
    );
    assert_eq!(r.site.all_requests().len(), 0, "no page read");

    std::fs::remove_file(root.join("runs/pages")).expect("unlink");
    let ran = mcp.call("research", query).await;
    assert_eq!(
        ran["result"]["structuredContent"]["status"], "completed",
        "{ran:#}"
    );
    assert!(
        !names(&root.join("runs/pages")).is_empty(),
        "kept in the root"
    );
    let log = mcp.close().await;
    assert!(!log.contains(&outside.display().to_string()), "{log}");
}

/// Swaps each file of `pairs` (a path under the root, what it holds) for a symbolic link to
/// `secret` and back, as fast as it can, until `stop`.
fn swapper(
    root: PathBuf,
    pairs: Vec<(PathBuf, &'static str)>,
    secret: PathBuf,
    stop: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let (link, file) = (root.join(".swap-link"), root.join(".swap-file"));
        while !stop.load(Ordering::Relaxed) {
            for (path, text) in &pairs {
                let _ = std::fs::remove_file(&link);
                std::os::unix::fs::symlink(&secret, &link).expect("link");
                std::fs::rename(&link, path).expect("swap in the link");
                std::fs::write(&file, text).expect("write");
                std::fs::rename(&file, path).expect("swap the file back");
            }
        }
    })
}

/// Issue 56: `get_report` checked the report's path, then opened it: a link swapped in
/// between was followed (11 of 1,500 calls returned an outside file). Now the file opened is
/// the one checked: over 3,000 rounds of `get_report` and `resources/read` while the report
/// and the event log are swapped for links to an outside file and back, no answer holds the
/// outside text, and some hold the report.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_report_swapped_for_a_link_while_it_is_read_is_never_followed() {
    let world = World::new();
    let (runs, outside) = (world.runs(), world.outside());
    write_json(&runs.join("fin.json"), &finished_plan("What is inside?"));
    let secret = outside.join("secret.md");
    let totals =
        "{\"event\":\"run_finished\",\"totals\":{\"rounds\":1,\"total_tokens\":987654321}}\n";
    std::fs::write(&secret, format!("# OUTSIDE-SECRET\n{totals}")).expect("write");
    let (report, events) = (runs.join("fin.report.md"), runs.join("fin.events.ndjson"));
    std::fs::write(&report, "# Inside report\n").expect("write");
    let pairs = vec![(report, "# Inside report\n"), (events, "")];
    let stop = Arc::new(AtomicBool::new(false));
    let swapping = swapper(world.root(), pairs, secret, stop.clone());
    // Errors only: the log is read at the end, and a refusal a call is a line.
    let mut mcp = Stdio::start(world.args(), &world.root(), &[("RUST_LOG", "error")]).await;
    let uri = format!(
        "file://{}",
        runs.canonicalize()
            .expect("runs")
            .join("fin.report.md")
            .display()
    );
    let (mut leaked, mut read) = (0, 0);
    for _ in 0..3_000 {
        let report = mcp
            .call("get_report", json!({"plan_file": "runs/fin.json"}))
            .await;
        let resource = mcp.request("resources/read", json!({"uri": uri})).await;
        for text in [report.to_string(), resource.to_string()] {
            leaked += usize::from(text.contains("OUTSIDE-SECRET") || text.contains("987654321"));
            read += usize::from(text.contains("Inside report"));
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapping.join().expect("swapper");
    let log = mcp.close().await;
    assert_eq!(leaked, 0, "answers that held the outside file");
    assert!(read > 0, "the report itself was read between swaps");
    assert!(!log.contains("OUTSIDE-SECRET"), "{log}");
}

/// Issue 56: the server read and appended through hard links beside a plan (`nlink > 1` was
/// not checked): a report and an event log that are other names of files outside the root
/// were shown, and a run appended its events to the outside file. Now such a file is
/// treated as absent when read, a plan that is one is refused, and `resume` is refused
/// before the run starts, naming the file; the outside files stay as they were.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn hard_links_beside_a_plan_are_neither_read_nor_appended_to() {
    let world = World::new();
    let (runs, outside) = (world.runs(), world.outside());
    write_json(&runs.join("fin.json"), &finished_plan("What is inside?"));
    std::fs::write(outside.join("secret.md"), "# OUTSIDE-SECRET report\n").expect("write");
    std::fs::hard_link(outside.join("secret.md"), runs.join("fin.report.md")).expect("link");
    let totals =
        "{\"event\":\"run_finished\",\"totals\":{\"rounds\":42,\"total_tokens\":987654321}}\n";
    std::fs::write(outside.join("fin.events.ndjson"), totals).expect("write");
    std::fs::hard_link(
        outside.join("fin.events.ndjson"),
        runs.join("fin.events.ndjson"),
    )
    .expect("link");
    write_json(
        &outside.join("plan.json"),
        &finished_plan("OUTSIDE-SECRET question"),
    );
    std::fs::hard_link(outside.join("plan.json"), runs.join("other.json")).expect("link");
    write_json(
        &runs.join("unf.json"),
        &unstarted_plan("What limits fast charging?"),
    );
    std::fs::write(outside.join("log.ndjson"), "outside log\n").expect("write");
    std::fs::hard_link(outside.join("log.ndjson"), runs.join("unf.events.ndjson")).expect("link");

    let mut mcp = Stdio::start(world.args(), &world.root(), &[]).await;
    let report = mcp
        .call("get_report", json!({"plan_file": "runs/fin.json"}))
        .await;
    let other = mcp
        .call("get_report", json!({"plan_file": "runs/other.json"}))
        .await;
    let listed = mcp.call("list_runs", json!({})).await;
    let uri = format!(
        "file://{}",
        runs.canonicalize()
            .expect("runs")
            .join("fin.report.md")
            .display()
    );
    let read = mcp.request("resources/read", json!({"uri": uri})).await;
    let arguments = json!({"plan_file": "runs/unf.json", "offline": true, "corpus": "docs"});
    let refused = mcp.call("resume", arguments.clone()).await;

    for (what, answer) in [
        ("get_report", &report),
        ("list_runs", &listed),
        ("read", &read),
    ] {
        let text = answer.to_string();
        assert!(
            !text.contains("OUTSIDE-SECRET") && !text.contains("987654321"),
            "{what}: {text}"
        );
    }
    let fin = &report["result"]["structuredContent"];
    assert_eq!(fin["status"], "completed", "{report:#}");
    assert_eq!(
        (&fin["report_markdown"], &fin["totals"]),
        (&Value::Null, &Value::Null)
    );
    assert!(error_text(&other).contains("hard links"), "{other:#}");
    let listed = listed["result"]["structuredContent"]["runs"]
        .as_array()
        .cloned();
    assert_eq!(
        listed.map(|r| r.len()),
        Some(2),
        "fin and unf, not the hard-linked plan"
    );
    assert!(read.get("error").is_some(), "{read:#}");
    let text = error_text(&refused);
    assert!(
        text.contains("unf.events.ndjson") && text.contains("hard links"),
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("log.ndjson")).expect("read"),
        "outside log\n",
        "nothing appended"
    );

    std::fs::remove_file(runs.join("unf.events.ndjson")).expect("unlink");
    let ran = mcp.call("resume", arguments).await;
    assert_eq!(
        ran["result"]["structuredContent"]["status"], "completed",
        "{ran:#}"
    );
    mcp.close().await;
}
