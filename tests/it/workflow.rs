//! Integration tests of `researchflow workflow`: whole runs of the real binary against the
//! mock LLM and mock search servers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fixtures::fixture;
use crate::support::scenario::{
    Agent, KEY, SEARCH_KEY, Setup, agent, events_of, final_over, node, one_search_then_final,
    plan_answer, read_json, read_ndjson, scripted, searches_round, task_title, titles,
};
use crate::support::{Fault, MockLlm, MockSearch, Reply, SearchKind};

/// The planner's answer in round `round` (0-based): two searches `b`, `c`, then the final
/// summary over `final_refs`.
fn two_searches_then_final(round: usize, titles: [&str; 2], final_refs: &str) -> Value {
    if round == 0 {
        searches_round(&titles)
    } else {
        final_over(final_refs)
    }
}

fn three_rounds() -> Vec<Value> {
    vec![
        searches_round(&["Energy density", "Safety", "Cost"]),
        plan_answer(
            false,
            json!([
                {"title": "Supply chain", "type": "search", "p_node": "b:summary"},
                {"title": "Compare findings", "type": "summary", "p_node": "b:summary, c:info[llm], d:summary"}
            ]),
            json!(["NEW1:summary", "NEW2:summary"]),
        ),
        plan_answer(
            true,
            json!([{"title": "Final report", "type": "summary", "p_node": "e:summary, f:summary"}]),
            json!(["NEW1:summary"]),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_run_over_three_rounds_ends_with_the_final_summary() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    search.require_key(SEARCH_KEY);
    scripted(&llm, three_rounds());
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("Are solid-state batteries ready?").run().await;
    out.success();

    let plan = s.plan();
    let expect = [
        ("b", 2, "search", "a:info"),
        ("c", 2, "search", "a:info"),
        ("d", 2, "search", "a:info"),
        ("e", 3, "search", "b:summary"),
        ("f", 3, "summary", "b:summary, c:info[llm], d:summary"),
        ("g", -1, "summary", "e:summary, f:summary"),
    ];
    for (id, batch, kind, p_node) in expect {
        let n = node(&plan, id);
        assert_eq!(n["batch"], batch, "{id}");
        assert_eq!(n["type"], kind, "{id}");
        assert_eq!(n["p_node"], p_node, "{id}");
        assert_eq!(n["status"], "completed", "{id}");
        assert_eq!(n["attempts"], 1, "{id}");
        for field in ["created_at", "updated_at", "finished_at"] {
            assert!(n[field].is_string(), "{id} has {field}");
        }
        assert!(
            n["usage"]["total_tokens"].as_u64().unwrap_or(0) > 0,
            "{id} has token usage"
        );
    }
    assert_eq!(plan["nodes"].as_array().map(Vec::len), Some(7));
    assert_eq!(plan["check_list"]["latest_id"], "g");
    assert_eq!(plan["check_list"]["latest_batch"], -1);
    assert_eq!(plan["check_list"]["refs"], json!(["g:summary"]));

    // Search nodes: analysis, raw results and the URLs the mock returned.
    let returned = search.returned_urls();
    let b = node(&plan, "b");
    assert_eq!(b["summary"], "Summary of Energy density");
    let info = b["info"].as_str().expect("info");
    assert!(
        info.starts_with("<info type=\"llm\">Analysis of Energy density"),
        "{info}"
    );
    assert!(
        info.contains("<info type=\"search\">provider: searxng"),
        "{info}"
    );
    let urls: Vec<&str> = b["sources"]
        .as_array()
        .expect("sources")
        .iter()
        .filter_map(|s| s["url"].as_str())
        .collect();
    assert_eq!(urls.len(), 3);
    assert!(urls.iter().all(|u| returned.iter().any(|r| r == u)));
    // Summary nodes: only the llm block, no sources.
    let f = node(&plan, "f");
    assert!(
        !f["info"]
            .as_str()
            .unwrap_or_default()
            .contains("type=\"search\"")
    );
    assert!(f.get("sources").is_none());
    // The summary agent read its refs with content.
    let f_req = llm
        .requests()
        .into_iter()
        .find(|r| agent(r) == Agent::Summary)
        .expect("summary request");
    let f_input = f_req.user_prompt().unwrap_or_default();
    assert!(
        f_input.contains("### c:info[llm]") && f_input.contains("Analysis of Safety"),
        "{f_input}"
    );

    // The report: cites only URLs the mock returned; the invented number is gone.
    let report = s.report();
    assert!(
        report.starts_with("# Are solid-state batteries ready?\n"),
        "{report}"
    );
    assert!(!report.contains("[99]"), "{report}");
    let cited: Vec<&str> = report
        .lines()
        .filter(|l| l.starts_with("- ["))
        .filter_map(|l| l.split("](").nth(1).and_then(|r| r.strip_suffix(')')))
        .collect();
    assert_eq!(cited.len(), 3, "{report}");
    for url in &cited {
        assert!(
            returned.iter().any(|r| r == url),
            "{url} was never returned by the search"
        );
    }

    // Events.
    let events = s.events();
    assert_eq!(events_of(&events, "round_planned").len(), 3);
    assert_eq!(events_of(&events, "task_started").len(), 6);
    assert_eq!(events_of(&events, "task_completed").len(), 6);
    // The starts of a batch are checkpointed once, after the batch's tasks are under way, and
    // with them the round that planned them: no task waits for an fsync.
    let whys: Vec<&str> = events_of(&events, "file_written")
        .iter()
        .filter_map(|e| e["why"].as_str())
        .collect();
    let start_saves: Vec<&str> = whys
        .iter()
        .copied()
        .filter(|why| why.contains("task started"))
        .collect();
    assert_eq!(
        start_saves,
        vec!["round planned, task started"; 3],
        "one for b-d, one for e-f, one for the final g: {whys:?}"
    );
    assert!(
        !whys.contains(&"round planned"),
        "no round saved alone before its tasks start: {whys:?}"
    );
    assert_eq!(
        whys.len(),
        9,
        "3 rounds with their starts, 5 task ends, the final's end with the run's: {whys:?}"
    );
    assert_eq!(whys.last(), Some(&"task completed, run finished"));
    let finished = events_of(&events, "run_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["totals"]["tasks_completed"], 6);
    assert_eq!(finished[0]["totals"]["rounds"], 3);
    assert!(finished[0]["totals"]["total_tokens"].as_u64().unwrap_or(0) > 0);

    // stdout: the paths and totals.
    let stdout = out.stdout_json();
    assert_eq!(stdout["status"], "completed");
    assert_eq!(stdout["final_node"], "g");
    assert!(
        stdout["report"]
            .as_str()
            .unwrap_or_default()
            .ends_with("plan.report.md")
    );
    assert!(
        stdout["events"]
            .as_str()
            .unwrap_or_default()
            .ends_with("plan.events.ndjson")
    );
    assert_eq!(stdout["totals"]["tasks_failed"], 0);

    // No secret anywhere.
    let files = [
        std::fs::read_to_string(s.out()).unwrap_or_default(),
        s.report(),
        std::fs::read_to_string(s.path().join("out/plan.events.ndjson")).unwrap_or_default(),
    ];
    for text in files.iter().chain([&out.stdout, &out.stderr]) {
        assert!(
            !text.contains(KEY) && !text.contains(SEARCH_KEY),
            "a key leaked: {text}"
        );
    }
    for req in search.requests() {
        assert!(
            !req.query.contains(SEARCH_KEY),
            "the search key is never in the URL"
        );
    }
}

async fn overlap_with(concurrency: &str) -> usize {
    let llm = MockLlm::start().await;
    let rounds = three_rounds();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let n = counter.fetch_add(1, Ordering::SeqCst);
            let answer = if n == 0 {
                rounds[0].clone()
            } else {
                final_over("b:summary")
            };
            Reply::json(&answer)
        }
        Agent::Final => Reply::content("Done."),
        _ => {
            Reply::json(&json!({"summary": "S", "analysis": "A"})).delay(Duration::from_millis(400))
        }
    });
    let s = Setup::new(&llm, None);
    s.query("Q?")
        .args(["--concurrency", concurrency])
        .run()
        .await
        .success();
    llm.max_in_flight()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_tasks_overlap_in_time_with_concurrency_three() {
    assert_eq!(overlap_with("3").await, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_never_overlap_with_concurrency_one() {
    assert_eq!(overlap_with("1").await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_rate_limited_twice_completes_and_the_events_show_both_retries() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Tavily).await;
    search.push_fault(Fault::rate_limited_ms(60));
    search.push_fault(Fault::rate_limited(Some("0")));
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, Some(&search));
    s.query("Q?").run().await.success();
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
    assert_eq!(search.requests().len(), 3);
    let events = s.events();
    let retries = events_of(&events, "http_retry");
    assert_eq!(retries.len(), 2, "{events:#?}");
    assert!(
        retries
            .iter()
            .all(|e| e["node"] == "b" && e["cause"] == "HTTP 429")
    );
    assert_eq!(retries[0]["delay_ms"], 60);
    assert_eq!(retries[0]["retry_after"], true);
    assert_eq!(retries[1]["delay_ms"], 0);
    assert_eq!(
        events_of(&events, "run_finished")[0]["totals"]["retries"],
        2
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_failing_every_try_is_failed_and_the_run_still_finishes() {
    let llm = MockLlm::start().await;
    let planner_inputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&planner_inputs);
    let round = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            seen.lock()
                .expect("lock")
                .push(req.user_prompt().unwrap_or_default());
            Reply::json(&two_searches_then_final(
                round.fetch_add(1, Ordering::SeqCst),
                ["Doomed", "Fine"],
                "c:summary",
            ))
        }
        Agent::Analysis if task_title(req) == "Doomed" => Reply::fault(Fault::server_error(500)),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").run().await;
    out.success();
    let plan = s.plan();
    let b = node(&plan, "b");
    assert_eq!(b["status"], "failed");
    assert!(
        b["errors"][0]
            .as_str()
            .unwrap_or_default()
            .contains("HTTP 500"),
        "{b:#}"
    );
    assert_eq!(node(&plan, "c")["status"], "completed");
    assert_eq!(node(&plan, "d")["status"], "completed");
    assert_eq!(node(&plan, "d")["batch"], -1);
    let analysis_calls = llm
        .requests()
        .iter()
        .filter(|r| agent(r) == Agent::Analysis && task_title(r) == "Doomed")
        .count();
    assert_eq!(analysis_calls, 4, "one try and three retries");
    let inputs = planner_inputs.lock().expect("lock").clone();
    assert!(
        inputs[1].contains("### Failed tasks") && inputs[1].contains("node b: Doomed"),
        "{}",
        inputs[1]
    );
    let events = s.events();
    assert_eq!(events_of(&events, "task_failed").len(), 1);
    assert_eq!(events_of(&events, "http_retry").len(), 3);
    assert_eq!(out.stdout_json()["totals"]["tasks_failed"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_citing_only_a_failed_node_is_dropped_and_a_warning_keeps_its_task() {
    let llm = MockLlm::start().await;
    let planner_inputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&planner_inputs);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let mut inputs = seen.lock().expect("lock");
            inputs.push(req.user_prompt().unwrap_or_default());
            Reply::json(&match inputs.len() {
                1 => searches_round(&["Doomed", "Fine"]),
                2 => plan_answer(
                    false,
                    json!([
                        {"title": "What the doomed search found", "type": "summary", "p_node": "b:summary"},
                        {"title": "Fine details", "type": "search", "p_node": "c:summary, b:summary"}
                    ]),
                    json!(["NEW1:summary", "NEW2:summary"]),
                ),
                _ => final_over("c:summary, d:summary"),
            })
        }
        Agent::Analysis if task_title(req) == "Doomed" => Reply::fault(Fault::server_error(500)),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();

    // The task over the failed node never became a node; the one with a warning did.
    let plan = s.plan();
    let titles = titles(&plan);
    assert_eq!(
        titles,
        vec!["Q?", "Doomed", "Fine", "Fine details", "Final"]
    );
    assert_eq!(node(&plan, "d")["status"], "completed");
    assert_eq!(node(&plan, "e")["batch"], -1);

    let events = s.events();
    let reviews = events_of(&events, "plan_review");
    assert_eq!(reviews.len(), 3, "one review per round");
    assert_eq!(reviews[0]["ok"], true);
    assert_eq!(reviews[0]["issues"], json!([]));
    assert_eq!(reviews[1]["round"], 2);
    assert_eq!(reviews[1]["ok"], false);
    let issues = reviews[1]["issues"].as_array().expect("issues");
    let kinds: Vec<(&str, &str, &str)> = issues
        .iter()
        .map(|i| {
            (
                i["id"].as_str().unwrap_or_default(),
                i["type"].as_str().unwrap_or_default(),
                i["severity"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("R2-1", "ONLY_FAILED_INPUTS", "block"),
            ("R2-2", "CITES_FAILED", "warn")
        ]
    );
    let message = issues[0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("What the doomed search found") && message.contains("(b)"));
    let dropped = events_of(&events, "task_dropped");
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0]["reason"], "ONLY_FAILED_INPUTS");
    assert_eq!(dropped[0]["issue"], "R2-1");
    assert!(dropped[0].get("repeats").is_none());

    // The next round hears which task was dropped and why.
    let inputs = planner_inputs.lock().expect("lock").clone();
    assert_eq!(inputs.len(), 3);
    assert!(
        inputs[2].contains("### Tasks dropped by the plan review")
            && inputs[2].contains("What the doomed search found")
            && inputs[2].contains("(ONLY_FAILED_INPUTS)"),
        "{}",
        inputs[2]
    );
    assert!(!inputs[1].contains("### Tasks dropped"));

    // The file beside the plan holds the latest round's review.
    let file = read_json(&s.path().join("out/plan.plan-review.json"));
    assert_eq!(file, json!({"round": 3, "ok": true, "issues": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_rounds_forces_finalisation() {
    let llm = MockLlm::start().await;
    let planner_inputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&planner_inputs);
    let round = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            seen.lock().expect("lock").push((
                req.system_prompt().unwrap_or_default(),
                req.user_prompt().unwrap_or_default(),
            ));
            let n = round.fetch_add(1, Ordering::SeqCst);
            // A planner that never stops searching.
            Reply::json(&searches_round(&[format!("Search {n}")]))
        }
        Agent::Final => Reply::content("Forced report."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?")
        .args(["--max-rounds", "2"])
        .run()
        .await
        .success();
    let plan = s.plan();
    let asked = planner_inputs.lock().expect("lock").clone();
    let (systems, inputs): (Vec<String>, Vec<String>) = asked.into_iter().unzip();
    assert_eq!(inputs.len(), 2);
    assert!(!inputs[0].contains("last planning round"));
    assert!(inputs[1].contains("This is the last planning round"));
    // The last round is asked with the finalising prompt alone: the final task, not the
    // strategy of research.
    assert!(systems[0].contains("## Strategy"), "{}", systems[0]);
    assert!(!systems[1].contains("## Strategy"), "{}", systems[1]);
    assert!(
        systems[1].contains("This is the last planning round"),
        "{}",
        systems[1]
    );
    assert!(systems[1].len() * 2 < systems[0].len());
    // Round 2's search was discarded; the orchestrator added the final summary over b.
    let nodes = plan["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 3, "{plan:#}");
    let c = node(&plan, "c");
    assert_eq!(c["batch"], -1);
    assert_eq!(c["status"], "completed");
    assert_eq!(c["p_node"], "b:summary");
    assert_eq!(c["summary"], "Forced report.");
    let events = s.events();
    assert_eq!(events_of(&events, "final_forced").len(), 1);
    assert!(s.report().contains("Forced report."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_empty_rounds_in_a_row_force_the_final_round() {
    let llm = MockLlm::start().await;
    let planner_inputs = Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = Arc::clone(&planner_inputs);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let input = req.user_prompt().unwrap_or_default();
            seen.lock().expect("lock").push(input.clone());
            let round = seen.lock().expect("lock").len();
            Reply::json(&if input.contains("last planning round") {
                final_over("b:summary")
            } else if round == 1 {
                // Something must be researched before rounds may plan nothing.
                searches_round(&["One search"])
            } else {
                plan_answer(false, json!([]), json!(["b:summary"]))
            })
        }
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let inputs = planner_inputs.lock().expect("lock").clone();
    assert_eq!(
        inputs.len(),
        4,
        "one round with a task, two empty rounds, the last round"
    );
    assert!(!inputs[2].contains("last planning round"));
    assert!(inputs[3].contains("last planning round"));
    assert_eq!(node(&s.plan(), "c")["batch"], -1);
    assert_eq!(node(&s.plan(), "c")["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_runs_only_unfinished_nodes() {
    let llm = MockLlm::start().await;
    scripted(&llm, vec![final_over("e:summary, f:summary")]);
    let s = Setup::new(&llm, None);
    // Stage 2 (b, c, d completed) plus a planned search e and a summary f left `running`.
    let mut plan = read_json(&fixture("plan_stage2.json"));
    let nodes = plan["nodes"].as_array_mut().expect("nodes");
    nodes.push(json!({"node_id": "e", "title": "New direction", "summary": "", "info": "", "p_node": "b:summary",
                      "batch": 3, "type": "search", "status": "planned"}));
    nodes.push(json!({"node_id": "f", "title": "Interim synthesis", "summary": "", "info": "", "p_node": "c:summary, d:summary",
                      "batch": 3, "type": "summary", "status": "running", "attempts": 1}));
    plan["check_list"] =
        json!({"latest_id": "f", "latest_batch": 3, "refs": ["e:summary", "f:summary"]});
    std::fs::create_dir_all(s.path().join("out")).expect("mkdir");
    std::fs::write(s.out(), serde_json::to_string_pretty(&plan).expect("json")).expect("write");
    let before = plan.clone();

    s.resume(&s.out()).await.success();

    let after = s.plan();
    for id in ["a", "b", "c", "d"] {
        assert_eq!(
            node(&after, id),
            node(&before, id),
            "completed node {id} is untouched"
        );
    }
    assert_eq!(node(&after, "e")["status"], "completed");
    assert_eq!(node(&after, "e")["attempts"], 1);
    assert_eq!(node(&after, "f")["status"], "completed");
    assert_eq!(
        node(&after, "f")["attempts"],
        2,
        "a crash-left running node is started again"
    );
    assert_eq!(node(&after, "g")["batch"], -1);
    assert_eq!(node(&after, "g")["status"], "completed");
    let titles: Vec<String> = llm
        .requests()
        .iter()
        .filter(|r| matches!(agent(r), Agent::Analysis | Agent::Summary))
        .map(task_title)
        .collect();
    assert_eq!(titles.len(), 2, "{titles:?}");
    assert!(
        titles.contains(&"New direction".to_string())
            && titles.contains(&"Interim synthesis".to_string())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_final_summary_exits_1_and_keeps_the_work() {
    let llm = MockLlm::start().await;
    let round = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&match round.fetch_add(1, Ordering::SeqCst) {
            0 => searches_round(&["S"]),
            _ => final_over("b:summary"),
        }),
        Agent::Final => Reply::fault(Fault::server_error(502)),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").run().await;
    out.code(1);
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(node(&plan, "c")["status"], "failed");
    assert_eq!(out.stdout_json()["status"], "final_failed");
    assert!(!s.path().join("out/plan.report.md").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_none_writes_no_search_block_and_brave_sends_its_token() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let b = node(&s.plan(), "b").clone();
    assert!(
        !b["info"]
            .as_str()
            .unwrap_or_default()
            .contains("type=\"search\"")
    );
    assert!(b.get("sources").is_none());
    assert!(
        !llm.requests().iter().any(|r| agent(r) == Agent::Queries),
        "no queries without a provider"
    );

    let llm = MockLlm::start().await;
    let brave = MockSearch::start(SearchKind::Brave).await;
    brave.require_key(SEARCH_KEY);
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, Some(&brave));
    s.query("Q?").run().await.success();
    let req = &brave.requests()[0];
    assert_eq!(req.header("x-subscription-token"), Some(SEARCH_KEY));
    assert_eq!(req.query_param("q").as_deref(), Some("q Only search"));
    let sources = node(&s.plan(), "b")["sources"]
        .as_array()
        .expect("sources")
        .len();
    assert_eq!(sources, brave.returned_urls().len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_run_refuses_to_overwrite_an_existing_plan() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    std::fs::create_dir_all(s.path().join("out")).expect("mkdir");
    std::fs::write(s.out(), "{}").expect("write");
    let out = s.query("Q?").run().await;
    out.code(2);
    assert!(out.stderr.contains("already exists"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(s.out()).expect("read"), "{}");
    assert!(llm.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signal_stops_the_run_with_the_work_saved_and_resume_finishes_it() {
    let llm = MockLlm::start().await;
    let slow = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let slow_flag = Arc::clone(&slow);
    let round = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&two_searches_then_final(
            round.fetch_add(1, Ordering::SeqCst),
            ["Quick", "Slow"],
            "b:summary, c:summary",
        )),
        Agent::Analysis if task_title(req) == "Slow" && slow_flag.load(Ordering::SeqCst) => {
            Reply::json(&json!({"summary": "late", "analysis": "late"}))
                .delay(Duration::from_secs(30))
        }
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    let plan_path = s.out();
    let watched = plan_path.clone();
    // Interrupt once the quick task's result is on disk and the slow one is running.
    let out = s
        .query("Q?")
        .signal_when("TERM", move || {
            std::fs::read_to_string(&watched)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .is_some_and(|p| {
                    let status = |id: &str| {
                        p["nodes"]
                            .as_array()
                            .and_then(|n| n.iter().find(|n| n["node_id"] == id))
                            .map(|n| n["status"].clone())
                    };
                    status("b") == Some(json!("completed")) && status("c") == Some(json!("running"))
                })
        })
        .timeout(Duration::from_secs(20))
        .run()
        .await;
    out.code(130);
    assert_eq!(out.stdout_json()["status"], "interrupted");
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(
        node(&plan, "c")["status"],
        "running",
        "in-flight work is left for resume"
    );
    assert!(events_of(&s.events(), "run_finished")[0]["status"] == "interrupted");

    slow.store(false, Ordering::SeqCst);
    let resumed = s.resume(&plan_path).await;
    resumed.success();
    let plan = s.plan();
    assert_eq!(
        node(&plan, "b")["attempts"],
        1,
        "completed work is not redone"
    );
    assert_eq!(node(&plan, "c")["status"], "completed");
    assert_eq!(node(&plan, "c")["attempts"], 2);
    assert_eq!(node(&plan, "d")["batch"], -1);
    assert_eq!(node(&plan, "d")["status"], "completed");
    // regression: round numbers restarted at 1 on every resume.
    let rounds: Vec<Value> = events_of(&s.events(), "round_planned")
        .iter()
        .map(|e| e["round"].clone())
        .collect();
    assert_eq!(rounds, vec![json!(1), json!(2)]);
    assert_eq!(plan["rounds"], 2);
}

/// Issue 33: a task killed after its first model call was answered, before it was
/// checkpointed, does not pay for that call again when the run resumes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_task_is_answered_from_the_transcript_for_the_calls_it_had_paid_for() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    let hang = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let reached = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (hanging, reaching) = (Arc::clone(&hang), Arc::clone(&reached));
    let round = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&two_searches_then_final(
            round.fetch_add(1, Ordering::SeqCst) % 2,
            ["Quick", "Slow"],
            "b:summary, c:summary",
        )),
        Agent::Queries => Reply::json(&json!({"queries": [format!("about {}", task_title(req))]})),
        Agent::Analysis if task_title(req) == "Slow" && hanging.load(Ordering::SeqCst) => {
            reaching.store(true, Ordering::SeqCst);
            Reply::json(&json!({"summary": "late", "analysis": "late"}))
                .delay(Duration::from_secs(60))
        }
        Agent::Final => Reply::content("S [1]."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, Some(&search));
    let plan_path = s.out();
    let watched = plan_path.clone();
    // Killed once the quick task's end is on disk and the slow one waits for its analysis.
    let killed = s
        .query("Q?")
        .signal_when("KILL", move || {
            reached.load(Ordering::SeqCst)
                && std::fs::read_to_string(&watched)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                    .is_some_and(|p| {
                        p["nodes"].as_array().is_some_and(|nodes| {
                            nodes
                                .iter()
                                .any(|n| n["node_id"] == "b" && n["status"] == "completed")
                        })
                    })
        })
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed: {}", killed.stderr);
    assert_eq!(node(&s.plan(), "c")["status"], "running");
    let asked = |title: &str, kind: Agent| {
        llm.chat_requests()
            .iter()
            .filter(|r| agent(r) == kind && task_title(r) == title)
            .count()
    };
    assert_eq!(asked("Slow", Agent::Queries), 1, "answered before the kill");
    let searched = |title: &str| {
        search
            .requests()
            .iter()
            .filter(|r| r.query.contains(title) || r.body.to_string().contains(title))
            .count()
    };
    assert_eq!(searched("Slow"), 1, "searched before the kill");

    hang.store(false, Ordering::SeqCst);
    let resumed = s.resume(&plan_path).await;
    resumed.success();
    let plan = s.plan();
    assert_eq!(node(&plan, "c")["status"], "completed");
    assert_eq!(node(&plan, "c")["attempts"], 2, "the task ran again");
    assert_eq!(
        asked("Slow", Agent::Queries),
        1,
        "its answered call was served from the transcript, not asked again"
    );
    assert_eq!(
        searched("Slow"),
        1,
        "its search's results were served from the transcript, not searched again"
    );
    assert_eq!(
        asked("Slow", Agent::Analysis),
        2,
        "the unanswered one was asked again"
    );
    assert_eq!(
        asked("Quick", Agent::Queries),
        1,
        "a completed task never runs again"
    );
    let transcript = plan_path.with_extension("transcript.jsonl");
    let salvaged: Vec<Value> = read_ndjson(&transcript)
        .into_iter()
        .filter(|l| l["replayed"] == true)
        .collect();
    assert_eq!(
        salvaged.len(),
        2,
        "the queries call and the search: {salvaged:?}"
    );
    for line in &salvaged {
        assert_eq!(line["node"], "c");
        assert_eq!(
            line["session"], 2,
            "written by the resumed session (the killed one was 1)"
        );
    }
    assert!(salvaged[1]["results"].is_array(), "{salvaged:?}");
    for said in ["LLM call", "search"] {
        assert!(
            resumed
                .stderr
                .lines()
                .any(|l| l.contains(said)
                    && l.contains("answered by the interrupted run's transcript")),
            "{said}: {}",
            resumed.stderr
        );
    }
}

/// A run killed while its planner's repair call waits (the round's first answer broke the
/// contract): the round never reached the plan, so the resumed run plans it again under the
/// same number, and the first call, answered before the kill, is served from the transcript
/// instead of being paid for again; the repair, never answered, is asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_round_is_answered_from_the_transcript_for_the_planner_call_it_had_paid_for() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    let hang = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let reached = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (hanging, reaching) = (Arc::clone(&hang), Arc::clone(&reached));
    // A repair sends the broken answer back: system, user, that answer, what is wrong.
    let repair = |req: &crate::support::server::Recorded| req.messages().len() > 2;
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner if repair(req) && hanging.load(Ordering::SeqCst) => {
            reaching.store(true, Ordering::SeqCst);
            Reply::json(&searches_round(&["Energy"])).delay(Duration::from_secs(60))
        }
        Agent::Planner if repair(req) => Reply::json(&searches_round(&["Energy"])),
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("Energy") => {
            Reply::json(&final_over("b:summary"))
        }
        // Final with no task: the contract sends it back for repair.
        Agent::Planner => Reply::json(&plan_answer(true, json!([]), json!([]))),
        Agent::Queries => Reply::json(&json!({"queries": ["energy density"]})),
        Agent::Final => Reply::content("S [1]."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, Some(&search));
    let plan_path = s.out();
    let killed = s
        .query("Q?")
        .signal_when("KILL", move || reached.load(Ordering::SeqCst))
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    assert_eq!(killed.status, -1, "killed: {}", killed.stderr);
    let first_calls = || {
        llm.chat_requests()
            .iter()
            .filter(|r| {
                agent(r) == Agent::Planner
                    && !repair(r)
                    && !r.user_prompt().unwrap_or_default().contains("Energy")
            })
            .count()
    };
    assert_eq!(first_calls(), 1, "answered before the kill");

    hang.store(false, Ordering::SeqCst);
    let resumed = s.resume(&plan_path).await;
    resumed.success();
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(plan["rounds"], 2, "round 1 planned again, then round 2");
    assert_eq!(
        first_calls(),
        1,
        "round 1's answered call was served from the transcript, not asked again"
    );
    let repairs = llm.chat_requests().iter().filter(|r| repair(r)).count();
    assert_eq!(repairs, 2, "the unanswered repair was asked again");
    let salvaged: Vec<Value> = read_ndjson(&plan_path.with_extension("transcript.jsonl"))
        .into_iter()
        .filter(|l| l["replayed"] == true)
        .collect();
    assert_eq!(salvaged.len(), 1, "{salvaged:?}");
    assert_eq!(salvaged[0]["round"], 1);
    assert_eq!(salvaged[0]["call"], 0);
    assert_eq!(salvaged[0]["session"], 2);
    assert!(salvaged[0].get("node").is_none(), "{salvaged:?}");
    assert!(
        resumed
            .stderr
            .contains("answered by the interrupted run's transcript"),
        "{}",
        resumed.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planner_input_is_echoed_only_when_asked() {
    let llm = MockLlm::start().await;
    let s = Setup::new(&llm, None);
    scripted(&llm, one_search_then_final());
    let quiet = s.query("Q?").run().await;
    quiet.success();
    assert!(
        !quiet.stderr.contains("[planning] USER_INPUT"),
        "{}",
        quiet.stderr
    );
    assert!(
        quiet.stderr.contains("round 1: planned 1 task(s)"),
        "{}",
        quiet.stderr
    );

    std::fs::remove_dir_all(s.path().join("out")).expect("clean");
    scripted(&llm, one_search_then_final());
    let verbose = s.query("Q?").arg("-v").run().await;
    verbose.success();
    assert!(
        verbose
            .stderr
            .contains("[planning] USER_INPUT ->\n用户问题: Q?"),
        "{}",
        verbose.stderr
    );
}

/// regression: a failed save ended the run without a `run_finished` event, leaving the event
/// log open-ended for whoever reads it.
#[tokio::test]
async fn a_plan_that_cannot_be_saved_still_closes_the_event_log() {
    let llm = MockLlm::start().await;
    let setup = Setup::new(&llm, None);
    let plan_path = setup.out();
    let first = one_search_then_final().remove(0);
    llm.set_handler(move |req| {
        if agent(req) != Agent::Planner {
            // The round's tasks start while its plan is saved (RELIABILITY.md, "Running a
            // workflow"): a task's call may come before the save fails.
            return Reply::json(&json!({"summary": "S", "analysis": "A"}));
        }
        // Put a folder where the plan file is: the save after this round cannot replace it.
        if !plan_path.is_dir() {
            std::fs::remove_file(&plan_path).expect("remove the plan file");
            std::fs::create_dir_all(plan_path.join("in-the-way")).expect("folder");
        }
        Reply::json(&first)
    });

    let out = setup.query("Q?").run().await;
    out.code(1).stderr_contains("cannot write plan file");
    let events = setup.events();
    let last = events.last().expect("events");
    assert_eq!(last["event"], "run_finished", "{events:#?}");
    assert_eq!(last["status"], "failed");
    let error = last["error"].as_str().expect("the error is named");
    assert!(error.contains("plan.json"), "{error}");
    assert_eq!(events_of(&events, "run_finished").len(), 1);
}
