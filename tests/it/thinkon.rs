//! Integration tests of `researchflow thinkon`: whole runs of the real binary against the mock
//! LLM, with scripted plan-next answers chosen from the Context JSON each planner request
//! carries.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support;
use crate::support::mock_llm::copied_example;
use crate::support::mock_search::{result_snippet, result_title, result_url};
use crate::support::scenario::{Setup, read_json, read_ndjson, task_title};
use crate::support::server::Recorded;
use crate::support::thinkon::{
    Kind, context, execute, item, kind, scripted, steps, three_searches,
};
use crate::support::{MockLlm, MockSearch, Reply, RunOutput, SearchKind, researchflow};

fn of_kind(llm: &MockLlm, k: Kind) -> Vec<Recorded> {
    llm.chat_requests()
        .into_iter()
        .filter(|r| kind(r) == k)
        .collect()
}

/// The repair messages sent to prompt `k`: the findings quoted back, one per repair.
fn repairs(llm: &MockLlm, k: Kind) -> Vec<String> {
    of_kind(llm, k)
        .iter()
        .filter(|r| r.messages().len() == 4)
        .filter_map(|r| r.user_prompt())
        .collect()
}

fn dir(s: &Setup) -> PathBuf {
    s.path().join(".thinkon")
}

fn block(s: &Setup, id: &str) -> Value {
    read_json(&dir(s).join(format!("blocks/{id}.json")))
}

fn events(s: &Setup) -> Vec<Value> {
    read_ndjson(&dir(s).join("events.ndjson"))
}

fn goals(done: &Value) -> Vec<String> {
    done.as_array()
        .expect("done")
        .iter()
        .map(|d| d["goal"].as_str().unwrap_or_default().to_string())
        .collect()
}

async fn thinkon(s: &Setup, args: &[&str]) -> RunOutput {
    s.cmd()
        .arg("thinkon")
        .args(args)
        .timeout(Duration::from_secs(30))
        .run()
        .await
}

/// Every planner request carries only the seed's context: no block id, parent or child.
fn assert_no_block_ids(llm: &MockLlm, folder: &Path) {
    let ids: Vec<String> = std::fs::read_dir(folder.join("blocks"))
        .expect("blocks")
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            name.strip_suffix(".json").map(str::to_string)
        })
        .collect();
    assert!(!ids.is_empty());
    fn walk(v: &Value, ids: &[String], at: &str) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    assert!(
                        !["id", "new_id", "parent", "children", "active_child", "path"]
                            .contains(&k.as_str()),
                        "key `{k}` at {at}"
                    );
                    walk(child, ids, &format!("{at}.{k}"));
                }
            }
            Value::Array(items) => items.iter().for_each(|i| walk(i, ids, at)),
            Value::String(s) => assert!(!ids.contains(s), "block id `{s}` at {at}"),
            _ => {}
        }
    }
    for req in of_kind(llm, Kind::Planner) {
        let ctx = context(&req);
        let keys: Vec<&String> = ctx.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["think", "path", "max_depth", "executors"]);
        for b in std::iter::once(&ctx["think"]).chain(ctx["path"].as_array().expect("path")) {
            let keys: Vec<&String> = b.as_object().expect("block").keys().collect();
            assert_eq!(keys, ["goal", "plan", "done"]);
        }
        walk(&ctx["think"], &ids, "think");
        walk(&ctx["path"], &ids, "path");
        assert!(!req.raw_body.contains("blocks/"), "a block file is named");
    }
}

#[tokio::test]
async fn a_steps_root_runs_three_execute_children_once_in_order_and_fills_its_done() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.success();
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["root"], "a");
    assert_eq!(summary["blocks"]["total"], 4);
    assert_eq!(
        summary["calls"],
        4 + 3 + 4,
        "4 plans, 3 analyses, 4 reflections"
    );
    assert_eq!(summary["tokens"], 11 * 18);

    let root = block(&s, "a");
    assert_eq!(root["plan_type"], "PLAN_STEPS");
    assert_eq!(root["status"], "completed");
    assert_eq!(root["plan"], json!([]));
    assert_eq!(root["children"], json!(["b", "c", "d"]));
    assert_eq!(
        goals(&root["done"]),
        ["Collect data", "Compare sources", "Write findings"]
    );
    for (id, step) in [
        ("b", "Collect data"),
        ("c", "Compare sources"),
        ("d", "Write findings"),
    ] {
        let b = block(&s, id);
        assert_eq!(
            (b["parent"].as_str(), b["depth"].as_u64()),
            (Some("a"), Some(1))
        );
        assert_eq!(b["plan_type"], "EXECUTE");
        assert_eq!(b["attempts"], 1);
        let observation = &b["done"][0];
        assert_eq!(observation["executor"], "search");
        assert_eq!(observation["command"], format!("search: {step}"));
        assert_eq!(observation["exit_status"], 0);
        assert!(
            observation["output"]
                .as_str()
                .expect("output")
                .contains(&format!("Found for {step}"))
        );
        assert!(
            observation["search"]
                .as_str()
                .expect("search")
                .starts_with("none: no search provider")
        );
        assert!(
            b["result"]
                .as_str()
                .expect("result")
                .starts_with("### Completion\nDone.")
        );
    }
    let queried: Vec<String> = of_kind(&llm, Kind::Analysis)
        .iter()
        .map(task_title)
        .collect();
    assert_eq!(
        queried,
        ["Collect data", "Compare sources", "Write findings"]
    );
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(
        result.starts_with("# What is G?\n\n### Completion\nDone."),
        "{result}"
    );
    assert!(dir(&s).join("executors/executors.yaml").is_file());
    assert!(dir(&s).join("thinking-context.json").is_file());
    let transcript = std::fs::read_to_string(dir(&s).join("transcript.jsonl")).expect("transcript");
    assert_eq!(
        transcript
            .lines()
            .filter(|l| l.contains("\"kind\":\"llm\""))
            .count(),
        11
    );
    assert!(
        !transcript.contains(support::scenario::KEY),
        "no secret in the transcript"
    );
    let finished: Vec<Value> = events(&s)
        .into_iter()
        .filter(|e| e["event"] == "run_finished")
        .collect();
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["status"], "completed");
    assert_no_block_ids(&llm, &dir(&s));
}

