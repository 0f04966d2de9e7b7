//! Batches on PostgreSQL: `queue migrate`, `batch FILE --queue`, `worker`, `batch status` and
//! `batch export`, against a real PostgreSQL server the test starts on loopback (one per test
//! binary, a database per test; a server of its own for the test that restarts it) and the
//! mock LLM: several workers at once, a worker killed mid-question, the server restarted
//! mid-batch, a poison question, idempotent submission, and the password kept out of
//! everything.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::postgres::{PASSWORD, Postgres, USER};
use crate::support::scenario::{
    Agent, Setup, agent, read_json, stateless, stateless_answer, task_title,
};
use crate::support::{MockLlm, MockSearch, Recorded, Reply, RunOutput, SearchKind, Terminal};

/// What the mock LLM answers every workflow of a queued batch (see [`stateless_answer`]).
fn answer(req: &Recorded, searches: usize) -> Reply {
    stateless_answer(req, searches, "S")
}

fn questions(dir: &Path, file: &str, lines: &[String]) {
    std::fs::write(dir.join(file), lines.join("\n")).expect("questions");
}

fn numbered(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("Question number {i}?")).collect()
}

/// `queue migrate` of the database at `url`.
async fn migrate(s: &Setup, url: &str) {
    s.cmd()
        .args(["queue", "migrate", "--queue", url])
        .run()
        .await
        .success();
}

/// A new database of the shared server, migrated.
async fn migrated(s: &Setup) -> String {
    let url = Postgres::shared().database();
    migrate(s, &url).await;
    url
}

async fn submit(s: &Setup, url: &str, file: &str, batch: &str) -> Value {
    let out = s
        .cmd()
        .args(["batch", file, "--queue", url, "--batch", batch])
        .run()
        .await;
    out.success();
    out.stdout_json()
}

/// A worker of `batch`; its scratch folder is in the test's folder (TMPDIR), so a worker the
/// test kills leaves nothing in /tmp.
fn worker(s: &Setup, url: &str, batch: &str, more: &[&str]) -> support::Cmd {
    s.cmd()
        .args(["worker", "--queue", url, "--batch", batch])
        .args(more)
        .env("TMPDIR", s.path())
        .timeout(Duration::from_secs(120))
}

/// `q.txt` holding `lines`, submitted as batch `q` to a new migrated database; its URL.
async fn queued(s: &Setup, lines: &[String]) -> String {
    questions(s.path(), "q.txt", lines);
    let url = migrated(s).await;
    submit(s, &url, "q.txt", "q").await;
    url
}

/// `batch export` of `batch` into `dir`.
fn export(s: &Setup, url: &str, batch: &str, dir: &str) -> support::Cmd {
    s.cmd().args([
        "batch",
        "export",
        "--queue",
        url,
        "--batch",
        batch,
        "--out-dir",
        dir,
    ])
}

async fn status(s: &Setup, url: &str, batch: &str) -> Value {
    let out = s
        .cmd()
        .args([
            "batch", "status", "--queue", url, "--batch", batch, "--json",
        ])
        .run()
        .await;
    out.success();
    out.stdout_json()
}

fn counted(status: &Value, what: &str) -> u64 {
    status["counts"][what].as_u64().unwrap_or(u64::MAX)
}

/// The workers' folders in `tmp` (the workers' TMPDIR).
fn worker_folders(tmp: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(tmp)
        .expect("tmp")
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("researchflow-worker-")
        })
        .map(|e| e.path())
        .collect()
}

/// The files of a batch folder, but the locks.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("folder")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".lock"))
        .collect();
    names.sort();
    names
}

fn analyses_of(llm: &MockLlm, title: &str) -> usize {
    llm.chat_requests()
        .iter()
        .filter(|r| agent(r) == Agent::Analysis && task_title(r) == title)
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_complete_thirty_questions_and_export_what_a_local_batch_writes() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), "nightly.txt", &numbered(30));
    let url = migrated(&s).await;
    let submitted = submit(&s, &url, "nightly.txt", "nightly").await;
    assert_eq!(
        submitted,
        json!({"batch": "nightly", "submitted": 30, "already_queued": 0, "already_done": 0})
    );
    let workers: Vec<_> = (0..3)
        .map(|_| worker(&s, &url, "nightly", &["--drain", "--jobs", "4"]).run())
        .collect();
    let mut ran = 0;
    for out in futures_util::future::join_all(workers).await {
        out.success();
        ran += out.stdout_json()["ran"].as_u64().expect("ran");
    }
    assert_eq!(ran, 30, "each question ran once");
    let st = status(&s, &url, "nightly").await;
    assert_eq!(counted(&st, "completed"), 30, "{st}");
    assert_eq!(st["running"], json!([]));

    let exported = export(&s, &url, "nightly", "queued").run().await;
    exported.success();
    assert_eq!(exported.stdout_json()["ended"], 30);
    assert_eq!(exported.stdout_json()["counts"], json!({"completed": 30}));
    s.cmd()
        .args(["batch", "nightly.txt", "--out-dir", "local"])
        .run()
        .await
        .success();
    let (queued, local) = (s.path().join("queued"), s.path().join("local"));
    assert_eq!(names(&queued), names(&local), "the same files");
    let manifest = |dir: &Path| -> Vec<(String, String, bool)> {
        let m = read_json(&dir.join("batch.json"));
        let mut items: Vec<(String, String, bool)> = m["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| {
                let report = std::fs::read_to_string(i["report"].as_str().expect("report"))
                    .expect("report file");
                (
                    i["id"].as_str().expect("id").to_string(),
                    i["status"].as_str().expect("status").to_string(),
                    report.contains("Report written."),
                )
            })
            .collect();
        items.sort();
        items
    };
    assert_eq!(manifest(&queued), manifest(&local));
    assert_eq!(manifest(&queued).len(), 30);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submitting_twice_adds_nothing_and_two_batches_keep_apart() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(5));
    let url = migrated(&s).await;
    assert_eq!(submit(&s, &url, "q.txt", "a").await["submitted"], 5);
    let again = submit(&s, &url, "q.txt", "a").await;
    assert_eq!(
        (
            again["submitted"].as_u64(),
            again["already_queued"].as_u64()
        ),
        (Some(0), Some(5))
    );
    assert_eq!(
        submit(&s, &url, "q.txt", "b").await["submitted"],
        5,
        "another batch"
    );

    worker(&s, &url, "a", &["--drain"]).run().await.success();
    assert_eq!(counted(&status(&s, &url, "a").await, "completed"), 5);
    let b = status(&s, &url, "b").await;
    assert_eq!(
        (counted(&b, "pending"), counted(&b, "completed")),
        (5, 0),
        "{b}"
    );
    let requests = llm.chat_requests().len();
    let done = submit(&s, &url, "q.txt", "a").await;
    assert_eq!(
        (done["submitted"].as_u64(), done["already_done"].as_u64()),
        (Some(0), Some(5))
    );
    worker(&s, &url, "a", &["--drain"]).run().await.success();
    assert_eq!(
        llm.chat_requests().len(),
        requests,
        "nothing of batch `a` runs again"
    );

    // The batch's name defaults to the file's stem.
    let out = s
        .cmd()
        .args(["batch", "q.txt", "--queue", &url])
        .run()
        .await;
    out.success();
    assert_eq!(out.stdout_json()["batch"], "q");
}

