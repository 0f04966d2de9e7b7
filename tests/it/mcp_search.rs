//! Search provider `mcp`: a tool of a real MCP server, written on the official Python SDK
//! (`tests/mcp/search_server.py`: FastMCP on 1.x, MCPServer on 2.x, both installed by
//! `scripts/setup/mcp-python.sh`), as researchflow's search provider in whole workflows, over
//! stdio and streamable HTTP; a server that crashes mid-call (retried, as any transient
//! failure is), one that always crashes or never answers, a tool that does not exist, tools
//! whose answers hold no usable result, and `doctor` listing the server's tools.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::support;
use crate::support::python::{Sdk, script_path};
use crate::support::scenario::{
    KEY, Setup, events_of, node, one_search_then_final, read_ndjson, scripted,
};
use crate::support::{MockLlm, Reply, RunOutput};

/// A workflow whose search provider is the test's MCP server.
struct Mcp {
    _llm: MockLlm,
    setup: Setup,
    /// Where the server logs its calls, in a folder kept as long as the test.
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Mcp {
    /// The server started by `search.command` (with `flags`), its tool `tool`.
    async fn stdio(sdk: Sdk, tool: &str, flags: &[&str]) -> Mcp {
        let llm = MockLlm::start().await;
        scripted(&llm, one_search_then_final());
        Mcp::stdio_with(llm, json!({}), sdk, tool, flags)
    }

    /// [`Mcp::stdio`] with another mock LLM and more config.
    fn stdio_with(llm: MockLlm, extra: Value, sdk: Sdk, tool: &str, flags: &[&str]) -> Mcp {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("calls.ndjson");
        let mut command = vec![
            json!(sdk.python()),
            json!(script_path("search_server.py")),
            json!("--log"),
            json!(log),
        ];
        command.extend(flags.iter().map(|f| json!(f)));
        let search = json!({"provider": "mcp", "command": command, "tool": tool});
        Mcp::with_search(llm, extra, search, dir)
    }

    /// The server at `url` (streamable HTTP).
    async fn http(url: &str) -> Mcp {
        let llm = MockLlm::start().await;
        scripted(&llm, one_search_then_final());
        let dir = tempfile::tempdir().expect("tempdir");
        let search = json!({"provider": "mcp", "url": url, "tool": "web_search"});
        Mcp::with_search(llm, json!({}), search, dir)
    }

    fn with_search(llm: MockLlm, extra: Value, mut search: Value, dir: tempfile::TempDir) -> Mcp {
        search["arguments"] = json!({"query": "{query}", "limit": "{max_results}"});
        search["maxResults"] = json!(3);
        let mut config = json!({
            "search": search,
            "timeouts": {"llmMs": 5000, "searchMs": 8000}
        });
        if let (Some(config), Some(extra)) = (config.as_object_mut(), extra.as_object()) {
            config.extend(extra.clone());
        }
        let setup = Setup::with_config(&llm, None, config);
        Mcp {
            _llm: llm,
            setup,
            log: dir.path().join("calls.ndjson"),
            _dir: dir,
        }
    }

    /// The calls the server logged (each a JSON object of its arguments).
    /// The calls the server logged, each without the process id that answered it.
    fn calls(&self) -> Vec<Value> {
        let mut calls = self.logged();
        for call in &mut calls {
            if let Some(call) = call.as_object_mut() {
                call.remove("pid");
            }
        }
        calls
    }

    /// The process id of the server that took each call.
    fn pids(&self) -> Vec<u64> {
        self.logged()
            .iter()
            .filter_map(|c| c["pid"].as_u64())
            .collect()
    }

    fn logged(&self) -> Vec<Value> {
        if self.log.exists() {
            read_ndjson(&self.log)
        } else {
            Vec::new()
        }
    }

    async fn run(&self) -> RunOutput {
        self.setup.query("What is MCP?").run().await
    }

    fn sources(&self) -> Vec<String> {
        let plan = self.setup.plan();
        node(&plan, "b")["sources"]
            .as_array()
            .expect("sources")
            .iter()
            .map(|s| s["url"].as_str().expect("url").to_string())
            .collect()
    }

    fn b_errors(&self) -> String {
        let plan = self.setup.plan();
        let b = node(&plan, "b");
        assert_eq!(b["status"], "failed", "{b:#}");
        b["errors"].to_string()
    }

    fn set_timeout(&self, search_ms: u64) {
        let path = self.setup.path().join("agent.config.json");
        let mut config: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("config")).expect("json");
        config["timeouts"]["searchMs"] = json!(search_ms);
        std::fs::write(&path, config.to_string()).expect("write");
    }
}