#[tokio::test]
async fn search_uses_the_configured_provider_and_summarize_reads_what_was_done() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    scripted(&llm, |ctx, req| match item(ctx).as_str() {
        "Write findings" => execute("Write findings", "summarize: compare what was found"),
        _ => three_searches(ctx, req),
    });
    let s = Setup::new(&llm, Some(&search));
    thinkon(&s, &["--goal", "What is G?"]).await.success();
    let queries: Vec<String> = search
        .requests()
        .iter()
        .filter_map(|r| r.query_param("q"))
        .collect();
    assert_eq!(queries, ["Collect data", "Compare sources"]);
    let observation = &block(&s, "b")["done"][0];
    assert_eq!(observation["search"], "searxng");
    assert_eq!(
        observation["sources"][0]["url"],
        result_url("Collect data", 1)
    );
    // The workflow's own search step: each source keeps the snippet the analysis read.
    assert_eq!(
        observation["sources"][0]["snippet"],
        result_snippet("Collect data", 1)
    );
    let analysis = of_kind(&llm, Kind::Analysis)[0]
        .user_prompt()
        .expect("prompt");
    assert!(
        analysis.contains(&result_title("Collect data", 1)),
        "{analysis}"
    );
    let summary = of_kind(&llm, Kind::Summary);
    assert_eq!(summary.len(), 1);
    let asked = summary[0].user_prompt().expect("prompt");
    assert!(asked.contains("Task: compare what was found"), "{asked}");
    assert!(
        asked.contains("[1] (completed) Collect data")
            && asked.contains("[2] (completed) Compare sources"),
        "{asked}"
    );
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    let sources = result
        .split("\n## Sources\n\n")
        .nth(1)
        .expect("a sources section");
    assert!(
        sources.starts_with(&format!(
            "- [1] [{}]({})\n",
            result_title("Collect data", 1),
            result_url("Collect data", 1)
        )),
        "{result}"
    );
}

#[tokio::test]
async fn update_plan_replaces_the_remaining_plan() {
    let llm = MockLlm::start().await;
    scripted(&llm, |ctx, _| match item(ctx).as_str() {
        "" => steps(
            "Research G",
            &["Collect data", "Compare sources", "Write findings"],
        ),
        "Collect data" => {
            let mut answer = execute("Collect data", "search: Collect data");
            answer["update_plan"] = json!(["Check the newest source", "Write findings"]);
            answer
        }
        step => execute(step, &format!("search: {step}")),
    });
    let s = Setup::new(&llm, None);
    thinkon(&s, &["--goal", "What is G?"]).await.success();
    let root = block(&s, "a");
    assert_eq!(
        goals(&root["done"]),
        ["Collect data", "Check the newest source", "Write findings"]
    );
    let planned: Vec<String> = of_kind(&llm, Kind::Planner)
        .iter()
        .map(|r| item(&context(r)))
        .collect();
    assert_eq!(
        planned,
        [
            "",
            "Collect data",
            "Check the newest source",
            "Write findings"
        ]
    );
    assert!(
        events(&s)
            .iter()
            .any(|e| e["event"] == "plan_updated" && e["block"] == "a")
    );
    assert_no_block_ids(&llm, &dir(&s));
}

#[tokio::test]
async fn a_contract_violation_is_sent_back_and_repaired() {
    let llm = MockLlm::start().await;
    scripted(&llm, |ctx, req| match item(ctx).as_str() {
        // `git` is not among the built-in executors: an invented tool.
        "Collect data" if req.messages().len() == 2 => execute("Collect data", "git: log"),
        _ => three_searches(ctx, req),
    });
    let s = Setup::new(&llm, None);
    thinkon(&s, &["--goal", "What is G?"]).await.success();
    let asked: Vec<Recorded> = of_kind(&llm, Kind::Planner)
        .into_iter()
        .filter(|r| item(&context(r)) == "Collect data")
        .collect();
    assert_eq!(asked.len(), 2, "asked once, repaired once");
    let repair = asked[1].messages();
    assert_eq!(repair.len(), 4);
    assert_eq!(repair[2]["role"], "assistant");
    let message = repair[3]["content"].as_str().expect("repair");
    assert!(
        message.contains("UNKNOWN_EXECUTOR at executor_call.command"),
        "{message}"
    );
    assert!(message.contains("shell: <command>"), "{message}");
    assert_eq!(
        block(&s, "b")["executor_call"]["command"],
        "search: Collect data"
    );
    assert!(
        events(&s)
            .iter()
            .any(|e| e["event"] == "planner_repair" && e["node"] == "a")
    );
    assert_no_block_ids(&llm, &dir(&s));
}