/// regression: `batch export --out-dir` into a local batch's folder replaced its `batch.json`
/// and `index.html` silently. An export goes only into a new folder or an export of the same
/// batch; a local batch's folder, another batch's export and a folder with an `index.html` of
/// someone else's are refused (exit 2) and left as they were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_replaces_only_an_export_of_the_same_batch() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(2));
    let url = migrated(&s).await;
    submit(&s, &url, "q.txt", "a").await;
    submit(&s, &url, "q.txt", "b").await;
    worker(&s, &url, "a", &["--drain"]).run().await.success();
    export(&s, &url, "a", "ex").run().await.success();
    export(&s, &url, "a", "ex").run().await.success();
    let manifest = read_json(&s.path().join("ex/batch.json"));
    assert_eq!(manifest["queue_batch"], "a");
    assert_eq!(manifest["items"].as_array().map(Vec::len), Some(2));

    s.cmd()
        .args(["batch", "q.txt", "--out-dir", "local"])
        .run()
        .await
        .success();
    let own = std::fs::create_dir(s.path().join("site"))
        .and_then(|()| std::fs::write(s.path().join("site/index.html"), "<p>mine</p>\n"));
    own.expect("a folder with its own index");
    let files = |dir: &str| -> Vec<(String, Vec<u8>)> {
        names(&s.path().join(dir))
            .into_iter()
            .map(|n| {
                let bytes = std::fs::read(s.path().join(dir).join(&n)).expect("file");
                (n, bytes)
            })
            .collect()
    };
    for (batch, dir, says) in [
        ("a", "local", "a local batch's folder"),
        ("b", "ex", "an export of batch `a`"),
        ("a", "site", "not a page researchflow wrote"),
    ] {
        let before = files(dir);
        export(&s, &url, batch, dir)
            .run()
            .await
            .code(2)
            .stderr_contains(says);
        assert_eq!(files(dir), before, "`{dir}` is left as it was");
    }
}

