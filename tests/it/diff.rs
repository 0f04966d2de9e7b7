//! `researchflow diff` end to end: the real binary on two plan files written here with known
//! differences (a new and a gone source, a changed finding, a new and a dropped direction,
//! final summaries under different titles), its JSON and Markdown output, exit 2 for a file it
//! cannot read, and "No change." for identical plans.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::researchflow;

fn node(id: &str, title: &str, batch: i64, summary: &str, sources: &[(&str, &str)]) -> Value {
    let kind = match (id, batch) {
        ("a", _) => "start",
        (_, -1) => "summary",
        _ => "search",
    };
    json!({
        "node_id": id, "title": title, "summary": summary, "info": "", "p_node": "",
        "batch": batch, "type": kind, "status": "completed",
        "sources": sources.iter().map(|(url, title)| json!({"url": url, "title": title}))
            .collect::<Vec<_>>(),
    })
}

fn plan(nodes: Vec<Value>) -> Value {
    json!({
        "version": 1, "workflow_id": "wf",
        "check_list": {"latest_id": "e", "latest_batch": -1, "refs": []},
        "nodes": nodes,
    })
}

/// Yesterday's run of the question.
fn old_plan() -> Value {
    plan(vec![
        node("a", "How do solid-state batteries compare?", 1, "", &[]),
        node(
            "b",
            "Energy density of solid-state cells",
            2,
            "About 300 Wh/kg.",
            &[
                ("https://cells.example/density/", "Density study"),
                ("https://gone.example/old-page", "Old page"),
            ],
        ),
        node(
            "c",
            "Costs",
            2,
            "Costs  are\nhigh.",
            &[("https://costs.example/a", "Costs")],
        ),
        node("d", "Dendrite formation", 2, "Dendrites grow.", &[]),
        node(
            "e",
            "Final report on batteries",
            -1,
            "They are denser.",
            &[],
        ),
    ])
}

/// Today's run: one finding changed (title spelt differently), one reworded only in white
/// space, one direction dropped and one new, a new source, and a final summary under another
/// title with a new answer.
fn new_plan() -> Value {
    plan(vec![
        node("a", "How do solid-state batteries compare?", 1, "", &[]),
        node(
            "b",
            "energy density of Solid-State cells?",
            2,
            "About 400 Wh/kg in 2026.",
            &[
                (
                    "https://cells.example/density#results",
                    "Density study, again",
                ),
                ("https://new.example/report", "A new [report]"),
            ],
        ),
        node(
            "c",
            "Costs",
            2,
            "Costs are high.",
            &[("https://costs.example/a/", "Costs")],
        ),
        node("d", "Manufacturing at scale", 2, "Pilot lines exist.", &[]),
        node(
            "e",
            "Summary: what we know",
            -1,
            "They are much denser.",
            &[],
        ),
    ])
}

/// Writes `value` to `dir/name` and returns its path.
fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    let text = serde_json::to_string_pretty(value).expect("a JSON value serialises");
    std::fs::write(&path, text).expect("write a plan file");
    path
}

fn two_plans() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let old = write(dir.path(), "old.json", &old_plan());
    let new = write(dir.path(), "new.json", &new_plan());
    (dir, old, new)
}

fn field<'a>(items: &'a Value, key: &str) -> Vec<&'a str> {
    items
        .as_array()
        .expect("a list")
        .iter()
        .map(|i| i[key].as_str().expect("a string field"))
        .collect()
}

#[tokio::test]
async fn json_lists_new_and_gone_sources_changed_findings_and_directions() {
    let (_dir, old, new) = two_plans();
    let out = researchflow()
        .arg("diff")
        .arg(&old)
        .arg(&new)
        .arg("--json")
        .run()
        .await;
    out.success();
    let d = out.stdout_json();
    assert_eq!(d["question_old"], "How do solid-state batteries compare?");
    assert_eq!(d["question_new"], d["question_old"]);
    assert_eq!(
        d["sources_new"],
        json!([{"url": "https://new.example/report", "title": "A new [report]"}])
    );
    assert_eq!(
        d["sources_gone"],
        json!([{"url": "https://gone.example/old-page", "title": "Old page"}])
    );
    assert_eq!(
        d["changed"],
        json!([
            {"title": "energy density of Solid-State cells?", "old_node": "b", "new_node": "b",
             "old_summary": "About 300 Wh/kg.", "new_summary": "About 400 Wh/kg in 2026."},
            {"title": "Summary: what we know", "old_node": "e", "new_node": "e",
             "old_summary": "They are denser.", "new_summary": "They are much denser."},
        ])
    );
    assert_eq!(
        d["nodes_new"],
        json!([{"node_id": "d", "title": "Manufacturing at scale", "type": "search",
                "status": "completed"}])
    );
    assert_eq!(field(&d["nodes_gone"], "title"), ["Dendrite formation"]);
}

