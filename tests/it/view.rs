//! `researchflow graph`, `view` and the files `workflow` and `batch` write beside their
//! reports, through the real binary: the DOT and Mermaid of a fixture plan against golden
//! files (`RESEARCHFLOW_UPDATE_GOLDEN=1 cargo test --test it view::` rewrites them), the SVG, `--out`
//! (never over the plan or its files, over other files only with `--force`), the corpus the
//! plan records, `--no-html` and its variable, a plan that cannot be read, and plans too large
//! to show whole.
//! What a browser makes of the views is `tests/it/view_browser.rs`'s.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::fixtures::{copy_corpus, offline_here, root};
use crate::support::scenario::{
    Agent, Setup, agent, one_search_then_final, scripted, searches_then_final,
};
use crate::support::{MockLlm, Reply, researchflow};

fn fixture() -> PathBuf {
    root().join("fixtures/view/plan.json")
}

/// Compares `text` with the golden file `name`, or rewrites it when asked to.
fn golden(name: &str, text: &str) {
    let path = root().join("tests/golden").join(name);
    if std::env::var_os("RESEARCHFLOW_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, text).expect("write golden");
    }
    let expected = std::fs::read_to_string(&path).expect("golden file");
    assert_eq!(
        text,
        expected,
        "`{}` differs (RESEARCHFLOW_UPDATE_GOLDEN=1 rewrites it)",
        path.display()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graph_prints_dot_and_mermaid_as_the_golden_files_say() {
    for (format, name) in [("dot", "graph.dot"), ("mermaid", "graph.mmd")] {
        let out = researchflow()
            .args(["graph", "--format", format])
            .arg(fixture())
            .run()
            .await;
        out.success();
        golden(name, &out.stdout);
    }
    let default = researchflow().arg("graph").arg(fixture()).run().await;
    assert_eq!(
        default.stdout,
        std::fs::read_to_string(root().join("tests/golden/graph.dot")).expect("golden"),
        "DOT is the default"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn graph_svg_has_a_node_per_plan_node_and_an_edge_per_input() {
    let out = researchflow()
        .args(["graph", "--format", "svg"])
        .arg(fixture())
        .run()
        .await;
    out.success();
    let svg = &out.stdout;
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert_eq!(svg.matches("<g class=\"node ").count(), 6);
    // b->e twice (summary and info[search]) is one edge; zz and garbage draw none.
    assert_eq!(svg.matches("<path class=\"edge\"").count(), 7);
    assert!(svg.contains(r#"class="node type-summary status-planned final" data-node="end""#));
    assert!(
        !svg.contains("<script") && !svg.contains("<b>"),
        "titles are text"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plan_that_cannot_be_read_exits_2_naming_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"nodes\": 3}").expect("write");
    for args in [vec!["graph"], vec!["view"]] {
        let out = researchflow().args(&args).arg(&bad).run().await;
        out.code(2).stderr_contains("bad.json");
        let missing = researchflow()
            .args(&args)
            .arg(dir.path().join("none.json"))
            .run()
            .await;
        missing.code(2).stderr_contains("none.json");
    }
    assert!(!dir.path().join("bad.html").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_writes_beside_the_plan_or_at_out_and_prints_the_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("p.json");
    std::fs::copy(fixture(), &plan).expect("copy");
    let out = researchflow().arg("view").arg(&plan).run().await;
    out.success();
    let beside = dir.path().join("p.html").canonicalize().expect("p.html");
    assert_eq!(
        out.stdout_json(),
        json!({"html": beside.display().to_string()})
    );
    let html = std::fs::read_to_string(&beside).expect("read");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(
        html.contains("No report beside the plan yet."),
        "a plan without a run shows what it has"
    );
    assert!(html.contains("No event log with times beside the plan"));
    assert!(!html.contains("cannot read"), "missing files are no error");
    let other = dir.path().join("sub/other.html");
    std::fs::create_dir_all(other.parent().expect("parent")).expect("mkdir");
    researchflow()
        .arg("view")
        .arg(&plan)
        .arg("--out")
        .arg(&other)
        .run()
        .await
        .success();
    assert_eq!(std::fs::read_to_string(&other).expect("read"), html);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_writes_its_view_unless_no_html_or_its_variable_says_not_to() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let out = s.query("With a view?").run().await;
    out.success();
    let html = s.path().join("out/plan.html");
    assert_eq!(
        out.stdout_json()["html"],
        json!(
            html.canonicalize()
                .expect("plan.html")
                .display()
                .to_string()
        )
    );
    assert!(
        std::fs::read_to_string(&html)
            .expect("view")
            .contains("With a view?")
    );

    for (flag, var) in [(true, None), (false, Some("1"))] {
        let s = Setup::new(&llm, None);
        scripted(&llm, one_search_then_final());
        let mut cmd = s.query("Without a view?");
        if flag {
            cmd = cmd.arg("--no-html");
        }
        if let Some(v) = var {
            cmd = cmd.env("RESEARCHFLOW_NO_HTML", v);
        }
        let out = cmd.run().await;
        out.success();
        assert_eq!(out.stdout_json()["html"], Value::Null);
        assert!(!s.path().join("out/plan.html").exists());
        assert!(
            s.path().join("out/plan.report.md").exists(),
            "the run itself is written"
        );
    }
}

/// Issue 57 item 5: the batch index shows each question's answer as its report leads with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_batch_index_shows_each_questions_answer() {
    let dir = tempfile::tempdir().expect("tempdir");
    let questions =
        "How many cycles does an LFP cell last?\nWhat energy density do sodium-ion cells store?\n";
    std::fs::write(dir.path().join("q.txt"), questions).expect("questions");
    crate::support::fixtures::offline(dir.path(), &["batch", "q.txt", "--out-dir", "out"])
        .run()
        .await
        .success();
    let out = dir.path().join("out");
    let index = std::fs::read_to_string(out.join("index.html")).expect("index.html");
    let cells: Vec<String> = index
        .split(r#"<td class="answer">"#)
        .skip(1)
        .filter_map(|rest| rest.split("</td>").next())
        .map(unescape)
        .collect();
    assert_eq!(cells.len(), 2, "{index}");
    let reports: Vec<String> = std::fs::read_dir(&out)
        .expect("out/")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".report.md"))
        .map(|e| std::fs::read_to_string(e.path()).expect("report"))
        .collect();
    for report in &reports {
        let body = report.split("\n## Sources").next().unwrap_or_default();
        let leading = researchflow::agents::leading::leading_statement(body);
        assert!(leading.contains("[1]"), "{report}");
        assert!(cells.contains(&leading), "{leading:?} in {cells:?}");
    }
}

fn unescape(html: &str) -> String {
    html.replace("&#39;", "'")
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_writes_an_index_and_views_unless_no_html() {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["One search"])),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("q.txt"), "First?\nSecond?\n").expect("questions");
    let batch = |out: &str| s.cmd().args(["batch", "q.txt", "--out-dir", out]);
    batch("with").run().await.success();
    let index = std::fs::read_to_string(s.path().join("with/index.html")).expect("index.html");
    assert_eq!(index.matches("<tr class=\"question\"").count(), 2);
    assert_eq!(index.matches("<a class=\"view\" href=\"").count(), 2);
    let views = std::fs::read_dir(s.path().join("with"))
        .expect("with/")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".html"))
        .count();
    assert_eq!(views, 3, "two views and the index");

    batch("without").arg("--no-html").run().await.success();
    let html: Vec<String> = std::fs::read_dir(s.path().join("without"))
        .expect("without/")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".html"))
        .collect();
    assert_eq!(html, Vec::<String>::new());
}

