//! What every command prints on stdout, and what happens when stdout cannot take it: a reader
//! that closed the pipe (`researchflow ... | head -1`) ends the command quietly with its own
//! exit code; a write that fails otherwise (`> /dev/full`) exits 74 with one line on stderr,
//! after the work is saved; every path printed is absolute.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::fixtures::fixture;
use crate::support::scenario::{
    Agent, Setup, agent, read_json, review_answer, searches_then_final, second_opinion_answer,
};
use crate::support::{Cmd, MockLlm, Reply, RunOutput, Stdout, researchflow};

/// A planner that keeps no state, so that workflows and batches in one test all run: one
/// search, then the final summary; the review's roles within their contracts.
fn stateless(llm: &MockLlm) {
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Search"])),
        Agent::Final => Reply::content("Direct answer [1]."),
        Agent::Review => Reply::json(&review_answer()),
        Agent::SecondOpinion => Reply::json(&second_opinion_answer("ok")),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
}

/// `batch questions.txt --out-dir batch` in the setup's folder, over one question.
fn batch_of_one(s: &Setup) -> Cmd {
    std::fs::write(s.path().join("questions.txt"), "Q one?\n").expect("questions");
    s.cmd()
        .args(["batch", "questions.txt", "--out-dir", "batch"])
}

fn dev_full() -> Stdout {
    Stdout::File(PathBuf::from("/dev/full"))
}