#[tokio::test]
async fn markdown_has_a_section_for_each_kind_of_change() {
    let (dir, old, new) = two_plans();
    // Named relative to the working folder, shown by their absolute paths.
    let out = researchflow()
        .current_dir(dir.path())
        .args(["diff", "old.json", "new.json"])
        .run()
        .await;
    out.success();
    let text = &out.stdout;
    assert!(text.starts_with("# What changed\n"), "{text}");
    let shown = |p: &std::path::Path| {
        std::fs::canonicalize(p)
            .expect("path")
            .display()
            .to_string()
    };
    out.stdout_contains(&format!("- before: `{}`\n", shown(&old)))
        .stdout_contains(&format!("- now: `{}`\n", shown(&new)))
        .stdout_contains("- question: How do solid-state batteries compare?\n")
        .stdout_contains(
            "1 new source, 1 source no longer found; 2 changed findings; 1 new direction, 1 dropped direction.",
        )
        .stdout_contains("## New sources\n\n- [A new \\[report\\]](https://new.example/report)\n")
        .stdout_contains("## Sources no longer found\n\n- [Old page](https://gone.example/old-page)\n")
        .stdout_contains(
            "## Changed findings\n\n### energy density of Solid-State cells?\n\nBefore:\n\n> About 300 Wh/kg.\n\nNow:\n\n> About 400 Wh/kg in 2026.\n",
        )
        .stdout_contains("### Summary: what we know\n\nBefore:\n\n> They are denser.\n")
        .stdout_contains("## New directions\n\n- Manufacturing at scale (`d`, completed)\n")
        .stdout_contains("## Dropped directions\n\n- Dendrite formation (`d`, completed)\n");
    assert!(
        !text.contains("### Costs"),
        "white space is no change: {text}"
    );
    assert!(!text.contains("No change."), "{text}");
}

#[tokio::test]
async fn identical_plans_print_no_change() {
    let (dir, old, _) = two_plans();
    let same = write(dir.path(), "same.json", &old_plan());
    let out = researchflow().arg("diff").arg(&old).arg(&same).run().await;
    out.success().stdout_contains("\nNo change.\n");
    assert!(!out.stdout.contains("##"), "{}", out.stdout);

    let out = researchflow()
        .args(["diff", "--json"])
        .arg(&old)
        .arg(&same)
        .run()
        .await;
    out.success();
    let d = out.stdout_json();
    for key in [
        "sources_new",
        "sources_gone",
        "changed",
        "nodes_new",
        "nodes_gone",
    ] {
        assert_eq!(d[key], json!([]), "{key}");
    }
}

#[tokio::test]
async fn a_file_that_cannot_be_read_or_is_no_plan_exits_2_naming_it() {
    let (dir, old, _) = two_plans();
    let missing = dir.path().join("missing.json");
    let out = researchflow()
        .arg("diff")
        .arg(&old)
        .arg(&missing)
        .run()
        .await;
    out.code(2)
        .stderr_contains(&format!("`{}`", missing.display()));
    assert!(out.stdout.is_empty(), "{}", out.stdout);

    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{ not json").expect("write");
    let out = researchflow()
        .arg("diff")
        .arg(&broken)
        .arg(&old)
        .run()
        .await;
    out.code(2)
        .stderr_contains(&format!("`{}`", broken.display()))
        .stderr_contains("not valid JSON");

    let out = researchflow()
        .arg("diff")
        .arg(&old)
        .arg(dir.path())
        .run()
        .await;
    out.code(2)
        .stderr_contains(&format!("`{}`", dir.path().display()))
        .stderr_contains("not a regular file");
}

/// Two runs that found the same sources in another order number them differently: the same
/// sentence is `[1]` in one and `[2]` in the other. That is no changed finding; citing another
/// source under the same number is one.
#[tokio::test]
async fn citations_renumbered_to_the_same_sources_are_no_change() {
    let a = ("file:///corpus/a.md", "A");
    let b = ("file:///corpus/b.md", "B");
    let run = |search: &str, report: &str, order: &[(&str, &str)]| {
        plan(vec![
            node("a", "Why?", 1, "", &[]),
            node("b", "Why, by the corpus", 2, search, order),
            node("e", "Final report: Why?", -1, report, order),
        ])
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let old = write(
        dir.path(),
        "old.json",
        &run(
            "Cells age [1]. Heat speeds it [2].",
            "- Cells age. [1]\n- Heat speeds it. [1, 2]\n",
            &[a, b],
        ),
    );
    let renumbered = write(
        dir.path(),
        "renumbered.json",
        &run(
            "Cells age [2]. Heat speeds it [1].",
            "- Cells age. [2]\n- Heat speeds it. [2, 1]\n",
            &[b, a],
        ),
    );
    let out = researchflow()
        .arg("diff")
        .arg(&old)
        .arg(&renumbered)
        .run()
        .await;
    out.success().stdout_contains("\nNo change.\n");

    let other = write(
        dir.path(),
        "other.json",
        &run(
            "Cells age [1]. Heat speeds it [1].",
            "- Cells age. [2]\n- Heat speeds it. [2, 1]\n",
            &[b, a],
        ),
    );
    let out = researchflow()
        .args(["diff", "--json"])
        .arg(&old)
        .arg(&other)
        .run()
        .await;
    out.success();
    let d = out.stdout_json();
    assert_eq!(field(&d["changed"], "new_node"), ["b"], "{d}");
    assert_eq!(d["sources_new"], json!([]));
}
