//! `researchflow mcp` against what a hostile folder, file or network peer does, through the
//! real binary spoken to without an SDK (`support::mcp`): symbolic links beside a plan that
//! lead out of the roots (never read, never shown, never written through), files that are
//! not plans (`.env`, credentials, keys: refused without a word of them) and the keys the
//! server knows (masked in every answer), a closed HTTP stream and a deleted session (the run
//! ends `interrupted`, its work saved), and the HTTP transport's gates: Origin, the bearer
//! token, the session cap and idle expiry, broken JSON and `arguments` that are no object.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::copy_corpus;
use crate::support::mcp::{Http, HttpServer, Messages, Stdio, error_text, server_args};
use crate::support::scenario::{Agent, Setup, agent, from_title, node, read_json};
use crate::support::{MockLlm, MockSearch, Reply, SearchKind, researchflow};

/// A folder with a root (holding the project's corpus as `docs`) and a folder outside it.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> World {
        let world = World {
            dir: tempfile::tempdir().expect("tempdir"),
        };
        copy_corpus(&world.root().join("docs"));
        std::fs::create_dir_all(world.root().join("runs")).expect("mkdir");
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

    /// `researchflow mcp` with `extra`, this root and its index folder, and no config.
    fn args(&self, extra: &[&str]) -> Vec<OsString> {
        let index = self.dir.path().join("index");
        server_args(extra, &self.root(), &[("--index-dir", &index)])
    }
}

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

#[cfg(unix)]
fn link(target: &Path, at: &Path) {
    std::os::unix::fs::symlink(target, at).expect("symlink");
}

/// The text of a `file://` URI of `path`, as the server names resources.
fn file_uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

#[track_caller]
fn assert_none_of(text: &str, secrets: &[&str], what: &str) {
    for secret in secrets {
        assert!(!text.contains(secret), "`{secret}` is in {what}:\n{text}");
    }
}

/// A report, an event log and a plan that lie outside the root, reached through links in
/// `runs/`: `get_report`, `list_runs` and the resources neither read them nor show where they
/// are; a report linked from inside the root is read as before.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn links_beside_a_plan_that_leave_the_roots_are_neither_read_nor_shown() {
    let world = World::new();
    let (runs, outside) = (world.runs(), world.outside());
    write_json(&runs.join("fin.json"), &finished_plan("What is inside?"));
    std::fs::write(outside.join("secret.md"), "# OUTSIDE-SECRET report\n").expect("write");
    std::fs::write(
        outside.join("fin.events.ndjson"),
        "{\"event\":\"run_finished\",\"totals\":{\"rounds\":42,\"total_tokens\":987654321}}\n",
    )
    .expect("write");
    write_json(
        &outside.join("plan.json"),
        &finished_plan("OUTSIDE-SECRET question"),
    );
    link(&outside.join("secret.md"), &runs.join("fin.report.md"));
    link(
        &outside.join("fin.events.ndjson"),
        &runs.join("fin.events.ndjson"),
    );
    link(&outside.join("plan.json"), &runs.join("leak.json"));
    write_json(
        &runs.join("in.json"),
        &finished_plan("What is linked inside?"),
    );
    std::fs::write(world.root().join("notes.md"), "# Inside report\n").expect("write");
    link(&world.root().join("notes.md"), &runs.join("in.report.md"));

    let mut mcp = Stdio::start(world.args(&[]), &world.root(), &[]).await;
    let report = mcp
        .call("get_report", json!({"plan_file": "runs/fin.json"}))
        .await;
    let inside = mcp
        .call("get_report", json!({"plan_file": "runs/in.json"}))
        .await;
    let listed = mcp.call("list_runs", json!({})).await;
    let resources = mcp.request("resources/list", json!({})).await;
    let real_runs = runs.canonicalize().expect("runs");
    let read = mcp
        .request(
            "resources/read",
            json!({"uri": file_uri(&real_runs.join("fin.report.md"))}),
        )
        .await;
    let log = mcp.close().await;

    let shown_outside = outside.display().to_string();
    let secrets = ["OUTSIDE-SECRET", "987654321", shown_outside.as_str()];
    for (what, answer) in [
        ("get_report", &report),
        ("list_runs", &listed),
        ("resources/list", &resources),
        ("resources/read", &read),
    ] {
        assert_none_of(&answer.to_string(), &secrets, what);
    }
    assert_none_of(&log, &secrets, "the server's log");
    let fin = &report["result"]["structuredContent"];
    assert_eq!(fin["status"], "completed", "{report:#}");
    assert_eq!(fin["report_markdown"], Value::Null, "{fin:#}");
    assert_eq!(fin["report_file"], Value::Null, "{fin:#}");
    assert_eq!(fin["totals"], Value::Null, "{fin:#}");
    let inside = &inside["result"]["structuredContent"];
    assert!(
        inside["report_markdown"]
            .as_str()
            .is_some_and(|r| r.contains("Inside report")),
        "a link that stays inside is read: {inside:#}"
    );
    let runs_listed = listed["result"]["structuredContent"]["runs"]
        .as_array()
        .expect("runs");
    let questions: Vec<&str> = runs_listed
        .iter()
        .map(|r| r["question"].as_str().expect("question"))
        .collect();
    assert_eq!(
        questions.len(),
        2,
        "the linked plan is no run: {runs_listed:#?}"
    );
    assert!(read.get("error").is_some(), "{read:#}");
}