/// What tiny models did through llama-cpp-python: Gemma 3 270M's planner answered the prompt's
/// example A word for word and its reflection the `...` of the asked-for shape; SmolLM2 135M
/// sent the executors' usage line `search: <query>` as its command. All are sent back; the
/// repaired answers are the ones used.
#[tokio::test]
async fn copies_of_the_prompts_example_usage_and_shape_are_sent_back() {
    let llm = MockLlm::start().await;
    let reflections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&reflections);
    llm.set_handler(move |req| {
        let first = req.messages().len() == 2;
        match kind(req) {
            Kind::Planner if first && item(&context(req)).is_empty() => Reply::json(
                &copied_example(req, "\"plan_type\": \"PLAN_PROBES\"")
                    .expect("the prompt has example A"),
            ),
            // SmolLM2 135M copied the executors' usage line as its command.
            Kind::Planner if first && item(&context(req)) == "Collect data" => {
                Reply::json(&execute("Collect data", "search: <query>"))
            }
            Kind::Planner => Reply::json(&three_searches(&context(req), req)),
            Kind::Reflect if first => {
                counted.fetch_add(1, Ordering::SeqCst);
                Reply::json(&json!({"completion": "...", "deliverables": "...",
                    "metric": "...", "constraints": "..."}))
            }
            Kind::Reflect => Reply::json(&json!({"completion": "Done.",
                "deliverables": "The findings.", "metric": "Met.", "constraints": "Kept."})),
            Kind::Analysis => Reply::json(&json!({"summary": "Found.", "analysis": "Details."})),
            Kind::Summary => Reply::json(&json!({"summary": "S.", "analysis": "A."})),
        }
    });
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");
    let root = block(&s, "a");
    assert_eq!(
        root["goal"], "Research G",
        "the repaired answer shapes the root"
    );
    let planner = repairs(&llm, Kind::Planner);
    assert!(
        planner[0].contains("COPIED_FROM_PROMPT at new_block.goal.intent")
            && planner[0].contains("COPIED_FROM_PROMPT at new_block.plan[0]"),
        "{}",
        planner[0]
    );
    assert!(
        planner
            .iter()
            .any(|m| m.contains("PLACEHOLDER_COMMAND at executor_call.command")),
        "`search: <query>` was sent back: {planner:?}"
    );
    assert_eq!(
        block(&s, "b")["executor_call"]["command"],
        "search: Collect data"
    );
    // Four blocks returned, each reflected twice: the placeholders, then the repair.
    assert_eq!(reflections.load(Ordering::SeqCst), 4);
    let reflected = repairs(&llm, Kind::Reflect);
    assert_eq!(reflected.len(), 4);
    assert!(
        reflected[0].contains("PLACEHOLDER at completion"),
        "{}",
        reflected[0]
    );
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(result.contains("### Completion\nDone."), "{result}");
    assert!(!result.contains("\n...\n"), "{result}");
}

/// SmolLM2 135M through llama-cpp-python has 8,192 tokens of context, and the seed's planner
/// prompt alone took 9,569: every planner call was refused with a 400. The run fails saying
/// so and naming `--compact-prompt`, with which the same model fits.
#[tokio::test]
async fn a_prompt_too_long_for_the_models_context_is_named_and_the_compact_prompt_fits() {
    let llm = MockLlm::start().await;
    llm.context_tokens(8192);
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.code(1)
        .stderr_contains("do not fit in its context")
        .stderr_contains("maximum context length is 8192 tokens")
        .stderr_contains("--compact-prompt");
    let asked: Vec<bool> = llm
        .chat_requests()
        .iter()
        .map(|r| r.body["stream"] == true)
        .collect();
    assert_eq!(
        asked,
        [true, false],
        "a stream with no event is asked whole once; the refusal it gets is not retried"
    );
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(result.contains("--compact-prompt"), "{result}");

    let out = thinkon(
        &s,
        &["--goal", "What is G?", "--dir", "small", "--compact-prompt"],
    )
    .await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");
    // The first run's two requests, then the second run's.
    let planner = of_kind(&llm, Kind::Planner);
    assert!(planner.len() > 2);
    assert!(
        planner[2..]
            .iter()
            .all(|r| r.system_prompt().is_some_and(|p| p.contains("compact"))),
        "the compact prompt asked every time"
    );
}

