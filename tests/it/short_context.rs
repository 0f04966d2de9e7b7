//! A model served with a short context (llama-cpp-python, llama.cpp and Ollama are often
//! started with 2,048 to 8,192 tokens) refuses an input a hosted model takes: asked for a
//! stream, llama-cpp-python answers with a stream that ends before its first event; asked whole,
//! with a 400 that states its context and the prompt it counted. A planning round, the final
//! summary and a search's analysis (the workflow's and Thinkon's) are asked again with what
//! fits (and a replay does the same); when not even the prompt fits, the run fails saying what
//! to change.

use serde_json::{Value, json};

use crate::support::mock_llm::estimated_tokens;
use crate::support::scenario::{
    Agent, Setup, agent, backed_report, essence, events_of, final_over, node,
    one_search_then_final, read_json, read_ndjson, requests_of, scripted,
};
use crate::support::thinkon::{self, Kind};
use crate::support::{MockLlm, MockSearch, Recorded, Reply, SearchHit, SearchKind};

/// A plan of twelve completed searches, two sources each with a long snippet, and the final
/// summary planned over all of them.
fn plan_of_many_sources() -> Value {
    let mut nodes = vec![json!({"node_id": "a", "title": "What do batteries store?",
        "summary": "", "info": "", "p_node": "", "batch": 1, "type": "start",
        "status": "completed"})];
    let ids: Vec<String> = ('b'..='m').map(String::from).collect();
    for id in &ids {
        let source = |n: usize| {
            json!({"url": format!("https://x.test/{id}/{n}"),
                "title": format!("Battery page {id}{n}"),
                "snippet": format!("Battery page {id}{n} says batteries store energy. ")
                    .repeat(12)})
        };
        nodes.push(json!({"node_id": id, "title": format!("Search {id}"),
            "summary": format!("Found {id}."), "info": "", "p_node": "a:info", "batch": 2,
            "type": "search", "status": "completed", "sources": [source(1), source(2)]}));
    }
    let p_node: Vec<String> = ids.iter().map(|id| format!("{id}:info")).collect();
    nodes.push(
        json!({"node_id": "n", "title": "Final", "summary": "", "info": "",
        "p_node": p_node.join(", "), "batch": -1, "type": "summary", "status": "planned"}),
    );
    json!({"version": 1, "workflow_id": "wf", "created_at": "2026-01-01T00:00:00Z",
        "check_list": {"latest_id": "n", "latest_batch": -1, "refs": ["n:summary"]},
        "nodes": nodes})
}

/// A model of `context` tokens that writes a report its sources back; the run over
/// [`plan_of_many_sources`].
async fn final_with_context(context: usize) -> (MockLlm, Setup, crate::support::bin::RunOutput) {
    let llm = MockLlm::start().await;
    llm.context_tokens(context);
    llm.set_handler(|req| match agent(req) {
        Agent::Final => Reply::content(&backed_report(req)),
        other => panic!("only the final summary is asked, not {other:?}"),
    });
    let s = Setup::new(&llm, None);
    let path = s.path().join("plan.json");
    std::fs::write(&path, plan_of_many_sources().to_string()).expect("plan");
    let out = s.resume(&path).await;
    (llm, s, out)
}

