//! Hostile and oversized input, end to end through the real binary: files that never end or
//! are too big, YAML nested beyond reason, control characters and forged lines from search
//! results and model answers, huge snippets, an id that looks like a placeholder, and a password
//! in a URL. Each test is named after what broke.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::{self, offline_here};
use crate::support::scenario::{
    Agent, KEY, SEARCH_KEY, Setup, agent, events_of, final_over, node, one_search_then_final,
    read_ndjson, scripted, scripted_reviewed, searches_then_final,
};
use crate::support::{Fault, MockLlm, MockSearch, Reply, SearchKind, researchflow};

/// Runs that must end at once get this long before the runner kills them and fails the test.
const AT_ONCE: Duration = Duration::from_secs(10);

fn fixture(name: &str) -> PathBuf {
    fixtures::fixture("validate").join(name)
}

#[tokio::test]
async fn validate_plan_of_dev_zero_is_refused_at_once() {
    let out = researchflow()
        .args(["validate", "plan", "/dev/zero"])
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2)
        .stderr_contains("`/dev/zero` is a character device, not a regular file");
}

#[cfg(unix)]
#[tokio::test]
async fn validate_plan_of_a_fifo_is_refused_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("plan.json");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    let out = researchflow()
        .args(["validate", "plan"])
        .arg(&fifo)
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2).stderr_contains("a named pipe (FIFO)");
}

/// A 300 MB file that costs no disk: its length is set, nothing is written.
fn sparse_file(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).expect("create");
    file.set_len(300 * 1024 * 1024).expect("set_len");
    path
}

#[tokio::test]
async fn a_300_mb_plan_file_is_refused_by_validate_and_plan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let big = sparse_file(dir.path(), "big.json");
    let out = researchflow()
        .args(["validate", "plan"])
        .arg(&big)
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2)
        .stderr_contains("is 300.0 MB, over the limit of 256.0 MB");

    let config = dir.path().join("agent.config.json");
    std::fs::write(
        &config,
        json!({"baseURL": "http://127.0.0.1:9/v1", "model": "m"}).to_string(),
    )
    .expect("config");
    let out = researchflow()
        .arg("--config")
        .arg(&config)
        .arg("plan")
        .arg(&big)
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2)
        .stderr_contains("cannot read plan file")
        .stderr_contains("over the limit of 256.0 MB");
}

#[tokio::test]
async fn a_config_that_is_a_device_is_refused() {
    let out = researchflow()
        .args(["--config", "/dev/zero", "plan", "p.json"])
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2)
        .stderr_contains("cannot read config `/dev/zero`: it is a character device");
}

#[tokio::test]
async fn a_hundred_thousand_brackets_of_yaml_are_refused_not_parsed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let deep = dir.path().join("deep.yaml");
    std::fs::write(&deep, "[".repeat(100_000)).expect("write");
    let out = researchflow()
        .args(["validate", "steps"])
        .arg(&deep)
        .arg("--atoms")
        .arg(fixture("atoms"))
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2)
        .stderr_contains("deep.yaml` nests deeper than 64 levels at line 1");
}

#[tokio::test]
async fn yaml_nested_ten_deep_still_validates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let doc = dir.path().join("steps.yaml");
    let text = "target: t\nplan:\n  steps:\n    - id: read_file\n      step_id: read\n      target: Read\n      inputs:\n        file_path: docs/notes.md\n        encoding:\n          a:\n            b: [1, {c: [2, {d: 3}]}]\n";
    std::fs::write(&doc, text).expect("write");
    let out = researchflow()
        .args(["validate", "steps"])
        .arg(&doc)
        .arg("--atoms")
        .arg(fixture("atoms"))
        .timeout(AT_ONCE)
        .run()
        .await;
    out.success();
    assert_eq!(out.stdout_json()["valid"], true);
}

/// The password of the URLs in the tests below: no output may hold it.
const URL_PASSWORD: &str = "hunter2-URL-SECRET";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_password_is_never_printed_or_written() {
    let llm = MockLlm::start().await;
    let with_password = with_password(&llm.base_url());
    // A server that fails and echoes the address it was called at, password and all.
    let echo = Fault::status(
        500,
        &json!({"error": {"message": format!("upstream {with_password} failed")}}).to_string(),
    );
    llm.set_handler(move |_| Reply::fault(echo.clone()));
    let s = Setup::with_config(
        &llm,
        None,
        json!({"baseURL": with_password, "retry": {"maxRetries": 1, "baseDelayMs": 1, "maxDelayMs": 2}}),
    );
    let out = s.query("Q?").args(["--max-rounds", "2"]).run().await;
    assert_ne!(out.status, 0, "every call failed: {}", out.stderr);
    let events = std::fs::read_to_string(s.path().join("out/plan.events.ndjson")).expect("events");
    let plan = std::fs::read_to_string(s.out()).expect("plan");
    let transcript =
        std::fs::read_to_string(s.path().join("out/plan.transcript.jsonl")).expect("transcript");
    assert!(
        transcript.contains("user:***@127.0.0.1"),
        "the transcript names the server: {transcript}"
    );
    assert!(
        out.stderr.contains("user:***@127.0.0.1"),
        "the failing address is still named: {}",
        out.stderr
    );
    for (name, text) in [
        ("stderr", &out.stderr),
        ("stdout", &out.stdout),
        ("events", &events),
        ("plan", &plan),
        ("transcript", &transcript),
    ] {
        assert!(
            !text.contains(URL_PASSWORD),
            "{name} holds the password:\n{text}"
        );
    }
}

/// `url` (`http://127.0.0.1:PORT...`) with the user `user` and the password [`URL_PASSWORD`].
fn with_password(url: &str) -> String {
    url.replacen("http://", &format!("http://user:{URL_PASSWORD}@"), 1)
}