fn expected_sources() -> Vec<String> {
    (1..=3)
        .map(|i| format!("https://mcp.example/q-only-search/{i}"))
        .collect()
}

#[tokio::test]
async fn a_fastmcp_server_is_the_search_provider_of_a_whole_workflow() {
    whole_workflow_over_stdio(Sdk::One).await;
}

#[tokio::test]
async fn an_mcpserver_of_sdk_2_is_the_search_provider_of_a_whole_workflow() {
    whole_workflow_over_stdio(Sdk::Two).await;
}

async fn whole_workflow_over_stdio(sdk: Sdk) {
    let mcp = Mcp::stdio(sdk, "web_search", &[]).await;
    mcp.run().await.success();
    assert_eq!(
        mcp.sources(),
        expected_sources(),
        "the `javascript:` result is dropped"
    );
    assert_eq!(
        mcp.calls(),
        [json!({"query": "q Only search", "limit": 3})],
        "`{{max_results}}` alone is sent as a number"
    );
    let report = mcp.setup.report();
    assert!(
        report.contains("https://mcp.example/q-only-search/1"),
        "{report}"
    );
    let plan = mcp.setup.plan();
    let info = node(&plan, "b")["info"].as_str().expect("info").to_string();
    assert!(info.contains("MCP result 1 for q Only search"), "{info}");
}

/// The server started by `search.command` inherits the environment, except the variables
/// that hold one of researchflow's keys: the model's key is none of a search server's business.
#[tokio::test]
async fn the_server_started_gets_the_environment_without_the_keys() {
    let mcp = Mcp::stdio(Sdk::Two, "web_search", &["--log-env"]).await;
    mcp.setup
        .query("What is MCP?")
        .env("OPENAI_API_KEY", KEY)
        .env("RF_TEST_KEY_COPY", KEY)
        .env("RF_TEST_PLAIN", "kept")
        .run()
        .await
        .success();
    let calls = mcp.calls();
    assert_eq!(calls.len(), 1, "{calls:#?}");
    assert_eq!(
        calls[0]["env"],
        json!({"RF_TEST_PLAIN": "kept"}),
        "{calls:#?}"
    );
}

#[tokio::test]
async fn a_fastmcp_server_over_streamable_http_is_the_search_provider() {
    over_http(Sdk::One).await;
}

#[tokio::test]
async fn an_mcpserver_of_sdk_2_over_streamable_http_is_the_search_provider() {
    over_http(Sdk::Two).await;
}

async fn over_http(sdk: Sdk) {
    let mut server = tokio::process::Command::new(sdk.python())
        .arg(script_path("search_server.py"))
        .arg("--http")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start the search server");
    let mut lines = BufReader::new(server.stdout.take().expect("stdout")).lines();
    let line = tokio::time::timeout(Duration::from_secs(60), lines.next_line())
        .await
        .expect("the server prints its port")
        .expect("read")
        .expect("a line");
    let port = line.strip_prefix("PORT ").expect("PORT <n>");
    let mcp = Mcp::http(&format!("http://127.0.0.1:{port}/mcp")).await;
    mcp.run().await.success();
    assert_eq!(mcp.sources(), expected_sources());
    server.kill().await.expect("stop the server");
}

#[tokio::test]
async fn a_server_that_crashes_mid_call_is_started_again_by_the_retry() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("crashed");
    let flag = marker.to_string_lossy().to_string();
    let mcp = Mcp::stdio(Sdk::Two, "web_search", &["--crash-once", &flag]).await;
    mcp.run().await.success();
    assert!(marker.exists(), "the first call crashed the server");
    assert_eq!(mcp.sources(), expected_sources());
    assert_eq!(mcp.calls().len(), 2, "the query was sent again");
    let events = mcp.setup.events();
    let retries = events_of(&events, "http_retry");
    assert_eq!(retries.len(), 1, "{retries:#?}");
    assert_eq!(retries[0]["what"], "mcp search", "{:#}", retries[0]);
}