/// A FIFO in place of the event log and a device in place of the report, as a hostile or broken
/// folder may hold: the view is written at once without them, each left out with a note.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_or_a_device_beside_the_plan_is_left_out_without_blocking() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("p.json");
    std::fs::copy(fixture(), &plan).expect("copy");
    let fifo = dir.path().join("p.events.ndjson");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("p.report.md")).expect("symlink");
    let out = researchflow()
        .arg("view")
        .arg(&plan)
        .timeout(std::time::Duration::from_secs(10))
        .run()
        .await;
    out.success();
    let html = std::fs::read_to_string(dir.path().join("p.html")).expect("the view");
    assert!(
        html.contains("p.events.ndjson` is not a regular file: left out"),
        "the FIFO is noted"
    );
    assert!(
        html.contains("p.report.md` is a character device"),
        "the device is noted"
    );
    assert!(html.contains("No report beside the plan yet."));
}

/// A plan reached through a symbolic link, as `workflow --plan link.json` runs it: the files
/// are read from beside the plan itself, and the view is written there, where the run wrote
/// its own.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_view_of_a_linked_plan_reads_and_writes_beside_the_plan_itself() {
    let dir = tempfile::tempdir().expect("tempdir");
    let runs = dir.path().join("runs");
    std::fs::create_dir(&runs).expect("runs/");
    let real = runs.join("real.json");
    std::fs::copy(fixture(), &real).expect("copy");
    std::fs::write(
        runs.join("real.report.md"),
        "# The report beside the real plan\n",
    )
    .expect("report");
    let link = dir.path().join("link.json");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let out = researchflow().arg("view").arg(&link).run().await;
    out.success();
    let html_path = runs
        .join("real.html")
        .canonicalize()
        .expect("runs/real.html");
    assert_eq!(
        out.stdout_json(),
        json!({"html": html_path.display().to_string()})
    );
    assert!(!dir.path().join("link.html").exists());
    let html = std::fs::read_to_string(&html_path).expect("view");
    assert!(
        html.contains("The report beside the real plan"),
        "the report is read"
    );
}