/// Every file under `dir` but the config, which holds the password as the user wrote it.
fn written_files(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).expect("read_dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                folders.push(path);
            } else if path.file_name().is_some_and(|n| n != "agent.config.json") {
                let bytes = std::fs::read(&path).expect("read");
                files.push((path, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    files
}

/// Neither the run's output nor any file under `dir` holds [`URL_PASSWORD`]; `what` names the
/// run in the failure.
#[track_caller]
fn assert_no_password(what: &str, out: &support::RunOutput, dir: &Path) {
    for (stream, text) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        assert!(
            !text.contains(URL_PASSWORD),
            "{what}: {stream} holds the password:\n{text}"
        );
    }
    for (path, text) in written_files(dir) {
        assert!(
            !text.contains(URL_PASSWORD),
            "{what}: `{}` holds the password:\n{text}",
            path.display()
        );
    }
}

/// A server that refuses the key, or nothing listening: the endpoint cannot be used, and the
/// message that says so names it. Before, that message carried the password (`workflow`'s
/// stdout, stderr, outcome and events; `thinkon`'s stderr; `doctor`'s table and JSON).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_password_is_in_no_message_naming_an_endpoint_that_cannot_be_used() {
    let llm = MockLlm::start().await;
    let refusing = with_password(&llm.base_url());
    // The 401 also echoes the address it was called at, password and all.
    let echo = json!({"error": {"message": format!("no access to {refusing}")}}).to_string();
    llm.set_handler(move |_| Reply::raw(401, &echo));
    let unreachable = with_password("http://127.0.0.1:1/v1");
    for url in [&refusing, &unreachable] {
        let retry = json!({"maxRetries": 0, "baseDelayMs": 1, "maxDelayMs": 2});
        let s = Setup::with_config(&llm, None, json!({"baseURL": url, "retry": retry}));
        let workflow = s.query("Q?").run().await;
        workflow.code(2).stderr_contains("user:***@127.0.0.1");
        assert_no_password(&format!("workflow on {url}"), &workflow, s.path());
        let thinkon = s
            .cmd()
            .args(["thinkon", "--goal", "What is G?"])
            .run()
            .await;
        thinkon.code(2).stderr_contains("user:***@127.0.0.1");
        assert_no_password(&format!("thinkon on {url}"), &thinkon, s.path());
        for json in [false, true] {
            let args: &[&str] = if json {
                &["doctor", "--json"]
            } else {
                &["doctor"]
            };
            let doctor = s.cmd().args(args).run().await;
            doctor.code(1).stdout_contains("user:***@127.0.0.1");
            assert_no_password(&format!("{args:?} on {url}"), &doctor, s.path());
        }
    }
}

/// Reviewers whose server refuses the key: the review fails, and its files, events and
/// summary name the server. Before, `.review.json` and `.review.md` carried the password.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_password_is_in_no_review_file_when_the_reviewers_refuse_the_key() {
    let llm = MockLlm::start().await;
    let refusing = with_password(&llm.base_url());
    let echo = json!({"error": {"message": format!("no access to {refusing}")}}).to_string();
    let (first, second) = (echo.clone(), echo);
    scripted_reviewed(
        &llm,
        one_search_then_final(),
        move |_| Reply::raw(401, &first),
        move |_| Reply::raw(401, &second),
    );
    let config = json!({"baseURL": refusing, "review": {"enabled": true}});
    let s = Setup::with_config(&llm, None, config);
    let workflow = s.query("Q?").run().await;
    workflow.success();
    assert_eq!(workflow.stdout_json()["review"]["status"], "failed");
    let notes = std::fs::read_to_string(s.path().join("out/plan.review.md")).expect("notes");
    assert!(notes.contains("user:***@127.0.0.1"), "{notes}");
    assert_no_password("workflow", &workflow, s.path());

    let review = s.cmd().args(["review", "out/plan.json"]).run().await;
    review.code(2).stderr_contains("user:***@127.0.0.1");
    assert_no_password("review", &review, s.path());
}

/// The same for the web search provider's `search.baseURL`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_url_password_is_in_no_message_naming_the_provider() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let search = MockSearch::start(SearchKind::Searxng).await;
    search.require_key("not-the-configured-key");
    let config = json!({"search": {"provider": "searxng", "apiKey": SEARCH_KEY,
        "baseURL": with_password(&search.base_url())}});
    let s = Setup::with_config(&llm, None, config);
    let workflow = s.query("Q?").run().await;
    workflow.code(2).stderr_contains("user:***@127.0.0.1");
    assert_no_password("workflow", &workflow, s.path());
    let doctor = s.cmd().arg("doctor").run().await;
    doctor.code(1).stdout_contains("user:***@127.0.0.1");
    assert_no_password("doctor", &doctor, s.path());
}

/// `Authorization: Basic` of `user:` [`URL_PASSWORD`].
const BASIC: &str = "Basic dXNlcjpodW50ZXIyLVVSTC1TRUNSRVQ=";

/// Each request's `Authorization` headers.
fn authorizations(requests: &[support::Recorded]) -> Vec<Vec<String>> {
    requests
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .filter(|(name, _)| name == "authorization")
                .map(|(_, value)| value.clone())
                .collect()
        })
        .collect()
}

/// A base URL with `user:password@` and a key: reqwest turned the user part into Basic auth
/// and we added the key as Bearer, two `Authorization` headers. Now the key wins, and the
/// user part is sent as Basic auth only without a key; either way, one header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_authorization_header_is_sent_whatever_the_url_and_the_key() {
    for with_keys in [true, false] {
        let llm = MockLlm::start().await;
        let search = MockSearch::start(SearchKind::Searxng).await;
        let key = |k: &str| {
            if with_keys {
                k.to_string()
            } else {
                String::new()
            }
        };
        let config = json!({"baseURL": with_password(&llm.base_url()), "apiKey": key(KEY),
            "search": {"provider": "searxng", "apiKey": key(SEARCH_KEY),
                "baseURL": with_password(&search.base_url())}});
        let s = Setup::with_config(&llm, None, config);
        // `doctor`'s round trip asks for `{"ok": true}`.
        llm.set_handler(|_| Reply::json(&json!({"ok": true})));
        s.cmd().arg("doctor").run().await.success();
        scripted(&llm, one_search_then_final());
        s.query("Q?").run().await.success();
        let (llm_auth, search_auth) = if with_keys {
            (format!("Bearer {KEY}"), format!("Bearer {SEARCH_KEY}"))
        } else {
            (BASIC.to_string(), BASIC.to_string())
        };
        let sent = authorizations(&llm.requests());
        assert!(sent.len() >= 5, "a run and a doctor: {sent:?}");
        assert!(
            sent.iter().all(|a| a == std::slice::from_ref(&llm_auth)),
            "{sent:?}"
        );
        let sent = authorizations(&search.requests());
        assert!(sent.len() >= 2, "a search and a doctor: {sent:?}");
        assert!(
            sent.iter().all(|a| a == std::slice::from_ref(&search_auth)),
            "{sent:?}"
        );
    }
}