/// The item of the question `query` in the manifest exported into `dir`.
fn exported_item(dir: &Path, query: &str) -> Value {
    let manifest = read_json(&dir.join("batch.json"));
    manifest["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["query"] == query)
        .unwrap_or_else(|| panic!("no item `{query}` in {manifest:#}"))
        .clone()
}

/// The plan file of the only question exported into `dir`.
fn only_plan(dir: &Path) -> Value {
    let name = names(dir)
        .into_iter()
        .find(|n| n.ends_with(".json") && n != "batch.json" && n.matches('.').count() == 1)
        .expect("a plan file");
    read_json(&dir.join(name))
}

/// Sets `stored` once the only question's checkpoint in the database at `url` has node c
/// `running`.
async fn c_running_in_the_database(url: String, stored: Arc<AtomicBool>) {
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    loop {
        let plan: Option<Option<String>> =
            sqlx::query_scalar("SELECT plan::text FROM researchflow.questions")
                .fetch_optional(&pool)
                .await
                .expect("read the checkpoint");
        let running = plan
            .flatten()
            .and_then(|p| serde_json::from_str::<Value>(&p).ok())
            .is_some_and(|p| {
                p["nodes"].as_array().is_some_and(|nodes| {
                    nodes
                        .iter()
                        .any(|n| n["node_id"] == "c" && n["status"] == "running")
                })
            });
        if running {
            stored.store(true, Ordering::SeqCst);
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_mid_question_is_taken_over_and_no_completed_node_runs_again() {
    let llm = MockLlm::start().await;
    let hang = Arc::new(AtomicBool::new(true));
    let reached = Arc::new(AtomicBool::new(false));
    let (hanging, reaching) = (Arc::clone(&hang), Arc::clone(&reached));
    llm.set_handler(move |req| {
        if agent(req) == Agent::Analysis
            && task_title(req) == "Search 1"
            && hanging.load(Ordering::SeqCst)
        {
            reaching.store(true, Ordering::SeqCst);
            return answer(req, 2).delay(Duration::from_secs(60));
        }
        answer(req, 2)
    });
    let s = Setup::new(&llm, None);
    let url = queued(&s, &["Only question?".to_string()]).await;
    // Killed once node c's start is in the database too (it is checkpointed after the task is
    // under way, RELIABILITY.md): the next worker then counts its second attempt.
    let stored = Arc::new(AtomicBool::new(false));
    let watcher = tokio::spawn(c_running_in_the_database(url.clone(), Arc::clone(&stored)));
    let killed = worker(&s, &url, "q", &["--lease", "2", "--concurrency", "1"])
        .signal_when("KILL", move || {
            reached.load(Ordering::SeqCst) && stored.load(Ordering::SeqCst)
        })
        .run()
        .await;
    watcher.abort();
    assert_eq!(killed.status, -1, "killed: {}", killed.stderr);
    assert_eq!(analyses_of(&llm, "Search 0"), 1);
    let left = worker_folders(s.path());
    assert_eq!(left.len(), 1, "the killed worker's folder stays: {left:?}");
    // As if it died a while ago: a folder younger than a minute may be a worker starting.
    std::fs::File::open(&left[0])
        .and_then(|f| f.set_modified(std::time::SystemTime::now() - Duration::from_secs(120)))
        .expect("age the folder");
    let st = status(&s, &url, "q").await;
    let running = &st["running"][0];
    assert_eq!(running["attempt"], 1, "{st}");
    assert!(
        running["question"]
            .as_str()
            .is_some_and(|q| q.starts_with("only-question"))
            // `host:pid:random`, as docs/src/many-machines.md says (it read `host:pid:random/q`).
            && running["worker"].as_str().is_some_and(|w| {
                let parts: Vec<&str> = w.split(':').collect();
                parts.len() == 3 && parts[1].parse::<u32>().is_ok() && !w.contains('/')
            })
            && running["age"].as_f64().is_some_and(|a| a >= 0.0),
        "{st}"
    );
    hang.store(false, Ordering::SeqCst);

    worker(
        &s,
        &url,
        "q",
        &["--drain", "--lease", "2", "--concurrency", "1"],
    )
    .run()
    .await
    .success();
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 1);
    assert!(
        worker_folders(s.path()).is_empty(),
        "the next worker removed the dead one's folder (and its own when it ended)"
    );
    assert_eq!(
        analyses_of(&llm, "Search 0"),
        1,
        "node b completed before the kill: never again"
    );
    assert_eq!(
        analyses_of(&llm, "Search 1"),
        2,
        "node c was running: once more"
    );
    export(&s, &url, "q", "out").run().await.success();
    let plan = only_plan(&s.path().join("out"));
    let attempts: Vec<(String, u64)> = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .skip(1)
        .map(|n| {
            assert_eq!(n["status"], "completed", "{n}");
            (
                n["node_id"].as_str().unwrap_or("").to_string(),
                n["attempts"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        attempts,
        [
            ("b".to_string(), 1),
            ("c".to_string(), 2),
            ("d".to_string(), 1)
        ]
    );
}

/// A worker killed while a task waits for its second model call, its first and its search
/// answered a moment before: the answers reach the database between checkpoints (the worker's
/// writer stores each line as it is written), and the worker that takes the question over is
/// answered from them instead of paying again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_taken_over_task_is_answered_from_the_calls_the_killed_worker_had_paid_for() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    let hang = Arc::new(AtomicBool::new(true));
    let reached = Arc::new(std::sync::Mutex::new(None::<std::time::Instant>));
    let (hanging, reaching) = (Arc::clone(&hang), Arc::clone(&reached));
    llm.set_handler(move |req| match agent(req) {
        Agent::Queries => Reply::json(&json!({"queries": [format!("about {}", task_title(req))]})),
        Agent::Analysis if task_title(req) == "Search 1" && hanging.load(Ordering::SeqCst) => {
            reaching
                .lock()
                .expect("reached")
                .get_or_insert_with(std::time::Instant::now);
            answer(req, 2).delay(Duration::from_secs(60))
        }
        Agent::Final => Reply::content("S [1]."),
        _ => answer(req, 2),
    });
    // The held call must not time out (and be asked again) before the kill: under load the
    // kill came after the usual 3 s, and the killed worker had asked twice.
    let s = Setup::with_config(
        &llm,
        Some(&search),
        json!({"timeouts": {"llmMs": 30000, "searchMs": 3000}}),
    );
    let url = queued(&s, &["Only question?".to_string()]).await;
    // Killed once the answered call has had time to be stored (its lines wait up to a second
    // for a checkpoint to go with).
    let patience = Duration::from_secs(2);
    let killed = worker(&s, &url, "q", &["--lease", "2", "--concurrency", "1"])
        .signal_when("KILL", move || {
            reached
                .lock()
                .expect("reached")
                .is_some_and(|at| at.elapsed() >= patience)
        })
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed: {}", killed.stderr);
    let asked = |kind: Agent| {
        llm.chat_requests()
            .iter()
            .filter(|r| agent(r) == kind && task_title(r) == "Search 1")
            .count()
    };
    assert_eq!(asked(Agent::Queries), 1, "answered before the kill");
    let searched = || {
        search
            .requests()
            .iter()
            .filter(|r| {
                let q = r.query.replace('+', " ").replace("%20", " ");
                q.contains("about Search 1")
            })
            .count()
    };
    assert_eq!(searched(), 1, "searched before the kill");
    hang.store(false, Ordering::SeqCst);

    worker(
        &s,
        &url,
        "q",
        &["--drain", "--lease", "2", "--concurrency", "1"],
    )
    .run()
    .await
    .success();
    let st = status(&s, &url, "q").await;
    assert_eq!(counted(&st, "completed"), 1, "{st}");
    assert_eq!(
        asked(Agent::Queries),
        1,
        "the call the killed worker had paid for was answered from the database's transcript"
    );
    assert_eq!(
        asked(Agent::Analysis),
        2,
        "the unanswered one was asked again"
    );
    assert_eq!(
        searched(),
        1,
        "the search was answered from the database's transcript"
    );
    export(&s, &url, "q", "out").run().await.success();
    let out = s.path().join("out");
    let transcript = names(&out)
        .into_iter()
        .find(|n| n.ends_with(".transcript.jsonl"))
        .expect("a transcript");
    let replayed: Vec<Value> = std::fs::read_to_string(out.join(transcript))
        .expect("transcript")
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|l| l["replayed"] == true)
        .collect();
    assert_eq!(
        replayed.len(),
        2,
        "the queries call and the search: {replayed:?}"
    );
    assert!(replayed.iter().all(|l| l["node"] == "c"), "{replayed:?}");
    assert_eq!(replayed[1]["kind"], "search", "{replayed:?}");
}

/// A checkpoint that comes while the writer's statement is held up (here by a lock the test
/// holds on the stored lines) waits for it and then goes on: the writer is a task of its own.
/// Polled by the run's own task, the statement could never end while the checkpoint blocked
/// that task to wait for it, and the worker hung for good.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_during_a_held_up_send_waits_for_it_and_the_question_ends() {
    let llm = MockLlm::start().await;
    let reached = Arc::new(AtomicBool::new(false));
    let reaching = Arc::clone(&reached);
    // The task's analysis times out (the tests' model timeout is 3 s) and its retry is
    // answered 2 s later: its end comes about 5 s after the task first asked.
    llm.set_handler(move |req| match agent(req) {
        Agent::Analysis if task_title(req) == "Search 1" => {
            let first = !reaching.swap(true, Ordering::SeqCst);
            answer(req, 2).delay(Duration::from_secs(if first { 10 } else { 2 }))
        }
        _ => answer(req, 2),
    });
    let s = Setup::new(&llm, None);
    let url = queued(&s, &["Only question?".to_string()]).await;
    let running = tokio::spawn(
        worker(&s, &url, "q", &["--drain", "--concurrency", "1"])
            .timeout(Duration::from_secs(60))
            .run(),
    );
    while !reached.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The stored lines locked while the task waits for its answer: the writer's next
    // statement, with what the task appended, waits on them.
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    let mut held = pool.begin().await.expect("begin");
    sqlx::query("LOCK TABLE researchflow.lines IN SHARE MODE")
        .execute(&mut *held)
        .await
        .expect("lock the lines");
    let mut waiting = false;
    for _ in 0..100 {
        let sends: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO researchflow.lines%'",
        )
        .fetch_one(&pool)
        .await
        .expect("activity");
        if sends > 0 {
            waiting = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(waiting, "the writer's statement never waited on the lock");
    // The answer comes and the task's end is checkpointed while the statement is still held
    // up; the lock goes after that.
    tokio::time::sleep(Duration::from_secs(7)).await;
    held.commit().await.expect("release");
    let out = running.await.expect("the worker");
    out.success();
    assert_eq!(out.stdout_json()["ran"], 1, "{}", out.stderr);
    let st = status(&s, &url, "q").await;
    assert_eq!(counted(&st, "completed"), 1, "{st}\n{}", out.stderr);
}

/// The worker's writer stores each line a run appends as a row numbered in the order written,
/// once: a line sent again (a statement retried after its answer was lost) adds nothing, and
/// the question's files load as one file each, with the number of the next line. A question's
/// end stores the files beside the plan whole, but the appended ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_s_lines_are_stored_once_each_in_order_and_load_as_one_file() {
    use researchflow::queue::claim::{Files, load};
    use researchflow::queue::end::{End, Ending, finish};
    use researchflow::queue::writer::Writer;
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let (db, c) = one_question(&migrated(&s).await).await;
    let (writer, _task) = Writer::spawn(db.clone());
    let question = writer.question(c.clone(), &Default::default());
    let events = question.tee("events.ndjson").expect("an appended file");
    assert!(question.tee("report.md").is_none(), "not an appended file");
    for line in ["one\n", "two\n", "three\n"] {
        events(line.as_bytes());
    }
    assert_eq!(question.flush().await, Ok(true));
    // The same lines again from their first number, as a retried statement sends them.
    let again = writer.question(c.clone(), &Default::default());
    let events_again = again.tee("events.ndjson").expect("tee");
    events_again(b"one\n");
    events_again(b"two\n");
    assert_eq!(again.flush().await, Ok(true));
    let loaded = load(&db, "b", "q").await.expect("load");
    let events_file = |files: &Files| {
        files
            .beside
            .iter()
            .find(|(s, _)| s == "events.ndjson")
            .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
    };
    assert_eq!(events_file(&loaded).as_deref(), Some("one\ntwo\nthree\n"));
    assert_eq!(loaded.next.get("events.ndjson"), Some(&3));
    // A resumed run goes on from there.
    let resumed = writer.question(c.clone(), &loaded.next);
    resumed.tee("events.ndjson").expect("tee")(b"four\n");
    assert_eq!(resumed.flush().await, Ok(true));
    let loaded = load(&db, "b", "q").await.expect("load");
    assert_eq!(
        events_file(&loaded).as_deref(),
        Some("one\ntwo\nthree\nfour\n")
    );
    // The end stores the report, never the event log whole beside its lines.
    let ending = Ending {
        claimed: c,
        end: End::Failed("gave up".into()),
        files: Files {
            plan: Some("{}\n".into()),
            beside: vec![
                ("report.md".into(), b"# Q\n".to_vec()),
                ("events.ndjson".into(), b"stale\n".to_vec()),
            ],
            next: Default::default(),
        },
    };
    assert_eq!(finish(&db, &[ending], 3).await.expect("end"), [true]);
    let whole: Vec<String> = sqlx::query_scalar("SELECT suffix FROM researchflow.files")
        .fetch_all(&db.pool)
        .await
        .expect("files");
    assert_eq!(whole, ["report.md"]);
    let loaded = load(&db, "b", "q").await.expect("load");
    assert_eq!(
        events_file(&loaded).as_deref(),
        Some("one\ntwo\nthree\nfour\n")
    );
}

/// A checkpoint is stored with every line sent before it; once another worker took the
/// question, nothing more is stored and the run learns it is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_holds_the_lines_before_it_and_a_lost_claim_stores_nothing() {
    use researchflow::workflow::Mirror;
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let url = migrated(&s).await;
    let (_, c) = one_question(&url).await;
    let db = connect(&url, 2).await;
    let (writer, _task) = researchflow::queue::writer::Writer::spawn(db.clone());
    let lost = Arc::new(AtomicBool::new(false));
    let mut mirror = researchflow::queue::writer::DbMirror::new(
        writer.question(c, &Default::default()),
        Arc::clone(&lost),
    );
    let (events, transcript) = (
        mirror.tee("events.ndjson").expect("events"),
        mirror.tee("transcript.jsonl").expect("transcript"),
    );
    let plan =
        researchflow::plan::PlanFile::new("Q?", "wf-1".into(), "2026-12-03T00:00:00Z".into());
    let stored = |suffix: &'static str| {
        let db = db.clone();
        async move {
            let lines: Vec<Vec<u8>> = sqlx::query_scalar(
                "SELECT line FROM researchflow.lines WHERE suffix = $1 ORDER BY seq",
            )
            .bind(suffix)
            .fetch_all(&db.pool)
            .await
            .expect("read");
            String::from_utf8_lossy(&lines.concat()).into_owned()
        }
    };
    events(b"one\n");
    transcript(b"call\n");
    events(b"two\n");
    // The ledger calls from inside the run, on a worker thread of the runtime.
    let keep = |mirror: &mut researchflow::queue::writer::DbMirror| {
        tokio::task::block_in_place(|| mirror.keep(&plan))
    };
    keep(&mut mirror).expect("checkpoint");
    let held: Option<String> = sqlx::query_scalar("SELECT plan FROM researchflow.questions")
        .fetch_one(&db.pool)
        .await
        .expect("plan");
    assert!(
        held.is_some_and(|p| p.contains("\"wf-1\"")),
        "the plan is stored"
    );
    assert_eq!(
        (
            stored("events.ndjson").await,
            stored("transcript.jsonl").await
        ),
        ("one\ntwo\n".into(), "call\n".into())
    );
    // Another worker takes the question.
    sqlx::query("UPDATE researchflow.questions SET claim = claim + 1")
        .execute(&db.pool)
        .await
        .expect("take over");
    events(b"three\n");
    let refused = keep(&mut mirror).expect_err("the claim is lost");
    assert!(refused.contains("taken over"), "{refused}");
    assert!(lost.load(Ordering::SeqCst));
    assert_eq!(
        stored("events.ndjson").await,
        "one\ntwo\n",
        "nothing written"
    );
}

/// A database migrated by the version before lines were rows keeps what it stored of each
/// question's event log and transcript: each becomes its file's first line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_database_keeps_its_event_logs_when_migrated() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let url = migrated(&s).await;
    let (db, _) = one_question(&url).await;
    sqlx::raw_sql(
        "DROP TABLE researchflow.lines;
         UPDATE researchflow.schema_version SET version = 2;
         INSERT INTO researchflow.files (batch, question, suffix, content) VALUES
             ('b', 'q', 'events.ndjson', 'one\ntwo\n'), ('b', 'q', 'report.md', '# Q\n')",
    )
    .execute(&db.pool)
    .await
    .expect("an older database");
    migrate(&s, &url).await;
    let files = researchflow::queue::claim::load(&db, "b", "q")
        .await
        .expect("load");
    let mut beside = files.beside.clone();
    beside.sort();
    assert_eq!(
        beside,
        [
            ("events.ndjson".to_string(), b"one\ntwo\n".to_vec()),
            ("report.md".to_string(), b"# Q\n".to_vec())
        ]
    );
    assert_eq!(files.next.get("events.ndjson"), Some(&1));
}