/// An analysis that only restates its task is sent back once, as a workflow's is, and the
/// repaired answer is the observation; both calls are counted.
#[tokio::test]
async fn an_analysis_that_restates_its_task_is_sent_back_and_both_calls_count() {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match kind(req) {
        Kind::Planner => Reply::json(&three_searches(&context(req), req)),
        Kind::Analysis if req.messages().len() == 2 && task_title(req) == "Collect data" => {
            Reply::json(&json!({"summary": "Collect data", "analysis": "What is G?"}))
        }
        _ => support::thinkon::plain(req),
    });
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.success();
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "completed");
    let repairs = repairs(&llm, Kind::Analysis);
    assert_eq!(repairs.len(), 1, "{repairs:?}");
    assert!(repairs[0].contains("RESTATED_TASK"), "{repairs:?}");
    assert_eq!(
        summary["calls"],
        4 + 3 + 1 + 4,
        "4 plans, 3 analyses and a repair, 4 reflections"
    );
    assert_eq!(summary["calls"], llm.chat_requests().len());
    let observation = &block(&s, "b")["done"][0]["output"];
    assert!(
        observation
            .as_str()
            .is_some_and(|o| o.starts_with("Found for") && !o.contains("What is G?")),
        "{observation}"
    );
}

/// A reflection that stays broken after its repair does not undo the work: each block
/// completes with what it did listed, said to be unreviewed (Gemma 3 270M answered `...` in
/// every section after a search had run well).
#[tokio::test]
async fn a_reflection_that_stays_broken_keeps_the_work_unreviewed() {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match kind(req) {
        Kind::Planner => Reply::json(&three_searches(&context(req), req)),
        Kind::Reflect => Reply::json(&json!({"completion": "...", "deliverables": "...",
            "metric": "...", "constraints": "..."})),
        Kind::Analysis => Reply::json(&json!({
            "summary": format!("Found for {}", task_title(req)), "analysis": "Details."
        })),
        Kind::Summary => Reply::json(&json!({"summary": "S.", "analysis": "A."})),
    });
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.success();
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "completed");
    assert_eq!(summary["blocks"]["completed"], 4);
    assert_eq!(
        of_kind(&llm, Kind::Reflect).len(),
        8,
        "each asked and repaired once"
    );
    let failed: Vec<Value> = events(&s)
        .into_iter()
        .filter(|e| e["event"] == "reflection_failed")
        .collect();
    assert_eq!(failed.len(), 4);
    assert!(
        failed[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("PLACEHOLDER"))
    );
    let leaf = block(&s, "b");
    let result = leaf["result"].as_str().expect("result");
    assert!(
        result.contains("Done, unreviewed: the reflection failed"),
        "{result}"
    );
    assert!(
        result.contains("Found for"),
        "the search's analysis is kept: {result}"
    );
    let root = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(root.contains("unreviewed"), "{root}");
}

#[tokio::test]
async fn a_root_the_planner_never_answers_validly_fails_the_run_with_exit_1() {
    let llm = MockLlm::start().await;
    scripted(
        &llm,
        |_, _| json!({"type": "plan-next", "plan_type": "EXECUTE"}),
    );
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.code(1).stderr_contains(
        "the root block failed: the planner's answer broke the plan-next protocol",
    );
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "failed");
    assert!(
        summary["reason"]
            .as_str()
            .is_some_and(|r| r.contains("INVALID_NEW_BLOCK")),
        "the reason names the findings: {summary}"
    );
    assert_eq!(
        of_kind(&llm, Kind::Planner).len(),
        2,
        "one answer and one repair"
    );
    let root = block(&s, "a");
    assert_eq!(root["status"], "failed");
    assert!(!root["error"].as_str().expect("error").contains('\n'));
    assert!(
        root["result"]
            .as_str()
            .expect("result")
            .contains("broke the plan-next protocol")
    );
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(result.contains("The goal was not reached"), "{result}");
    // A finished tree is left as it is: no call on a rerun.
    thinkon(&s, &["--resume"]).await.code(1);
    assert_eq!(of_kind(&llm, Kind::Planner).len(), 2);
}

#[tokio::test]
async fn depth_at_max_forces_execution_without_asking_the_planner() {
    let llm = MockLlm::start().await;
    scripted(&llm, |ctx, req| match item(ctx).as_str() {
        "Collect data" => steps("Collect data", &["Prices", "Volumes", "Sellers"]),
        _ => three_searches(ctx, req),
    });
    let s = Setup::new(&llm, None);
    thinkon(&s, &["--goal", "What is G?", "--max-depth", "1"])
        .await
        .success();
    let planned: Vec<String> = of_kind(&llm, Kind::Planner)
        .iter()
        .map(|r| item(&context(r)))
        .collect();
    assert_eq!(
        planned,
        ["", "Collect data", "Compare sources", "Write findings"]
    );
    let split = block(&s, "b");
    assert_eq!(
        (split["plan_type"].as_str(), split["depth"].as_u64()),
        (Some("PLAN_STEPS"), Some(1))
    );
    assert_eq!(split["children"], json!(["c", "d", "e"]));
    for (id, part) in [("c", "Prices"), ("d", "Volumes"), ("e", "Sellers")] {
        let leaf = block(&s, id);
        assert_eq!(leaf["forced"], true);
        assert_eq!(leaf["executor_call"]["command"], format!("search: {part}"));
        assert_eq!(leaf["status"], "completed");
    }
    assert!(
        events(&s)
            .iter()
            .any(|e| e["event"] == "planner_warning" && e["code"] == "DEPTH_NEAR_LIMIT")
    );
    assert_no_block_ids(&llm, &dir(&s));
}