/// [`BASIC`]'s credential alone, as a server may echo it without the scheme.
const BASIC_CREDENTIAL: &str = "dXNlcjpodW50ZXIyLVVSTC1TRUNSRVQ=";

/// An error body that echoes the request's `Authorization` header, its credential alone and
/// the password it decodes to, as some proxies and debug servers do.
fn echoing_authorization(status: u16) -> impl Fn(&support::Recorded) -> Reply + Send + Sync {
    move |req| {
        let header = req
            .headers
            .iter()
            .find(|(name, _)| name == "authorization")
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        let credential = header
            .strip_prefix("Basic ")
            .unwrap_or_default()
            .to_string();
        let message = format!(
            "bad request with Authorization: {header} (credential {credential}, password {URL_PASSWORD})"
        );
        Reply::raw(status, &json!({"error": {"message": message}}).to_string())
    }
}

/// Neither [`URL_PASSWORD`] nor its Basic credential is in the run's output or any file under
/// `dir`.
#[track_caller]
fn assert_no_basic_credential(what: &str, out: &support::RunOutput, dir: &Path) {
    assert_no_password(what, out, dir);
    let streams = [("stdout", &out.stdout), ("stderr", &out.stderr)];
    let files = written_files(dir);
    let files = files.iter().map(|(p, t)| (p.to_str().unwrap_or("?"), t));
    for (name, text) in streams.into_iter().chain(files) {
        assert!(
            !text.contains(&BASIC_CREDENTIAL[..BASIC_CREDENTIAL.len() - 1]),
            "{what}: {name} holds the Basic credential:\n{text}"
        );
    }
}

/// A base URL with `user:password@` and no key, and a server whose 400 and 500 bodies echo the
/// `Authorization` header: the `Basic` credential is masked as an echoed key is (`Basic ***`)
/// in the reason, stderr, plan, events, transcript, HTML and `doctor` (table and JSON).
/// Before, the base64 of `user:password` was in all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_basic_credential_is_masked_everywhere() {
    for status in [500, 400] {
        let llm = MockLlm::start().await;
        llm.set_handler(echoing_authorization(status));
        let retry = json!({"maxRetries": 1, "baseDelayMs": 1, "maxDelayMs": 2});
        let config =
            json!({"baseURL": with_password(&llm.base_url()), "apiKey": "", "retry": retry});
        let s = Setup::with_config(&llm, None, config);
        let workflow = s.query("Q?").args(["--max-rounds", "2"]).run().await;
        assert_ne!(workflow.status, 0, "every call failed: {}", workflow.stderr);
        assert!(
            workflow.stderr.contains("Basic ***"),
            "the echo is still quoted, masked: {}",
            workflow.stderr
        );
        assert_no_basic_credential(&format!("workflow ({status})"), &workflow, s.path());
        let view = s.cmd().args(["view", "out/plan.json"]).run().await;
        view.success();
        assert!(s.path().join("out/plan.html").exists(), "{}", view.stderr);
        assert_no_basic_credential(&format!("view ({status})"), &view, s.path());
        for args in [&["doctor"][..], &["doctor", "--json"]] {
            let doctor = s.cmd().args(args).run().await;
            doctor.code(1).stdout_contains("Basic ***");
            assert_no_basic_credential(&format!("{args:?} ({status})"), &doctor, s.path());
        }
    }
}

