//! `researchflow mcp` driven by real third-party MCP software: the official Python SDK (both
//! major versions, installed by `scripts/setup/mcp-python.sh`) as the client, over stdio and
//! over streamable HTTP, against the mock LLM and search API on loopback. The client
//! (`tests/mcp/client.py`) runs one scenario and prints what it saw; this file asserts on it:
//! tools and their schemas, `research` with progress, two calls at once, offline research
//! over a corpus, a cancelled call that leaves its plan `interrupted` and resumable, paths
//! outside the root refused, runs, resources, validation, and no API key anywhere.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support;
use crate::support::fixtures::copy_corpus;
use crate::support::mcp::{self, HttpServer};
use crate::support::python::Sdk;
use crate::support::scenario::{
    Agent, KEY, Setup, agent, events_of, from_title, read_json, read_ndjson,
};
use crate::support::thinkon;
use crate::support::{MockLlm, MockSearch, Reply, SearchKind, researchflow};

/// The mocks, a config, and a root with a corpus, beside a file outside the root and a
/// symbolic link in the root that leads to it.
struct World {
    _llm: MockLlm,
    _search: MockSearch,
    setup: Setup,
}

impl World {
    async fn new() -> World {
        let llm = MockLlm::start().await;
        let search = MockSearch::start(SearchKind::Searxng).await;
        // The cancelled call's hanging answer must not time out before it is cancelled.
        let setup = Setup::with_config(
            &llm,
            Some(&search),
            json!({"timeouts": {"llmMs": 120000, "searchMs": 5000}}),
        );
        answer(&llm, setup.path().join("hanging"));
        let world = World {
            _llm: llm,
            _search: search,
            setup,
        };
        let docs = world.root().join("docs");
        std::fs::create_dir_all(&docs).expect("mkdir");
        std::fs::write(
            docs.join("tides.md"),
            "# Tides\n\nTides are the rise and fall of the sea, caused by the Moon's gravity.\n\nSpring tides come at new and full Moon.\n",
        )
        .expect("write");
        std::fs::write(
            docs.join("waves.md"),
            "# Waves\n\nWind makes waves; tides are waves of very long period.\n",
        )
        .expect("write");
        std::fs::write(world.outside(), r#"{"secret": true}"#).expect("write");
        #[cfg(unix)]
        std::os::unix::fs::symlink(world.outside(), world.root().join("leak.json")).expect("link");
        world
    }

    fn root(&self) -> PathBuf {
        self.setup.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.setup.path().join("outside.json")
    }

    /// `researchflow mcp` with this world's root, config and index folder, `extra` first.
    fn server_args(&self, extra: &[&str]) -> Vec<OsString> {
        let config = self.setup.path().join("agent.config.json");
        let index = self.setup.path().join("index");
        let mut args = mcp::server_args(
            extra,
            &self.root(),
            &[("--config", &config), ("--index-dir", &index)],
        );
        // Trace logs too (every HTTP exchange, every message) must hold no key.
        args.push("-vv".into());
        args
    }

    fn client(&self, sdk: Sdk) -> support::Cmd {
        sdk.script("client.py")
            .arg("--root")
            .arg(self.root())
            .arg("--outside")
            .arg(self.outside())
            .arg("--hanging")
            .arg(self.setup.path().join("hanging"))
            .timeout(Duration::from_secs(120))
    }
}

/// The mock LLM: one search task, then the final summary, for every question; the planner's
/// second round of the question that is cancelled hangs once, and `hanging` is created when
/// it does: the client cancels only then, so the hang is the cancelled run's, never the
/// resumed one's.
fn answer(llm: &MockLlm, hanging: PathBuf) {
    let hung = Arc::new(AtomicBool::new(false));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let input = req.user_prompt().unwrap_or_default();
            let answer = support::scenario::searches_then_final(req, &["Only search"]);
            if input.contains("Cancel me")
                && input.contains("### b:")
                && !hung.swap(true, Ordering::SeqCst)
            {
                std::fs::write(&hanging, "").expect("write the marker");
                // Never answered in time: the client cancels while it waits.
                return Reply::json(&answer).delay(Duration::from_secs(600));
            }
            Reply::json(&answer)
        }
        Agent::Queries | Agent::Analysis | Agent::Summary => from_title(req),
        Agent::Final => Reply::content(&format!(
            "{}\n\n## Details\nText.",
            support::scenario::backed_report(req)
        )),
        other => panic!("{other:?} is not asked: the review is off"),
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_1_drives_the_server_over_stdio() {
    over_stdio(Sdk::One).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_2_drives_the_server_over_stdio() {
    over_stdio(Sdk::Two).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_1_drives_the_server_over_streamable_http() {
    over_http(Sdk::One).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_2_drives_the_server_over_streamable_http() {
    over_http(Sdk::Two).await;
}

async fn over_stdio(sdk: Sdk) {
    let world = World::new().await;
    let run = world
        .client(sdk)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_researchflow"))
        .args(world.server_args(&[]))
        .run()
        .await;
    run.success();
    assert_no_key(&run.stdout, "the client's output");
    // The client's stderr holds the server's: its logs, at trace level.
    assert!(
        run.stderr.contains("TRACE"),
        "the server's log: {}",
        run.stderr
    );
    assert_no_key(&run.stderr, "the server's log");
    check(&world, &run.stdout_json());
}

async fn over_http(sdk: Sdk) {
    let world = World::new().await;
    let server =
        HttpServer::start(world.server_args(&["--http", "127.0.0.1:0"]), &world.root()).await;
    let run = world.client(sdk).arg("--url").arg(&server.url).run().await;
    run.success();
    let out = run.stdout_json();
    check(&world, &out);
    let log = server.stop().await;
    assert_no_key(&run.stdout, "the client's output");
    assert_no_key(&log, "the server's log");
}

/// The mock LLM as Thinkon's roles: every goal planned as three steps, each a search. The
/// goals come one after the other, so the second request to plan the second step is the
/// cancelled goal's: it hangs, and `hanging` is created when it does, so the client cancels
/// while the model holds it.
fn answer_thinkon(llm: &MockLlm, hanging: PathBuf) {
    let seconds = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match thinkon::kind(req) {
        thinkon::Kind::Planner => {
            let ctx = thinkon::context(req);
            let answer = thinkon::three_searches(&ctx, req);
            if thinkon::item(&ctx) == "Compare sources"
                && seconds.fetch_add(1, Ordering::SeqCst) == 1
            {
                std::fs::write(&hanging, "").expect("write the marker");
                return Reply::json(&answer).delay(Duration::from_secs(600));
            }
            Reply::json(&answer)
        }
        _ => thinkon::plain(req),
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_2_works_on_a_thinkon_goal_over_stdio() {
    let world = World::new().await;
    answer_thinkon(&world._llm, world.setup.path().join("hanging"));
    let run = world
        .client(Sdk::Two)
        .args(["--scenario", "thinkon", "--"])
        .arg(env!("CARGO_BIN_EXE_researchflow"))
        .args(world.server_args(&[]))
        .run()
        .await;
    run.success();
    check_thinkon(&world, &run.stdout_json());
}

#[tokio::test(flavor = "multi_thread")]
async fn the_python_sdk_1_works_on_a_thinkon_goal_over_streamable_http() {
    let world = World::new().await;
    answer_thinkon(&world._llm, world.setup.path().join("hanging"));
    let server =
        HttpServer::start(world.server_args(&["--http", "127.0.0.1:0"]), &world.root()).await;
    let run = world
        .client(Sdk::One)
        .args(["--scenario", "thinkon", "--url", &server.url])
        .run()
        .await;
    run.success();
    check_thinkon(&world, &run.stdout_json());
    server.stop().await;
}

/// A goal worked on with progress (blocks done of planned) into a new folder under `runs/`;
/// the cancelled one saved `interrupted` and continued from its folder alone, its first step
/// not asked again; the refusals name what to give.
fn check_thinkon(world: &World, out: &Value) {
    let tools = out["tools"].as_array().expect("tools");
    assert!(tools.iter().any(|t| t == "thinkon"), "{tools:?}");
    let first = &out["thinkon"];
    let result = &first["result"]["structured"];
    assert_eq!(result["status"], "completed", "{first:#}");
    assert!(
        result["result_markdown"]
            .as_str()
            .is_some_and(|r| r.starts_with("# What is G?")),
        "{first:#}"
    );
    assert_eq!(result["blocks"]["completed"], 4, "{first:#}");
    assert_eq!(result["blocks"]["failed"], 0, "{first:#}");
    let dir = PathBuf::from(result["dir"].as_str().expect("dir"));
    assert!(dir.join("result.md").is_file(), "{first:#}");
    assert!(
        dir.parent().is_some_and(|p| p.ends_with("runs")),
        "a new folder under runs/: {dir:?}"
    );
    let notes = first["progress"].as_array().expect("progress");
    let started = notes[0]["message"].as_str().expect("message");
    assert!(started.starts_with("started: folder `"), "{started}");
    let done: Vec<f64> = notes
        .iter()
        .filter_map(|n| n["progress"].as_f64())
        .collect();
    assert!(done.windows(2).all(|w| w[0] <= w[1]), "{notes:#?}");
    let last = notes.last().expect("a last note");
    assert_eq!(
        (last["progress"].as_f64(), last["total"].as_f64()),
        (Some(4.0), Some(4.0))
    );
    assert_eq!(last["message"], "4 of 4 blocks done", "{notes:#?}");

    let folder = PathBuf::from(out["cancelled"]["plan_file"].as_str().expect("its folder"));
    let ended: Vec<Value> = read_ndjson(&folder.join("events.ndjson"))
        .into_iter()
        .filter(|e| e["event"] == "run_finished")
        .collect();
    assert_eq!(ended[0]["status"], "interrupted", "{ended:#?}");
    let continued = &out["continued"]["structured"];
    assert_eq!(continued["status"], "completed", "{:#}", out["continued"]);
    assert_eq!(continued["blocks"]["completed"], 4, "{continued:#}");
    let analyses = world
        ._llm
        .chat_requests()
        .iter()
        .filter(|r| thinkon::kind(r) == thinkon::Kind::Analysis)
        .count();
    assert_eq!(analyses, 6, "three searches a goal, none asked twice");

    for (call, says) in [
        ("nothing", "give a `goal`"),
        (
            "zero_blocks",
            "`max_blocks`: 0 is less than the minimum of 1",
        ),
        ("outside", "outside"),
        ("other_goal", "holds the tree of another goal"),
    ] {
        let refused = &out[call];
        assert_eq!(refused["is_error"], true, "{call}: {refused:#}");
        let text = refused["texts"][0].as_str().unwrap_or_default();
        assert!(text.contains(says), "{call}: {text}");
    }
}

#[track_caller]
fn assert_no_key(text: &str, what: &str) {
    assert!(!text.contains(KEY), "the API key is in {what}:\n{text}");
}

/// What every transport and SDK must have seen.
fn check(world: &World, out: &Value) {
    check_tools(&out["tools"]);
    let runs = world.root().join("runs");
    let first = &out["research"];
    let result = &first["result"]["structured"];
    assert_eq!(first["result"]["is_error"], false, "{first:#}");
    assert_eq!(result["status"], "completed", "{result:#}");
    let report = result["report_markdown"].as_str().expect("a report");
    assert!(
        report.contains("Result 1 for q Only search [1]."),
        "{report}"
    );
    let sources = result["sources"].as_array().expect("sources");
    assert!(!sources.is_empty(), "{result:#}");
    assert_eq!(sources[0]["n"], 1);
    assert!(
        sources[0]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("http"))
    );
    let plan_file = PathBuf::from(result["plan_file"].as_str().expect("plan file"));
    assert!(
        plan_file.starts_with(runs.canonicalize().expect("runs/")),
        "{plan_file:?}"
    );
    assert!(
        result["totals"]["total_tokens"].as_u64() > Some(0),
        "{result:#}"
    );
    check_progress(&first["progress"], &plan_file);

    let concurrent: Vec<&Value> = out["concurrent"].as_array().expect("two").iter().collect();
    let plans: Vec<&str> = concurrent
        .iter()
        .map(|c| {
            c["result"]["structured"]["plan_file"]
                .as_str()
                .expect("a plan")
        })
        .collect();
    assert_ne!(plans[0], plans[1], "each call has its own plan file");
    for c in &concurrent {
        assert_eq!(c["result"]["structured"]["status"], "completed", "{c:#}");
    }

    let offline = &out["offline"]["result"]["structured"];
    assert_eq!(offline["status"], "completed", "{:#}", out["offline"]);
    let report = offline["report_markdown"].as_str().expect("a report");
    assert!(report.contains("Moon"), "the corpus is quoted: {report}");
    assert!(
        offline["sources"][0]["url"]
            .as_str()
            .is_some_and(|u| u.starts_with("file://"))
    );

    check_cancel(out);
    check_refusals(out, world);

    let listed = out["list_runs"]["structured"]["runs"]
        .as_array()
        .expect("runs");
    assert_eq!(listed.len(), 5, "{listed:#?}");
    assert!(
        listed
            .iter()
            .all(|r| r["status"] == "completed" && r["finished_at"].is_string())
    );
    assert!(
        listed
            .iter()
            .any(|r| r["question"] == "What is the Model Context Protocol?")
    );

    let resources = out["resources"].as_array().expect("resources");
    assert_eq!(
        resources.len(),
        10,
        "a plan and a report per run: {resources:#?}"
    );
    assert!(
        resources
            .iter()
            .all(|r| r["uri"].as_str().is_some_and(|u| u.starts_with("file:///")))
    );
    let read = out["read_resource"]["text"].as_str().expect("text");
    assert!(
        read.starts_with("# ") && read.contains("Result 1 for q Only search [1]."),
        "{read}"
    );

    let validated = &out["validate"]["structured"];
    assert_eq!(validated["valid"], true, "{validated:#}");
}

fn check_tools(tools: &Value) {
    let mut names: Vec<&str> = tools
        .as_object()
        .expect("tools")
        .keys()
        .map(String::as_str)
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "get_report",
            "list_runs",
            "research",
            "resume",
            "thinkon",
            "validate_plan"
        ]
    );
    for (name, tool) in tools.as_object().expect("tools") {
        assert_eq!(tool["input"]["type"], "object", "{name}");
        assert_eq!(tool["output"]["type"], "object", "{name}");
    }
    let research = &tools["research"]["input"]["properties"];
    for arg in [
        "query",
        "offline",
        "corpus",
        "max_rounds",
        "max_tokens",
        "max_time",
        "grace",
        "final_time",
    ] {
        assert!(
            research.get(arg).is_some(),
            "research has `{arg}`: {research:#}"
        );
    }
    let output = &tools["research"]["output"]["properties"];
    for field in [
        "status",
        "report_markdown",
        "sources",
        "plan_file",
        "totals",
    ] {
        assert!(
            output.get(field).is_some(),
            "research gives `{field}`: {output:#}"
        );
    }
}

/// The first note names the plan; then one note per finished task, and notes of the tasks
/// whose answers stream, `progress` growing, each saying the round, the tasks done of planned
/// and the tokens.
fn check_progress(notes: &Value, plan_file: &Path) {
    let notes = notes.as_array().expect("notes");
    assert!(notes.len() >= 3, "the start and two tasks: {notes:#?}");
    let start = notes[0]["message"].as_str().expect("message");
    assert!(start.contains(&plan_file.display().to_string()), "{start}");
    let progress: Vec<f64> = notes
        .iter()
        .map(|n| n["progress"].as_f64().expect("progress"))
        .collect();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    // The answers stream: a note tells each streaming task's tokens (issue 34 item 4).
    assert!(
        notes.iter().any(|n| n["message"]
            .as_str()
            .is_some_and(|m| m.contains("; writing: ") && m.contains(" tokens"))),
        "no note of streaming tasks: {notes:#?}"
    );
    let last = notes.last().expect("a note");
    assert_eq!(last["progress"], last["total"], "{last}");
    let message = last["message"].as_str().expect("message");
    assert!(
        message.starts_with("round 2: 2 of 2 tasks done, ") && message.ends_with(" tokens"),
        "{message}"
    );
}

/// A cancelled call leaves its plan `interrupted`, with what finished saved, and `resume`
/// finishes it.
fn check_cancel(out: &Value) {
    let seen = &out["cancelled"];
    assert!(
        seen.get("completed_anyway").is_none(),
        "the call was cancelled: {seen:#}"
    );
    let plan = PathBuf::from(seen["plan_file"].as_str().expect("the plan file was named"));
    let after = &out["after_cancel"]["structured"];
    assert_eq!(after["status"], "interrupted", "{after:#}");
    assert_eq!(after["report_markdown"], Value::Null);
    let resumed = &out["resumed"]["structured"];
    assert_eq!(resumed["status"], "completed", "{:#}", out["resumed"]);
    assert_eq!(resumed["plan_file"], plan.display().to_string());
    let events = read_ndjson(&plan.with_extension("events.ndjson"));
    let ends: Vec<&Value> = events_of(&events, "run_finished")
        .iter()
        .map(|e| &e["status"])
        .collect();
    assert_eq!(ends, ["interrupted", "completed"], "{events:#?}");
    let saved = read_json(&plan);
    let b = support::scenario::node(&saved, "b");
    assert_eq!(b["status"], "completed");
    assert_eq!(
        b["attempts"], 1,
        "what finished before the cancel was not done again"
    );
}

fn check_refusals(out: &Value, world: &World) {
    let outside = &out["outside"];
    assert_eq!(outside["is_error"], true, "{outside:#}");
    let text = outside["texts"][0].as_str().expect("a message");
    assert!(
        text.contains("outside the folders this server may touch")
            && text.contains(&world.outside().display().to_string()),
        "{text}"
    );
    let link = &out["through_link"];
    assert_eq!(link["is_error"], true, "{link:#}");
    let text = link["texts"][0].as_str().expect("a message");
    assert!(
        text.contains("symbolic link") && text.contains("leak.json"),
        "{text}"
    );
    let unknown = &out["unknown_argument"];
    assert_eq!(unknown["is_error"], true, "{unknown:#}");
    let text = unknown["texts"][0].as_str().expect("a message");
    assert!(text.contains("unknown field `plan`"), "{text}");
}

#[tokio::test]
async fn a_remote_address_needs_allow_remote_and_a_missing_root_is_refused() {
    let run = researchflow()
        .args(["mcp", "--http", "0.0.0.0:0"])
        .run()
        .await;
    run.code(2).stderr_contains("--allow-remote");
    let run = researchflow()
        .args(["mcp", "--root", "/no/such/folder"])
        .run()
        .await;
    run.code(2).stderr_contains("--root /no/such/folder");
}

/// Over stdio every line on stdout is a JSON-RPC message, even with the log at trace level
/// and a whole offline run in between: the log goes to stderr.
#[tokio::test(flavor = "multi_thread")]
async fn stdout_carries_only_protocol_messages() {
    let world = World::new().await;
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_researchflow"))
        .args(world.server_args(&[]))
        .current_dir(world.root())
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the server");
    let mut stdin = server.stdin.take().expect("stdin");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "research", "arguments": {"query": "What are tides?", "offline": true, "corpus": "docs"}, "_meta": {"progressToken": "p"}}}),
    ];
    for m in &messages {
        let line = format!("{m}\n");
        tokio::io::AsyncWriteExt::write_all(&mut stdin, line.as_bytes())
            .await
            .expect("write");
    }
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the server answers")
            .expect("read")
            .expect("a line before the answer");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a protocol message on stdout: {e}: {line}"));
        assert_eq!(message["jsonrpc"], "2.0", "{line}");
        let done = message["id"] == 2;
        seen.push(message);
        if done {
            break;
        }
    }
    drop(stdin);
    let ended = tokio::time::timeout(Duration::from_secs(30), server.wait_with_output())
        .await
        .expect("the server ends when stdin closes")
        .expect("wait");
    assert!(
        ended.status.success(),
        "{}",
        String::from_utf8_lossy(&ended.stderr)
    );
    assert_eq!(ended.stdout, b"", "nothing after the client went");
    let answer = seen.last().expect("the answer");
    assert_eq!(
        answer["result"]["structuredContent"]["status"], "completed",
        "{answer:#}"
    );
    let progress = seen
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .count();
    assert!(progress >= 2, "{seen:#?}");
    let log = String::from_utf8_lossy(&ended.stderr);
    assert!(
        log.contains("TRACE") || log.contains("DEBUG"),
        "the log is on stderr: {log}"
    );
    assert_no_key(&log, "the server's trace log");
}

