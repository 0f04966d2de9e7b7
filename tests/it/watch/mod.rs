//! `researchflow watch`: runs of one questions file over a corpus, each in its own dated
//! folder, compared with the last: a changed figure is told (exit 3, digest, webhook with its
//! signature, a mail through a real SMTP server), an unchanged corpus is not (exit 0), a
//! reworded report with the same facts is not either, `latest` follows, old runs are pruned
//! but never the one compared with, an unfinished run is resumed and its notification not
//! sent twice, a failed notification exits 4, the index opens cleanly in Chromium.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

use crate::support::fixtures::{copy_corpus, offline_over};
use crate::support::scenario::{read_json, read_ndjson};
use crate::support::server::{Planned, Server, json_response};

mod folders;
mod mail;
mod pages;
mod receivers;

pub(crate) const QUESTION: &str = "How do solid-state batteries compare with lithium-ion?";
const DOCUMENT: &str = "solid-state-vs-lithium-ion-overview.md";
pub(crate) const SECRET: &str = "watch-hook-s3cret-value";
/// A webhook's path, which is often its secret: written nowhere.
const HOOK_PATH: &str = "/services/T0/hook-path-s3cret";

pub(crate) struct Folder {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
}

impl Folder {
    pub(crate) fn new() -> Folder {
        let tmp = tempfile::tempdir().expect("tempdir");
        let root = tmp.path().to_path_buf();
        copy_corpus(&root.join("corpus"));
        std::fs::write(root.join("q.txt"), format!("{QUESTION}\n")).expect("questions");
        Folder { _tmp: tmp, root }
    }

    pub(crate) async fn watch_raw(&self, extra: &[&str]) -> crate::support::bin::RunOutput {
        self.watch_in(extra, &[]).await
    }