/// A 401 from a model or search server reached with `user:password@` and no key: the Basic
/// credential of the URL was refused, and the message says so and where to correct it. Before,
/// it said to set `apiKey`, which was never sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_url_user_part_is_named_not_the_api_key() {
    let llm = MockLlm::start().await;
    // `/models` too, so that `doctor` is refused at its first request.
    llm.require_authorization("Basic another-credential");
    let config = json!({"baseURL": with_password(&llm.base_url()), "apiKey": ""});
    let s = Setup::with_config(&llm, None, config);
    let workflow = s.query("Q?").run().await;
    workflow
        .code(2)
        .stderr_contains("refused the user and password of its URL (HTTP 401, sent as Basic auth): correct them in `baseURL` (or `roles.planning.baseURL`)");
    assert!(
        !workflow.stderr.contains("refused the API key"),
        "{}",
        workflow.stderr
    );
    assert_no_basic_credential("workflow", &workflow, s.path());
    for args in [&["doctor"][..], &["doctor", "--json"]] {
        let doctor = s.cmd().args(args).run().await;
        doctor.code(1).stdout_contains(
            "the user and password of the URL were refused (HTTP 401, sent as Basic auth): correct them in `baseURL`",
        );
        assert!(
            !doctor.stdout.contains("key was refused"),
            "{}",
            doctor.stdout
        );
        assert_no_basic_credential(&format!("{args:?}"), &doctor, s.path());
    }

    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let search = MockSearch::start(SearchKind::Searxng).await;
    search.require_key("a-key-never-configured");
    let config = json!({"search": {"provider": "searxng", "apiKey": "",
        "baseURL": with_password(&search.base_url())}});
    let s = Setup::with_config(&llm, None, config);
    let workflow = s.query("Q?").run().await;
    workflow.code(2).stderr_contains(
        "refused the user and password of its URL (HTTP 401, sent as Basic auth): correct them in `search.baseURL`",
    );
    assert!(
        !workflow.stderr.contains("refused the API key"),
        "{}",
        workflow.stderr
    );
    assert_no_basic_credential("workflow (search)", &workflow, s.path());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_config_with_a_key_that_others_can_read_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let config = s.path().join("agent.config.json");
    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = s.query("Q?").run().await;
    out.success().stderr_contains(
        "holds an API key and other users can read it: restrict it with `chmod 600",
    );
    assert!(!out.stderr.contains(KEY), "{}", out.stderr);

    std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    scripted(&llm, one_search_then_final());
    let out = s
        .cmd()
        .args(["workflow", "--query", "Again?", "--out", "again.json"])
        .run()
        .await;
    out.success();
    assert!(
        !out.stderr.contains("other users can read it"),
        "{}",
        out.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_after_nev_is_called_new_and_is_not_lost_next_round() {
    let llm = MockLlm::start().await;
    let task = |title: &str| {
        Reply::json(&json!({
            "is_final": false,
            "tasks": [{"title": title, "type": "search", "p_node": "a:info"}],
            "next_check_list": ["NEW1:summary"]
        }))
    };
    llm.push_all([task("First look"), task("Second look")]);
    let s = Setup::new(&llm, None);
    let plan_path = s.path().join("p.json");
    let plan = json!({
        "version": 1, "workflow_id": "wf", "created_at": "2026-01-01T00:00:00Z",
        "check_list": {"latest_id": "nev", "latest_batch": 1, "refs": ["a:info"]},
        "nodes": [{"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "",
                   "batch": 1, "type": "start", "status": "completed"}]
    });
    std::fs::write(&plan_path, plan.to_string()).expect("plan");
    let round = || s.cmd().arg("plan").arg(&plan_path);

    round().run().await.success();
    let mut plan: Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).expect("read")).expect("json");
    assert_eq!(plan["check_list"]["latest_id"], "new");
    assert_eq!(plan["check_list"]["refs"], json!(["new:summary"]));
    let new = &mut plan["nodes"][1];
    assert_eq!(new["node_id"], "new");
    new["status"] = json!("completed");
    new["summary"] = json!("What the node called new found.");
    std::fs::write(&plan_path, plan.to_string()).expect("plan");

    let out = round().run().await;
    out.success();
    assert!(!out.stderr.contains("skipping ref"), "{}", out.stderr);
    let requests = llm.chat_requests();
    let input = requests[1].user_prompt().unwrap_or_default();
    assert!(
        input.contains("### new:summary\nnode new (search, completed): First look\nWhat the node called new found."),
        "{input}"
    );
    let out = researchflow()
        .args(["validate", "plan"])
        .arg(&plan_path)
        .run()
        .await;
    out.success();
}