#[tokio::test]
async fn at_max_depth_0_the_root_is_searched_even_when_the_executors_file_does_not_declare_search()
{
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("tools.yaml"), "executors:\n  - id: shell\n").expect("file");
    let out = thinkon(
        &s,
        &[
            "--goal",
            "What is G?",
            "--max-depth",
            "0",
            "--executors",
            "tools.yaml",
        ],
    )
    .await;
    out.success();
    assert!(of_kind(&llm, Kind::Planner).is_empty(), "no planner call");
    let root = block(&s, "a");
    assert_eq!(
        (root["plan_type"].as_str(), root["forced"].as_bool()),
        (Some("EXECUTE"), Some(true))
    );
    assert_eq!(root["done"][0]["command"], "search: What is G?");
    assert_eq!(root["done"][0]["status"], "completed");
}

#[tokio::test]
async fn a_repeated_failed_command_is_refused() {
    let llm = MockLlm::start().await;
    scripted(&llm, |ctx, req| match item(ctx).as_str() {
        "" => steps(
            "Build G",
            &["Build it", "Compare sources", "Write findings"],
        ),
        // The same failing command every time, unless told why not.
        "Build it" if req.messages().len() == 2 => {
            execute("Build it", "shell: echo run >> runs.log; exit 3")
        }
        "Build it" => execute("Build it another way", "shell: echo fixed >> runs.log"),
        _ => three_searches(ctx, req),
    });
    let s = Setup::new(&llm, None);
    thinkon(&s, &["--goal", "What is G?", "--allow-shell"])
        .await
        .success();
    let log = std::fs::read_to_string(dir(&s).join("work/runs.log")).expect("runs.log");
    assert_eq!(log, "run\nfixed\n", "the failed command ran once");
    let root = block(&s, "a");
    let statuses: Vec<&str> = root["done"]
        .as_array()
        .expect("done")
        .iter()
        .map(|d| d["status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(statuses, ["failed", "completed", "completed", "completed"]);
    assert_eq!(
        root["done"][0]["command"],
        "shell: echo run >> runs.log; exit 3"
    );
    let repair = repairs(&llm, Kind::Planner);
    assert_eq!(repair.len(), 1, "{repair:?}");
    assert!(
        repair[0].contains("REPEATS_FAILED_ATTEMPT at executor_call.command"),
        "{}",
        repair[0]
    );
    assert_eq!(block(&s, "b")["done"][0]["exit_status"], 3);
    assert_no_block_ids(&llm, &dir(&s));
}

#[tokio::test]
async fn shell_without_allow_shell_starts_nothing_and_fails_the_block() {
    let llm = MockLlm::start().await;
    scripted(&llm, |_, _| execute("Make a file", "shell: touch made.txt"));
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "Make a file"]).await;
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "failed");
    assert!(!dir(&s).join("work/made.txt").exists(), "no process ran");
    let root = block(&s, "a");
    assert_eq!(root["status"], "failed");
    assert!(!root["error"].as_str().expect("error").contains('\n'));
    assert!(
        root["result"]
            .as_str()
            .expect("result")
            .contains("--allow-shell"),
        "{root:#}"
    );
    assert_eq!(root["done"][0]["exit_status"], Value::Null);
    assert!(
        of_kind(&llm, Kind::Reflect).is_empty(),
        "a failed call is not reflected on"
    );
}

#[tokio::test]
async fn shell_with_allow_shell_runs_in_the_work_folder() {
    let llm = MockLlm::start().await;
    scripted(&llm, |_, _| {
        execute("Say where", "shell: pwd > where.txt; echo said")
    });
    let s = Setup::new(&llm, None);
    thinkon(&s, &["--goal", "Say where", "--allow-shell"])
        .await
        .success();
    let work = std::fs::canonicalize(dir(&s).join("work")).expect("work folder");
    let said = std::fs::read_to_string(work.join("where.txt")).expect("where.txt");
    assert_eq!(said.trim(), work.display().to_string());
    let observation = &block(&s, "a")["done"][0];
    assert_eq!(
        (
            observation["exit_status"].as_i64(),
            observation["output"].as_str()
        ),
        (Some(0), Some("said\n"))
    );
}

/// Whether `pid` runs (a zombie, dead but not yet reaped, does not).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[tokio::test]
async fn a_setsid_process_does_not_survive_the_shell_timeout() {
    let llm = MockLlm::start().await;
    scripted(&llm, |_, _| {
        execute(
            "Start a daemon",
            "shell: setsid sh -c 'echo $$ > escaped.pid; exec sleep 120' & sleep 60",
        )
    });
    let s = Setup::new(&llm, None);
    let started = std::time::Instant::now();
    let out = thinkon(
        &s,
        &[
            "--goal",
            "Start a daemon",
            "--allow-shell",
            "--shell-timeout",
            "1",
        ],
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the timeout held"
    );
    let observation = &block(&s, "a")["done"][0];
    assert_eq!(
        observation["timed_out"], true,
        "{observation} {}",
        out.stderr
    );
    let pid = std::fs::read_to_string(dir(&s).join("work/escaped.pid")).expect("pid written");
    let mut waited = 0;
    while running(&pid) && waited < 100 {
        std::thread::sleep(Duration::from_millis(20));
        waited += 1;
    }
    assert!(
        !running(&pid),
        "the `setsid` process {} survived",
        pid.trim()
    );
}