/// A server started as a user would start it with nothing configured: no config file, no
/// environment, so no model. Its root holds the project's corpus (`fixtures/corpus`) as
/// `docs`; beside the root is a folder of documents outside it.
struct Bare {
    dir: tempfile::TempDir,
}

impl Bare {
    fn new() -> Bare {
        let dir = tempfile::tempdir().expect("tempdir");
        let bare = Bare { dir };
        copy_corpus(&bare.root().join("docs"));
        std::fs::create_dir_all(bare.outside()).expect("mkdir");
        std::fs::write(
            bare.outside().join("secret.md"),
            "# Secret\n\nNot for the server.\n",
        )
        .expect("write");
        bare
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("root")
    }

    fn outside(&self) -> PathBuf {
        self.dir.path().join("outside-docs")
    }

    /// `researchflow mcp --root ROOT` and no config; the index beside the root.
    fn server_args(&self, extra: &[&str]) -> Vec<OsString> {
        let index = self.dir.path().join("index");
        mcp::server_args(extra, &self.root(), &[("--index-dir", &index)])
    }

    fn client(&self, sdk: Sdk) -> support::Cmd {
        sdk.script("client.py")
            .arg("--scenario")
            .arg("offline")
            .arg("--root")
            .arg(self.root())
            .arg("--outside")
            .arg(self.outside())
            .timeout(Duration::from_secs(120))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_the_python_sdk_1_researches_offline_over_stdio() {
    offline_over_stdio(Sdk::One).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_the_python_sdk_2_researches_offline_over_stdio() {
    offline_over_stdio(Sdk::Two).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_the_python_sdk_1_researches_offline_over_streamable_http() {
    offline_over_http(Sdk::One).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_model_the_python_sdk_2_researches_offline_over_streamable_http() {
    offline_over_http(Sdk::Two).await;
}

async fn offline_over_stdio(sdk: Sdk) {
    let bare = Bare::new();
    let run = bare
        .client(sdk)
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_researchflow"))
        .args(bare.server_args(&[]))
        .run()
        .await;
    run.success();
    check_offline(&bare, &run.stdout_json());
}

async fn offline_over_http(sdk: Sdk) {
    let bare = Bare::new();
    // A port alone is loopback.
    let server = HttpServer::start(bare.server_args(&["--http", "0"]), &bare.root()).await;
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let run = bare.client(sdk).arg("--url").arg(&server.url).run().await;
    run.success();
    check_offline(&bare, &run.stdout_json());
    server.stop().await;
}

/// Offline research over the corpus with progress; a run cancelled at its first notification
/// is `interrupted` at once (in `list_runs` too) and `resume` with only its plan file
/// completes it offline; a corpus outside the root and research with no model are refused.
fn check_offline(bare: &Bare, out: &Value) {
    let tools = out["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 6, "{tools:?}");

    let first = &out["research"];
    let result = &first["result"]["structured"];
    assert_eq!(result["status"], "completed", "{first:#}");
    assert_eq!(result["answered"], true, "{first:#}");
    let report = result["report_markdown"].as_str().expect("a report");
    assert!(report.contains("without a language model"), "{report}");
    let sources = result["sources"].as_array().expect("sources");
    assert!(!sources.is_empty(), "{result:#}");
    let docs = bare.root().join("docs").canonicalize().expect("docs");
    for source in sources {
        let url = source["url"].as_str().expect("url");
        assert!(
            url.starts_with(&format!("file://{}", docs.display())),
            "a document of the corpus: {url}"
        );
    }
    let plan_file = PathBuf::from(result["plan_file"].as_str().expect("plan file"));
    let notes = first["progress"].as_array().expect("notes");
    assert!(notes.len() >= 3, "the start and the tasks: {notes:#?}");
    let start = notes[0]["message"].as_str().expect("message");
    assert!(start.contains(&plan_file.display().to_string()), "{start}");
    let progress: Vec<f64> = notes
        .iter()
        .map(|n| n["progress"].as_f64().expect("progress"))
        .collect();
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
    let last = notes.last().expect("a note");
    assert_eq!(last["progress"], last["total"], "{last}");
    let message = last["message"].as_str().expect("message");
    assert!(
        message.starts_with("round ") && message.ends_with(" tasks done, 0 tokens"),
        "no model, no tokens: {message}"
    );

    let seen = &out["cancelled"];
    assert!(
        seen.get("completed_anyway").is_none(),
        "the call was cancelled: {seen:#}"
    );
    let plan = seen["plan_file"].as_str().expect("the plan file was named");
    let listed = out["list_runs"]["structured"]["runs"]
        .as_array()
        .expect("runs");
    let cancelled = listed
        .iter()
        .find(|r| r["plan_file"] == plan)
        .expect("the cancelled run is listed");
    assert_eq!(cancelled["status"], "interrupted", "{listed:#?}");
    assert_eq!(cancelled["question"], "What limits fast charging?");
    let after = &out["after_cancel"]["structured"];
    assert_eq!(after["status"], "interrupted", "{after:#}");
    let resumed = &out["resumed"]["result"]["structured"];
    assert_eq!(resumed["status"], "completed", "{:#}", out["resumed"]);
    assert_eq!(resumed["plan_file"], plan);
    assert!(
        resumed["report_markdown"]
            .as_str()
            .is_some_and(|r| r.contains("without a language model")),
        "resumed offline: {resumed:#}"
    );
    let resumed_notes = out["resumed"]["progress"].as_array().expect("notes");
    assert!(resumed_notes.len() >= 2, "{resumed_notes:#?}");
    let events = read_ndjson(&Path::new(plan).with_extension("events.ndjson"));
    let ends: Vec<&Value> = events_of(&events, "run_finished")
        .iter()
        .map(|e| &e["status"])
        .collect();
    assert_eq!(ends, ["interrupted", "completed"], "{events:#?}");

    let outside = &out["outside_corpus"];
    assert_eq!(outside["is_error"], true, "{outside:#}");
    let text = outside["texts"][0].as_str().expect("a message");
    assert!(
        text.contains("outside the folders this server may touch")
            && text.contains(&bare.outside().display().to_string()),
        "{text}"
    );
    let no_model = &out["no_model"];
    assert_eq!(no_model["is_error"], true, "{no_model:#}");
    let text = no_model["texts"][0].as_str().expect("a message");
    assert!(
        text.contains("no model is configured") && text.contains("`offline: true`"),
        "{text}"
    );
    let runs = out["list_runs_after"]["structured"]["runs"]
        .as_array()
        .expect("runs");
    // A cancellation that came after its quick run ended left one more completed run.
    let late = out["late_cancels"]
        .as_u64()
        .expect("late cancellations counted");
    assert_eq!(
        runs.len() as u64,
        2 + late,
        "the refused calls made no run: {runs:#?}"
    );
    assert!(runs.iter().all(|r| r["status"] == "completed"), "{runs:#?}");
}

/// `researchflow mcp ARGS` over stdio in `dir`, spoken to line by line: initialize, then one
/// `tools/call` of `research` with `arguments` (and a progress token); returns every message
/// on stdout up to its answer (the last), and the server's stderr once stdin is closed.
async fn raw_research(args: Vec<OsString>, dir: &Path, arguments: Value) -> (Vec<Value>, String) {
    let mut server = tokio::process::Command::new(env!("CARGO_BIN_EXE_researchflow"))
        .args(args)
        .current_dir(dir)
        .env_remove("OPENAI_API_KEY")
        .env_remove("AGENT_CONFIG")
        .env_remove("RESEARCHFLOW_CONFIG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the server");
    let mut stdin = server.stdin.take().expect("stdin");
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "research", "arguments": arguments, "_meta": {"progressToken": "p"}}}),
    ];
    for m in &messages {
        tokio::io::AsyncWriteExt::write_all(&mut stdin, format!("{m}\n").as_bytes())
            .await
            .expect("write");
    }
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let mut seen = Vec::new();
    loop {
        let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
            .await
            .expect("the server answers")
            .expect("read")
            .expect("a line before the answer");
        let message: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("not a protocol message on stdout: {e}: {line}"));
        let done = message["id"] == 2;
        seen.push(message);
        if done {
            break;
        }
    }
    drop(stdin);
    let ended = tokio::time::timeout(Duration::from_secs(30), server.wait_with_output())
        .await
        .expect("the server ends when stdin closes")
        .expect("wait");
    let log = String::from_utf8_lossy(&ended.stderr).to_string();
    assert!(ended.status.success(), "{log}");
    (seen, log)
}

/// `runs/` of the root, where `research` writes, is a symbolic link that leads out of the root:
/// the call is refused and nothing is written there.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_runs_folder_that_leads_out_of_the_root_is_refused() {
    let bare = Bare::new();
    let elsewhere = bare.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).expect("mkdir");
    std::os::unix::fs::symlink(&elsewhere, bare.root().join("runs")).expect("symlink");
    let arguments = json!({"query": "Where do runs go?", "offline": true, "corpus": "docs"});
    let (seen, _) = raw_research(bare.server_args(&[]), &bare.root(), arguments).await;
    let text = mcp::error_text(seen.last().expect("the answer"));
    assert!(
        text.contains("symbolic link") && text.contains("outside the folders"),
        "{text}"
    );
    let written: Vec<_> = std::fs::read_dir(&elsewhere).expect("read").collect();
    assert!(
        written.is_empty(),
        "nothing is written outside: {written:?}"
    );
}