/// A worker that runs for days kept every question it ran in its folder until it ended (and
/// then spent its last moment removing them), with an HTML view nothing reads: once a
/// question's end is stored, its files leave the worker's folder (the queue holds them), and a
/// worker writes no view (`batch export` does).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_worker_keeps_no_files_of_the_questions_it_ended() {
    let llm = MockLlm::start().await;
    let answered = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counting = Arc::clone(&answered);
    llm.set_handler(move |req| {
        counting.fetch_add(1, Ordering::SeqCst);
        answer(req, 1)
    });
    let s = Setup::new(&llm, None);
    let url = queued(&s, &numbered(6)).await;
    let tmp = s.path().to_path_buf();
    let seen = Arc::new(AtomicBool::new(false));
    let seeing = Arc::clone(&seen);
    // Signalled once every call was made and the folder holds nothing but its lock and the
    // batch's empty folder; a worker that kept a file would run until the timeout.
    let out = worker(&s, &url, "q", &["--jobs", "3"])
        .signal_when("TERM", move || {
            let folders = worker_folders(&tmp);
            let left: Vec<String> = folders
                .iter()
                .flat_map(|f| walk(f))
                .filter(|n| !n.ends_with(".lock"))
                .collect();
            let done =
                answered.load(Ordering::SeqCst) >= 24 && folders.len() == 1 && left.is_empty();
            seeing.store(done, Ordering::SeqCst);
            done
        })
        .timeout(Duration::from_secs(60))
        .run()
        .await;
    out.code(130);
    assert!(seen.load(Ordering::SeqCst));
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 6);
}

/// Ends that come together are stored in one transaction, and one whose question another
/// worker took meanwhile writes nothing while the others are stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ends_stored_together_skip_only_the_one_whose_claim_is_lost() {
    use researchflow::queue::end::{End, Ending, finish};
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let url = migrated(&s).await;
    let (db, c) = one_question(&url).await;
    sqlx::query(
        "INSERT INTO researchflow.questions (batch, id, name, query, seq, job_id, claim)
         VALUES ('b', 'r', 'r', 'R?', 2, 'k', 3)",
    )
    .execute(&db.pool)
    .await
    .expect("second question");
    // The second worker believes it holds claim 2 of `r`: another took it since (claim 3).
    let r = researchflow::queue::claim::Claimed {
        id: "r".into(),
        name: "r".into(),
        query: "R?".into(),
        claim: 2,
        job: ulid::Ulid::generate().into(),
        ..c.clone()
    };
    let ending = |claimed: researchflow::queue::claim::Claimed| Ending {
        claimed,
        end: End::Failed("gave up".into()),
        files: researchflow::queue::claim::Files {
            plan: Some("{}\n".into()),
            beside: vec![("report.md".into(), b"# R\n".to_vec())],
            next: Default::default(),
        },
    };
    let held = finish(&db, &[ending(c), ending(r)], 3)
        .await
        .expect("stored");
    assert_eq!(held, [true, false]);
    let rows: Vec<(String, String, Option<String>)> =
        sqlx::query_as("SELECT id, status, last_error FROM researchflow.questions ORDER BY id")
            .fetch_all(&db.pool)
            .await
            .expect("rows");
    assert_eq!(
        rows[0],
        ("q".into(), "pending".into(), Some("gave up".into()))
    );
    assert_eq!(rows[1].2, None, "the lost one is untouched: {rows:?}");
    let files: Vec<String> = sqlx::query_scalar("SELECT question FROM researchflow.files")
        .fetch_all(&db.pool)
        .await
        .expect("files");
    assert_eq!(files, ["q"]);
}

/// The files under `dir`, by name, folders walked.
fn walk(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .flat_map(|e| {
            if e.path().is_dir() {
                walk(&e.path())
            } else {
                vec![e.file_name().to_string_lossy().into_owned()]
            }
        })
        .collect()
}