#[tokio::test]
async fn sigkill_mid_tree_and_a_rerun_finish_without_repeating_completed_blocks() {
    let llm = MockLlm::start().await;
    let first_run = Arc::new(AtomicBool::new(true));
    let stalled = Arc::new(AtomicBool::new(false));
    let (first, seen) = (Arc::clone(&first_run), Arc::clone(&stalled));
    scripted(&llm, |_, _| Value::Null);
    let planner = move |ctx: &Value| match item(ctx).as_str() {
        "" => steps("Log G", &["one", "two", "three"]),
        step => execute(step, &format!("shell: echo {step} >> log.txt")),
    };
    llm.set_handler(move |req| match kind(req) {
        Kind::Planner if item(&context(req)) == "three" && first.load(Ordering::SeqCst) => {
            seen.store(true, Ordering::SeqCst);
            Reply::json(&planner(&context(req))).delay(Duration::from_secs(20))
        }
        Kind::Planner => Reply::json(&planner(&context(req))),
        _ => Reply::json(
            &json!({"completion": "Done.", "deliverables": "d", "metric": "m", "constraints": "c"}),
        ),
    });
    let s = Setup::new(&llm, None);
    let watched = Arc::clone(&stalled);
    let killed = s
        .cmd()
        .args(["thinkon", "--goal", "Log G", "--allow-shell"])
        .signal_when("KILL", move || watched.load(Ordering::SeqCst))
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed by the signal");
    first_run.store(false, Ordering::SeqCst);
    let before = llm.chat_requests().len();
    thinkon(&s, &["--goal", "Log G", "--allow-shell"])
        .await
        .success();
    let log = std::fs::read_to_string(dir(&s).join("work/log.txt")).expect("log.txt");
    assert_eq!(log, "one\ntwo\nthree\n", "each step ran once");
    let rerun: Vec<String> = llm.chat_requests()[before..]
        .iter()
        .map(|r| match kind(r) {
            Kind::Planner => format!("plan {}", item(&context(r))),
            k => format!("{k:?}"),
        })
        .collect();
    assert_eq!(
        rerun,
        ["plan three", "Reflect", "Reflect"],
        "only what was not done"
    );
    let root = block(&s, "a");
    assert_eq!(goals(&root["done"]), ["one", "two", "three"]);
    assert_eq!(root["attempts"], 2, "started again after the crash");
    assert_eq!(block(&s, "b")["attempts"], 1);
}

#[tokio::test]
async fn the_block_budget_returns_what_exists_as_partial_and_a_rerun_finishes() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?", "--max-blocks", "2"]).await;
    out.success().stderr_contains("partial run");
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "partial");
    assert!(
        summary["reason"]
            .as_str()
            .expect("reason")
            .contains("block budget (2)")
    );
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(
        result.contains("**Partial result: the block budget (2)"),
        "{result}"
    );
    assert!(result.contains("## Collect data (completed)"), "{result}");
    assert!(
        events(&s)
            .iter()
            .any(|e| e["event"] == "budget_reached" && e["limit"] == "max_blocks")
    );
    let out = thinkon(&s, &["--resume"]).await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");
    assert_eq!(
        goals(&block(&s, "a")["done"]),
        ["Collect data", "Compare sources", "Write findings"]
    );
}

#[tokio::test]
async fn the_token_budget_stops_planning_as_partial() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    // The root's answer costs 18 tokens: nothing more starts.
    let out = thinkon(&s, &["--goal", "What is G?", "--max-tokens", "10"]).await;
    out.success();
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "partial");
    assert_eq!(
        (summary["calls"].as_u64(), summary["tokens"].as_u64()),
        (Some(1), Some(18))
    );
    assert!(
        summary["reason"]
            .as_str()
            .expect("reason")
            .contains("token budget (10)")
    );
    assert_eq!(block(&s, "a")["plan_type"], "PLAN_STEPS");
    let result = std::fs::read_to_string(dir(&s).join("result.md")).expect("result.md");
    assert!(
        result.contains("No block had returned a result yet."),
        "{result}"
    );
}

/// The time budget cuts a step in flight: a model that takes a minute to answer the second
/// planning call does not hold a run with `--max-time 2` (seen against a real server: 240 s
/// asked, 8 minutes taken). The run is `partial`, says the time budget, and keeps what exists;
/// a rerun continues the tree.
#[tokio::test]
async fn the_time_budget_cuts_a_call_in_flight_as_partial() {
    let llm = MockLlm::start().await;
    let planned = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&planned);
    llm.set_handler(move |req| match kind(req) {
        Kind::Planner => {
            let answer = Reply::json(&three_searches(&context(req), req));
            match counter.fetch_add(1, Ordering::SeqCst) {
                1 => answer.delay(Duration::from_secs(60)),
                _ => answer,
            }
        }
        _ => crate::support::thinkon::plain(req),
    });
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?", "--max-time", "2"]).await;
    out.success();
    let summary = out.stdout_json();
    assert_eq!(summary["status"], "partial", "{summary:#}");
    let reason = summary["reason"].as_str().expect("reason");
    assert!(
        reason.contains("time budget (2 s)") && reason.contains("during a step"),
        "{reason}"
    );
    assert!(dir(&s).join("result.md").is_file());
    let reached: Vec<Value> = events(&s)
        .into_iter()
        .filter(|e| e["event"] == "budget_reached")
        .collect();
    assert_eq!(reached.len(), 1, "{reached:#?}");
    assert_eq!(reached[0]["limit"], "max_time");
    assert_eq!(
        block(&s, "a")["plan_type"],
        "PLAN_STEPS",
        "the first answer is kept"
    );
}

