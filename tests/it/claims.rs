//! Answers you can check: every cited sentence of a search summary and of the final report is
//! checked against what the search returned of the sources it cites, kept on its node, counted
//! in the report's header line and in `run_finished`, and marked where it stands when its
//! sources do not support it.

use serde_json::json;

use crate::support::scenario::{
    Agent, Setup, agent, events_of, final_over, node, read_json, requests_of, review_answer,
    searches_round, second_opinion_answer,
};
use crate::support::server::Recorded;
use crate::support::{MockLlm, MockSearch, Reply, SearchKind};

/// One search, then a final report whose second claim its source does not say; a verifier
/// that finds it supported.
fn contradicting(llm: &MockLlm) {
    contradicting_with(llm, |req| {
        match req.user_prompt().is_some_and(|u| u.contains("Chile")) {
            true => Reply::json(&json!({"verdicts": [
                {"claim": 1, "supported": true, "why": "Source 2 reports the fall."}
            ]})),
            false => Reply::content("I am not sure."),
        }
    });
}

/// [`contradicting`], the verifier answered by `verifier`.
fn contradicting_with(llm: &MockLlm, verifier: fn(&Recorded) -> Reply) {
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner if req.user_prompt().unwrap_or_default().contains("### b:") => {
            Reply::json(&final_over("b:summary"))
        }
        Agent::Planner => Reply::json(&searches_round(&["Energy density"])),
        Agent::Queries => Reply::json(&json!({"queries": ["solid state energy density"]})),
        Agent::Analysis => Reply::json(&json!({
            "summary": "The results describe solid state energy density [1].",
            "analysis": "1. Solid state energy density [1]."
        })),
        Agent::Final => Reply::content(
            "Solid state energy density is documented by the results [1]. \
             Lithium cobalt recycling costs fell sharply in Chile last year [2].",
        ),
        Agent::Verifier => verifier(req),
        Agent::Review => Reply::json(&review_answer()),
        Agent::SecondOpinion => Reply::json(&second_opinion_answer("ok")),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_their_sources_do_not_say_are_marked_and_counted() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    contradicting(&llm);
    let s = Setup::new(&llm, Some(&search));
    let out = s.query("How dense are solid-state cells?").run().await;
    out.success();
    let totals = &out.stdout_json()["totals"];
    assert_eq!(
        (
            totals["claims_cited"].clone(),
            totals["claims_supported"].clone()
        ),
        (json!(2), json!(1))
    );

    let plan = s.plan();
    let b = node(&plan, "b");
    assert_eq!(b["claims"][0]["supported"], true, "{b}");
    assert_eq!(b["claims"][0]["by"], "lexical");
    assert!(
        b["sources"][0]["snippet"]
            .as_str()
            .is_some_and(|t| t.contains("solid state"))
    );
    let fin = node(&plan, "c");
    let claims = fin["claims"].as_array().cloned().unwrap_or_default();
    assert_eq!(claims.len(), 2, "{fin}");
    assert_eq!(
        claims
            .iter()
            .map(|c| (c["cites"].clone(), c["supported"].clone()))
            .collect::<Vec<_>>(),
        [(json!([1]), json!(true)), (json!([2]), json!(false))]
    );
    assert!(
        claims[1]["score"].as_f64().is_some_and(|s| s < 0.5),
        "{claims:?}"
    );

    let report = s.report();
    assert!(
        report.contains(
            "_1 of 2 cited claims share most of their words with their sources (a check of words, \
             not of meaning)._"
        ),
        "{report}"
    );
    assert!(
        report.contains("last year [2]. **[not supported by its sources]**"),
        "{report}"
    );
    assert!(
        !report.contains("by the results [1]. **[not supported"),
        "a supported claim is not marked: {report}"
    );
    let events = s.events();
    let finished = events_of(&events, "run_finished");
    assert_eq!(finished[0]["totals"]["claims_supported"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stricter_threshold_in_the_config_supports_fewer_claims() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    contradicting(&llm);
    // "documented" is in no source: 5 of the first claim's 6 content words are.
    let s = Setup::with_config(&llm, Some(&search), json!({"claims": {"threshold": 0.99}}));
    let out = s.query("How dense are solid-state cells?").run().await;
    assert_eq!(out.stdout_json()["totals"]["claims_supported"], 0);
    // Under that threshold no claim of the report is backed: it is no answer.
    out.code(1);
    assert_eq!(out.stdout_json()["status"], "degraded");
    assert!(
        out.reason()
            .starts_with("none of the 2 claims the final report cites is supported"),
        "{}",
        out.reason()
    );
    let bad = Setup::with_config(&llm, None, json!({"claims": {"threshold": 2}}));
    let out = bad.query("Q?").run().await;
    out.code(2);
    assert!(out.stderr.contains("claims.threshold"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_hears_of_unsupported_claims_and_cannot_call_them_ok() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    contradicting(&llm);
    let s = Setup::with_config(&llm, Some(&search), json!({"review": {"enabled": true}}));
    let out = s.query("How dense are cells?").run().await;
    out.success();
    // The second opinion said `ok`; half the claims are unsupported: the verdict is `warn`.
    let review = &out.stdout_json()["review"];
    assert_eq!(review["verdict"], "warn", "{review}");
    let record = read_json(&s.path().join("out/plan.review.json"));
    assert_eq!(record["second_opinion"]["verdict"], "ok");
    assert!(
        record["verdict_note"]
            .as_str()
            .is_some_and(|n| n.contains("1 of 2 cited claims")),
        "{record}"
    );
    let notes = std::fs::read_to_string(s.path().join("out/plan.review.md")).expect("notes");
    assert!(
        notes.contains("## Verdict: warn") && notes.contains("lowered from `ok`"),
        "{notes}"
    );
    // Both roles read what the checks found, the unsupported claim quoted.
    for role in [Agent::Review, Agent::SecondOpinion] {
        let asked = llm
            .requests()
            .into_iter()
            .find(|r| agent(r) == role)
            .and_then(|r| r.user_prompt())
            .unwrap_or_default();
        assert!(
            asked.contains("1 of 2 cited claims pass them")
                && asked.contains("not supported: \"Lithium cobalt recycling"),
            "{asked}"
        );
    }
}

/// A run whose config names a verifier, the model `judge`.
fn with_verifier(llm: &MockLlm, search: &MockSearch) -> Setup {
    Setup::with_config(
        llm,
        Some(search),
        json!({"roles": {"verifier": {"model": "judge"}}}),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_verifier_judges_what_the_word_check_left_unsupported() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    contradicting(&llm);
    let s = with_verifier(&llm, &search);
    let out = s.query("How dense are cells?").run().await;
    out.success();
    assert_eq!(out.stdout_json()["totals"]["claims_supported"], 2);
    let plan = s.plan();
    let claims = node(&plan, "c")["claims"].clone();
    assert_eq!(claims[0]["by"], "lexical");
    assert_eq!(
        (claims[1]["by"].clone(), claims[1]["supported"].clone()),
        (json!("verifier"), json!(true))
    );
    let asked = requests_of(&llm, Agent::Verifier);
    assert_eq!(
        asked.len(),
        1,
        "one call for the final report's one weak claim"
    );
    assert_eq!(asked[0].body["model"], "judge");
    let question = asked[0].user_prompt().unwrap_or_default();
    assert!(
        question.contains("Claim 1: Lithium cobalt recycling") && question.contains("Source [2]"),
        "{question}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verifier_that_breaks_its_contract_is_repaired_then_leaves_the_word_check_standing() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    contradicting_with(&llm, |_| Reply::content("I am not sure."));
    let s = with_verifier(&llm, &search);
    let out = s.query("How dense are cells?").run().await;
    out.success();
    assert_eq!(out.stdout_json()["totals"]["claims_supported"], 1);
    let asked = requests_of(&llm, Agent::Verifier).len();
    assert_eq!(
        asked, 2,
        "asked once, repaired once (planner.repairAttempts 1)"
    );
    assert_eq!(node(&s.plan(), "c")["claims"][1]["by"], "lexical");
}