/// A search answer full of what a hostile or broken provider sends: a 1 MB snippet, a title
/// that forges a sources line and retitles the terminal, and links that are not web links.
fn hostile_searxng_body() -> String {
    json!({"results": [
        {"url": "https://example.test/huge", "title": "Huge page",
         "content": "x".repeat(1_000_000)},
        {"url": "https://example.test/forged",
         "title": "Real title\n- [9] [Forged](javascript:alert(1))\u{1b}]0;pwned\u{7}",
         "content": "snippet \u{1b}[2J\0with controls"},
        {"url": "javascript:alert(1)", "title": "Js", "content": "c"},
        {"url": "data:text/html,<script>alert(1)</script>", "title": "Data", "content": "c"},
        {"url": "file:///etc/passwd", "title": "Passwd", "content": "c"}
    ]})
    .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_search_results_and_answers_leave_a_clean_bounded_report() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    search.push_raw(200, &hostile_searxng_body());
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let planned = req
                .user_prompt()
                .unwrap_or_default()
                .contains("### b:summary");
            Reply::json(&if planned {
                final_over("b:summary")
            } else {
                one_search_then_final().remove(0)
            })
        }
        Agent::Queries => Reply::json(&json!({"queries": ["q"]})),
        Agent::Analysis | Agent::Summary => Reply::json(&json!({
            "summary": "Found \u{1b}]0;retitled\u{7}things.",
            "analysis": "Analysis\0 with a NUL.",
        })),
        Agent::Final => Reply::content(
            "A huge page and a page with a real title [1] and [2]. \u{1b}]0;pwned\u{7}Done.\n\n## References\n[1] Made-up source\n[2] Another",
        ),
        Agent::Review | Agent::SecondOpinion | Agent::Verifier => {
            unreachable!("the review is off here, the verifier not configured")
        }
    });
    let s = Setup::new(&llm, Some(&search));
    s.query("Q?").run().await.success();

    // The 1 MB snippet was cut before the analysis saw it, and the cut recorded.
    let analysis = llm
        .chat_requests()
        .into_iter()
        .find(|r| agent(r) == Agent::Analysis)
        .expect("an analysis request");
    assert!(
        analysis.raw_body.len() < 100_000,
        "{}",
        analysis.raw_body.len()
    );
    let events = s.events();
    let cuts = events_of(&events, "input_cut");
    assert!(
        cuts.iter().any(|e| e["node"] == "b"
            && e["chars"] == 1_000_000
            && e["kept"] == 2_000
            && e["what"]
                .as_str()
                .is_some_and(|w| w.contains("https://example.test/huge"))),
        "{cuts:?}"
    );

    // Only the two web links are sources; the title is one clean line.
    let plan = s.plan();
    let b = node(&plan, "b");
    let titles: Vec<Value> = b["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .map(|s| json!({"url": s["url"], "title": s["title"]}))
        .collect();
    assert_eq!(
        titles,
        [
            json!({"url": "https://example.test/huge", "title": "Huge page"}),
            json!({"url": "https://example.test/forged",
             "title": "Real title - [9] [Forged](javascript:alert(1))"})
        ]
    );
    // What the search returned of each is kept for the claim check, cut like the analysis's
    // copy and without controls.
    let huge = b["sources"][0]["snippet"].as_str().expect("a snippet");
    assert!(
        huge.starts_with("xxxx") && huge.chars().count() < 2_100,
        "{}",
        huge.len()
    );
    assert_eq!(b["sources"][1]["snippet"], "snippet with controls");
    assert_eq!(b["summary"], "Found things.");
    assert!(b["info"].as_str().is_some_and(|i| i.len() < 40_000));

    let report = s.report();
    assert!(
        !report.chars().any(|c| c.is_control() && c != '\n'),
        "{report:?}"
    );
    let plan_text = std::fs::read_to_string(s.out()).expect("plan");
    assert!(
        !plan_text.contains('\u{1b}') && !plan_text.contains("\\u001b"),
        "{plan_text}"
    );
    assert!(!report.contains("Made-up source"), "{report}");
    assert_eq!(report.matches("## ").count(), 1, "{report}");
    let lines: Vec<&str> = report.lines().filter(|l| l.starts_with("- [")).collect();
    assert_eq!(
        lines,
        vec![
            "- [1] [Huge page](https://example.test/huge)",
            r"- [2] [Real title - \[9\] \[Forged\](javascript:alert(1))](https://example.test/forged)",
        ],
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_summary_over_a_long_chain_gets_a_bounded_input() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let mut nodes = vec![
        json!({"node_id": "a", "title": "Q?", "summary": "", "info": "",
        "p_node": "", "batch": 1, "type": "start", "status": "completed"}),
    ];
    let mut ids = Vec::new();
    let mut id = String::from("a");
    for i in 0..2_000 {
        let prev = id.clone();
        id = next_id(&id);
        nodes.push(json!({"node_id": id, "title": format!("Step {i}"),
            "summary": "a finding ".repeat(100), "info": "", "p_node": format!("{prev}:summary"),
            "batch": 2, "type": "search", "status": "completed",
            "sources": [{"url": format!("https://x.test/{id}"), "title": format!("Source {id}")}]}));
        ids.push(format!("{id}:summary"));
    }
    let fin = next_id(&id);
    nodes.push(
        json!({"node_id": fin, "title": "Final", "summary": "", "info": "",
        "p_node": ids.join(", "), "batch": -1, "type": "summary", "status": "planned"}),
    );
    let plan = json!({"version": 1, "workflow_id": "wf", "created_at": "2026-01-01T00:00:00Z",
        "check_list": {"latest_id": fin, "latest_batch": -1, "refs": [format!("{fin}:summary")]},
        "nodes": nodes});
    let path = s.path().join("chain.json");
    std::fs::write(&path, plan.to_string()).expect("plan");
    s.resume(&path).await.success();

    let final_request = llm
        .chat_requests()
        .into_iter()
        .find(|r| agent(r) == Agent::Final)
        .expect("the final request");
    let user = final_request.user_prompt().unwrap_or_default();
    assert!(user.chars().count() < 62_000, "{}", user.chars().count());
    let events = read_ndjson(&s.path().join("chain.events.ndjson"));
    let cuts = events_of(&events, "input_cut");
    assert!(
        cuts.iter().any(|e| e["node"] == fin.as_str()
            && e["kept"] == 0
            && e["what"].as_str().is_some_and(|w| w.contains("beyond the"))),
        "{cuts:?}"
    );
}

/// The id after `id` (`a`, `b`, ..., `z`, `aa`, ...).
fn next_id(id: &str) -> String {
    let mut chars: Vec<u8> = id.bytes().collect();
    for i in (0..chars.len()).rev() {
        if chars[i] == b'z' {
            chars[i] = b'a';
        } else {
            chars[i] += 1;
            return String::from_utf8(chars).expect("ascii");
        }
    }
    format!("a{}", String::from_utf8(chars).expect("ascii"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_result_in_the_planner_input_is_cut_and_recorded() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let plan = json!({"version": 1, "workflow_id": "wf", "created_at": "2026-01-01T00:00:00Z",
    "check_list": {"latest_id": "b", "latest_batch": 2, "refs": ["b:summary"]},
    "nodes": [
        {"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "",
         "batch": 1, "type": "start", "status": "completed"},
        {"node_id": "b", "title": "Big", "summary": "s".repeat(500_000), "info": "",
         "p_node": "a:info", "batch": 2, "type": "search", "status": "completed"}
    ]});
    let path = s.path().join("big.json");
    std::fs::write(&path, plan.to_string()).expect("plan");
    s.resume(&path).await.success();
    let planner = llm
        .chat_requests()
        .into_iter()
        .find(|r| agent(r) == Agent::Planner)
        .expect("a planner request");
    assert!(
        planner.raw_body.len() < 40_000,
        "{}",
        planner.raw_body.len()
    );
    let events = read_ndjson(&s.path().join("big.events.ndjson"));
    let cuts = events_of(&events, "input_cut");
    assert!(
        cuts.iter().any(|e| e["node"] == "planner"
            && e["what"] == "segment `b:summary`"
            && e["chars"] == 500_000
            && e["kept"] == 12_000),
        "{cuts:?}"
    );
}

/// regression: an answer was read whole, however large: a broken or hostile server could fill
/// the memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_larger_than_any_api_sends_is_refused_not_read_whole() {
    let llm = MockLlm::start().await;
    let huge = format!(
        "{{\"choices\": [{{\"message\": {{\"content\": \"{}\"}}}}]}}",
        "x".repeat(33 * 1024 * 1024)
    );
    llm.set_handler(move |_| Reply::raw(200, &huge));
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").timeout(Duration::from_secs(30)).run().await;
    out.code(1);
    let events = std::fs::read_to_string(s.path().join("out/plan.events.ndjson")).expect("events");
    assert!(events.contains("larger than 32 MiB"), "{events}");
}

/// regression: opening `/dev/null.json`-like paths locked `<device>.lock` beside the device.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_path_that_is_not_a_file_gets_no_lock_beside_it() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    std::fs::create_dir_all(s.path().join("folder.json")).expect("mkdir");
    let out = s
        .cmd()
        .args(["workflow", "--plan", "folder.json"])
        .timeout(AT_ONCE)
        .run()
        .await;
    out.code(2);
    assert!(out.stderr.contains("not a regular file"), "{}", out.stderr);
    assert!(!s.path().join("folder.json.lock").exists());
}

/// The strings of a JSON document (at any depth) that hold a control character other than a
/// newline or a tab.
fn strings_with_controls(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) if s.chars().any(|c| c.is_control() && c != '\n' && c != '\t') => {
            vec![format!("{s:?}")]
        }
        Value::Array(items) => items.iter().flat_map(strings_with_controls).collect(),
        Value::Object(map) => map.values().flat_map(strings_with_controls).collect(),
        _ => Vec::new(),
    }
}