#[tokio::test]
async fn sigterm_stops_the_run_with_exit_130_and_the_tree_resumes() {
    let llm = MockLlm::start().await;
    let stall = Arc::new(AtomicBool::new(true));
    let (stalled, seen) = (Arc::clone(&stall), Arc::new(AtomicBool::new(false)));
    let watched = Arc::clone(&seen);
    llm.set_handler(move |req| match kind(req) {
        Kind::Planner
            if item(&context(req)) == "Compare sources" && stalled.load(Ordering::SeqCst) =>
        {
            seen.store(true, Ordering::SeqCst);
            Reply::json(&three_searches(&context(req), req)).delay(Duration::from_secs(20))
        }
        Kind::Planner => Reply::json(&three_searches(&context(req), req)),
        Kind::Analysis => Reply::json(&json!({"summary": "Found.", "analysis": "Details."})),
        _ => Reply::json(
            &json!({"completion": "Done.", "deliverables": "d", "metric": "m", "constraints": "c"}),
        ),
    });
    let s = Setup::new(&llm, None);
    let out = s
        .cmd()
        .args(["thinkon", "--goal", "What is G?"])
        .signal_when("TERM", move || watched.load(Ordering::SeqCst))
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    out.code(130);
    assert_eq!(out.stdout_json()["status"], "interrupted");
    assert!(!dir(&s).join("result.md").exists());
    assert_eq!(
        read_json(&dir(&s).join("thinkon.json"))["status"],
        "interrupted"
    );
    stall.store(false, Ordering::SeqCst);
    let out = thinkon(&s, &["--resume"]).await;
    out.success();
    assert_eq!(
        goals(&block(&s, "a")["done"]),
        ["Collect data", "Compare sources", "Write findings"]
    );
}

#[tokio::test]
async fn a_refused_key_exits_2_naming_it_and_the_tree_stays() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| Reply::raw(401, r#"{"error": {"message": "bad key"}}"#));
    let s = Setup::new(&llm, None);
    let out = thinkon(&s, &["--goal", "What is G?"]).await;
    out.code(2)
        .stderr_contains("refused the API key")
        .stderr_contains("run again to continue it");
    assert!(
        !out.stderr.contains(support::scenario::KEY),
        "no secret printed"
    );
    assert_eq!(block(&s, "a")["status"], "running");
}

#[tokio::test]
async fn a_declared_executor_the_runtime_cannot_run_fails_its_block() {
    let llm = MockLlm::start().await;
    scripted(&llm, |_, _| execute("Show the log", "git: log"));
    let s = Setup::new(&llm, None);
    let file = s.path().join("tools.yaml");
    std::fs::write(&file, "executors:\n  - id: git\n  - id: search\n").expect("executors");
    let out = thinkon(&s, &["--goal", "Show the log", "--executors", "tools.yaml"]).await;
    out.code(1);
    let root = block(&s, "a");
    assert!(
        root["result"]
            .as_str()
            .expect("result")
            .contains("researchflow runs only `search`, `summarize` and `shell`")
    );
    assert!(
        !dir(&s).join("executors/executors.yaml").exists(),
        "a given file is not replaced"
    );
}

#[tokio::test]
async fn usage_errors_exit_2_naming_what_to_fix() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    thinkon(&s, &["--resume"])
        .await
        .code(2)
        .stderr_contains("holds no tree to resume");
    thinkon(&s, &["--goal", "G", "--executors", "missing.yaml"])
        .await
        .code(2)
        .stderr_contains("missing.yaml");
    thinkon(&s, &["--resume"])
        .await
        .code(2)
        .stderr_contains("holds no tree to resume");
    assert!(llm.chat_requests().is_empty());
    thinkon(&s, &["--goal", "G"]).await.success();
    let asked = llm.chat_requests().len();
    thinkon(&s, &["--goal", "Other goal"])
        .await
        .code(2)
        .stderr_contains("holds the tree of another goal (`G`)");
    assert_eq!(llm.chat_requests().len(), asked);
    let bare = tempfile::tempdir().expect("tempdir");
    researchflow()
        .current_dir(bare.path())
        .args(["thinkon", "--goal", "G"])
        .run()
        .await
        .code(2)
        .stderr_contains("no model is configured");
}

#[tokio::test]
async fn stdout_names_the_folder_its_result_and_events_by_absolute_paths() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    // The default folder, `.thinkon`, is relative to the working folder.
    let out = thinkon(&s, &["--goal", "What is G?", "--max-depth", "0"]).await;
    out.success();
    let printed = out.stdout_json();
    for key in ["dir", "result", "events"] {
        let path = Path::new(printed[key].as_str().unwrap_or_default());
        assert!(
            path.is_absolute() && path.exists(),
            "{key}: {}",
            path.display()
        );
    }
    assert_eq!(
        Path::new(printed["dir"].as_str().unwrap_or_default()),
        std::fs::canonicalize(dir(&s)).expect("folder")
    );
}