/// `runs/` of the root is a link to a folder of runs outside it: `list_runs` is refused (as
/// `research` is), naming the link but not where it leads, and no resource is listed.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_runs_folder_linked_out_of_the_root_is_not_listed() {
    let world = World::new();
    std::fs::remove_dir(world.runs()).expect("rmdir");
    let elsewhere = world.outside().join("runs");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    write_json(
        &elsewhere.join("p.json"),
        &finished_plan("OUTSIDE-SECRET question"),
    );
    link(&elsewhere, &world.runs());
    let mut mcp = Stdio::start(world.args(&[]), &world.root(), &[]).await;
    let listed = mcp.call("list_runs", json!({})).await;
    let resources = mcp.request("resources/list", json!({})).await;
    mcp.close().await;
    let shown_outside = world.outside().display().to_string();
    for answer in [&listed, &resources] {
        assert_none_of(
            &answer.to_string(),
            &["OUTSIDE-SECRET", shown_outside.as_str()],
            "an answer",
        );
    }
    assert_eq!(listed["result"]["isError"], true, "{listed:#}");
    let text = listed["result"]["content"][0]["text"]
        .as_str()
        .expect("text");
    assert!(text.contains("symbolic link"), "{text}");
    assert_eq!(resources["result"]["resources"], json!([]), "{resources:#}");
}

/// The report, view and logs beside an unstarted plan are links to files outside the root:
/// `resume` is refused before anything runs, each outside file is left as it was, and once
/// the links are gone the same call runs.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_run_never_writes_through_links_beside_its_plan() {
    let world = World::new();
    let (runs, outside) = (world.runs(), world.outside());
    let plan = runs.join("unf.json");
    write_json(&plan, &unstarted_plan("What limits fast charging?"));
    let before = std::fs::read(&plan).expect("read");
    let suffixes = ["report.md", "html", "events.ndjson", "transcript.jsonl"];
    for suffix in suffixes {
        let target = outside.join(format!("unf.{suffix}"));
        std::fs::write(&target, format!("outside {suffix}\n")).expect("write");
        link(&target, &runs.join(format!("unf.{suffix}")));
    }
    let mut mcp = Stdio::start(world.args(&[]), &world.root(), &[]).await;
    let arguments = json!({"plan_file": "runs/unf.json", "offline": true, "corpus": "docs"});
    let refused = mcp.call("resume", arguments.clone()).await;
    let text = error_text(&refused);
    assert!(
        text.contains("symbolic link") && text.contains("unf."),
        "the message names the link: {text}"
    );
    assert_none_of(
        text,
        &[outside.display().to_string().as_str()],
        "the refusal",
    );
    for suffix in suffixes {
        let target = outside.join(format!("unf.{suffix}"));
        assert_eq!(
            std::fs::read_to_string(&target).expect("read"),
            format!("outside {suffix}\n"),
            "`{}` is unchanged",
            target.display()
        );
    }
    assert_eq!(std::fs::read(&plan).expect("read"), before, "the plan too");
    let strays: Vec<_> = std::fs::read_dir(&outside)
        .expect("read")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(
        strays.len(),
        suffixes.len(),
        "nothing new outside: {strays:?}"
    );

    for suffix in suffixes {
        std::fs::remove_file(runs.join(format!("unf.{suffix}"))).expect("unlink");
    }
    let ran = mcp.call("resume", arguments).await;
    assert_eq!(
        ran["result"]["structuredContent"]["status"], "completed",
        "{ran:#}"
    );
    mcp.close().await;
}