/// A corpus whose titles and text retitle the terminal (`ESC ]0;...BEL`) and carry a raw C1
/// CSI (U+009B): before, they stayed in the plan's titles, sources, summaries and info, in
/// `diff --json`, and as `\u001b` in the event log, which `jq -r` replays live.
#[tokio::test]
async fn control_characters_of_a_corpus_reach_no_plan_event_report_or_diff() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus");
    std::fs::write(
        corpus.join("solid.md"),
        "# Solid \u{1b}]0;pwned\u{7} batteries\n\nSolid-state batteries store more energy \
         \u{1b}[2J than lithium-ion cells. They use a solid electrolyte \u{9b}31m instead.\n",
    )
    .expect("md");
    std::fs::write(
        corpus.join("ion.html"),
        "<html><head><title>Lithium \u{9b}2J ion batteries</title></head><body><p>Lithium-ion \
         batteries \u{1b}]0;x\u{7} are cheap and common batteries today.</p></body></html>",
    )
    .expect("html");
    let run = offline_here(dir.path(), &["workflow"])
        .args(["--query", "How do batteries \u{1b}]0;q\u{7}compare?"])
        .args(["--out", "new.json"])
        .run()
        .await;
    run.success();
    let plan: Value = support::scenario::read_json(&dir.path().join("new.json"));
    let b = node(&plan, "b");
    assert!(
        b["sources"].as_array().is_some_and(|s| !s.is_empty()),
        "the corpus was found: {plan:#}"
    );
    assert_eq!(node(&plan, "a")["title"], "How do batteries compare?");
    assert_eq!(strings_with_controls(&plan), Vec::<String>::new());
    let events = std::fs::read_to_string(dir.path().join("new.events.ndjson")).expect("events");
    assert!(
        !events.contains("\\u001b") && !events.contains('\u{9b}'),
        "{events}"
    );
    for event in read_ndjson(&dir.path().join("new.events.ndjson")) {
        assert_eq!(strings_with_controls(&event), Vec::<String>::new());
    }
    let report = std::fs::read_to_string(dir.path().join("new.report.md")).expect("report");
    assert!(
        !report.chars().any(|c| c.is_control() && c != '\n'),
        "{report:?}"
    );

    // Yesterday's plan had only the question: every source and finding is new.
    let old = json!({"version": 1, "workflow_id": "wf-old", "nodes": [{"node_id": "a",
        "title": "How do batteries compare?", "summary": "", "info": "", "p_node": "",
        "batch": 1, "type": "start", "status": "completed"}]});
    std::fs::write(dir.path().join("old.json"), old.to_string()).expect("old plan");
    let diff = researchflow()
        .current_dir(dir.path())
        .args(["diff", "old.json", "new.json", "--json"])
        .run()
        .await;
    diff.success();
    let printed = diff.stdout_json();
    assert!(
        printed["sources_new"]
            .as_array()
            .is_some_and(|s| s.len() == 2),
        "{printed:#}"
    );
    assert_eq!(strings_with_controls(&printed), Vec::<String>::new());
}

/// A question that is nothing but control characters (and white space) was accepted as the
/// start of a plan; a batch line of them was refused without saying why.
#[tokio::test]
async fn a_question_of_only_control_characters_is_refused_naming_where_it_came_from() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dir.path().join("corpus")).expect("corpus");
    std::fs::write(dir.path().join("corpus/a.md"), "# A\n\nSome text.\n").expect("doc");
    let out = offline_here(dir.path(), &["workflow"])
        .args(["--out", "q.json"])
        .args(["--query", " \u{1b}]0;x\u{7}\u{9b}2J\u{7f} "])
        .run()
        .await;
    out.code(2).stderr_contains("`--query`");
    assert!(out.stderr.contains("control characters"), "{}", out.stderr);
    assert!(!dir.path().join("q.json").exists());

    std::fs::write(
        dir.path().join("questions.txt"),
        "A real question?\n\u{1b}[2J\u{7}\n",
    )
    .expect("questions");
    let out = offline_here(dir.path(), &["batch", "questions.txt", "--out-dir", "out"])
        .run()
        .await;
    out.code(2).stderr_contains("questions.txt` line 2");
    assert!(out.stderr.contains("control characters"), "{}", out.stderr);
}

/// Where `tag` (`<script`) stands in `text` as raw HTML: not escaped by a backslash.
fn raw_tags(text: &str, tag: &str) -> usize {
    text.match_indices(tag)
        .filter(|(at, _)| !text[..*at].ends_with('\\'))
        .count()
}

/// A final answer holding `<script>` and `<img onerror=...>`: before, they reached the report
/// as raw HTML (which a Markdown viewer may run), while the review's notes escaped them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn markup_in_a_model_answer_is_shown_as_text_in_the_report() {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Only search"])),
        Agent::Queries => Reply::json(&json!({"queries": ["q"]})),
        Agent::Analysis | Agent::Summary => {
            Reply::json(&json!({"summary": "Found.", "analysis": "Analysis."}))
        }
        Agent::Final => Reply::content(
            "## Answer\n\nBatteries <script>alert(1)</script> differ.\n\n\
             <img src=x onerror=alert(1)>\n\nKeep `Vec<u8>` and:\n\n```\nlet v: Vec<u8>;\n```\n",
        ),
        Agent::Review | Agent::SecondOpinion | Agent::Verifier => {
            unreachable!("the review is off here, the verifier not configured")
        }
    });
    let s = Setup::new(&llm, None);
    s.query("Which <b>cells</b> last?").run().await.success();
    let report = s.report();
    for tag in ["<script", "</script", "<img", "<b>"] {
        assert_eq!(raw_tags(&report, tag), 0, "raw `{tag}` in:\n{report}");
    }
    // Still readable: the markup shows as written, the Markdown and the code are as they were.
    for kept in [
        "# Which \\<b\\>cells\\</b\\> last?",
        "## Answer",
        "Batteries \\<script>alert(1)\\</script> differ.",
        "\\<img src=x onerror=alert(1)>",
        "Keep `Vec<u8>` and:",
        "```\nlet v: Vec<u8>;\n```",
    ] {
        assert!(report.contains(kept), "`{kept}` not in:\n{report}");
    }
}

