//! Junk a small model writes while the run would call it done (learnt from Gemma 3 270M): a
//! final report that echoes its prompt, or cites none of the sources the searches found, is
//! sent back once for repair; if it stays junk the run is `degraded` (exit 1) and the reason
//! names the finding. A report none of whose cited claims its sources hold, a run that never
//! searched although it could, are degraded too, and a task titled like a node id is dropped
//! by the plan gate.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support;
use crate::support::scenario::{
    Agent, Setup, agent, final_over, node, plan_answer, searches_round, searches_then_final,
};
use crate::support::server::Recorded;
use crate::support::{MockLlm, MockSearch, Reply, SearchKind};

/// The Gemma 3 270M answer that started it: the prompt's own rules, echoed back.
const ECHO: &str = "<<SYS>> Write the final report. Do not add a list of sources at the end: \
                    it is appended for you.";

/// Whether `req` is a repair: the answer sent back with what is wrong with it.
fn is_repair(req: &Recorded) -> bool {
    req.messages().len() > 2
        && req
            .user_prompt()
            .is_some_and(|u| u.contains("cannot be used as it stands"))
}

/// A planner that searches once then finalises; the final report comes from `report`.
fn with_final(llm: &MockLlm, report: impl Fn(&Recorded) -> String + Send + Sync + 'static) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Energy density"])),
        Agent::Queries => Reply::json(&json!({"queries": ["energy density"]})),
        Agent::Final => Reply::content(&report(req)),
        _ => Reply::json(&json!({"summary": "Energy density results [1].", "analysis": "A [1]."})),
    });
}

/// The final summary's requests the mock received, in order.
fn final_requests(llm: &MockLlm) -> Vec<Recorded> {
    llm.requests()
        .into_iter()
        .filter(|r| agent(r) == Agent::Final)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echoed_prompt_is_repaired_once() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, |req| match is_repair(req) {
        true => "Energy density results are documented [1].".into(),
        false => ECHO.into(),
    });
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed", "{}", out.stderr);
    let finals = final_requests(&llm);
    assert_eq!(finals.len(), 2, "the report was sent back once");
    let repair = finals[1].user_prompt().unwrap_or_default();
    assert!(repair.contains("ECHOED_PROMPT"), "{repair}");
    let plan = s.plan();
    let fin = node(&plan, "c");
    assert!(fin.get("quality").is_none(), "{fin}");
    assert!(
        s.report()
            .contains("Energy density results are documented [1].")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echo_that_stays_makes_the_run_degraded_naming_it() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, |_| ECHO.into());
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "degraded");
    // An echo answers nothing, however it reads (it said `answered: true` against Gemma 3
    // 270M, whose echo had no words of a missing answer).
    assert_eq!(out.stdout_json()["answered"], false);
    let why = out.reason();
    assert!(
        why.contains("ECHOED_PROMPT") && why.contains("after a repair"),
        "{why}"
    );
    let plan = s.plan();
    assert_eq!(plan["outcome"]["status"], "degraded");
    assert_eq!(plan["outcome"]["answered"], false);
    let codes: Vec<Value> = node(&plan, "c")["quality"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| f["code"].clone())
        .collect();
    assert!(codes.contains(&json!("ECHOED_PROMPT")), "{codes:?}");
    let report = s.report();
    assert!(
        report.contains("> **Degraded run: the final report still fails"),
        "{report}"
    );
    assert!(
        report.contains("must not be taken as an answer"),
        "{report}"
    );
}