/// The queue's database at `url`, as researchflow connects to it (at most `connections`).
async fn connect(url: &str, connections: u32) -> researchflow::queue::Db {
    let parsed = researchflow::queue::QueueUrl::parse(url).expect("url");
    researchflow::queue::Db::connect(parsed, connections)
        .await
        .expect("connect")
}

/// A migrated database holding one question, `q` of batch `b`, and a worker's claim on it.
async fn one_question(url: &str) -> (researchflow::queue::Db, researchflow::queue::claim::Claimed) {
    let db = connect(url, 2).await;
    for sql in [
        "INSERT INTO researchflow.batches (name) VALUES ('b')",
        "INSERT INTO researchflow.questions (batch, id, name, query, seq, job_id) VALUES ('b', 'q', 'q', 'Q?', 1, 'j')",
    ] {
        sqlx::query(sql).execute(&db.pool).await.expect(sql);
    }
    let c = researchflow::queue::claim::Claimed {
        batch: "b".into(),
        id: "q".into(),
        name: "q".into(),
        query: "Q?".into(),
        claim: 0,
        attempt: 1,
        job: ulid::Ulid::generate().into(),
        worker: "w".into(),
        stored: false,
    };
    (db, c)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_crashed_and_restarted_mid_batch_and_the_batch_completes() {
    let pg = Postgres::start();
    let llm = MockLlm::start().await;
    llm.set_handler(|req| answer(req, 1).delay(Duration::from_millis(100)));
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(12));
    let url = pg.database();
    migrate(&s, &url).await;
    submit(&s, &url, "q.txt", "q").await;
    // A lease shorter than the outage: no worker may take the others' questions for it.
    let workers: Vec<_> = (0..2)
        .map(|_| worker(&s, &url, "q", &["--drain", "--jobs", "3", "--lease", "1"]).run())
        .collect();
    let workers = tokio::spawn(futures_util::future::join_all(workers));
    while llm.chat_requests().len() < 12 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = tokio::task::block_in_place(|| {
        // A crash, not a clean stop: what the workers were storing then is not stored, and
        // must be stored again once the server is back.
        pg.crash();
        let before = llm.chat_requests().len();
        std::thread::sleep(Duration::from_secs(3));
        pg.up();
        before
    });
    assert!(
        before < 48,
        "the restart comes mid-batch: 12 questions of 4 calls"
    );
    for out in workers.await.expect("workers") {
        out.success();
    }
    let st = status(&s, &url, "q").await;
    assert_eq!(counted(&st, "completed"), 12, "{st}");
    assert_eq!(st["running"], json!([]));
    assert_eq!(llm.chat_requests().len(), 48, "no call made twice");
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    let attempts: i32 = sqlx::query_scalar("SELECT max(attempt) FROM researchflow.questions")
        .fetch_one(&pool)
        .await
        .expect("attempts");
    assert_eq!(attempts, 1, "no question was taken from its worker");
    // Each question's stored event log and transcript are whole: no line was lost to the
    // crash.
    export(&s, &url, "q", "ex").run().await.success();
    let (mut logs, mut transcripts) = (0, 0);
    for entry in std::fs::read_dir(s.path().join("ex")).expect("export") {
        let path = entry.expect("entry").path();
        let name = path.to_string_lossy().into_owned();
        let lines = || crate::support::scenario::read_ndjson(&path);
        if name.ends_with(".events.ndjson") {
            let events = lines();
            assert_eq!(events[0]["event"], "run_started", "{name}");
            assert_eq!(events[events.len() - 1]["event"], "run_finished", "{name}");
            logs += 1;
        } else if name.ends_with(".transcript.jsonl") {
            let calls = lines().iter().filter(|l| l["kind"] == "llm").count();
            assert_eq!(calls, 4, "{name}");
            transcripts += 1;
        }
    }
    assert_eq!((logs, transcripts), (12, 12));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_poison_question_ends_failed_after_its_attempts_while_the_rest_complete() {
    let llm = MockLlm::start().await;
    let poisoned = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&poisoned);
    llm.set_handler(move |req| {
        if agent(req) == Agent::Planner && req.user_prompt().unwrap_or_default().contains("Poison")
        {
            // Its worker never comes back from it: killed, as by the OOM killer.
            counter.fetch_add(1, Ordering::SeqCst);
            return answer(req, 1).delay(Duration::from_secs(60));
        }
        answer(req, 1)
    });
    let s = Setup::new(&llm, None);
    let mut lines = numbered(5);
    lines.insert(2, "Poison question?".into());
    let url = queued(&s, &lines).await;
    // A lease of 2 s, not 1: on a busy machine the beats of a 1 s lease came late enough that
    // healthy questions were taken from their live workers and spent their attempts.
    let flags = ["--lease", "2", "--max-attempts", "2"];
    for attempt in 1..=2 {
        let watched = Arc::clone(&poisoned);
        let killed = worker(&s, &url, "q", &[&flags[..], &["--jobs", "1"]].concat())
            .signal_when("KILL", move || watched.load(Ordering::SeqCst) >= attempt)
            .run()
            .await;
        assert_eq!(killed.status, -1, "{}", killed.stderr);
    }
    let drained = worker(
        &s,
        &url,
        "q",
        &[&flags[..], &["--drain", "--jobs", "2"]].concat(),
    )
    .run()
    .await;
    drained.success();
    let st = status(&s, &url, "q").await;
    assert_eq!(
        (counted(&st, "completed"), counted(&st, "failed")),
        (5, 1),
        "{st}\n{}",
        drained.stderr
    );
    assert_eq!(
        poisoned.load(Ordering::SeqCst),
        2,
        "tried twice, never a third time"
    );
    export(&s, &url, "q", "out").run().await.success();
    let poison = exported_item(&s.path().join("out"), "Poison question?");
    assert_eq!(poison["status"], "failed");
    assert!(
        poison["reason"]
            .as_str()
            .unwrap_or("")
            .contains("lost 2 time(s)"),
        "{poison}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_stops_the_worker_with_130_and_its_question_goes_back_to_the_queue() {
    let llm = MockLlm::start().await;
    let reached = Arc::new(AtomicBool::new(false));
    let reaching = Arc::clone(&reached);
    llm.set_handler(move |req| {
        if agent(req) == Agent::Analysis && !reaching.swap(true, Ordering::SeqCst) {
            return answer(req, 1).delay(Duration::from_secs(30));
        }
        answer(req, 1)
    });
    let s = Setup::new(&llm, None);
    let url = queued(&s, &numbered(2)).await;
    let watched = Arc::clone(&reached);
    let out = worker(&s, &url, "q", &["--jobs", "1"])
        .signal_when("TERM", move || watched.load(Ordering::SeqCst))
        .run()
        .await;
    out.code(130);
    let st = status(&s, &url, "q").await;
    assert_eq!(
        (counted(&st, "pending"), counted(&st, "running")),
        (2, 0),
        "{st}"
    );
    worker(&s, &url, "q", &["--drain"]).run().await.success();
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 2);
}