    /// `watch` with `extra` flags and `env` set.
    pub(crate) async fn watch_in(
        &self,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> crate::support::bin::RunOutput {
        let mut args = vec!["watch", "q.txt", "--dir", "w", "--json"];
        args.extend_from_slice(extra);
        let mut cmd = offline_over(&self.root, &self.root.join("corpus"), &args)
            .env("RESEARCHFLOW_WEBHOOK_SECRET", SECRET);
        for (key, value) in env {
            cmd = cmd.env(key, value);
        }
        cmd.run().await
    }

    /// The exit code, the JSON printed and stderr.
    pub(crate) async fn watch(&self, extra: &[&str]) -> (i32, Value, String) {
        let out = self.watch_raw(extra).await;
        (out.status, out.stdout_json(), out.stderr.clone())
    }

    pub(crate) fn run_dir(&self, printed: &Value) -> PathBuf {
        self.root
            .join("w")
            .join(printed["run"].as_str().expect("run"))
    }

    pub(crate) fn change_figure(&self, from: &str, to: &str) {
        let path = self.root.join("corpus").join(DOCUMENT);
        let text = std::fs::read_to_string(&path).expect("document");
        assert!(text.contains(from), "{from} in {DOCUMENT}");
        std::fs::write(&path, text.replace(from, to)).expect("write");
    }
}

/// A webhook receiver on loopback: answers `status` to every POST.
async fn receiver(status: u16) -> Server {
    Server::start(Arc::new(move |_| {
        Planned::respond(json_response(status, &json!({"ok": status == 200})))
    }))
    .await
}

fn signature(body: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(SECRET.as_bytes()).expect("key");
    mac.update(body.as_bytes());
    let hex: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256={hex}")
}

/// Every file under `dir`, as text where it is text.
pub(crate) fn all_text(dir: &Path) -> String {
    let mut out = String::new();
    for entry in std::fs::read_dir(dir).expect("dir").filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() && !path.is_symlink() {
            out.push_str(&all_text(&path));
        } else if let Ok(text) = std::fs::read_to_string(&path) {
            out.push_str(&text);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_figure_is_told_once_and_an_unchanged_corpus_is_not() {
    let f = Folder::new();
    let hook = receiver(200).await;
    let notify = format!("{}{HOOK_PATH}", hook.url());
    let (code, first, _) = f.watch(&["--notify", &notify]).await;
    assert_eq!(code, 0, "a first run has nothing to compare: {first}");
    assert_eq!(first["counts"]["completed"], 1, "{first}");
    let (code, same, _) = f.watch(&["--notify", &notify]).await;
    assert_eq!(code, 0, "nothing changed: {same}");
    assert_eq!(same["changed"], json!([]));
    let record = read_json(&f.run_dir(&same).join("watch.json"));
    assert_eq!(record["questions"][0]["compared_with"], first["run"]);
    assert_eq!(record["questions"][0]["changes"], json!({}), "{record}");
    assert!(hook.requests().is_empty(), "nothing was worth telling");

    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
    let (code, changed, stderr) = f.watch(&["--notify", &notify, "--keep", "2"]).await;
    assert_eq!(code, 3, "{changed}\n{stderr}");
    let run = f.run_dir(&changed);
    let name = changed["changed"][0].as_str().expect("a question changed");
    let digest = read_json(&run.join(format!("{name}.digest.json")));
    let facts: Vec<&Value> = digest["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter(|c| c["kind"] == "fact_changed")
        .collect();
    assert_eq!(facts.len(), 1, "{digest}");
    assert_eq!(facts[0]["values_before"], json!(["270 wh/kg"]));
    assert_eq!(facts[0]["values_after"], json!(["290 wh/kg"]));
    let changes_md = std::fs::read_to_string(run.join(format!("{name}.changes.md"))).expect("md");
    assert!(
        changes_md.contains("`270 wh/kg` -> `290 wh/kg`"),
        "{changes_md}"
    );

    // The webhook got the digest once, signed.
    let posts = hook.requests();
    assert_eq!(posts.len(), 1, "one POST");
    let body = &posts[0].raw_body;
    assert_eq!(
        posts[0].header("x-researchflow-signature"),
        Some(signature(body).as_str())
    );
    let sent: Value = serde_json::from_str(body).expect("JSON body");
    assert_eq!(sent["run"], changed["run"]);
    assert_eq!(sent["questions"][0]["question"], QUESTION);
    assert_eq!(sent["questions"][0]["compared_with"], same["run"]);
    let report = sent["questions"][0]["files"]["report"]
        .as_str()
        .expect("report");
    assert!(Path::new(report).is_file(), "{report}");

    // `latest` is the new run, the oldest was pruned, the one compared with kept.
    let latest = std::fs::read_link(f.root.join("w/latest")).expect("latest");
    assert_eq!(latest, Path::new(changed["run"].as_str().expect("run")));
    assert_eq!(changed["pruned"], json!([first["run"]]));
    assert!(!f.run_dir(&first).exists() && f.run_dir(&same).is_dir());
    let index = std::fs::read_to_string(f.root.join("w/index.html")).expect("index");
    assert!(
        index.contains(same["run"].as_str().expect("run")),
        "{index}"
    );
    assert!(index.contains("<b>"), "the change worth telling is marked");
    let written = all_text(&f.root.join("w")) + &changed.to_string() + &stderr;
    assert!(!written.contains(SECRET), "no secret on disk");
    assert!(!written.contains(HOOK_PATH), "nor the hook's path");

    // A run that did not finish is resumed, and what it sent is not sent again.
    let record_path = run.join("watch.json");
    let mut record = read_json(&record_path);
    record["finished"] = Value::Null;
    std::fs::write(&record_path, record.to_string()).expect("unfinish");
    let (code, resumed, _) = f.watch(&["--notify", &notify]).await;
    assert_eq!(resumed["run"], changed["run"], "{resumed}");
    assert_eq!(resumed["resumed"], true);
    assert_eq!(code, 3, "what changed is still what changed");
    assert_eq!(hook.requests().len(), 1, "not sent twice");

    // The run's own events: started, told once, finished; then resumed and finished again.
    let events = read_ndjson(&run.join("watch.events.ndjson"));
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["event"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "watch_started",
            "notification",
            "watch_finished",
            "watch_started",
            "watch_finished"
        ],
        "{events:?}"
    );
    let told = &events[1];
    assert_eq!(
        (&told["channel"], &told["sent"], &told["questions"]),
        (&json!("webhook"), &json!(true), &json!(1))
    );
    assert!(told["target"].as_str().expect("target").contains("/... #"));
    assert_eq!(events[2]["exit_code"], 3);
    assert_eq!(events[2]["changed"], json!([name]));
    assert_eq!(events[3]["resumed"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_that_fails_is_retried_recorded_and_exits_4() {
    let f = Folder::new();
    let hook = receiver(503).await;
    let notify = format!("{}{HOOK_PATH}", hook.url());
    let config = json!({"retry": {"maxRetries": 2, "baseDelayMs": 10, "maxDelayMs": 20}});
    std::fs::write(f.root.join("agent.config.json"), config.to_string()).expect("config");
    f.watch(&[]).await;
    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
    let (code, printed, stderr) = f.watch(&["--notify", &notify]).await;
    assert_eq!(code, 4, "{printed}\n{stderr}");
    assert_eq!(hook.requests().len(), 3, "the first try and two retries");
    assert_eq!(printed["notified"][0]["sent"], false);
    let record = read_json(&f.run_dir(&printed).join("watch.json"));
    assert!(record["finished"].is_string(), "the run is saved: {record}");
    let error = record["notifications"][0]["error"].as_str().expect("error");
    assert!(
        error.contains("503") && !error.contains(HOOK_PATH),
        "{error}"
    );
    let events = read_ndjson(&f.run_dir(&printed).join("watch.events.ndjson"));
    let told = events
        .iter()
        .find(|e| e["event"] == "notification")
        .expect("a notification event");
    assert_eq!(
        (&told["sent"], &told["error"]),
        (&json!(false), &json!(error))
    );
    assert_eq!(events.last().expect("events")["exit_code"], 4);
    assert!(!stderr.contains(HOOK_PATH), "{stderr}");
    let out = f.watch_raw(&["--notify", "ftp://files.example/x"]).await;
    out.code(2).stderr_contains("give an `https://` URL");
}

/// The mock model words its report anew each night: the same facts in other words and
/// another order are no `facts` change (exit 0; with `--notify-on any` the reworded report
/// is one, exit 3), and a changed figure is (exit 3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reworded_report_with_the_same_facts_is_no_change_and_a_new_figure_is() {
    use crate::support::MockLlm;
    use crate::support::scenario::{Setup, stateless_answer};
    use crate::support::{Reply, scenario};

    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("q.txt"), format!("{QUESTION}\n")).expect("questions");
    let tonight = |report: &'static str| {
        llm.set_handler(move |req| match scenario::agent(req) {
            scenario::Agent::Final => Reply::content(report),
            _ => stateless_answer(req, 1, "Cells were compared."),
        });
    };
    let watch = |extra: &[&str]| {
        s.cmd()
            .args(["watch", "q.txt", "--dir", "w", "--json"])
            .args(extra.to_vec())
    };
    tonight(
        "Solid-state cells reach about 270 Wh/kg. Lithium-ion packs cost 139 dollars per kWh in 2023.",
    );
    watch(&[]).run().await.code(0);
    tonight(
        "In 2023, lithium-ion packs cost 139 dollars per kWh. About 270 Wh/kg is what solid-state cells reach.",
    );
    let out = watch(&[]).run().await;
    out.code(0);
    assert_eq!(out.stdout_json()["changed"], json!([]), "{}", out.stdout);
    tonight(
        "About 270 Wh/kg is what solid-state cells reach. In 2023, lithium-ion packs cost 139 dollars per kWh.",
    );
    let out = watch(&["--notify-on", "any"]).run().await;
    out.code(3);
    let record = out.stdout_json();
    let run = s
        .path()
        .join("w")
        .join(record["run"].as_str().expect("run"));
    let record = read_json(&run.join("watch.json"));
    let changes = &record["questions"][0]["changes"];
    assert!(changes["finding_reworded"].as_u64() > Some(0), "{record}");
    assert!(changes.get("fact_changed").is_none(), "{record}");
    tonight(
        "Lithium-ion packs cost 139 dollars per kWh in 2023. Solid-state cells reach about 290 Wh/kg.",
    );
    let out = watch(&["--notify-on", "any"]).run().await;
    out.code(3);
    let printed = out.stdout_json();
    let run = s
        .path()
        .join("w")
        .join(printed["run"].as_str().expect("run"));
    let name = printed["changed"][0].as_str().expect("changed");
    let digest = read_json(&run.join(format!("{name}.digest.json")));
    let kinds: Vec<&str> = digest["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"fact_changed"), "{digest}");
    let fact = digest["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .find(|c| c["kind"] == "fact_changed")
        .expect("fact");
    assert_eq!(fact["values_after"], json!(["290 wh/kg"]), "{digest}");
}

/// The watch folder's index in a real browser: no console error, no request but its own
/// file, one row per question with a cell per kept run (newest first), the change worth
/// telling marked, and every link leading to a file that exists.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watch_index_shows_each_runs_changes_and_links_only_to_files_that_exist() {
    use crate::support::browser::{Browser, file_url};

    let f = Folder::new();
    f.watch(&[]).await;
    f.change_figure("about 270 Wh/kg", "about 290 Wh/kg");
    let (code, changed, _) = f.watch(&[]).await;
    assert_eq!(code, 3, "{changed}");
    let index = f.root.join("w/index.html");
    let mut browser = Browser::launch();
    let mut page = browser.open(&index, false);
    assert_eq!(page.errors(), Vec::<String>::new(), "console errors");
    assert_eq!(page.requests(), [file_url(&index)]);
    let cells = page.eval(
        "Array.from(document.querySelectorAll('tr[data-question] td[data-changes]')).map(c => [c.dataset.changes, c.querySelector('b') !== null])",
    );
    let cells = cells.as_array().expect("cells");
    assert_eq!(cells.len(), 2, "two runs: {cells:?}");
    assert!(
        cells[0][0]
            .as_str()
            .is_some_and(|n| n.parse::<u32>().is_ok_and(|n| n > 0))
    );
    assert_eq!(
        cells[0][1], true,
        "the newest run's change is worth telling"
    );
    assert_eq!(
        cells[1],
        json!(["", false]),
        "the first run compared with none"
    );
    let links = page.eval("Array.from(document.querySelectorAll('a[href]')).map(a => a.href)");
    let links = links.as_array().expect("links");
    assert!(links.len() >= 3, "changes file and two reports: {links:?}");
    for link in links {
        let url = link.as_str().expect("href");
        let path = url.strip_prefix("file://").expect("a file link");
        assert!(Path::new(path).is_file(), "{url}");
    }
}