/// No panic, no backtrace, no error line: a reader that stopped reading is not a failure.
#[track_caller]
fn quiet(out: &RunOutput, code: i32) {
    out.code(code);
    assert!(
        !out.stderr.contains("panicked") && !out.stderr.contains("backtrace"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("error"), "{}", out.stderr);
}

/// Exit 74 and one line on stderr, naming stdout and the cause.
#[track_caller]
fn output_failed(out: &RunOutput) -> String {
    out.code(74);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    let errors = out.error_lines();
    assert_eq!(errors.len(), 1, "{}", out.stderr);
    assert!(
        errors[0].contains("cannot write the result on stdout")
            && errors[0].contains("No space left on device"),
        "{}",
        errors[0]
    );
    assert!(
        out.stderr.trim_end().ends_with(errors[0]),
        "the error is the last line: {}",
        out.stderr
    );
    errors[0].to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_ends_validate_diff_and_doctor_quietly_with_their_own_exit_codes() {
    let validate = |file: &str| {
        researchflow()
            .args(["validate", "plan"])
            .arg(fixture(file))
            .stdout_to(Stdout::ClosedPipe)
            .run()
    };
    let out = validate("plan_stage2.json").await;
    quiet(&out, 0);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    let invalid = fixture("validate/plan.invalid.json");
    assert!(invalid.exists(), "{}", invalid.display());
    let out = researchflow()
        .args(["validate", "plan", "--format", "text"])
        .arg(&invalid)
        .stdout_to(Stdout::ClosedPipe)
        .run()
        .await;
    quiet(&out, 1);

    for json in [false, true] {
        let out = researchflow()
            .arg("diff")
            .args([fixture("plan_stage2.json"), fixture("plan_stage3.json")])
            .args(json.then_some("--json"))
            .stdout_to(Stdout::ClosedPipe)
            .run()
            .await;
        quiet(&out, 0);
    }

    let llm = MockLlm::start().await;
    llm.set_handler(|_| Reply::json(&json!({"ok": true})));
    let s = Setup::new(&llm, None);
    for json in [false, true] {
        let out = s
            .cmd()
            .arg("doctor")
            .args(json.then_some("--json"))
            .stdout_to(Stdout::ClosedPipe)
            .run()
            .await;
        quiet(&out, 0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stdout_leaves_a_workflow_and_a_batch_finished_and_saved() {
    let llm = MockLlm::start().await;
    stateless(&llm);
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").stdout_to(Stdout::ClosedPipe).run().await;
    quiet(&out, 0);
    assert_eq!(s.plan()["outcome"]["status"], "completed");
    assert!(s.report().contains("Direct answer"));

    let out = batch_of_one(&s).stdout_to(Stdout::ClosedPipe).run().await;
    quiet(&out, 0);
    let manifest = read_json(&s.path().join("batch/batch.json"));
    assert_eq!(manifest["items"][0]["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_on_stdout_exits_74_with_one_line_after_the_work_is_saved() {
    let out = researchflow()
        .args(["validate", "plan"])
        .arg(fixture("plan_stage2.json"))
        .stdout_to(dev_full())
        .run()
        .await;
    output_failed(&out);
    assert_eq!(out.stderr.lines().count(), 1, "{}", out.stderr);

    let llm = MockLlm::start().await;
    stateless(&llm);
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").stdout_to(dev_full()).run().await;
    let line = output_failed(&out);
    assert!(
        line.contains("the run ended `completed`") && line.contains("plan.json"),
        "{line}"
    );
    assert_eq!(s.plan()["outcome"]["status"], "completed");
    assert!(s.report().contains("Direct answer"));

    let out = batch_of_one(&s).stdout_to(dev_full()).run().await;
    let line = output_failed(&out);
    assert!(line.contains("batch.json"), "{line}");
    let manifest = read_json(&s.path().join("batch/batch.json"));
    assert_eq!(manifest["items"][0]["status"], "completed");

    let out = s
        .cmd()
        .args(["doctor", "--json"])
        .stdout_to(dev_full())
        .run()
        .await;
    output_failed(&out);
}

#[track_caller]
fn absolute_file(value: &Value) {
    let path = Path::new(
        value
            .as_str()
            .unwrap_or_else(|| panic!("not a path: {value}")),
    );
    assert!(path.is_absolute(), "{}", path.display());
    assert!(path.exists(), "{}", path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_path_on_stdout_is_absolute() {
    let llm = MockLlm::start().await;
    stateless(&llm);
    let s = Setup::with_config(&llm, None, json!({"review": {"enabled": true}}));
    let out = s
        .cmd()
        .args(["workflow", "--query", "Q?", "--out", "out/plan.json"])
        .run()
        .await;
    out.success();
    let printed = out.stdout_json();
    for key in ["plan_file", "report", "events", "transcript"] {
        absolute_file(&printed[key]);
    }
    absolute_file(&printed["review"]["files"]["json"]);
    absolute_file(&printed["review"]["files"]["markdown"]);
    assert_eq!(
        Path::new(printed["plan_file"].as_str().unwrap_or_default()),
        std::fs::canonicalize(s.out()).expect("plan")
    );

    let out = s.cmd().args(["review", "out/plan.json"]).run().await;
    out.success();
    let printed = out.stdout_json();
    for key in ["plan_file", "report"] {
        absolute_file(&printed[key]);
    }
    absolute_file(&printed["review"]["files"]["json"]);

    std::fs::write(s.path().join("questions.txt"), "Q one?\n").expect("questions");
    let out = s
        .cmd()
        .args([
            "batch",
            "questions.txt",
            "--out-dir",
            "batch",
            "--no-review",
        ])
        .run()
        .await;
    out.success();
    let manifest_path = &out.stdout_json()["manifest"];
    absolute_file(manifest_path);
    let manifest = read_json(Path::new(manifest_path.as_str().unwrap_or_default()));
    absolute_file(&manifest["items"][0]["plan_file"]);
    absolute_file(&manifest["items"][0]["report"]);
}

/// A plan whose values quote a URL with a password and a terminal escape: its question, a
/// summary and the `type` of its second node.
fn plan_quoting_a_url_password(summary: &str, kind: &str) -> Value {
    json!({"version": 1, "workflow_id": "wf", "created_at": "2026-01-01T00:00:00Z",
    "check_list": {"latest_id": "b", "latest_batch": 1, "refs": ["a:info"]},
    "nodes": [
        {"node_id": "a", "title": "Q? see http://user:hunter2@host/x\u{1b}]0;pwned\u{7}",
         "summary": summary, "info": "", "p_node": "", "batch": 1, "type": "start",
         "status": "completed"},
        {"node_id": "b", "title": "Look", "summary": "", "info": "", "p_node": "a:info",
         "batch": 1, "type": kind, "status": "planned"}
    ]})
}

/// What a command prints as text masks a URL password and drops terminal escapes as its JSON
/// does, through the same function: `validate plan --format text`, `graph --format svg` and
/// `diff`. Before, the text forms printed the values as they stood.
#[tokio::test]
async fn a_url_password_quoted_in_a_plan_is_masked_in_every_text_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, plan: Value| {
        let path = dir.path().join(name);
        std::fs::write(&path, plan.to_string()).expect("write");
        path.display().to_string()
    };
    let bad = write(
        "bad.json",
        plan_quoting_a_url_password("s", "http://user:hunter2@host/t"),
    );
    let old = write(
        "old.json",
        plan_quoting_a_url_password("found at http://user:hunter2@host/y", "search"),
    );
    let new = write(
        "new.json",
        plan_quoting_a_url_password("found at http://user:hunter2@host/z", "search"),
    );
    let runs: [(&[&str], i32); 5] = [
        (&["validate", "plan", &bad, "--format", "text"], 1),
        (&["validate", "plan", &bad], 1),
        (&["graph", &old, "--format", "svg"], 0),
        (&["diff", &old, &new], 0),
        (&["diff", &old, &new, "--json"], 0),
    ];
    for (args, code) in runs {
        let out = researchflow().args(args).run().await;
        out.code(code).stdout_contains("user:***@host");
        assert!(
            !out.stdout.contains("hunter2") && !out.stdout.contains('\u{1b}'),
            "{args:?}:\n{}",
            out.stdout
        );
    }
}