/// A batch name of only spaces was accepted, and `worker --batch nosuch --drain` exited 0 with
/// `ran: 0`, as if the batch had been done: both are refused with exit 2, naming the batch;
/// without `--drain` the worker waits for it, saying so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blank_batch_name_and_draining_a_batch_the_queue_lacks_exit_2() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(1));
    let url = migrated(&s).await;
    for blank in ["   ", " padded "] {
        let out = s
            .cmd()
            .args(["batch", "q.txt", "--queue", &url, "--batch", blank])
            .run()
            .await;
        out.code(2).stderr_contains("white space");
        let out = worker(&s, &url, blank, &["--drain"]).run().await;
        out.code(2).stderr_contains("white space");
    }
    let out = worker(&s, &url, "nosuch", &["--drain"]).run().await;
    out.code(2)
        .stderr_contains("holds no batch `nosuch`")
        .stderr_contains("--batch nosuch");
    assert!(out.stdout.trim().is_empty(), "{}", out.stdout);
    // Without `--drain` it waits for the batch; stopped a while later, it has said so.
    let started = std::time::Instant::now();
    let out = worker(&s, &url, "later", &[])
        .signal_when("TERM", move || started.elapsed() > Duration::from_secs(5))
        .run()
        .await;
    out.code(130).stderr_contains("no batch `later` yet");
}

/// Issue 28 item 9: a worker on a terminal drew no display and logged every line of every
/// question's run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_on_a_terminal_shows_one_display_few_lines_and_a_summary() {
    let llm = MockLlm::start().await;
    stateless(&llm, 2, "S");
    let s = Setup::new(&llm, None);
    let url = queued(&s, &numbered(3)).await;
    let out = worker(&s, &url, "q", &["--drain", "--jobs", "2"])
        .on_terminal(Terminal::Both)
        .run()
        .await;
    out.success();
    let screen = &out.terminal;
    assert!(screen.contains("questions done · "), "{screen}");
    assert!(screen.contains(" tokens · "), "{screen}");
    // The worker's start, and one line as each question ends: no run's own lines.
    let info: Vec<&str> = screen.lines().filter(|l| l.contains(" INFO ")).collect();
    assert!(
        info.len() <= 1 + 3,
        "{} info lines:\n{}",
        info.len(),
        info.join("\n")
    );
    assert_eq!(
        info.iter()
            .filter(|l| l.trim_end().ends_with(": completed"))
            .count(),
        3,
        "{screen}"
    );
    assert!(
        screen.contains("ended: ran 3 question(s) to an end"),
        "no summary:\n{screen}"
    );
    assert!(!screen.contains("\"ran\""), "JSON on a terminal:\n{screen}");
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 3);
}