/// `batch --engine thinkon`: each question is a Thinkon goal in a folder of its own beside the
/// manifest (`<name>.thinkon/`), its result the question's report and its blocks its tasks; no
/// plan file is written, and a rerun finds every question done and asks the model nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_goals_runs_each_in_a_folder_of_its_own_and_a_rerun_asks_nothing() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("goals.txt"), "What is G?\nWhat is H?\n").expect("goals");
    let batch = || {
        s.cmd()
            .args([
                "batch",
                "goals.txt",
                "--out-dir",
                "out",
                "--engine",
                "thinkon",
            ])
            .timeout(Duration::from_secs(60))
    };
    let out = batch().run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["counts"]["completed"], 2, "{printed:#}");
    let manifest = read_json(&s.path().join("out/batch.json"));
    let items = manifest["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{manifest:#}");
    for item in items {
        assert_eq!(item["status"], "completed", "{item:#}");
        let folder = PathBuf::from(item["plan_file"].as_str().expect("its place"));
        assert!(
            folder.is_dir() && folder.to_string_lossy().ends_with(".thinkon"),
            "{item:#}"
        );
        let report = PathBuf::from(item["report"].as_str().expect("a report"));
        assert_eq!(report, folder.join("result.md"));
        let query = item["query"].as_str().expect("query");
        let result = std::fs::read_to_string(&report).expect("result.md");
        assert!(result.starts_with(&format!("# {query}")), "{result}");
        assert_eq!(
            item["totals"]["tasks_completed"], 4,
            "the root and its three steps"
        );
        assert_eq!(
            item["answered"],
            Value::Null,
            "a goal's result is not judged"
        );
        let finished: Vec<Value> = read_ndjson(&folder.join("events.ndjson"))
            .into_iter()
            .filter(|e| e["event"] == "run_finished")
            .collect();
        assert_eq!(finished.len(), 1);
        assert_eq!(finished[0]["status"], "completed");
    }
    let plans: Vec<PathBuf> = std::fs::read_dir(s.path().join("out"))
        .expect("out/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json") && !p.ends_with("batch.json"))
        .collect();
    assert!(plans.is_empty(), "no plan file is written: {plans:?}");
    let asked = llm.chat_requests().len();
    batch().run().await.success();
    assert_eq!(llm.chat_requests().len(), asked, "every question was done");
}

/// What `batch --engine thinkon` cannot do is refused before any question runs: compare with
/// `--previous` (it writes no plan file), run in a queue (its workers run workflows), or run
/// without a model.
#[tokio::test]
async fn a_batch_of_goals_is_refused_what_it_cannot_do_before_anything_runs() {
    let llm = MockLlm::start().await;
    scripted(&llm, three_searches);
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("goals.txt"), "What is G?\n").expect("goals");
    std::fs::create_dir(s.path().join("old")).expect("old");
    let goals = ["batch", "goals.txt", "--engine", "thinkon"];
    s.cmd()
        .args(goals)
        .args(["--out-dir", "out", "--previous", "old"])
        .run()
        .await
        .code(2)
        .stderr_contains("`--previous` compares plan files");
    s.cmd()
        .args(goals)
        .args(["--queue", "postgres://nobody@127.0.0.1:1/none"])
        .run()
        .await
        .code(2)
        .stderr_contains("`--engine thinkon` runs here, not in a queue");
    std::fs::write(s.path().join("bare.json"), "{}").expect("a config without a model");
    s.cmd()
        .args(goals)
        .args(["--out-dir", "out", "--config", "bare.json"])
        .env_remove("OPENAI_BASE_URL")
        .env_remove("OPENAI_MODEL")
        .run()
        .await
        .code(2)
        .stderr_contains("model");
    assert!(llm.chat_requests().is_empty(), "nothing was asked");
}

/// A goal whose root fails (the planner never answers validly) fails its question, which is
/// named with its reason, and makes the batch exit 1; the other goal still completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_goal_fails_its_question_and_the_batch_exits_1() {
    let llm = MockLlm::start().await;
    scripted(&llm, |ctx, req| {
        if req.raw_body.contains("Broken goal") {
            json!({"type": "plan-next", "plan_type": "EXECUTE"})
        } else {
            three_searches(ctx, req)
        }
    });
    let s = Setup::new(&llm, None);
    std::fs::write(s.path().join("goals.txt"), "Broken goal?\nWhat is G?\n").expect("goals");
    let out = s
        .cmd()
        .args([
            "batch",
            "goals.txt",
            "--out-dir",
            "out",
            "--engine",
            "thinkon",
        ])
        .timeout(Duration::from_secs(60))
        .run()
        .await;
    out.code(1);
    let printed = out.stdout_json();
    assert_eq!(printed["counts"]["completed"], 1, "{printed:#}");
    assert_eq!(printed["counts"]["failed"], 1, "{printed:#}");
    let manifest = read_json(&s.path().join("out/batch.json"));
    let broken = manifest["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|i| i["query"] == "Broken goal?")
        .expect("the broken goal");
    assert_eq!(broken["status"], "failed", "{broken:#}");
    assert!(
        broken["reason"]
            .as_str()
            .is_some_and(|r| r.contains("the root block failed")),
        "{broken:#}"
    );
}