/// regression: `view x.json --out x.json` exited 0 and the plan was HTML. The plan and the
/// files beside it are never written over, `--force` or not; another existing file only when
/// it is a page researchflow wrote or `--force` says so; a link at `--out` is no page of ours,
/// and `--force` replaces the link, not what it leads to.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_writes_over_no_plan_file_and_over_other_files_only_with_force() {
    let dir = tempfile::tempdir().expect("tempdir");
    let plan = dir.path().join("p.json");
    std::fs::copy(fixture(), &plan).expect("copy");
    std::fs::write(dir.path().join("p.report.md"), "# R\n").expect("report");
    let before = std::fs::read_to_string(&plan).expect("plan");
    let view = |out: &Path, force: bool| {
        let cmd = researchflow()
            .current_dir(dir.path())
            .args(["view", "p.json", "--out"])
            .arg(out);
        if force { cmd.arg("--force") } else { cmd }
    };
    for (name, force) in [
        ("p.json", false),
        ("p.json", true),
        ("./p.report.md", true),
        ("p.json.lock", true),
    ] {
        view(Path::new(name), force)
            .run()
            .await
            .code(2)
            .stderr_contains("is the plan file `p.json` or a file beside it");
    }
    assert_eq!(std::fs::read_to_string(&plan).expect("plan"), before);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("p.report.md")).expect("report"),
        "# R\n"
    );

    let mine = dir.path().join("mine.html");
    std::fs::write(&mine, "<p>my own page</p>\n").expect("mine");
    view(&mine, false)
        .run()
        .await
        .code(2)
        .stderr_contains("is not a page researchflow wrote: give `--force`");
    assert_eq!(
        std::fs::read_to_string(&mine).expect("mine"),
        "<p>my own page</p>\n"
    );
    view(&mine, true).run().await.success();
    view(&mine, false).run().await.success();
    assert!(
        std::fs::read_to_string(&mine)
            .expect("view")
            .starts_with("<!DOCTYPE html>")
    );

    #[cfg(unix)]
    {
        let target = dir.path().join("elsewhere.html");
        std::fs::copy(&mine, &target).expect("a view elsewhere");
        let link = dir.path().join("link.html");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let target_before = std::fs::read_to_string(&target).expect("target");
        view(&link, false).run().await.code(2);
        view(&link, true).run().await.success();
        assert!(std::fs::symlink_metadata(&link).expect("link").is_file());
        assert_eq!(
            std::fs::read_to_string(&target).expect("target"),
            target_before
        );
    }
}

/// regression: `view` without `--corpus` left as text the corpus documents that the run's own
/// view links. The run records its corpus in the plan; a view made later links into it
/// (`--corpus` still chooses another), and a recorded folder that is not there links nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn view_without_corpus_links_the_documents_of_the_corpus_the_plan_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = dir.path().join("corpus");
    copy_corpus(&corpus);
    let out = offline_here(dir.path(), &["workflow"])
        .args([
            "--query",
            "How do solid-state batteries compare with lithium-ion?",
        ])
        .args(["--out", "run/p.json"])
        .run()
        .await;
    out.success();
    let plan: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("run/p.json")).expect("plan"),
    )
    .expect("json");
    let real = corpus.canonicalize().expect("corpus");
    assert_eq!(plan["corpus"], json!(real.display().to_string()));
    let file_links = |html: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(html).expect("view");
        let mut links: Vec<String> = text
            .split("href=\"file://")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap_or_default().to_string())
            .collect();
        links.sort();
        links
    };
    let own = file_links(&dir.path().join("run/p.html"));
    assert!(
        !own.is_empty(),
        "the run's view links the documents it cites"
    );

    let later = dir.path().join("later.html");
    let view = |corpus: Option<&str>| {
        let cmd = researchflow()
            .current_dir(dir.path())
            .args(["view", "run/p.json", "--out"])
            .arg(&later);
        match corpus {
            Some(c) => cmd.args(["--corpus", c]),
            None => cmd,
        }
    };
    view(None).run().await.success();
    assert_eq!(file_links(&later), own);
    view(Some("run")).run().await.success();
    assert_eq!(file_links(&later), Vec::<String>::new(), "--corpus wins");
    std::fs::rename(&corpus, dir.path().join("moved")).expect("move");
    view(None).run().await.success();
    assert_eq!(file_links(&later), Vec::<String>::new());
}