/// Every line of stderr that says `error:`; there must be exactly one, naming `what`.
fn one_error_line(out: &RunOutput, what: &str) {
    let errors = out.error_lines();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(errors[0].contains(what), "{}", errors[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_password_is_in_no_output_file_or_row_and_bad_urls_exit_2_naming_the_fix() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(2));
    let pg = Postgres::shared();
    let url = pg.database();
    let db = url.rsplit('/').next().expect("db").to_string();
    let mut outputs = Vec::new();
    let no_schema = s
        .cmd()
        .args(["batch", "q.txt", "--queue", &url])
        .run()
        .await;
    no_schema.code(2);
    one_error_line(&no_schema, "researchflow queue migrate --queue");
    outputs.push(no_schema);
    for args in [
        vec!["-v", "queue", "migrate", "--queue", &url],
        vec!["-v", "batch", "q.txt", "--queue", &url],
        vec!["-v", "worker", "--queue", &url, "--drain"],
        vec!["-v", "batch", "status", "--queue", &url, "--batch", "q"],
        vec!["batch", "status", "--queue", &url, "--batch", "q", "--json"],
        vec![
            "batch",
            "export",
            "--queue",
            &url,
            "--batch",
            "q",
            "--out-dir",
            "out",
        ],
        vec!["worker", "--help"],
    ] {
        let out = s
            .cmd()
            .args(&args)
            .env("RESEARCHFLOW_QUEUE", &url)
            .run()
            .await;
        out.success();
        outputs.push(out);
    }
    let wrong_password = url.replace(PASSWORD, "not-the-password");
    let closed_port = format!("postgres://rf:{PASSWORD}@127.0.0.1:1/x");
    let missing_db = url.replace(&db, "no_such_database");
    let wrong_scheme = url.replace("postgres://", "mysql://");
    for (bad, what) in [
        (&wrong_password, "fix the user or the password"),
        (
            &closed_port,
            "cannot reach the PostgreSQL server at `127.0.0.1:1`",
        ),
        (
            &missing_db,
            "the database `no_such_database` does not exist",
        ),
        (&wrong_scheme, "the scheme `mysql` is not PostgreSQL's"),
    ] {
        let out = s
            .cmd()
            .args(["batch", "status", "--queue", bad, "--batch", "q"])
            .run()
            .await;
        out.code(2);
        one_error_line(&out, what);
        outputs.push(out);
    }
    for out in &outputs {
        assert!(
            !out.stdout.contains(PASSWORD) && !out.stderr.contains(PASSWORD),
            "{out:?}"
        );
    }
    for name in names(&s.path().join("out")) {
        let text = std::fs::read(s.path().join("out").join(&name)).expect("read");
        assert!(!String::from_utf8_lossy(&text).contains(PASSWORD), "{name}");
    }
    let dump = tokio::task::block_in_place(|| pg.dump(&db));
    assert!(
        dump.contains("Question number 1?"),
        "the dump holds the batch"
    );
    assert!(!dump.contains(PASSWORD), "no stored row holds the password");
}

/// [`PASSWORD`] percent-encoded: a query value may be written either way.
const ENCODED_PASSWORD: &str = "pg%2DSECRET%2D4242";
/// A client key's password (libpq's `sslpassword`): never shown either.
const SSL_PASSWORD: &str = "ssl-SECRET-77";

/// A password given as a query parameter (`postgres:///db?password=...&host=...`), as libpq
/// accepts it, and `sslpassword`: the password is used (the server asks for it, and a wrong
/// one fails), and neither is in any output of `queue migrate`, `batch --queue`, `worker` and
/// `batch status`, from `--queue` or `RESEARCHFLOW_QUEUE`. Before, the URL was shown whole in
/// their INFO lines and on stdout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_password_in_the_url_query_is_used_and_never_shown() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(1));
    let pg = Postgres::shared();
    let with_password = pg.database();
    let db = with_password.rsplit('/').next().expect("db").to_string();
    let query = |password: &str| {
        format!(
            "postgres:///{db}?user={USER}&password={password}&host=127.0.0.1&port={}&sslmode=disable&sslpassword={SSL_PASSWORD}",
            pg.port
        )
    };
    let (url, encoded) = (query(PASSWORD), query(ENCODED_PASSWORD));
    let mut outputs = Vec::new();
    let from_env = s
        .cmd()
        .args(["queue", "migrate"])
        .env("RESEARCHFLOW_QUEUE", &url)
        .run()
        .await;
    from_env.success().stderr_contains("password=***");
    assert!(
        from_env.stdout_json()["queue"]
            .as_str()
            .is_some_and(|q| q.contains("password=***"))
    );
    outputs.push(from_env);
    for (args, env) in [
        (vec!["queue", "migrate", "--queue", &encoded], false),
        (vec!["batch", "q.txt", "--queue", &encoded], false),
        (vec!["batch", "q.txt"], true),
        (vec!["-v", "worker", "--queue", &url, "--drain"], false),
        (vec!["batch", "status", "--batch", "q"], true),
        (
            vec![
                "batch", "status", "--queue", &encoded, "--batch", "q", "--json",
            ],
            false,
        ),
    ] {
        let mut cmd = s.cmd().args(&args);
        if env {
            cmd = cmd.env("RESEARCHFLOW_QUEUE", &encoded);
        }
        let out = cmd.run().await;
        out.success();
        outputs.push(out);
    }
    let st = status(&s, &url, "q").await;
    assert_eq!(counted(&st, "completed"), 1, "{st}");
    let wrong = s
        .cmd()
        .args([
            "batch",
            "status",
            "--batch",
            "q",
            "--queue",
            &query("not-the-password"),
        ])
        .run()
        .await;
    wrong.code(2);
    one_error_line(&wrong, "fix the user or the password");
    outputs.push(wrong);
    for out in &outputs {
        for secret in [PASSWORD, ENCODED_PASSWORD, SSL_PASSWORD, "not-the-password"] {
            assert!(
                !out.stdout.contains(secret) && !out.stderr.contains(secret),
                "{secret}: {out:?}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_schema_is_refused_naming_the_command_that_upgrades_it() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    questions(s.path(), "q.txt", &numbered(1));
    let url = migrated(&s).await;
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    // What a database migrated by the version before the shared rate budget went holds.
    sqlx::raw_sql("UPDATE researchflow.schema_version SET version = 3")
        .execute(&pool)
        .await
        .expect("downgrade");
    for args in [
        vec!["batch", "q.txt", "--queue", &url],
        vec!["worker", "--queue", &url, "--drain"],
    ] {
        let out = s.cmd().args(&args).run().await;
        out.code(2);
        one_error_line(&out, "is version 3, older than this researchflow's 4");
        assert!(
            out.stderr
                .contains("run `researchflow queue migrate --queue postgres://rf@127.0.0.1:"),
            "{}",
            out.stderr
        );
    }
    migrate(&s, &url).await;
    s.cmd()
        .args(["batch", "q.txt", "--queue", &url])
        .run()
        .await
        .success();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_workers_share_one_rate_budget_and_no_task_fails() {
    let llm = MockLlm::start().await;
    llm.admit_per_second(10);
    stateless(&llm, 2, "S");
    // One retry only: the 429s a worker's gate waits out do not count against it.
    let s = Setup::with_config(&llm, None, support::one_retry(json!({})));
    let url = queued(&s, &numbered(9)).await;
    let workers: Vec<_> = (0..3)
        .map(|_| worker(&s, &url, "q", &["--drain", "--jobs", "3"]).run())
        .collect();
    let mut errs = Vec::new();
    for out in futures_util::future::join_all(workers).await {
        errs.push(out.success().stderr.clone());
    }
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 9);
    export(&s, &url, "q", "out").run().await.success();
    let out = s.path().join("out");
    let mut waited = 0;
    for name in names(&out).iter().filter(|n| n.ends_with(".events.ndjson")) {
        let events = support::scenario::read_ndjson(&out.join(name));
        assert!(
            support::scenario::events_of(&events, "task_failed").is_empty(),
            "{name}"
        );
        waited += support::scenario::events_of(&events, "rate_limited").len();
    }
    let (requests, refused) = (llm.chat_requests().len(), llm.rate_refused());
    eprintln!(
        "3 workers, 10 requests a second: {requests} requests, {refused} refused, {waited} waits"
    );
    assert_eq!(requests - refused, 45, "9 questions of 5 calls each");
    // Each worker's first burst meets a second the others' bursts took: refused, then paced.
    assert!(
        refused * 5 <= requests * 2,
        "{refused} of {requests} refused"
    );
    for err in &errs {
        assert!(
            !err.contains("cannot be read") && !err.contains("did not answer"),
            "a call went without the shared budget: {err}"
        );
    }
}

/// The rate a worker measures after a 429 goes to the other workers over the database's
/// notifications, and what they measured reaches its gates: the test listens as a worker
/// would, then tells the worker a rate as another worker would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_one_worker_measures_reaches_the_others() {
    let llm = MockLlm::start().await;
    llm.admit_per_second(3);
    stateless(&llm, 2, "S");
    let s = Setup::with_config(&llm, None, support::one_retry(json!({})));
    let url = queued(&s, &numbered(6)).await;
    let mut listener = sqlx::postgres::PgListener::connect(&url)
        .await
        .expect("listen");
    listener.listen("researchflow_rates").await.expect("listen");
    let running = tokio::spawn(worker(&s, &url, "q", &["-v", "--drain", "--jobs", "6"]).run());
    let told = tokio::time::timeout(Duration::from_secs(60), listener.recv())
        .await
        .expect("a rate told within a minute")
        .expect("a notification");
    let told: Value = serde_json::from_str(told.payload()).expect("JSON");
    let key = told["key"].as_str().expect("the endpoint's key");
    assert!(key.starts_with(&llm.base_url()), "{told}");
    assert!(told["estimate"].as_f64().is_some_and(|e| e > 0.0), "{told}");
    let heard = json!({"worker": "elsewhere/1", "key": key, "estimate": 6000.0});
    sqlx::query("SELECT pg_notify('researchflow_rates', $1)")
        .bind(heard.to_string())
        .execute(&mut listener)
        .await
        .expect("notify");
    let out = running.await.expect("the worker");
    out.success();
    assert!(
        out.stderr
            .contains("another worker measured 6000.0 requests a minute"),
        "{}",
        out.stderr
    );
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 6);
}

/// Four workers of 3 jobs each against a server admitting `r` requests a second (`limit`
/// sets how it says so), with `limits` configured: every question completes; (requests,
/// refused).
async fn four_workers_against(
    r: u32,
    limit: fn(&MockLlm, u32),
    limits: Value,
) -> (usize, usize, Duration) {
    let llm = MockLlm::start().await;
    limit(&llm, r);
    stateless(&llm, 2, "S");
    let s = Setup::with_config(&llm, None, support::one_retry(limits.clone()));
    let url = queued(&s, &numbered(16)).await;
    let started = std::time::Instant::now();
    let workers: Vec<_> = (0..4)
        .map(|_| worker(&s, &url, "q", &["--drain", "--jobs", "3"]).run())
        .collect();
    for out in futures_util::future::join_all(workers).await {
        out.success();
    }
    let took = started.elapsed();
    assert_eq!(counted(&status(&s, &url, "q").await, "completed"), 16);
    let (requests, refused) = (llm.chat_requests().len(), llm.rate_refused());
    eprintln!(
        "4 workers, {r} a second, limits {limits}: {requests} requests, {refused} refused, {took:?}"
    );
    assert_eq!(requests - refused, 16 * 5, "16 questions of 5 calls each");
    (requests, refused, took)
}

/// `requestsPerMinute` is the whole queue's: four workers each take a quarter of it (they
/// count the live workers), so together they send no more than it (4 a second, where the
/// server takes 5) and are seldom refused; each taking the whole would send 16 a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_workers_divide_the_configured_budget_among_them() {
    let (requests, refused, took) = four_workers_against(
        5,
        MockLlm::admit_per_second,
        json!({"requestsPerMinute": 240}),
    )
    .await;
    let per_second = requests as f64 / took.as_secs_f64();
    assert!(per_second <= 4.4, "{per_second:.1} requests a second");
    assert!(refused * 10 <= requests, "{refused} of {requests} refused");
}

/// Every worker reads the budget the server announces for the whole account.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn four_workers_follow_the_budget_the_server_announces() {
    let (requests, refused, _) =
        four_workers_against(10, MockLlm::announce_per_second, json!({})).await;
    // Each taking the whole budget, some 17 of 97 are refused here.
    assert!(refused * 20 <= requests, "{refused} of {requests} refused");
}

