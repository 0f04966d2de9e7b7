//! The conventions of a command-line tool, through the real binary: shell completions, manual
//! pages, JSON Schemas generated from the types (and `schemas/` kept equal to them:
//! `RESEARCHFLOW_UPDATE_GOLDEN=1 cargo test --test it conventions::` rewrites it), the config's
//! `$schema` key, and `--color` beside `NO_COLOR`; and that nothing shipped points outside the
//! repository, nor a source at the design documents it grew from.

use std::path::Path;

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::root;
use crate::support::researchflow;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_know_every_command_and_flag_and_bash_parses_its_script() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = researchflow().args(["completions", shell]).run().await;
        out.success();
        for word in [
            "researchflow",
            "workflow",
            "view",
            "graph",
            "schema",
            "no-html",
            "color",
        ] {
            assert!(
                out.stdout.contains(word),
                "{shell} completions lack `{word}`"
            );
        }
        if shell == "bash" {
            let dir = tempfile::tempdir().expect("tempdir");
            let script = dir.path().join("researchflow.bash");
            std::fs::write(&script, &out.stdout).expect("write");
            let check = std::process::Command::new("bash")
                .arg("-n")
                .arg(&script)
                .status()
                .expect("bash");
            assert!(check.success(), "bash -n refuses the script");
        }
    }
    researchflow()
        .args(["completions", "tcsh"])
        .run()
        .await
        .code(2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn man_prints_the_main_page_or_writes_one_per_command() {
    let out = researchflow().arg("man").run().await;
    out.success();
    assert!(
        out.stdout.contains(".TH researchflow 1"),
        "{}",
        &out.stdout[..200]
    );
    assert!(out.stdout.contains("workflow") && out.stdout.contains("view"));

    let dir = tempfile::tempdir().expect("tempdir");
    let out = researchflow()
        .args(["man", "--out-dir"])
        .arg(dir.path().join("man1"))
        .run()
        .await;
    out.success();
    let pages = out.stdout_json()["pages"].clone();
    let names: Vec<String> = pages
        .as_array()
        .expect("pages")
        .iter()
        .map(|p| {
            let p = Path::new(p.as_str().expect("a path"));
            assert!(p.is_absolute() && p.is_file(), "{}", p.display());
            p.file_name().expect("name").to_string_lossy().into_owned()
        })
        .collect();
    for page in [
        "researchflow.1",
        "researchflow-workflow.1",
        "researchflow-view.1",
        "researchflow-validate-plan.1",
    ] {
        assert!(
            names.iter().any(|n| n == page),
            "{page} missing from {names:?}"
        );
    }
    let workflow = std::fs::read_to_string(dir.path().join("man1/researchflow-workflow.1"))
        .expect("workflow page");
    assert!(workflow.contains("no\\-html"), "the page lists --no-html");
}

async fn schema(document: &str) -> Value {
    let out = researchflow().args(["schema", document]).run().await;
    out.success();
    let text = out.stdout.clone();
    let path = root().join(format!("schemas/{document}.schema.json"));
    if std::env::var_os("RESEARCHFLOW_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).expect("write schema");
    }
    assert_eq!(
        text,
        std::fs::read_to_string(&path).expect("schemas/"),
        "`{}` is not what `researchflow schema {document}` prints (RESEARCHFLOW_UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
    out.stdout_json()
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).expect("a valid JSON Schema")
}

fn read(path: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(root().join(path)).expect(path)).expect(path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_plan_schema_accepts_real_plans_and_refuses_broken_ones() {
    let v = validator(&schema("plan").await);
    for path in [
        "fixtures/plan_stage1.json",
        "fixtures/plan_stage2.json",
        "fixtures/plan_stage3.json",
        "fixtures/view/plan.json",
    ] {
        let errors: Vec<String> = v.iter_errors(&read(path)).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{path}: {errors:?}");
    }
    let mut plan = read("fixtures/plan_stage2.json");
    plan["nodes"][1]["status"] = json!("done");
    assert!(!v.is_valid(&plan), "an unknown status");
    let mut plan = read("fixtures/plan_stage2.json");
    plan["nodes"][1]["node_id"] = json!("b1");
    assert!(!v.is_valid(&plan), "an id that is not letters");
    let mut plan = read("fixtures/plan_stage2.json");
    plan["nodes"][1]["x-tool"] = json!({"kept": true});
    assert!(
        v.is_valid(&plan),
        "unknown fields survive, so they are allowed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_config_schema_is_the_one_the_example_names_and_refuses_typos() {
    let schema = schema("config").await;
    let v = validator(&schema);
    let example = read("agent.config.example.json");
    assert_eq!(example["$schema"], json!("./schemas/config.schema.json"));
    let errors: Vec<String> = v.iter_errors(&example).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    for bad in [
        json!({"baseUrl": "typo"}),
        json!({"search": {"provider": "bing"}}),
        json!({"roles": {"verifer": {}}}),
        json!({"retry": {"maxRetries": "3"}}),
    ] {
        assert!(!v.is_valid(&bad), "{bad}");
    }
    // The parser accepts what the schema does: `$schema` is no unknown key.
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("agent.config.json"),
        json!({"$schema": "./schemas/config.schema.json", "baseURL": "http://127.0.0.1:9/v1",
               "model": "m", "retry": {"maxRetries": 0}})
        .to_string(),
    )
    .expect("config");
    let out = researchflow()
        .current_dir(dir.path())
        .args(["doctor", "--json"])
        .run()
        .await;
    assert!(!out.stderr.contains("unknown field"), "{}", out.stderr);
    assert_eq!(
        out.stdout_json()["config"]["ok"],
        json!(true),
        "{}",
        out.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_questions_schema_describes_one_json_line() {
    let v = validator(&schema("questions").await);
    assert!(v.is_valid(&json!({"id": "q1", "query": "Why?"})));
    assert!(v.is_valid(&json!({"query": "Why?"})));
    assert!(!v.is_valid(&json!({"id": "q1"})), "the query is required");
    assert!(
        !v.is_valid(&json!({"query": "Why?", "qeury": 1})),
        "unknown keys are refused"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn color_is_auto_always_or_never_and_the_flag_wins_over_no_color() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("p.json");
    std::fs::copy(root().join("fixtures/view/plan.json"), &plan).expect("copy");
    let view = |args: &[&str]| researchflow().args(args).arg("view").arg(&plan);
    let ansi = |out: &support::RunOutput| out.stderr.contains("\u{1b}[");

    let auto = view(&[]).env_remove("NO_COLOR").run().await;
    auto.success().stderr_contains("wrote the view");
    assert!(!ansi(&auto), "not a terminal: no colour\n{}", auto.stderr);
    let always = view(&["--color", "always"]).run().await;
    assert!(
        ansi(always.success()),
        "always, even with NO_COLOR set\n{}",
        always.stderr
    );
    let by_var = view(&[]).env("RESEARCHFLOW_COLOR", "always").run().await;
    assert!(ansi(by_var.success()), "{}", by_var.stderr);
    let never = view(&["--color", "never"])
        .env("RESEARCHFLOW_COLOR", "always")
        .run()
        .await;
    assert!(
        !ansi(never.success()),
        "the flag wins over the variable\n{}",
        never.stderr
    );
    view(&["--color", "sometimes"]).run().await.code(2);
}

/// The files of the repository a newcomer reads or runs: documents, scripts, sources, fixtures.
fn shipped_files() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut dirs: Vec<std::path::PathBuf> = ["src", "tests", "scripts", "docs", "prompts", ".ci"]
        .iter()
        .map(|d| root().join(d))
        .collect();
    for file in [
        "README.md",
        "ARCHITECTURE.md",
        "RELIABILITY.md",
        "Cargo.toml",
        "agent.config.example.json",
    ] {
        out.push(root().join(file));
    }
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("folder").flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => dirs.push(path),
                Ok(t) if t.is_file() => out.push(path),
                _ => {}
            }
        }
    }
    out
}

/// README pointed at a specification in a folder beside the repository, which a clone lacks: nothing shipped may
/// point outside the repository (and every relative link of the documents leads to a file that
/// exists: `docs.rs` checks those).
#[test]
fn nothing_shipped_points_outside_the_repository() {
    // Spelt in two pieces, so that this file does not name it.
    let outside = ["../", "shared/"].concat();
    let absolute = ["/work/", "shared"].concat();
    for path in shipped_files() {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for needle in [&outside, &absolute] {
            assert!(
                !text.contains(needle.as_str()),
                "`{}` points at `{needle}`, outside the repository",
                path.display()
            );
        }
    }
    // Every example calls `researchflow`: the quick start installs it before the first one.
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README");
    let install = readme
        .find("cargo install --locked --path .")
        .expect("README installs the command");
    let examples = readme.find("## The two commands").expect("the quick start");
    let first_call = examples
        + readme[examples..]
            .find("\nresearchflow ")
            .expect("an example");
    assert!(
        install < first_call,
        "README calls `researchflow` before it installs it"
    );
    // Every relative link of the documents leads to a file and a heading that exist: docs.rs.
}

/// researchflow grew from design documents numbered 000 to 004 that are not in the repository:
/// a source that cites one ("seed 003") sends the reader nowhere. docs/SPEC.md is the contract
/// (its "Where the ideas come from" maps the numbers): cite its section instead.
#[test]
fn sources_cite_the_spec_not_the_seed_documents() {
    let seed = regex::Regex::new(r"(?i)\bseeds? 0\d\d").expect("regex");
    let src = root().join("src");
    let mut found = Vec::new();
    for path in shipped_files().into_iter().filter(|p| p.starts_with(&src)) {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if seed.is_match(line) {
                found.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "cite docs/SPEC.md's section (`docs/SPEC.md, \"Step plans\"`), not a seed:\n{}",
        found.join("\n")
    );
}