/// The key of the `.env` the server loaded, other credentials and values in plan-shaped
/// files.
const DOTENV_KEY: &str = "sk-dotenv-SECRET-4242";
const FILE_SECRETS: &[&str] = &[
    DOTENV_KEY,
    "ghp_CREDENTIAL0SECRET",
    "BEGIN OPENSSH",
    "b3BlbnNzaC1rZXkt",
    "TYPE-SECRET",
    "STATUS-SECRET",
    "IDSECRET",
    "REFSECRET",
    "LATESTSECRET",
];

/// A `.env` with the model's key, git credentials, an SSH key and plan-shaped files with
/// values where types or names belong: no tool (`validate_plan`, `get_report`, `resume`) and
/// no resource read quotes a word of them, and diagnostics still name the field and the
/// type it needs; the key itself, quoted by a real plan, is masked.
#[tokio::test(flavor = "multi_thread")]
async fn no_tool_quotes_a_file_that_is_not_a_plan_and_keys_are_masked() {
    let world = World::new();
    let root = world.root();
    std::fs::write(root.join(".env"), format!("OPENAI_API_KEY={DOTENV_KEY}\n")).expect("write");
    std::fs::write(
        root.join(".git-credentials"),
        "https://bob:ghp_CREDENTIAL0SECRET@github.com\n",
    )
    .expect("write");
    std::fs::create_dir_all(root.join(".ssh")).expect("mkdir");
    std::fs::write(
        root.join(".ssh/id_ed25519"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n-----END OPENSSH PRIVATE KEY-----\n",
    )
    .expect("write");
    write_json(&root.join("nodes.json"), &json!({"nodes": DOTENV_KEY}));
    let mut values = unstarted_plan("Values?");
    values["check_list"]["latest_id"] = json!("LATESTSECRET");
    values["nodes"].as_array_mut().expect("nodes").push(json!({
        "node_id": "IDSECRET1", "title": "t", "batch": 2, "type": "TYPE-SECRET",
        "status": "STATUS-SECRET", "p_node": "REFSECRET:summary"
    }));
    write_json(&root.join("values.json"), &values);
    write_json(
        &world.runs().join("k.json"),
        &finished_plan(&format!("Is {DOTENV_KEY} leaked?")),
    );

    // Started in the root, as a client starts it: `.env` there is loaded.
    let mut mcp = Stdio::start(world.args(&[]), &root, &[]).await;
    let mut answers = Vec::new();
    let files = [
        ".env",
        ".git-credentials",
        ".ssh/id_ed25519",
        "nodes.json",
        "values.json",
    ];
    for file in files {
        for tool in ["validate_plan", "get_report"] {
            answers.push(mcp.call(tool, json!({"plan_file": file})).await);
        }
        let resume = json!({"plan_file": file, "offline": true, "corpus": "docs"});
        answers.push(mcp.call("resume", resume).await);
        let uri = file_uri(&root.canonicalize().expect("root").join(file));
        answers.push(mcp.request("resources/read", json!({"uri": uri})).await);
    }
    let report = mcp
        .call("get_report", json!({"plan_file": "runs/k.json"}))
        .await;
    let listed = mcp.call("list_runs", json!({})).await;
    let log = mcp.close().await;

    for answer in answers.iter().chain([&report, &listed]) {
        assert_none_of(&answer.to_string(), FILE_SECRETS, "an answer");
    }
    assert_none_of(&log, FILE_SECRETS, "the server's log");
    let dotenv = &answers[0]["result"];
    assert_eq!(dotenv["isError"], true, "{dotenv:#}");
    let text = dotenv["content"][0]["text"].as_str().expect("a message");
    assert!(text.contains("not a plan file"), "{text}");
    let nodes = &answers[12]["result"]["structuredContent"];
    assert_eq!(nodes["valid"], false, "{nodes:#}");
    let finding = &nodes["errors"][0];
    assert_eq!(finding["path"], "nodes", "{nodes:#}");
    let message = finding["message"].as_str().expect("a message");
    assert!(
        message.contains("`nodes`") && message.contains("a string") && message.contains("list"),
        "the field, what it is and what it needs: {message}"
    );
    let values = &answers[16]["result"]["structuredContent"];
    let codes: Vec<&str> = values["errors"]
        .as_array()
        .expect("errors")
        .iter()
        .map(|f| f["code"].as_str().expect("code"))
        .collect();
    for code in ["INVALID_NODE_TYPE", "INVALID_STATUS", "INVALID_NODE_ID"] {
        assert!(codes.contains(&code), "{code}: {values:#}");
    }
    assert_eq!(
        report["result"]["structuredContent"]["status"], "completed",
        "{report:#}"
    );
    assert!(
        listed.to_string().contains("Is *** leaked?"),
        "the key is masked where a plan quotes it: {listed:#}"
    );
}

/// A mock model whose planner plans one search, then, in its second round, writes `marker`
/// and answers only after `hang`: a run that is still going when the test acts.
fn hanging_model(llm: &MockLlm, marker: PathBuf, hang: Duration) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let answer = support::scenario::searches_then_final(req, &["Only search"]);
            if req.user_prompt().unwrap_or_default().contains("### b:") {
                std::fs::write(&marker, "").expect("write the marker");
                return Reply::json(&answer).delay(hang);
            }
            Reply::json(&answer)
        }
        Agent::Queries | Agent::Analysis | Agent::Summary => from_title(req),
        Agent::Final => Reply::content("Direct answer [1]."),
        other => panic!("{other:?} is not asked: the review is off"),
    });
}