#[tokio::test]
async fn a_server_that_always_crashes_fails_the_search_after_the_retries() {
    let mcp = Mcp::stdio(Sdk::One, "web_search", &["--crash"]).await;
    let run = mcp.run().await;
    run.code(1);
    let errors = mcp.b_errors();
    assert!(
        errors.contains("search_server.py"),
        "names the server: {errors}"
    );
    assert_eq!(mcp.calls().len(), 4, "the first call and three retries");
    assert_eq!(events_of(&mcp.setup.events(), "http_retry").len(), 3);
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_like_any_search() {
    let mcp = Mcp::stdio(Sdk::Two, "web_search", &["--hang"]).await;
    mcp.set_timeout(300);
    mcp.run().await.code(1);
    let errors = mcp.b_errors();
    assert!(errors.contains("did not answer within"), "{errors}");
    assert_eq!(mcp.calls().len(), 4, "each attempt starts the server again");
    // Every server it gave up on is gone with the run (each outlived it before, one a retry).
    let pids = mcp.pids();
    assert_eq!(pids.len(), 4, "{:?}", mcp.calls());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let alive = || {
        pids.iter()
            .filter(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists())
            .count()
    };
    while alive() > 0 && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert_eq!(alive(), 0, "servers left running: {pids:?}");
}

/// A tool whose results carry their page's text: the text goes the passage path of a page
/// read or a local document (cut, ranked for the task, the best passages shown and kept), not
/// into the results block as one long snippet.
#[tokio::test]
async fn a_tools_page_text_is_shown_by_its_best_passages() {
    let fact =
        "The relay accepts at most 64 concurrent sessions per tenant before it queues new ones.";
    let mcp = Mcp::stdio(Sdk::Two, "page_search", &[]).await;
    mcp.setup
        .query("How many concurrent sessions does the relay accept per tenant?")
        .run()
        .await
        .success();
    let plan = mcp.setup.plan();
    let b = node(&plan, "b");
    let passages: Vec<&str> = b["sources"][0]["passages"]
        .as_array()
        .expect("the source keeps its passages")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(passages.iter().any(|p| p.contains(fact)), "{passages:?}");
    // The page is about 4,000 characters; the passage around the fact at most 1,200.
    let shown: usize = passages.iter().map(|p| p.chars().count()).sum();
    assert!(shown <= 1200, "a passage, not the page: {shown}");
    let info = b["info"].as_str().expect("info");
    assert!(
        info.contains("passages of the page:") && info.contains(fact),
        "{info}"
    );
}

#[tokio::test]
async fn a_tool_that_does_not_exist_stops_the_run_naming_the_server_and_the_tool() {
    let mcp = Mcp::stdio(Sdk::Two, "nope", &[]).await;
    let run = mcp.run().await;
    run.code(2)
        .stderr_contains("has no tool `nope`")
        .stderr_contains("search_server.py")
        .stderr_contains("web_search");
}

#[tokio::test]
async fn answers_without_usable_results_fail_the_search_naming_the_server_and_the_tool() {
    let chatty = Mcp::stdio(Sdk::One, "chatty_search", &[]).await;
    chatty.run().await.code(1);
    let errors = chatty.b_errors();
    assert!(
        errors.contains("the MCP tool `chatty_search` of `")
            && errors.contains("search_server.py")
            && errors.contains("no list of results")
            && errors.contains("I could not find anything"),
        "{errors}"
    );
    let ftp = Mcp::stdio(Sdk::Two, "ftp_search", &[]).await;
    ftp.run().await.code(1);
    let errors = ftp.b_errors();
    assert!(
        errors.contains("`ftp_search`")
            && errors.contains("2 result(s), none with an http(s) `url`"),
        "{errors}"
    );
}

#[tokio::test]
async fn doctor_lists_the_servers_tools_and_finds_the_configured_one() {
    // As a model server that `doctor` probes answers.
    let llm = || async {
        let llm = MockLlm::llama_cpp_python().await;
        llm.set_handler(|_| Reply::json(&json!({"ok": true})));
        llm
    };
    let model = json!({"model": "mock-model"});
    let mcp = Mcp::stdio_with(llm().await, model.clone(), Sdk::Two, "web_search", &[]);
    let doctor = |setup: &Setup| {
        support::researchflow()
            .current_dir(setup.path())
            .args(["doctor", "--json"])
    };
    let run = doctor(&mcp.setup).run().await;
    run.success();
    let report = run.stdout_json();
    let found = &report["search"]["mcp"];
    let mut tools: Vec<&str> = found["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t.as_str().expect("name"))
        .collect();
    tools.sort_unstable();
    assert_eq!(
        tools,
        ["chatty_search", "ftp_search", "page_search", "web_search"],
        "{found:#}"
    );
    assert_eq!(found["tool_found"], true, "{found:#}");

    let wrong = Mcp::stdio_with(llm().await, model, Sdk::One, "nope", &[]);
    let run = doctor(&wrong.setup).run().await;
    run.code(1);
    let report = run.stdout_json();
    assert_eq!(report["search"]["mcp"]["tool_found"], false);
    assert_eq!(report["search"]["ok"], false);
    let table = support::researchflow()
        .current_dir(wrong.setup.path())
        .arg("doctor")
        .run()
        .await;
    table.code(1).stdout_contains("mcp tool `nope`: NOT listed");
}