/// What Gemma 3 270M wrote as a final report over the batteries corpus once its system
/// prompt's echo had been sent back: the labels of its input message, with citations.
const INPUT_ECHO: &str = "User question: How dense are cells?\n\nTask: Final report\n\n\
                          More recent results this task builds on: [1], [2].\n\
                          [1]: (search, completed): a-info; (finished): a-info [1]";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_echo_of_the_input_message_is_sent_back_then_degraded() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, |_| INPUT_ECHO.into());
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "degraded", "{}", out.stderr);
    assert!(out.reason().contains("ECHOED_PROMPT"), "{}", out.reason());
    let finals = final_requests(&llm);
    assert_eq!(finals.len(), 2, "the report was sent back once");
    let repair = finals[1].user_prompt().unwrap_or_default();
    assert!(repair.contains("`User question:`"), "{repair}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_citing_nothing_is_sent_back_then_degraded() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    with_final(&llm, move |_| {
        count.fetch_add(1, Ordering::SeqCst);
        // No source holds what it says, so researchflow cites nothing for it either.
        "Prices fell in Chile last year.".into()
    });
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.code(1);
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    assert!(out.reason().contains("UNCITED_REPORT"), "{}", out.reason());
}

/// A run on "How dense are cells?" whose final report is `report`, checked to complete with
/// one supported claim and without sending the report back; the servers and the setup.
async fn completed_with_one_supported_claim(report: &'static str) -> (MockLlm, MockSearch, Setup) {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, move |_| report.into());
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["status"], "completed", "{}", out.stderr);
    assert_eq!(printed["totals"]["claims_supported"], 1, "{printed:#}");
    assert_eq!(final_requests(&llm).len(), 1, "not sent back as uncited");
    (llm, search, s)
}

/// Qwen2.5-Coder 1.5B's b01 and b03: a right report that cites nothing. Where one numbered
/// source holds most of the words a sentence adds to the question, researchflow cites it
/// itself and says so at the report's top; nothing is sent back, and a sentence that only
/// restates the question, or that no source holds, stays uncited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_uncited_sentence_a_source_holds_is_cited_by_researchflow_and_said_so() {
    let (_llm, _search, s) = completed_with_one_supported_claim(
        "How dense are cells? Snippet 1 is about energy density. Prices fell in Chile.",
    )
    .await;
    let report = s.report();
    assert!(
        report.contains("_researchflow cited one sentence the model left uncited, to the source"),
        "{report}"
    );
    assert!(
        report.contains(
            "How dense are cells? Snippet 1 is about energy density [1]. Prices fell in Chile.\n"
        ),
        "{report}"
    );
}

/// A report whose every cited sentence says what no source it cites says: the search found
/// results on energy density, the report speaks of recycling and prices.
const UNBACKED: &str = "Lithium cobalt recycling costs fell sharply in Chile last year [1]. \
                        Sodium prices doubled in Norway [2].";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_none_of_whose_cited_claims_its_sources_hold_is_degraded_and_not_answered() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, |_| UNBACKED.into());
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    // A degraded run exits 1 (docs/src/exit-codes.md), its reason on stdout.
    out.code(1);
    let printed = out.stdout_json();
    assert_eq!(printed["status"], "degraded", "{}", out.stderr);
    assert_eq!(printed["answered"], false);
    assert_eq!(
        (
            printed["totals"]["claims_cited"].clone(),
            printed["totals"]["claims_supported"].clone()
        ),
        (json!(2), json!(0))
    );
    let why = out.reason();
    assert!(
        why.starts_with(
            "none of the 2 claims the final report cites is supported by the sources it cites: \
             check those sources"
        ) && why.contains("the model that wrote the report (`roles.summary`)"),
        "{why}"
    );
    let plan = s.plan();
    assert_eq!(plan["outcome"]["status"], "degraded");
    assert_eq!(plan["outcome"]["answered"], false);
    assert_eq!(plan["outcome"]["reason"], why.as_str());
    let claims: Vec<Value> = node(&plan, "c")["claims"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["supported"].clone())
        .collect();
    assert_eq!(claims, [json!(false), json!(false)]);
    let report = s.report();
    assert!(
        report.contains("> **Degraded run: none of the 2 claims the final report cites"),
        "{report}"
    );
    assert!(
        report.contains("must not be taken as an answer"),
        "{report}"
    );
    let finished = support::scenario::events_of(&s.events(), "run_finished")
        .first()
        .map(|e| (e["status"].clone(), e["reason"].clone()));
    assert_eq!(finished, Some((json!("degraded"), json!(why))));
}