/// A plan whose check list names node `zz` and whose planned node `c` reads node `yy`, which
/// do not exist.
fn plan_with_unknown_refs() -> Value {
    json!({"version": 1, "workflow_id": "wf-refs",
    "check_list": {"latest_id": "c", "latest_wave": 3, "refs": ["zz:summary", "b:summary"]},
    "nodes": [
        {"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "",
         "batch": 1, "type": "start", "status": "completed"},
        {"node_id": "b", "title": "Search", "summary": "Found.", "info": "", "p_node": "a:info",
         "batch": 2, "type": "search", "status": "completed"},
        {"node_id": "c", "title": "Sum up", "summary": "", "info": "",
         "p_node": "b:summary, yy:info", "batch": 3, "type": "summary", "status": "planned"}
    ]})
}

/// The lines of `stderr` that mention `needle`.
fn lines_with<'a>(stderr: &'a str, needle: &str) -> Vec<&'a str> {
    stderr.lines().filter(|l| l.contains(needle)).collect()
}

/// Refs to nodes that do not exist were dropped without a word, though the README and SPEC
/// promise a warning: now `plan` and `workflow` warn once per ref, naming the ref, where it
/// stands and the plan file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refs_to_unknown_nodes_are_warned_about_once_each_naming_where_they_stand() {
    let llm = MockLlm::start().await;
    scripted(&llm, vec![final_over("b:summary, c:summary")]);
    let s = Setup::new(&llm, None);
    for command in ["plan", "workflow"] {
        let file = format!("{command}-refs.json");
        std::fs::write(s.path().join(&file), plan_with_unknown_refs().to_string()).expect("plan");
        let args: &[&str] = match command {
            "plan" => &["plan", &file],
            _ => &["workflow", "--plan", &file],
        };
        let out = s.cmd().args(args).run().await;
        out.success();
        let zz = lines_with(&out.stderr, "zz:summary");
        assert_eq!(zz.len(), 1, "{command}: {}", out.stderr);
        assert!(
            zz[0].contains(&file) && zz[0].contains("check_list.refs") && zz[0].contains("WARN"),
            "{command}: {}",
            zz[0]
        );
        let yy = lines_with(&out.stderr, "yy:info");
        assert_eq!(yy.len(), 1, "{command}: {}", out.stderr);
        assert!(
            yy[0].contains(&file) && yy[0].contains("node `c`") && yy[0].contains("p_node"),
            "{command}: {}",
            yy[0]
        );
    }
}

/// Bidirectional controls and zero-width characters: invisible, yet U+202E shows what follows
/// it reversed (`Cell fdp.exe` reads `Cell exe.pdf`) and U+200B hides inside a word.
const INVISIBLE: [char; 8] = [
    '\u{202e}', '\u{202c}', '\u{2066}', '\u{2069}', '\u{200b}', '\u{200d}', '\u{2060}', '\u{feff}',
];

/// Issue 56: a search result's title and snippet, the model's answers, the question and a
/// server's error body carried U+202E and U+200B, and they reached the plan, the report, the
/// view, the events and stderr as they were. Now they are removed where text enters and where
/// it is shown, and escaped in the log.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bidi_controls_and_zero_width_characters_reach_no_plan_report_view_event_or_log() {
    let llm = MockLlm::start().await;
    let search = MockSearch::with_results(
        SearchKind::Searxng,
        vec![support::SearchHit {
            title: "Cell\u{202e}fdp.exe\u{202c} data".into(),
            url: "https://example.test/cells".into(),
            snippet: "Solid\u{200b}state cells \u{2066}last\u{2069} 01 years longer.".into(),
        }],
    )
    .await;
    let failed_once = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let error = json!({"error": {"message": "overloaded \u{202e}tset\u{202c}"}}).to_string();
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Cell\u{200d} life"])),
        Agent::Queries => Reply::json(&json!({"queries": ["cell\u{2060} life"]})),
        Agent::Analysis if !failed_once.swap(true, std::sync::atomic::Ordering::SeqCst) => {
            Reply::fault(Fault::status(500, &error))
        }
        Agent::Analysis | Agent::Summary => Reply::json(&json!({
            "summary": "Cells\u{200b} last \u{202e}01\u{202c} years [1].",
            "analysis": "Zero\u{feff}width\u{200b} analysis.",
        })),
        Agent::Final => Reply::content("Cells last \u{202e}01\u{202c} years [1].\u{200b}"),
        Agent::Review | Agent::SecondOpinion | Agent::Verifier => {
            unreachable!("the review is off here, the verifier not configured")
        }
    });
    let s = Setup::new(&llm, Some(&search));
    let out = s
        .query("How long do cells\u{202e} last?")
        .arg("-v")
        .run()
        .await;
    out.success();
    let report = s.report();
    assert!(report.contains("Cells last 01 years"), "{report}");
    let html = std::fs::read_to_string(s.path().join("out/plan.html")).expect("the view");
    let files = [
        ("report", report.clone()),
        ("view", html),
        ("plan", std::fs::read_to_string(s.out()).expect("plan")),
        (
            "events",
            std::fs::read_to_string(s.path().join("out/plan.events.ndjson")).expect("events"),
        ),
        ("stdout", out.stdout.clone()),
        ("stderr", out.stderr.clone()),
    ];
    for (name, text) in &files {
        let found: Vec<char> = INVISIBLE
            .iter()
            .copied()
            .filter(|c| text.contains(*c))
            .collect();
        assert!(found.is_empty(), "{name} holds {found:?}:\n{text}");
        // JSON may write them as escapes.
        for c in INVISIBLE {
            let escaped = format!("\\u{:04x}", u32::from(c));
            assert!(!text.contains(&escaped), "{name} holds {escaped}:\n{text}");
        }
    }
    let plan = s.plan();
    let b = node(&plan, "b");
    assert_eq!(b["sources"][0]["title"], "Cellfdp.exe data");
    assert_eq!(
        b["sources"][0]["snippet"],
        "Solidstate cells last 01 years longer."
    );
    assert_eq!(node(&plan, "a")["title"], "How long do cells last?");
    // The log shows them, escaped, where a server sent them.
    assert!(
        out.stderr
            .lines()
            .any(|l| l.contains("retry 1/3") && l.contains("\\u{202e}tset\\u{202c}")),
        "{}",
        out.stderr
    );
}