fn prompt_tokens(req: &Recorded) -> usize {
    req.messages()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .map(estimated_tokens)
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_summary_too_long_for_the_models_context_is_asked_again_with_what_fits() {
    let (llm, s, out) = final_with_context(2_000).await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");

    let asked = requests_of(&llm, Agent::Final);
    let streamed: Vec<bool> = asked.iter().map(|r| r.body["stream"] == true).collect();
    assert_eq!(
        streamed,
        [true, false, false],
        "a stream with no event, whole, smaller"
    );
    let tokens: Vec<usize> = asked.iter().map(prompt_tokens).collect();
    assert!(tokens[0] > 2_000 && tokens[2] <= 2_000, "{tokens:?}");

    // The report lists and cites only the sources it was given.
    let plan = read_json(&s.path().join("plan.json"));
    let listed = node(&plan, "n")["sources"]
        .as_array()
        .expect("sources")
        .len();
    assert!((1..24).contains(&listed), "{listed} of 24 sources listed");
    let user = asked[2].user_prompt().unwrap_or_default();
    assert!(user.contains(&format!("[{listed}] ")), "{user}");
    assert!(!user.contains(&format!("[{}] ", listed + 1)), "{user}");
    let report = node(&plan, "n")["summary"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(report.contains("[1]"), "{report}");

    let events = read_ndjson(&s.path().join("plan.events.ndjson"));
    let cuts = events_of(&events, "input_cut");
    assert!(
        cuts.iter().any(|e| e["node"] == "n"
            && e["what"] == "input, to fit the model's context"
            && e["kept"].as_u64() < e["chars"].as_u64()),
        "{cuts:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_too_short_for_the_prompt_itself_fails_the_run_saying_what_to_change() {
    let (llm, _s, out) = final_with_context(150).await;
    out.code(1)
        .stderr_contains("do not fit in its context")
        .stderr_contains("maximum context length is 150 tokens");
    assert_eq!(out.stdout_json()["status"], "final_failed");
    // The stream, then whole: nothing smaller can fit, so nothing more is asked.
    assert_eq!(requests_of(&llm, Agent::Final).len(), 2);
}

/// A search whose results are longer than the model's context: its analysis is asked again
/// with what fits, the run completes, and a replay with every server stopped makes the same
/// requests smaller in the same way and reproduces the plan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_analysis_made_to_fit_is_replayed_as_it_was_made() {
    let llm = MockLlm::start().await;
    let search = MockSearch::with_results(SearchKind::Searxng, long_hits()).await;
    scripted(&llm, one_search_then_final());
    llm.context_tokens(1_200);
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("What do batteries store?").run().await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");
    let analysis = requests_of(&llm, Agent::Analysis);
    assert_eq!(analysis.len(), 3, "a stream with no event, whole, smaller");
    assert!(prompt_tokens(&analysis[2]) <= 1_200);
    drop((llm, search));

    s.replay().await.success();
    let (was, is) = (s.plan(), read_json(&s.path().join("replay.json")));
    assert_eq!(essence(&was), essence(&is));
}

/// Eight search results of about 2,000 characters each.
fn long_hits() -> Vec<SearchHit> {
    (1..=8)
        .map(|i| SearchHit {
            title: format!("Battery page {i}"),
            url: format!("https://x.test/{i}"),
            snippet: format!("Battery page {i} says batteries store energy. ").repeat(44),
        })
        .collect()
}

/// A Thinkon search whose results are longer than the model's context: its analysis is asked
/// again with what fits, as the workflow's is (the same path), and the run completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thinkon_analysis_too_long_for_the_context_reads_what_fits() {
    const CONTEXT: usize = 1_500;
    let llm = MockLlm::start().await;
    let search = MockSearch::with_results(SearchKind::Searxng, long_hits()).await;
    thinkon::scripted(&llm, thinkon::three_searches);
    llm.context_tokens(CONTEXT);
    let s = Setup::new(&llm, Some(&search));
    let args = ["thinkon", "--goal", "What is G?", "--compact-prompt"];
    let out = s.cmd().args(args).run().await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");
    let analyses: Vec<Recorded> = llm
        .chat_requests()
        .into_iter()
        .filter(|r| thinkon::kind(r) == Kind::Analysis)
        .collect();
    let streamed: Vec<bool> = analyses.iter().map(|r| r.body["stream"] == true).collect();
    let tokens: Vec<usize> = analyses.iter().map(prompt_tokens).collect();
    assert_eq!(
        streamed[..3],
        [true, false, false],
        "a stream with no event, whole, smaller: {tokens:?}"
    );
    assert!(tokens[0] > CONTEXT && tokens[2] <= CONTEXT, "{tokens:?}");
    let events = read_ndjson(&s.path().join(".thinkon/events.ndjson"));
    let cuts = events_of(&events, "input_cut");
    assert!(
        cuts.iter()
            .any(|e| e["what"] == "input, to fit the model's context"),
        "{cuts:?}"
    );
}

/// A planning round whose refs are longer than the model's context reads less of them: the
/// round is asked again with the share of its segments that fits, and plans.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_planning_round_too_long_for_the_context_reads_what_fits() {
    let llm = MockLlm::start().await;
    llm.context_tokens(3_000);
    scripted(&llm, vec![final_over("b:summary")]);
    let s = Setup::new(&llm, None);
    let plan = json!({"version": 1, "workflow_id": "wf", "created_at": "2026-01-01T00:00:00Z",
    "check_list": {"latest_id": "b", "latest_batch": 2, "refs": ["b:summary"]},
    "nodes": [
        {"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "",
         "batch": 1, "type": "start", "status": "completed"},
        {"node_id": "b", "title": "Long", "summary": "A long finding. ".repeat(2_000),
         "info": "", "p_node": "a:info", "batch": 2, "type": "search",
         "status": "completed"}
    ]});
    std::fs::write(s.path().join("plan.json"), plan.to_string()).expect("plan");
    let out = s.cmd().args(["plan", "plan.json"]).run().await;
    out.success();
    let asked = requests_of(&llm, Agent::Planner);
    let streamed: Vec<bool> = asked.iter().map(|r| r.body["stream"] == true).collect();
    assert_eq!(streamed, [true, false, false]);
    assert!(
        prompt_tokens(&asked[2]) <= 3_000,
        "{}",
        prompt_tokens(&asked[2])
    );
    let user = asked[2].user_prompt().unwrap_or_default();
    assert!(user.starts_with("用户问题: Q?\n") && user.contains("A long finding."));
    let written = read_json(&s.path().join("plan.json"));
    assert_eq!(
        written["check_list"]["latest_batch"], -1,
        "the round planned the final"
    );
}