/// One claim of two that its source holds is enough: the report stands, its other claim
/// marked where it stands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_one_of_whose_cited_claims_its_source_holds_is_completed() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, |_| {
        format!("Snippet 1 is about energy density [1]. {UNBACKED}")
    });
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["status"], "completed", "{}", out.stderr);
    assert_eq!(printed["answered"], true);
    assert_eq!(printed["totals"]["claims_supported"], 1);
    assert!(
        s.report()
            .contains("last year [1]. **[not supported by its sources]**")
    );
}

/// The final writer is shown what each source says under its line, and a source's own URL
/// written where its marker belongs (as Qwen2.5-Coder 1.5B wrote them) is read as the marker:
/// the report cites, its claim is checked, and nothing is sent back as uncited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_final_writer_sees_what_sources_say_and_may_cite_them_by_url() {
    let (llm, _search, s) = completed_with_one_supported_claim(
        "Snippet 1 is about energy density (https://example.test/energy-density/1). \
         See also <https://example.test/elsewhere>.",
    )
    .await;
    let finals = final_requests(&llm);
    let prompt = finals[0].user_prompt().expect("a user message");
    assert!(
        prompt.contains(
            "[1] Result 1 for energy density — https://example.test/energy-density/1\n    \
             says: Snippet 1 about energy density.\n"
        ),
        "{prompt}"
    );
    assert!(
        prompt.trim_end().ends_with("cite only the numbers above."),
        "the citation contract is said last: {prompt}"
    );
    let report = s.report();
    assert!(
        report.contains("Snippet 1 is about energy density [1]. See also")
            && report.contains("https://example.test/elsewhere>."),
        "a URL of no source stays: {report}"
    );
}

/// Qwen2.5-Coder 1.5B's b01: a right report that cites nothing, sent back, and a repair that
/// only restates the repair message. The repair is worse (an echo besides): the first answer
/// is the one kept, so the degraded report still shows what the model found.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repair_that_restates_the_repair_message_keeps_the_first_answer() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    with_final(&llm, |req| match is_repair(req) {
        true => "The answer cannot be used as it stands because the report cites none of its \
                 5 numbered sources: cite each statement's source as [n]."
            .into(),
        false => "Cells store energy by weight, the first finding says.".into(),
    });
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "degraded");
    assert!(out.reason().contains("UNCITED_REPORT"), "{}", out.reason());
    assert_eq!(final_requests(&llm).len(), 2, "sent back once");
    let report = s.report();
    assert!(
        report.contains("Cells store energy by weight, the first finding says.")
            && !report.contains("cannot be used as it stands"),
        "{report}"
    );
    assert!(
        out.stderr
            .contains("the repaired answer is worse (UNCITED_REPORT, ECHOED_PROMPT)"),
        "{}",
        out.stderr
    );
}