/// The live workers are those heard from within the lease, the one asking among them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_workers_are_counted_from_their_heartbeats_and_questions() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let url = queued(&s, &numbered(5)).await;
    let db = connect(&url, 2).await;
    let live = || researchflow::queue::workers::live(&db, "me:1:abc", Duration::from_secs(30));
    assert_eq!(live().await.expect("count"), 1, "alone");
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    sqlx::raw_sql(
        "INSERT INTO apalis.workers (id, worker_type, storage_name, last_seen) VALUES
         ('a:1:x/q', 'q', 's', now()), ('a:1:x/b2', 'q', 's', now()),
         ('b:2:y/q', 'q', 's', now() - interval '5 seconds'),
         ('idle:4:w/q', 'q', 's', now()),
         ('me:1:abc/q', 'q', 's', now()),
         ('gone:3:z/q', 'q', 's', now() - interval '1 minute');
         UPDATE researchflow.questions SET status = 'running', worker = w
         FROM (VALUES ('Question number 1?', 'a:1:x/q'), ('Question number 2?', 'a:1:x/q'),
                      ('Question number 3?', 'b:2:y/q'), ('Question number 4?', 'gone:3:z/q'))
              AS v (query, w)
         WHERE researchflow.questions.query = v.query",
    )
    .execute(&pool)
    .await
    .expect("workers");
    assert_eq!(
        live().await.expect("count"),
        3,
        "a, b and me; not idle (no question), not gone (silent)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_whose_run_keeps_failing_ends_failed_with_its_last_error() {
    let llm = MockLlm::start().await;
    stateless(&llm, 1, "S");
    let s = Setup::new(&llm, None);
    let url = queued(&s, &numbered(3)).await;
    // Its checkpoint is not a plan (a bug, a hand edit): every attempt fails at once.
    let pool = sqlx::PgPool::connect(&url).await.expect("connect");
    sqlx::query(
        "UPDATE researchflow.questions SET plan = '{\"nodes\": 7}' WHERE query = 'Question number 1?'",
    )
    .execute(&pool)
    .await
    .expect("break its plan");
    let out = worker(&s, &url, "q", &["--drain", "--max-attempts", "2"])
        .run()
        .await;
    out.success();
    assert_eq!(
        out.stderr.matches("the attempt failed").count(),
        2,
        "{}",
        out.stderr
    );
    let st = status(&s, &url, "q").await;
    assert_eq!(
        (counted(&st, "completed"), counted(&st, "failed")),
        (2, 1),
        "{st}"
    );
    export(&s, &url, "q", "out").run().await.success();
    let broken = exported_item(&s.path().join("out"), "Question number 1?");
    assert_eq!(broken["status"], "failed");
    assert!(
        broken["reason"].as_str().unwrap_or("").contains("nodes"),
        "its last error: {broken}"
    );
}

/// A TCP relay to a PostgreSQL server whose link can be cut and restored: while cut, nothing
/// passes either way and nothing is closed, as when a network cable is pulled.
struct Relay {
    port: u16,
    cut: tokio::sync::watch::Sender<bool>,
}

impl Relay {
    async fn start(target: u16) -> Relay {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let (cut, _) = tokio::sync::watch::channel(false);
        let links = cut.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let cut = links.subscribe();
                tokio::spawn(async move {
                    let Ok(server) = tokio::net::TcpStream::connect(("127.0.0.1", target)).await
                    else {
                        return;
                    };
                    let (client_read, client_write) = client.into_split();
                    let (server_read, server_write) = server.into_split();
                    tokio::join!(
                        pipe(client_read, server_write, cut.clone()),
                        pipe(server_read, client_write, cut)
                    );
                });
            }
        });
        Relay { port, cut }
    }

    fn set_cut(&self, cut: bool) {
        self.cut.send_replace(cut);
    }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    mut cut: tokio::sync::watch::Receiver<bool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        if cut.wait_for(|c| !*c).await.is_err() {
            return;
        }
        let n = tokio::select! {
            read = from.read(&mut buf) => match read {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            },
            _ = cut.wait_for(|c| *c) => continue,
        };
        // Read just as the link was cut: held until it is back.
        if cut.wait_for(|c| !*c).await.is_err() || to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_cut_off_from_the_database_loses_its_question_and_stores_nothing_of_it() {
    let llm = MockLlm::start().await;
    let first = Arc::new(AtomicBool::new(true));
    let reached = Arc::new(AtomicBool::new(false));
    let (firsts, reaching) = (Arc::clone(&first), Arc::clone(&reached));
    llm.set_handler(move |req| {
        if agent(req) == Agent::Analysis
            && task_title(req) == "Search 1"
            && firsts.swap(false, Ordering::SeqCst)
        {
            reaching.store(true, Ordering::SeqCst);
            // Answered to the cut-off worker after another one took the question over.
            return answer(req, 2).delay(Duration::from_secs(6));
        }
        answer(req, 2)
    });
    let s = Setup::new(&llm, None);
    let url = queued(&s, &["Only question?".to_string()]).await;
    let relay = Relay::start(Postgres::shared().port).await;
    let relayed = url.replace(
        &format!(":{}/", Postgres::shared().port),
        &format!(":{}/", relay.port),
    );
    let cut_off = tokio::spawn(worker(&s, &relayed, "q", &["--drain", "--concurrency", "1"]).run());
    while !reached.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    relay.set_cut(true);
    let other = worker(
        &s,
        &url,
        "q",
        &["--drain", "--lease", "2", "--concurrency", "1"],
    )
    .run()
    .await;
    other.success();
    assert_eq!(other.stdout_json()["ran"], 1, "{}", other.stderr);
    relay.set_cut(false);
    let cut_off = cut_off.await.expect("the cut-off worker");
    cut_off.success();
    assert_eq!(cut_off.stdout_json()["ran"], 0, "{}", cut_off.stderr);
    assert!(
        cut_off.stderr.contains("taken over by another worker"),
        "{}",
        cut_off.stderr
    );
    // (Node c's first call, on the cut-off worker, timed out and was retried there.)
    assert_eq!(analyses_of(&llm, "Search 0"), 1, "node b never ran again");
    let st = status(&s, &url, "q").await;
    assert_eq!(counted(&st, "completed"), 1, "{st}");
    export(&s, &url, "q", "out").run().await.success();
    let plan = only_plan(&s.path().join("out"));
    let c = &plan["nodes"][2];
    // A task's start is checkpointed after the task is under way (RELIABILITY.md, "Running a
    // workflow"): the cut-off worker's start of c reached the database only if that save came
    // before the cut, so c ran once or twice as far as the database knows; ran again it was.
    assert_eq!(c["status"].as_str(), Some("completed"), "{c}");
    assert!(matches!(c["attempts"].as_u64(), Some(1 | 2)), "{c}");
    assert!(
        analyses_of(&llm, "Search 1") >= 2,
        "c's analysis was asked on both workers"
    );
}

/// A transaction the server ended because it sat idle (a worker cut off from the server, or
/// stalled, with its row locks held) is tried again like any other loss of the server, and
/// every connection of a worker asks the server to end such a transaction after 15 s, not a
/// minute: a cut-off worker's locks hold a takeover back that long at most.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_transaction_the_server_ended_for_sitting_idle_is_tried_again() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    let url = migrated(&s).await;
    let db = connect(&url, 2).await;
    let tries = AtomicUsize::new(0);
    let (db_ref, tries_ref) = (&db, &tries);
    let (setting, tried) = db
        .retrying("a test transaction", || async move {
            let mut tx = db_ref.begin().await?;
            let setting: String = sqlx::query_scalar("SHOW idle_in_transaction_session_timeout")
                .fetch_one(&mut *tx)
                .await?;
            if tries_ref.fetch_add(1, Ordering::SeqCst) == 0 {
                // The first try idles past a timeout shortened for this transaction.
                sqlx::query("SET LOCAL idle_in_transaction_session_timeout = '100ms'")
                    .execute(&mut *tx)
                    .await?;
                tokio::time::sleep(Duration::from_millis(600)).await;
            }
            sqlx::query("SELECT 1").execute(&mut *tx).await?;
            tx.commit().await?;
            Ok((setting, tries_ref.load(Ordering::SeqCst)))
        })
        .await
        .expect("tried again after the server ended the first try");
    assert_eq!(setting, "15s");
    assert_eq!(tried, 2, "the first try was ended by the server");
}