/// A `max_time` of `i64::MAX` seconds once panicked the run's task ("task panicked") and left
/// its plan unfinished: it is refused, naming the argument and the bound, before any plan is
/// made.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_max_time_is_refused_before_any_plan_is_made() {
    let bare = Bare::new();
    let arguments = json!({"query": "How long?", "offline": true, "corpus": "docs",
        "max_time": 9_223_372_036_854_775_807_u64});
    let (seen, log) = raw_research(bare.server_args(&[]), &bare.root(), arguments).await;
    let answer = seen.last().expect("the answer");
    assert_eq!(answer["result"]["isError"], true, "{answer:#}");
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .expect("a message");
    assert!(
        text.contains("`max_time`") && text.contains("2592000"),
        "{text}"
    );
    assert!(!log.contains("panicked"), "{log}");
    let runs = bare.root().join("runs");
    let made = std::fs::read_dir(&runs).map(|d| d.count()).unwrap_or(0);
    assert_eq!(made, 0, "no plan is made");
}

/// A model server that echoes the API key in its error answers: the key is in no message on
/// stdout (the tool's result, its progress) and in no line of the server's trace log.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_echoed_by_the_model_server_is_in_no_message_and_no_log() {
    let llm = MockLlm::start().await;
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    llm.set_handler(move |req| {
        let auth = req.header("authorization").unwrap_or_default().to_string();
        // A retried 503 first, then a final 400, each quoting the key it was sent.
        let status = if counted.fetch_add(1, Ordering::SeqCst) == 0 {
            503
        } else {
            400
        };
        Reply::raw(
            status,
            &json!({"error": {"message": format!("bad request from `{auth}`")}}).to_string(),
        )
    });
    let setup = Setup::with_config(&llm, None, json!({}));
    let root = setup.path().join("root");
    std::fs::create_dir_all(&root).expect("mkdir");
    let args: Vec<OsString> = vec![
        "mcp".into(),
        "--root".into(),
        root.clone().into(),
        "--config".into(),
        setup.path().join("agent.config.json").into(),
        "-vv".into(),
    ];
    let (seen, log) = raw_research(args, &root, json!({"query": "Does the key leak?"})).await;
    assert!(
        calls.load(Ordering::SeqCst) >= 2,
        "the model server was asked"
    );
    let answer = seen.last().expect("the answer");
    let result = &answer["result"];
    let text = result.to_string();
    assert!(
        result["isError"] == true || result["structuredContent"]["status"] != "completed",
        "{answer:#}"
    );
    assert!(
        text.contains("bad request from `Bearer ***`"),
        "the server's words are kept, the key redacted: {text}"
    );
    for message in &seen {
        assert_no_key(&message.to_string(), "a message on stdout");
    }
    assert!(log.contains("TRACE"), "{log}");
    assert_no_key(&log, "the server's trace log");
    let runs = root.join("runs");
    for entry in std::fs::read_dir(&runs).expect("runs/") {
        let path = entry.expect("entry").path();
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert_no_key(&text, &path.display().to_string());
    }
}