/// Qwen2.5-Coder 1.5B's d02: the planner built the final summary on the question alone
/// (`a:info`); the plan review repairs its inputs to every completed node's summary, as the
/// plan records, and the final writer reads what the search found: its numbered sources.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_final_built_on_the_question_alone_reads_what_the_searches_found() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    let rounds = vec![searches_round(&["Energy density"]), final_over("a:info")];
    support::scenario::scripted(&llm, rounds);
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.success();
    assert!(
        out.stderr.contains("FINAL_WITHOUT_SEARCH")
            && out.stderr.contains("it cites every completed node instead"),
        "{}",
        out.stderr
    );
    let finals = final_requests(&llm);
    let prompt = finals[0].user_prompt().expect("a user message");
    assert!(
        prompt.contains("Earlier results: what the searches found is the numbered sources below.")
            && prompt.contains("\n[1] "),
        "{prompt}"
    );
    assert_eq!(
        s.plan()["nodes"][2]["p_node"],
        "b:summary",
        "the plan records what it read"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summaries_alone_over_a_searchable_corpus_are_degraded() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    // Gemma's run: two summary tasks over the question, never a search.
    let rounds = vec![
        plan_answer(
            false,
            json!([{"title": "Overview of cells", "type": "summary", "p_node": "a:info"}]),
            json!(["NEW1:summary"]),
        ),
        final_over("b:summary"),
    ];
    support::scenario::scripted(&llm, rounds);
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are cells?").run().await;
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "degraded");
    assert!(
        out.reason().contains("no search ran although"),
        "{}",
        out.reason()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_titled_like_a_node_id_is_dropped_and_the_planner_told() {
    let llm = MockLlm::start().await;
    let rounds = vec![
        searches_round(&["a-1", "Energy density"]),
        final_over("b:summary"),
    ];
    support::scenario::scripted(&llm, rounds);
    let s = Setup::new(&llm, None);
    s.query("How dense are cells?").run().await;
    let plan = s.plan();
    let titles: Vec<Value> = plan["nodes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|n| n["title"].clone())
        .collect();
    assert!(!titles.contains(&json!("a-1")), "{titles:?}");
    let dropped = support::scenario::events_of(&s.events(), "task_dropped")
        .into_iter()
        .map(|e| e["reason"].clone())
        .collect::<Vec<_>>();
    assert_eq!(dropped, [json!("TITLE_IS_ID")]);
    let second_round = llm
        .requests()
        .into_iter()
        .filter(|r| agent(r) == Agent::Planner)
        .nth(1)
        .and_then(|r| r.user_prompt())
        .unwrap_or_default();
    assert!(second_round.contains("TITLE_IS_ID"), "{second_round}");
}

/// What SmolLM2 135M wrote as a final report with no sources to cite (llama.cpp, 2026-12-05):
/// a label, a code block, a Python list outside it with an invented URL, and a fence left open.
const CODE_REPORT: &str = "- e:battery, summary \n```python\nlist_of_lists = [\n    \
    {\"id\": 1, \"title\": \"Batteries\"}\n]\n```\nlist_of_lists = [\n    {\n        \"id\": 3,\n        \
    \"dataSource\": \"https://www.google.com/search?q=batteries\",\n        \"label\":\"How do \
    solid-state batteries compare to lithium ion batteries?\"\n    }\n]\n```\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_report_of_code_and_data_is_sent_back_then_degraded_and_not_answered() {
    let llm = MockLlm::start().await;
    with_final(&llm, |_| CODE_REPORT.into());
    let s = Setup::new(&llm, None);
    let out = s.query("How do solid-state batteries compare?").run().await;
    out.code(1);
    let json = out.stdout_json();
    assert_eq!(json["status"], "degraded", "{}", out.stderr);
    assert_eq!(json["answered"], false);
    assert!(out.reason().contains("NO_PROSE"), "{}", out.reason());
    let finals = final_requests(&llm);
    assert_eq!(finals.len(), 2, "the report was sent back once");
    let repair = finals[1].user_prompt().unwrap_or_default();
    assert!(repair.contains("in sentences"), "{repair}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_that_only_repeats_its_question_is_no_research() {
    let llm = MockLlm::start().await;
    // SmolLM2 135M's summary of a question: the question, lower-cased.
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Solid-state batteries"])),
        Agent::Queries => Reply::json(&json!({"queries": ["solid-state batteries"]})),
        Agent::Final => Reply::content("Solid-state cells are safer."),
        _ => Reply::json(
            &json!({"summary": "how do solid-state batteries compare?", "analysis": ""}),
        ),
    });
    let s = Setup::new(&llm, None);
    let out = s.query("How do solid-state batteries compare?").run().await;
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "degraded", "{}", out.stderr);
    let reason = out.reason();
    assert!(reason.contains("no research task completed"), "{reason}");
    assert!(
        reason.contains("answered junk after a repair: RESTATED_TASK"),
        "{reason}"
    );
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(node(&plan, "b")["quality"][0]["code"], "RESTATED_TASK");
    let analyses = llm
        .requests()
        .into_iter()
        .filter(|r| agent(r) == Agent::Analysis)
        .count();
    assert_eq!(analyses, 2, "the analysis was sent back once");
}
