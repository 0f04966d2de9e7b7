//! What real OpenAI-compatible servers do, against the mock that learnt it: refused
//! structured-output forms (400, 422, 500) and parameters, answers cut off by the token limit,
//! empty answers, token limits on every request, repeated tasks, and `researchflow doctor`.

use std::path::Path;

use serde_json::json;

use crate::support;
use crate::support::refusal::{FormatKind, Refusal};
use crate::support::scenario::{
    Agent, KEY, Setup, agent, backed_report, events_of, final_over, node, one_search_then_final,
    plan_answer, scripted, searches_then_final, task_title, titles,
};
use crate::support::{MockLlm, Recorded, Reply, researchflow};

fn format_of(req: &Recorded) -> Option<FormatKind> {
    FormatKind::of(&req.body)
}

/// The JSON requests (those with a `response_format`) after the first, by their form.
fn json_forms(llm: &MockLlm) -> Vec<Option<FormatKind>> {
    llm.chat_requests()
        .iter()
        .filter(|r| r.body.get("response_format").is_some())
        .map(format_of)
        .collect()
}

async fn negotiates_down_to(refusals: Vec<Refusal>, expected: FormatKind) {
    let llm = MockLlm::start().await;
    let refused_kinds = refusals.len();
    for r in refusals {
        llm.refuse(r);
    }
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();

    assert_eq!(
        llm.refused(),
        refused_kinds,
        "each refused form is tried once, never retried"
    );
    let forms = json_forms(&llm);
    let after: Vec<_> = forms.iter().skip(refused_kinds).collect();
    assert!(
        after.len() >= 3,
        "planner and sub-agents ask for JSON: {forms:?}"
    );
    assert!(
        after.iter().all(|f| **f == Some(expected)),
        "every later JSON request uses {expected:?}: {forms:?}"
    );
    let events = s.events();
    assert!(
        events_of(&events, "http_retry").is_empty(),
        "a refusal is not transient"
    );
    let negotiated = events_of(&events, "llm_negotiated");
    assert_eq!(negotiated.len(), refused_kinds, "{negotiated:?}");
    assert_eq!(negotiated[0]["from"], "json_schema");
    assert_eq!(node(&s.plan(), "c")["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_naming_response_format_moves_to_json_object_with_the_schema() {
    negotiates_down_to(
        vec![Refusal::format(FormatKind::JsonSchema, 500)],
        FormatKind::JsonObjectWithSchema,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_400_moves_on_the_same_way() {
    negotiates_down_to(
        vec![Refusal::format(FormatKind::JsonSchema, 400)],
        FormatKind::JsonObjectWithSchema,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_taking_only_plain_json_object_is_found_after_a_422() {
    negotiates_down_to(
        vec![
            Refusal::format(FormatKind::JsonSchema, 422),
            Refusal::format(FormatKind::JsonObjectWithSchema, 422),
        ],
        FormatKind::JsonObject,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_llama_cpp_python_mock_gets_the_grammar_schema() {
    let llm = MockLlm::llama_cpp_python().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    assert_eq!(llm.refused(), 1);
    let planner = llm
        .chat_requests()
        .into_iter()
        .filter(|r| agent(r) == Agent::Planner && format_of(r).is_some())
        .nth(1)
        .expect("an accepted planner request");
    let schema = &planner.body["response_format"]["schema"];
    // A fresh plan: the grammar of the first round asks for work, not for the final report.
    assert_eq!(
        schema["properties"]["is_final"]["enum"],
        json!([false]),
        "{schema:#}"
    );
    assert_eq!(schema["properties"]["tasks"]["minItems"], 1);
    let pattern = schema["properties"]["tasks"]["items"]["properties"]["p_node"]["pattern"]
        .as_str()
        .expect("p_node has a pattern");
    assert!(
        !pattern.contains("\\s") && !pattern.contains("\\d"),
        "{pattern}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_max_tokens_and_temperature_are_renegotiated() {
    let llm = MockLlm::start().await;
    llm.refuse(Refusal::param("max_tokens", 400));
    llm.refuse(Refusal::param("temperature", 400));
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();

    assert_eq!(llm.refused(), 2);
    let accepted: Vec<Recorded> = llm.chat_requests().into_iter().skip(2).collect();
    assert_eq!(accepted.len(), 4, "planner, analysis, planner, final");
    for r in &accepted {
        assert!(r.body.get("max_tokens").is_none(), "{}", r.raw_body);
        assert!(
            r.body["max_completion_tokens"].as_u64().is_some(),
            "{}",
            r.raw_body
        );
        assert!(r.body.get("temperature").is_none(), "{}", r.raw_body);
    }
    let negotiated = events_of(&s.events(), "llm_negotiated")
        .into_iter()
        .map(|e| e["refused"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>();
    assert_eq!(negotiated, vec!["token limit", "temperature"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_request_has_a_token_limit_and_the_planner_is_greedy() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::with_config(
        &llm,
        None,
        json!({"roles": {"summary": {"maxTokens": 777}}, "review": {"enabled": true}}),
    );
    s.query("Q?").run().await.success();
    let requests = llm.chat_requests();
    assert!(requests.iter().any(|r| agent(r) == Agent::SecondOpinion));
    for r in requests {
        let limit = r.body["max_tokens"].as_u64().expect("a token limit");
        let expected = match agent(&r) {
            Agent::Planner | Agent::Review => 1024,
            Agent::Queries => 256,
            Agent::Analysis => 2048,
            Agent::Summary | Agent::Final => 777,
            Agent::SecondOpinion => 768,
            Agent::Verifier => unreachable!("the verifier is not configured here"),
        };
        assert_eq!(limit, expected, "{:?}", agent(&r));
        let temperature = r.body.get("temperature");
        match agent(&r) {
            Agent::Planner => assert_eq!(temperature, Some(&json!(0.0))),
            _ => assert_eq!(temperature, None),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cut_off_answers_are_repaired_or_marked() {
    let llm = MockLlm::start().await;
    let rounds = one_search_then_final();
    let planner_calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let seen = std::sync::Arc::clone(&planner_calls);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let n = seen.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            match n {
                // A complete-looking object, but cut off: it must not be used.
                0 => Reply::truncated(&rounds[0].to_string()),
                1 => Reply::json(&rounds[0]),
                _ => Reply::json(&rounds[1]),
            }
        }
        Agent::Queries => Reply::json(&json!({"queries": ["q"]})),
        Agent::Analysis if req.messages().len() == 2 => Reply::truncated("{\"summary\": \"Lo"),
        Agent::Analysis | Agent::Summary => {
            Reply::json(&json!({"summary": "Short.", "analysis": "Brief."}))
        }
        Agent::Final => Reply::truncated("The report begins. Then it"),
        Agent::Review | Agent::SecondOpinion | Agent::Verifier => {
            unreachable!("the review is off here, the verifier not configured")
        }
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();

    let requests = llm.chat_requests();
    let planners: Vec<&Recorded> = requests
        .iter()
        .filter(|r| agent(r) == Agent::Planner)
        .collect();
    let repair = planners[1].messages();
    let repair_text = repair
        .last()
        .map(|m| m["content"].to_string())
        .unwrap_or_default();
    assert!(
        repair_text.contains("TRUNCATED") && repair_text.contains("be brief"),
        "{repair_text}"
    );

    let analyses: Vec<&Recorded> = requests
        .iter()
        .filter(|r| agent(r) == Agent::Analysis)
        .collect();
    assert_eq!(analyses.len(), 2, "one cut-off answer, one shorter one");
    let again = analyses[1].messages();
    assert_eq!(again.len(), 4);
    assert!(
        again[3]["content"]
            .as_str()
            .unwrap_or_default()
            .contains("cut off")
    );

    let plan = s.plan();
    let b = node(&plan, "b");
    assert_eq!(b["summary"], "Short.");
    assert!(
        b.get("truncated").is_none(),
        "the repaired answer was complete"
    );
    let fin = node(&plan, "c");
    assert_eq!(fin["truncated"], true);
    assert!(s.report().contains("cut off at the model's token limit"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_planner_answer_is_asked_again() {
    let llm = MockLlm::start().await;
    let rounds = one_search_then_final();
    llm.push(Reply::empty());
    scripted(&llm, rounds);
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let second = llm.chat_requests()[1].clone();
    assert_eq!(agent(&second), Agent::Planner);
    let text = second.messages().last().map(|m| m["content"].to_string());
    assert!(text.unwrap_or_default().contains("EMPTY_ANSWER"));
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
}

/// A query writer that answers nothing (a small model): the task searches its title,
/// as for an answer with no usable query. Before, the search task failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_writer_that_answers_nothing_has_the_task_title_searched() {
    let llm = MockLlm::start().await;
    let rounds = one_search_then_final();
    let planned = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = planned.clone();
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reply::json(&rounds[n.min(rounds.len() - 1)])
        }
        Agent::Queries => Reply::empty(),
        Agent::Final => Reply::content(&backed_report(req)),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let search = support::MockSearch::start(support::SearchKind::Searxng).await;
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("Q?").run().await;
    out.success();
    assert!(
        out.stderr
            .contains("no usable search queries in the answer; searching the task title"),
        "{}",
        out.stderr
    );
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
    let searched = search.requests();
    assert_eq!(searched.len(), 1);
    assert_eq!(searched[0].query_param("q").as_deref(), Some("Only search"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repeated_tasks_are_dropped_and_the_planner_hears_of_them() {
    let llm = MockLlm::start().await;
    let inputs = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = std::sync::Arc::clone(&inputs);
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let input = req.user_prompt().unwrap_or_default();
            let mut all = seen.lock().expect("lock");
            all.push(input.clone());
            let search = |t: &str| json!({"title": t, "type": "search", "p_node": "a:info"});
            Reply::json(&if input.contains("last planning round") {
                final_over("b:summary")
            } else if all.len() == 1 {
                plan_answer(
                    false,
                    json!([search("Energy density")]),
                    json!(["NEW1:summary"]),
                )
            } else {
                // The small model's loop: the same search again, worded a little differently.
                plan_answer(
                    false,
                    json!([search(" energy-density! ")]),
                    json!(["NEW1:summary"]),
                )
            })
        }
        Agent::Queries => Reply::json(&json!({"queries": [task_title(req)]})),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();

    let plan = s.plan();
    let titles = titles(&plan);
    assert_eq!(titles.len(), 3, "question, one search, final: {titles:?}");
    let searches = llm
        .chat_requests()
        .iter()
        .filter(|r| agent(r) == Agent::Analysis)
        .count();
    assert_eq!(searches, 1, "the search ran once");
    let events = s.events();
    let dropped = events_of(&events, "task_dropped");
    assert_eq!(dropped.len(), 2, "two rounds of repeats");
    assert_eq!(dropped[0]["repeats"], "b");
    assert_eq!(dropped[0]["reason"], "DUPLICATE_TASK");
    // Each round of repeats has its plan review: blocked, DUPLICATE_TASK.
    let reviews = events_of(&events, "plan_review");
    assert_eq!(reviews.len(), 4);
    for review in &reviews[1..3] {
        assert_eq!(review["ok"], false);
        assert_eq!(review["issues"][0]["type"], "DUPLICATE_TASK");
        assert_eq!(review["issues"][0]["severity"], "block");
        let message = review["issues"][0]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains("energy-density!") && message.contains("node b"),
            "{message}"
        );
    }
    assert_eq!(reviews[1]["issues"][0]["id"], "R2-1");
    let inputs = inputs.lock().expect("lock").clone();
    assert_eq!(
        inputs.len(),
        4,
        "two rounds of only repeats stall the run into its last round"
    );
    assert!(
        inputs[2].contains("### Tasks dropped by the plan review")
            && inputs[2].contains("energy-density!")
            && inputs[2].contains("(DUPLICATE_TASK)"),
        "{}",
        inputs[2]
    );
    assert!(inputs[3].contains("last planning round"));
    assert_eq!(node(&plan, "c")["batch"], -1);
    // The file beside the plan holds the latest review: the final round's, clean.
    let file = support::scenario::read_json(&s.path().join("out/plan.plan-review.json"));
    assert_eq!(file, json!({"round": 4, "ok": true, "issues": []}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_reports_what_the_server_accepts_as_json_and_as_a_table() {
    let llm = MockLlm::llama_cpp_python().await;
    llm.set_handler(|_| Reply::json(&json!({"ok": true})));
    let s = Setup::with_config(&llm, None, json!({"model": "mock-model"}));
    let out = s.cmd().args(["doctor", "--json"]).run().await;
    out.success();
    let report = out.stdout_json();
    assert_eq!(report["ok"], true);
    assert_eq!(
        (&report["config"]["ok"], &report["config"]["error"]),
        (&json!(true), &json!(null))
    );
    let e = &report["endpoints"][0];
    assert_eq!(e["roles"], json!(["planning", "search", "summary"]));
    assert_eq!(e["reachable"], true);
    assert_eq!(e["key_accepted"], true);
    assert_eq!(e["model_listed"], true);
    assert_eq!(e["structured_output"], "json_object_schema");
    assert_eq!(e["token_limit"], "max_tokens");
    assert!(e["latency_ms"].as_u64().is_some());
    assert_eq!(report["search"]["provider"], "none");
    assert!(!out.stdout.contains(KEY) && !out.stderr.contains(KEY));

    let table = s.cmd().arg("doctor").run().await;
    table.success();
    assert!(table.stdout.starts_with("roles"), "{}", table.stdout);
    assert!(
        table.stdout.contains("json_object_schema") && table.stdout.contains("everything works")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_exits_1_on_a_refused_key_or_an_unreachable_server() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| {
        Reply::raw(
            401,
            r#"{"error":{"message":"Incorrect API key provided: sk-test-SECRET-7777"}}"#,
        )
    });
    let s = Setup::new(&llm, None);
    let out = s.cmd().args(["doctor", "--json"]).run().await;
    out.code(1);
    let report = out.stdout_json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["endpoints"][0]["key_accepted"], false);
    assert_eq!(
        report["endpoints"][0]["model_listed"], false,
        "test-model is not listed"
    );
    assert!(
        !out.stdout.contains(KEY) && !out.stderr.contains(KEY),
        "{}",
        out.stdout
    );

    drop(llm);
    let out = s.cmd().args(["doctor", "--json"]).run().await;
    out.code(1);
    let e = &out.stdout_json()["endpoints"][0];
    assert_eq!(e["reachable"], false);
    assert!(e["error"].as_str().unwrap_or_default().contains("baseURL"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn doctor_json_without_a_configuration_says_what_is_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let doctor = |args: &[&str]| {
        researchflow()
            .current_dir(dir.path())
            .args(["doctor", "--json"])
            .args(args)
            .run()
    };
    // No file, no environment: no model.
    let out = doctor(&[]).await;
    out.code(2);
    let report = out.stdout_json();
    assert_eq!(report["ok"], false);
    assert_eq!(report["endpoints"], json!([]));
    let config = &report["config"];
    assert_eq!(
        (&config["ok"], &config["exists"]),
        (&json!(false), &json!(false))
    );
    assert!(
        Path::new(config["file"].as_str().unwrap_or_default()).is_absolute(),
        "{config}"
    );
    let error = config["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("agent.config.json")
            && error.contains("`baseURL`")
            && error.contains("OPENAI_BASE_URL"),
        "{error}"
    );
    // The same line on stderr for a person.
    out.stderr_contains("no model is configured");

    // A named file that does not exist, and a file with a typo.
    let out = doctor(&["--config", "missing.json"]).await;
    out.code(2);
    let error = out.stdout_json()["config"]["error"].clone();
    assert!(
        error.as_str().unwrap_or_default().contains("missing.json"),
        "{error}"
    );
    std::fs::write(dir.path().join("agent.config.json"), r#"{"baseURl": "x"}"#).expect("write");
    let out = doctor(&[]).await;
    out.code(2);
    let config = out.stdout_json()["config"].clone();
    assert_eq!(config["exists"], true);
    assert!(
        config["error"]
            .as_str()
            .unwrap_or_default()
            .contains("baseURl"),
        "{config}"
    );
}

/// Against SmolLM2 on llama-cpp-python, the review's first schema (a 1,200-character summary)
/// killed the server; the mock now dies the same way, and the review's grammar keeps it alive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_grammar_does_not_kill_a_llama_cpp_python_server() {
    let llm = MockLlm::llama_cpp_python().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::with_config(&llm, None, json!({"review": {"enabled": true}}));
    let out = s.query("Q?").run().await;
    out.success();
    assert!(!llm.dead(), "a schema killed the server");
    assert_eq!(
        out.stdout_json()["review"]["status"],
        "completed",
        "{}",
        out.stdout
    );
    let schemas: Vec<serde_json::Value> = llm
        .chat_requests()
        .iter()
        .filter(|r| matches!(agent(r), Agent::Review | Agent::SecondOpinion))
        .map(|r| r.body["response_format"]["schema"].clone())
        .filter(|s| !s.is_null())
        .collect();
    assert_eq!(schemas.len(), 2, "both roles asked with a grammar");
    for schema in schemas {
        assert!(
            !support::crashes_llama_cpp(&json!({"response_format": {"schema": schema}})),
            "{schema:#}"
        );
    }
}

/// Qwen2.5-Coder 1.5B on llama.cpp (2026-12-06) wrote every analyst answer under the JSON
/// grammar with its analysis's points on lines of their own: raw line breaks inside a JSON
/// string, which a strict parser refuses. They are read as their escapes, not kept as raw text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn raw_line_breaks_inside_json_strings_are_read() {
    let llm = MockLlm::start().await;
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Only search"])),
        Agent::Queries => Reply::json(&json!({"queries": ["q"]})),
        Agent::Analysis | Agent::Summary => Reply::content(
            "{\"summary\": \"Names stay under 80 characters.\",\n \"analysis\": \"Points:\n1. **Docs**: under 80\n2. **Policy**: the same\"}",
        ),
        Agent::Final => Reply::content("Names stay short [1]."),
        _ => unreachable!("the review is off here"),
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let plan = s.plan();
    let b = node(&plan, "b");
    assert_eq!(b["summary"], "Names stay under 80 characters.", "{b}");
    let analysis = b["info"].as_str().unwrap_or_default();
    assert!(
        analysis.contains("Points:\n1. **Docs**: under 80\n2."),
        "{analysis}"
    );
}