/// A served model world for the HTTP cancellation tests: the mocks, a config and a root.
struct Served {
    _llm: MockLlm,
    _search: MockSearch,
    setup: Setup,
}

impl Served {
    /// The mocks, with the planner's second round answered after `hang`.
    async fn new(hang: Duration) -> Served {
        let llm = MockLlm::start().await;
        let search = MockSearch::start(SearchKind::Searxng).await;
        let setup = Setup::with_config(
            &llm,
            Some(&search),
            json!({"timeouts": {"llmMs": 120000, "searchMs": 5000}}),
        );
        hanging_model(&llm, setup.path().join("hanging"), hang);
        std::fs::create_dir_all(setup.path().join("root")).expect("mkdir");
        Served {
            _llm: llm,
            _search: search,
            setup,
        }
    }

    fn root(&self) -> PathBuf {
        self.setup.path().join("root")
    }

    fn args(&self, extra: &[&str]) -> Vec<OsString> {
        let config = self.setup.path().join("agent.config.json");
        server_args(extra, &self.root(), &[("--config", &config)])
    }

    /// Starts `research` in `http`'s session and reads its messages until the model hangs
    /// in the second round (the first task done and saved); the response, still open.
    async fn research_until_it_hangs(&self, http: &Http) -> reqwest::Response {
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "research", "arguments": {"query": "Does a closed stream stop the run?"},
            "_meta": {"progressToken": "p"}}});
        let mut response = http.post(&call).await;
        assert_eq!(response.status(), 200);
        let marker = self.setup.path().join("hanging");
        let mut messages = Messages::default();
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        while !marker.exists() {
            assert!(tokio::time::Instant::now() < deadline, "the run never hung");
            tokio::select! {
                message = messages.next(&mut response) => {
                    let message = message.expect("the stream stays open while the run goes");
                    assert!(message.get("id").is_none(), "answered before the hang: {message}");
                }
                () = tokio::time::sleep(Duration::from_millis(50)) => {}
            }
        }
        response
    }

    /// The one plan file under `runs/`, once its run has recorded how it ended.
    async fn ended_plan(&self) -> Value {
        let runs = self.root().join("runs");
        for _ in 0..300 {
            let plans: Vec<PathBuf> = std::fs::read_dir(&runs)
                .expect("runs/")
                .map(|e| e.expect("entry").path())
                .filter(|p| p.extension().is_some_and(|e| e == "json"))
                .filter(|p| !p.to_string_lossy().contains("review"))
                .collect();
            if let [plan] = plans.as_slice() {
                let plan = read_json(plan);
                if plan.get("outcome").is_some() {
                    return plan;
                }
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the run did not end within 30 s");
    }
}

/// What a stopped run left: `interrupted`, its finished search kept.
#[track_caller]
fn assert_interrupted_with_its_work(plan: &Value) {
    assert_eq!(plan["outcome"]["status"], "interrupted", "{plan:#}");
    let b = node(plan, "b");
    assert_eq!(b["status"], "completed", "{plan:#}");
}

/// The client closes the SSE stream of its `research` call while the run is going: the run
/// stops as a cancelled call does, `interrupted`, with its finished task saved. Before that,
/// the session with a call in flight outlives its idle time.
#[tokio::test(flavor = "multi_thread")]
async fn closing_the_stream_of_a_research_call_interrupts_the_run() {
    let served = Served::new(Duration::from_secs(600)).await;
    let args = served.args(&["--http", "127.0.0.1:0", "--session-idle", "1"]);
    let server = HttpServer::start(args, &served.root()).await;
    let mut http = Http::new(&server.url);
    assert_eq!(http.initialize().await.status(), 200);
    let response = served.research_until_it_hangs(&http).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let listed = http.request(8, "tools/list", json!({})).await;
    assert!(
        listed.last().is_some_and(|m| m.get("result").is_some()),
        "busy, not idle: {listed:#?}"
    );
    drop(response);
    assert_interrupted_with_its_work(&served.ended_plan().await);
    server.stop().await;
}

/// The client ends its session (`DELETE /mcp`) while its `research` call waits for the model,
/// which answers 4 s later: the run is stopped at once, `interrupted`, its finished task
/// saved; it does not go on to `completed` in the seconds the SDK gives a closed session's
/// calls to answer.
#[tokio::test(flavor = "multi_thread")]
async fn deleting_the_session_interrupts_its_research_call() {
    let served = Served::new(Duration::from_secs(4)).await;
    let server = HttpServer::start(served.args(&["--http", "127.0.0.1:0"]), &served.root()).await;
    let mut http = Http::new(&server.url);
    assert_eq!(http.initialize().await.status(), 200);
    let _response = served.research_until_it_hangs(&http).await;
    let deleted = http.delete().await;
    assert!(deleted.status().is_success(), "{}", deleted.status());
    assert_interrupted_with_its_work(&served.ended_plan().await);
    server.stop().await;
}

/// Over HTTP, a request with an `Origin` outside `--allow-origin` (and not of loopback, the
/// server being on loopback) is refused 403; one without an `Origin` is served.
#[tokio::test(flavor = "multi_thread")]
async fn an_origin_outside_the_allow_list_is_refused() {
    let world = World::new();
    let args = world.args(&[
        "--http",
        "127.0.0.1:0",
        "--allow-origin",
        "https://app.example",
    ]);
    let server = HttpServer::start(args, &world.root()).await;
    for (origin, status) in [
        (None, 200),
        (Some("https://app.example"), 200),
        (Some("http://localhost:5173"), 200),
        (Some("http://127.0.0.1:9"), 200),
        (Some("https://evil.example"), 403),
        (Some("http://app.example"), 403),
        (Some("null"), 403),
    ] {
        let mut http = Http::new(&server.url);
        if let Some(origin) = origin {
            http = http.header("origin", origin);
        }
        assert_eq!(http.initialize().await.status(), status, "{origin:?}");
    }
    server.stop().await;
}

const TOKEN: &str = "correct-horse-battery-staple-42";

/// `--allow-remote` without a token does not start; with one (a file, or the environment)
/// every request must carry it as a bearer token: 401 otherwise, `WWW-Authenticate: Bearer`;
/// the token is never logged.
#[tokio::test(flavor = "multi_thread")]
async fn a_remote_address_needs_a_bearer_token() {
    let world = World::new();
    let run = researchflow()
        .args(world.args(&["--http", "0.0.0.0:0", "--allow-remote"]))
        .run()
        .await;
    run.code(2)
        .stderr_contains("--token-file")
        .stderr_contains("RESEARCHFLOW_MCP_TOKEN");
    let file = world.dir.path().join("token");
    std::fs::write(&file, "short\n").expect("write");
    let token_file = file.to_string_lossy().into_owned();
    let run = researchflow()
        .args(world.args(&[
            "--http",
            "0.0.0.0:0",
            "--allow-remote",
            "--token-file",
            &token_file,
        ]))
        .run()
        .await;
    run.code(2).stderr_contains("16");

    std::fs::write(&file, format!("{TOKEN}\n")).expect("write");
    let args = world.args(&[
        "--http",
        "0.0.0.0:0",
        "--allow-remote",
        "--token-file",
        &token_file,
    ]);
    let server = HttpServer::start(args, &world.root()).await;
    check_bearer(&server.loopback_url()).await;
    let log = server.stop().await;
    assert_none_of(&log, &[TOKEN], "the server's log");

    let args = world.args(&["--http", "127.0.0.1:0"]);
    let server =
        HttpServer::start_with(args, &world.root(), &[("RESEARCHFLOW_MCP_TOKEN", TOKEN)]).await;
    check_bearer(&server.url).await;
    server.stop().await;
}

async fn check_bearer(url: &str) {
    let refused = Http::new(url).initialize().await;
    assert_eq!(refused.status(), 401);
    let challenge = refused
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(challenge.starts_with("Bearer"), "{challenge}");
    let wrong = Http::new(url)
        .header("authorization", &format!("Bearer {TOKEN}x"))
        .initialize()
        .await;
    assert_eq!(wrong.status(), 401);
    let mut right = Http::new(url).header("authorization", &format!("Bearer {TOKEN}"));
    assert_eq!(right.initialize().await.status(), 200);
    let listed = right.request(1, "tools/list", json!({})).await;
    assert!(listed.last().is_some_and(|m| m.get("result").is_some()));
}

/// `--max-sessions 2`: a third `initialize` is refused with a JSON-RPC error that says so,
/// until a session ends (`DELETE`) or expires (`--session-idle`).
#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_capped_and_idle_ones_expire() {
    let world = World::new();
    let args = world.args(&[
        "--http",
        "127.0.0.1:0",
        "--max-sessions",
        "2",
        "--session-idle",
        "2",
    ]);
    let server = HttpServer::start(args, &world.root()).await;
    let mut first = Http::new(&server.url);
    let mut second = Http::new(&server.url);
    assert_eq!(first.initialize().await.status(), 200);
    assert_eq!(second.initialize().await.status(), 200);
    let mut third = Http::new(&server.url);
    let refused = third.initialize().await;
    assert_eq!(refused.status(), 503);
    let body: Value = refused.json().await.expect("a JSON-RPC error");
    let message = body["error"]["message"].as_str().expect("a message");
    assert!(message.contains("--max-sessions"), "{body:#}");
    assert_eq!(body["id"], 0, "{body:#}");
    assert!(first.delete().await.status().is_success());
    assert_eq!(third.initialize().await.status(), 200);
    tokio::time::sleep(Duration::from_secs(5)).await;
    let expired = second
        .post(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    assert_eq!(expired.status(), 404, "an idle session expires");
    assert_eq!(Http::new(&server.url).initialize().await.status(), 200);
    server.stop().await;
}

/// Broken JSON is a JSON-RPC parse error (-32700), not an HTTP 415; `arguments` given as a
/// string is invalid params (-32602) that say `arguments` must be an object, over HTTP and
/// over stdio.
#[tokio::test(flavor = "multi_thread")]
async fn broken_json_and_arguments_that_are_no_object_are_named() {
    let world = World::new();
    let server = HttpServer::start(world.args(&["--http", "127.0.0.1:0"]), &world.root()).await;
    let broken = Http::new(&server.url)
        .post_raw(r#"{"jsonrpc": "2.0", "id": 1, "method""#)
        .await;
    assert_eq!(broken.status(), 400);
    let body: Value = broken.json().await.expect("a JSON-RPC error");
    assert_eq!(body["error"]["code"], -32700, "{body:#}");
    let mut http = Http::new(&server.url);
    assert_eq!(http.initialize().await.status(), 200);
    let params = json!({"name": "list_runs", "arguments": "{\"dir\": \"runs\"}"});
    let answer = http.request(2, "tools/call", params.clone()).await;
    check_string_arguments(answer.last().expect("an answer"));
    server.stop().await;

    let mut mcp = Stdio::start(world.args(&[]), &world.root(), &[]).await;
    check_string_arguments(&mcp.request("tools/call", params).await);
    mcp.close().await;
}

#[track_caller]
fn check_string_arguments(answer: &Value) {
    assert_eq!(answer["error"]["code"], -32602, "{answer:#}");
    let message = answer["error"]["message"].as_str().expect("a message");
    assert!(
        message.contains("`arguments`") && message.contains("object"),
        "{message}"
    );
}