/// The images a Markdown parser finds in `markdown`: each one's target.
fn images(markdown: &str) -> Vec<String> {
    pulldown_cmark::Parser::new(markdown)
        .filter_map(|e| match e {
            pulldown_cmark::Event::Start(pulldown_cmark::Tag::Image { dest_url, .. }) => {
                Some(dest_url.to_string())
            }
            _ => None,
        })
        .collect()
}

/// Issue 56: a page asked the model to show `![x](http://...?d=...)`, and the model did: the
/// report kept the image, which any Markdown viewer fetches, telling the address whatever
/// the URL holds (the usual way out for what a page made the model write). The view already
/// showed an image as its alternative text; the report now does the same, in every form
/// (inline, reference, nested, beside a web link that stays).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_image_the_model_repeats_is_its_alternative_text_in_the_report() {
    let llm = MockLlm::start().await;
    let leak = format!("{}/leak?d=cells", llm.base_url());
    let answer = format!(
        "## Answer\n\nCells last ten years ![chart]({leak}) and more ![ref image][pic].\n\n\
         ![![inner](http://evil.test/a.png)](http://evil.test/b.png) See \
         [the study](https://example.org/study) and `![code](http://evil.test/c.png)`.\n\n\
         [pic]: http://evil.test/d.png\n"
    );
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Only search"])),
        Agent::Queries => Reply::json(&json!({"queries": ["q"]})),
        Agent::Analysis | Agent::Summary => {
            Reply::json(&json!({"summary": "Found.", "analysis": "Analysis."}))
        }
        Agent::Final => Reply::content(&answer),
        Agent::Review | Agent::SecondOpinion | Agent::Verifier => {
            unreachable!("the review is off here, the verifier not configured")
        }
    });
    let s = Setup::new(&llm, None);
    s.query("How long do cells last?").run().await.success();
    let report = s.report();
    assert_eq!(images(&report), Vec::<String>::new(), "{report}");
    for kept in [
        "Cells last ten years chart and more ref image.",
        "[the study](https://example.org/study)",
        "`![code](http://evil.test/c.png)`",
        "inner",
    ] {
        assert!(report.contains(kept), "`{kept}` not in:\n{report}");
    }
    assert!(!report.contains("/leak?d="), "{report}");
    let html = std::fs::read_to_string(s.path().join("out/plan.html")).expect("the view");
    assert!(!html.contains("<img"), "{html}");
}

/// A key in the environment that no setting uses: the config names its own.
const UNUSED_ENV_KEY: &str = "sk-unused-ENV-SECRET-5151";

/// Issue 56: a key typed into the question, or reflected by a search result, or repeated by
/// the model, was stored as it was in the plan, the report, the view and the events (MCP
/// masked it only in its tool results), and the transcript did not mask an `OPENAI_API_KEY`
/// that no setting used. Now every writer masks every secret the process knows.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_the_question_a_result_or_an_answer_is_written_nowhere() {
    let llm = MockLlm::start().await;
    let search = MockSearch::with_results(
        SearchKind::Searxng,
        vec![support::SearchHit {
            title: format!("Your key {SEARCH_KEY}"),
            url: "https://example.test/keys".into(),
            snippet: format!(
                "The keys {SEARCH_KEY}, {KEY} and {UNUSED_ENV_KEY} were found in a paste."
            ),
        }],
    )
    .await;
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &[format!("Check {KEY}")])),
        Agent::Queries => Reply::json(&json!({"queries": [format!("leaked {UNUSED_ENV_KEY}")]})),
        Agent::Analysis | Agent::Summary => Reply::json(&json!({
            "summary": format!("The key {KEY} leaked [1]."),
            "analysis": format!("Both {SEARCH_KEY} and {UNUSED_ENV_KEY} appear."),
        })),
        Agent::Final => Reply::content(&format!(
            "Rotate {KEY}, {SEARCH_KEY} and {UNUSED_ENV_KEY} now [1]."
        )),
        Agent::Review | Agent::SecondOpinion | Agent::Verifier => {
            unreachable!("the review is off here, the verifier not configured")
        }
    });
    let s = Setup::new(&llm, Some(&search));
    let out = s
        .query(&format!("Did {KEY} or {UNUSED_ENV_KEY} leak?"))
        .env("OPENAI_API_KEY", UNUSED_ENV_KEY)
        .arg("-v")
        .run()
        .await;
    out.success();
    let report = s.report();
    assert!(report.contains("Rotate ***, *** and *** now"), "{report}");
    let mut written = written_files(s.path());
    assert!(
        written.len() >= 5,
        "plan, report, view, events, transcript: {:?}",
        written.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    written.push(("stdout".into(), out.stdout.clone()));
    written.push(("stderr".into(), out.stderr.clone()));
    for (path, text) in &written {
        for secret in [KEY, SEARCH_KEY, UNUSED_ENV_KEY] {
            assert!(
                !text.contains(secret),
                "`{}` holds `{secret}`:\n{text}",
                path.display()
            );
        }
    }
    // The requests themselves carried the key where the run put it: masking is for what is
    // written, not for what is asked.
    assert!(
        llm.chat_requests()
            .iter()
            .any(|r| r.raw_body.contains(UNUSED_ENV_KEY))
    );
}
