//! `researchflow validate` end to end: the real binary on the fixtures under
//! `fixtures/validate/`, checking exit codes (0 valid, 1 invalid, 2 unreadable input), the JSON
//! diagnostics on stdout and the text form.

use std::process::{Command, Output};

use serde_json::Value;

use crate::support::fixtures;

fn fixture(name: &str) -> String {
    fixtures::fixture("validate")
        .join(name)
        .display()
        .to_string()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_researchflow"))
        .arg("validate")
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}

fn run_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_researchflow"))
        .current_dir(dir)
        .arg("validate")
        .args(args)
        .env_remove("RUST_LOG")
        .output()
        .expect("the binary runs")
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Panics unless the errors of `v` hold each of `want` (`CODE path`).
#[track_caller]
fn assert_codes(v: &Value, want: &[&str]) {
    let got = codes(v);
    for want in want {
        assert!(got.iter().any(|g| g == want), "missing `{want}` in {got:?}");
    }
}

fn codes(v: &Value) -> Vec<String> {
    v["errors"]
        .as_array()
        .map(|errs| {
            errs.iter()
                .map(|e| {
                    format!(
                        "{} {}",
                        e["code"].as_str().unwrap_or(""),
                        e["path"].as_str().unwrap_or("")
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn steps_valid_yaml_and_json_exit_0_with_an_order() {
    let atoms = fixture("atoms");
    let out = run(&["steps", &fixture("steps.valid.yaml"), "--atoms", &atoms]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = json_of(&out);
    assert_eq!(v["valid"], true);
    assert_eq!(
        v["execution_order"],
        serde_json::json!(["read", "sum", "2"])
    );

    let out = run(&["steps", &fixture("steps.valid.json"), "--atoms", &atoms]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json_of(&out)["execution_order"],
        serde_json::json!(["find", "sum"])
    );
}

#[test]
fn steps_invalid_exits_1_with_every_error() {
    let out = run(&[
        "steps",
        &fixture("steps.invalid.json"),
        "--atoms",
        &fixture("atoms"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(v["valid"], false);
    assert!(v.get("execution_order").is_none());
    assert_codes(
        &v,
        &[
            "UNKNOWN_INPUT_FIELD plan.steps[0].inputs.path",
            "MISSING_REQUIRED_INPUT plan.steps[0].inputs",
            "UNKNOWN_ATOM_ID plan.steps[1].id",
            "UNKNOWN_OUTPUT_FIELD plan.steps[1].inputs.text",
            "UNKNOWN_STEP_REF plan.steps[2].inputs.subject",
            "UNKNOWN_DEPENDENCY plan.steps[2].depends_on[0]",
            "CIRCULAR_DEPENDENCY plan.steps[2]",
        ],
    );
}

#[test]
fn atoms_as_one_file_work_too() {
    let out = run(&[
        "steps",
        &fixture("steps.valid.json"),
        "--atoms",
        &fixture("atoms/search.json"),
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "summarize is not in this registry"
    );
    assert!(codes(&json_of(&out)).contains(&"UNKNOWN_ATOM_ID plan.steps[0].id".to_string()));
}

#[test]
fn unreadable_inputs_exit_2_naming_the_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not json").expect("write");
    let broken = broken.display().to_string();
    let missing = dir.path().join("missing.yaml").display().to_string();
    let atoms = fixture("atoms");
    for (args, needle) in [
        (
            vec!["steps", missing.as_str(), "--atoms", atoms.as_str()],
            missing.as_str(),
        ),
        (
            vec!["steps", broken.as_str(), "--atoms", atoms.as_str()],
            broken.as_str(),
        ),
        (
            vec![
                "steps",
                fixture("steps.valid.json").leak(),
                "--atoms",
                broken.as_str(),
            ],
            broken.as_str(),
        ),
        (vec!["plan", broken.as_str()], broken.as_str()),
        (vec!["plan-next", missing.as_str()], missing.as_str()),
        (
            vec![
                "plan-next",
                fixture("plan-next.execute.valid.json").leak(),
                "--executors",
                broken.as_str(),
            ],
            broken.as_str(),
        ),
        (
            vec![
                "plan-next",
                fixture("plan-next.execute.valid.json").leak(),
                "--context",
                broken.as_str(),
            ],
            broken.as_str(),
        ),
    ] {
        let out = run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("`{needle}`")),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(out.stdout.is_empty());
    }
}

#[test]
fn plan_next_valid_fixtures_exit_0() {
    for name in [
        "plan-next.probes.valid.json",
        "plan-next.steps.valid.json",
        "plan-next.execute.valid.json",
    ] {
        let out = run(&[
            "plan-next",
            &fixture(name),
            "--executors",
            &fixture("executors.yaml"),
            "--context",
            &fixture("context.json"),
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(json_of(&out)["valid"], true);
    }
}

#[test]
fn plan_next_invalid_fixture_exits_1() {
    let out = run(&[
        "plan-next",
        &fixture("plan-next.invalid.json"),
        "--executors",
        &fixture("executors.yaml"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_codes(
        &json_of(&out),
        &[
            "FORBIDDEN_FIELD new_block.id",
            "FORBIDDEN_FIELD executor_call.inputs.path",
            "INVALID_GOAL new_block.goal.constraint",
            "DONE_NOT_EMPTY new_block.done",
            "PLAN_ITEM_COUNT new_block.plan",
            "ORDERING_WORD_IN_PROBE new_block.plan[0]",
            "UNKNOWN_EXECUTOR executor_call.command",
            "INVALID_UPDATE_PLAN update_plan",
        ],
    );
}

#[test]
fn plan_next_reads_the_thinkon_executors_of_the_working_folder_and_without_any_allows_only_shell() {
    let dir = tempfile::tempdir().expect("temp dir");
    let answer = fixture("plan-next.execute.valid.json");
    // No executors file anywhere: `pytest -q ...` names a tool nothing declares.
    let out = run_in(dir.path(), &["plan-next", &answer]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        codes(&json_of(&out)),
        vec!["UNKNOWN_EXECUTOR executor_call.command".to_string()]
    );
    let folder = dir.path().join(".thinkon/executors");
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::copy(fixture("executors.yaml"), folder.join("executors.yaml")).expect("copy");
    let out = run_in(dir.path(), &["plan-next", &answer]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    // `--executors` still wins over the folder's file.
    let other = dir.path().join("other.yaml");
    std::fs::write(&other, "executors:\n  - id: make\n").expect("write");
    let out = run_in(
        dir.path(),
        &[
            "plan-next",
            &answer,
            "--executors",
            &other.display().to_string(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn plan_next_text_around_the_json_is_a_finding() {
    let dir = tempfile::tempdir().expect("temp dir");
    let answer = dir.path().join("answer.txt");
    let body = std::fs::read_to_string(fixture("plan-next.execute.valid.json")).expect("fixture");
    std::fs::write(&answer, format!("Sure! Here is the plan:\n{body}")).expect("write");
    let out = run(&["plan-next", &answer.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&json_of(&out)), vec!["INVALID_JSON ".to_string()]);
}

#[test]
fn plan_files_exit_0_or_1() {
    let out = run(&["plan", &fixture("plan.valid.json")]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = run(&["plan", &fixture("plan.invalid.json")]);
    assert_eq!(out.status.code(), Some(1));
    assert_codes(
        &json_of(&out),
        &[
            "START_NODE_BATCH nodes[0].batch",
            "DUPLICATE_NODE_ID nodes[2].node_id",
            "INVALID_NODE_ID nodes[3].node_id",
            "MULTIPLE_FINAL_NODES nodes[4].batch",
            "LATEST_ID_BEHIND check_list.latest_id",
            "LATEST_BATCH_MISMATCH check_list.latest_batch",
            "INVALID_REF check_list.refs[0]",
            "UNKNOWN_REF_TARGET nodes[1].p_node",
        ],
    );
}

#[test]
fn text_format_prints_one_line_per_finding() {
    let out = run(&[
        "--format",
        "text",
        "steps",
        &fixture("steps.invalid.json"),
        "--atoms",
        &fixture("atoms"),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("error UNKNOWN_ATOM_ID at plan.steps[1].id: unknown atom id `summarise`"),
        "{text}"
    );
    assert!(
        text.trim_end()
            .ends_with("invalid: 7 error(s), 0 warning(s)"),
        "{text}"
    );

    let out = run(&["plan", &fixture("plan.valid.json"), "--format", "text"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "valid: 0 error(s), 0 warning(s)\n"
    );
}

#[test]
fn review_answers_valid_and_invalid_with_codes_and_paths() {
    for (kind, name) in [
        ("review", "review.valid.json"),
        ("second-opinion", "second-opinion.valid.json"),
    ] {
        let out = run(&[kind, &fixture(name)]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert_eq!(json_of(&out)["valid"], true);
    }

    let out = run(&["review", &fixture("review.invalid.json")]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_codes(
        &v,
        &[
            "INVALID_TYPE ok",
            "EMPTY_FIELD summary",
            "INVALID_TYPE risks[1]",
            "EMPTY_ENTRY risks[2]",
            "INVALID_TYPE gaps",
            "MISSING_FIELD suggestions",
        ],
    );
    assert_eq!(v["warnings"][0]["code"], "UNKNOWN_FIELD");
    assert_eq!(v["warnings"][0]["path"], "next_actions");

    let out = run(&["second-opinion", &fixture("second-opinion.invalid.json")]);
    assert_eq!(out.status.code(), Some(1));
    let v = json_of(&out);
    assert_eq!(codes(&v), vec!["VERDICT_MISMATCH verdict".to_string()]);
    assert_eq!(v["warnings"][0]["path"], "score");

    // Text around the object is a finding; a missing file is an input error.
    let dir = tempfile::tempdir().expect("temp dir");
    let fenced = dir.path().join("answer.md");
    std::fs::write(&fenced, "```json\n{\"ok\": true}\n```\n").expect("write");
    let out = run(&["second-opinion", &fenced.display().to_string()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(codes(&json_of(&out)), vec!["INVALID_JSON ".to_string()]);
    let out = run(&["review", "no-such-answer.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no-such-answer.json"));
}
