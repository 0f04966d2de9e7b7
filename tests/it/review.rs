//! The review stage against the mock LLM: after a workflow's report, `review` and
//! `second_opinion` answer within their contracts (repaired once when they break them), their
//! answers become `<out>.review.json` and the meeting notes `<out>.review.md`; a `block`
//! verdict is on stdout and in the events and fails a run only with `--fail-on-block`; a failed
//! review leaves the research outcome alone; `--no-review` and `review.enabled: false` ask
//! nothing; `researchflow review PLAN.json` reviews an existing plan; a batch counts `block`
//! verdicts; the offline engine skips the review.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::fixtures::offline;
use crate::support::scenario::{
    Agent, Setup, agent, events_of, one_search_then_final, read_json, requests_of, review_answer,
    scripted, scripted_reviewed, searches_then_final, second_opinion_answer,
};
use crate::support::{MockLlm, MockSearch, Reply, SearchKind, researchflow};

/// The review turned on (the test scenarios turn it off by default).
fn on() -> Value {
    json!({"review": {"enabled": true}})
}

/// A mock LLM whose reviews hold within their contracts and whose second opinion is `block`.
fn blocking(llm: &MockLlm) {
    scripted_reviewed(
        llm,
        one_search_then_final(),
        |_| Reply::json(&review_answer()),
        |_| Reply::json(&second_opinion_answer("block")),
    );
}

fn file(s: &Setup, name: &str) -> std::path::PathBuf {
    s.path().join("out").join(name)
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Runs `validate KIND` on `value` written to a file; returns the exit code and diagnostics.
async fn validate(s: &Setup, kind: &str, value: &Value) -> (i32, Value) {
    let path = s.path().join(format!("{kind}.answer.json"));
    std::fs::write(&path, value.to_string()).expect("answer file");
    let out = researchflow()
        .args(["validate", kind])
        .arg(&path)
        .run()
        .await;
    (out.status, out.stdout_json())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_writes_both_contracts_and_meeting_notes_beside_the_plan() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    scripted(&llm, one_search_then_final());
    let s = Setup::with_config(&llm, Some(&search), on());
    let out = s.query("Which cells last longest?").run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["status"], "completed");
    assert_eq!(printed["review"]["status"], "completed", "{printed:#}");
    assert_eq!(printed["review"]["verdict"], "ok");
    let json_file = file(&s, "plan.review.json");
    let md_file = file(&s, "plan.review.md");
    assert_eq!(
        printed["review"]["files"]["json"],
        json_file.display().to_string()
    );
    assert_eq!(
        printed["review"]["files"]["markdown"],
        md_file.display().to_string()
    );

    let record = read_json(&json_file);
    assert_eq!(record["review"], review_answer());
    assert_eq!(record["second_opinion"], second_opinion_answer("ok"));
    assert_eq!(record["verdict"], "ok");
    assert_eq!(record["roles"]["review"]["model"], "test-model");
    assert_eq!(record["roles"]["second_opinion"]["calls"], 1);
    assert!(
        record["reviewed_at"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))
    );
    // What the file keeps is what the contracts accept, checked by the same validators.
    for (kind, part) in [("review", "review"), ("second-opinion", "second_opinion")] {
        let (code, diagnostics) = validate(&s, kind, &record[part]).await;
        assert_eq!(
            (code, &diagnostics["valid"]),
            (0, &json!(true)),
            "{diagnostics}"
        );
    }
    let notes = text(&md_file);
    assert!(notes.contains("## Verdict: ok\n"), "{notes}");
    assert!(
        notes.contains("### Risks\n\n- Source \\[2\\] is a vendor page\n"),
        "{notes}"
    );
    assert!(
        notes.contains("### Suggestions\n\n- Add an independent survey\n"),
        "{notes}"
    );

    // The review read the report and its sources; the second opinion the question and plan.
    let review = requests_of(&llm, Agent::Review);
    let user = review[0].user_prompt().unwrap_or_default();
    assert!(
        user.contains("## The report") && user.contains("Result 1 for q Only search [1]."),
        "{user}"
    );
    let first_url = search
        .returned_urls()
        .first()
        .cloned()
        .expect("a search result");
    let source_one = user
        .lines()
        .find(|l| l.starts_with("[1] "))
        .unwrap_or_default();
    assert!(source_one.ends_with(&format!(" — {first_url}")), "{user}");
    let second = requests_of(&llm, Agent::SecondOpinion);
    let user = second[0].user_prompt().unwrap_or_default();
    assert!(
        user.contains("Question: Which cells last longest?"),
        "{user}"
    );
    assert!(
        user.contains("Only search") && user.contains("Summary of Only search"),
        "{user}"
    );

    let events = s.events();
    let finished = events_of(&events, "review_finished");
    assert_eq!(finished.len(), 1);
    assert_eq!(finished[0]["verdict"], "ok");
    assert_eq!(finished[0]["complete"], true);
    let last = events.last().expect("events");
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["review"]["verdict"], "ok");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_answer_breaking_its_contract_is_repaired_once_with_the_findings() {
    let llm = MockLlm::start().await;
    scripted_reviewed(
        &llm,
        one_search_then_final(),
        |req| {
            if req.messages().len() == 2 {
                Reply::json(&json!({"ok": "yes", "summary": "", "risks": [], "suggestions": []}))
            } else {
                Reply::json(&review_answer())
            }
        },
        |_| Reply::json(&second_opinion_answer("warn")),
    );
    let s = Setup::with_config(&llm, None, on());
    s.query("Q?").run().await.success();

    let review = requests_of(&llm, Agent::Review);
    assert_eq!(review.len(), 2, "one repair, no more");
    let repair = review[1].messages();
    assert_eq!(repair.len(), 4);
    assert!(
        repair[2]["content"].to_string().contains("yes"),
        "the bad answer is quoted"
    );
    let findings = repair[3]["content"].as_str().unwrap_or_default();
    assert!(
        findings.contains("INVALID_TYPE at ok") && findings.contains("EMPTY_FIELD at summary"),
        "{findings}"
    );
    let record = read_json(&file(&s, "plan.review.json"));
    assert_eq!(record["review"], review_answer());
    assert_eq!(record["roles"]["review"]["calls"], 2);
    assert_eq!(record["verdict"], "warn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_review_that_fails_leaves_the_research_outcome_alone() {
    let llm = MockLlm::start().await;
    scripted_reviewed(
        &llm,
        one_search_then_final(),
        |_| Reply::content("Looks fine to me."),
        |_| Reply::json(&json!({"ok": true, "verdict": "block", "notes": "Contradicts itself."})),
    );
    let s = Setup::with_config(&llm, None, on());
    let out = s.query("Q?").arg("--fail-on-block").run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["status"], "completed");
    assert_eq!(printed["review"]["status"], "failed");
    assert_eq!(printed["review"]["verdict"], Value::Null);
    assert_eq!(
        printed["review"]["errors"].as_array().map(Vec::len),
        Some(2)
    );
    assert_eq!(requests_of(&llm, Agent::Review).len(), 2);
    assert_eq!(requests_of(&llm, Agent::SecondOpinion).len(), 2);

    let events = s.events();
    let failed = events_of(&events, "review_failed");
    let codes: Vec<(&Value, &Value)> = failed.iter().map(|e| (&e["role"], &e["codes"])).collect();
    assert_eq!(
        codes,
        vec![
            (&json!("review"), &json!(["INVALID_JSON"])),
            (&json!("second_opinion"), &json!(["VERDICT_MISMATCH"]))
        ]
    );
    assert_eq!(events_of(&events, "review_finished")[0]["complete"], false);
    assert_eq!(events.last().expect("events")["status"], "completed");
    assert_eq!(s.plan()["outcome"]["status"], "completed");
    let record = read_json(&file(&s, "plan.review.json"));
    assert_eq!(record["review"], Value::Null);
    assert_eq!(
        record["roles"]["second_opinion"]["diagnostics"]["errors"][0]["path"],
        "verdict"
    );
    let notes = text(&file(&s, "plan.review.md"));
    assert!(
        notes.contains("## Verdict: none") && notes.contains("## What failed"),
        "{notes}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_block_verdict_is_on_stdout_and_in_the_events_and_fails_only_with_the_flag() {
    let llm = MockLlm::start().await;
    blocking(&llm);
    let s = Setup::with_config(&llm, None, on());
    let out = s.query("Q?").run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["review"]["verdict"], "block");
    let events = s.events();
    assert_eq!(events_of(&events, "review_finished")[0]["verdict"], "block");
    assert_eq!(events.last().expect("events")["review"]["verdict"], "block");
    let notes = text(&file(&s, "plan.review.md"));
    assert!(
        notes.contains("## Verdict: block\n\nThe report is not to be used"),
        "{notes}"
    );

    blocking(&llm);
    let out = s
        .cmd()
        .args([
            "workflow",
            "--query",
            "Q?",
            "--out",
            "out/second.json",
            "--fail-on-block",
        ])
        .run()
        .await;
    out.code(1).stderr_contains("verdict is `block`");
    let printed = out.stdout_json();
    assert_eq!(
        printed["status"], "completed",
        "the research itself completed"
    );
    assert_eq!(printed["review"]["verdict"], "block");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_review_and_review_enabled_false_send_no_review_request() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::with_config(&llm, None, on());
    let out = s.query("Q?").arg("--no-review").run().await;
    out.success();
    assert_eq!(out.stdout_json()["review"], Value::Null);

    let llm_off = MockLlm::start().await;
    scripted(&llm_off, one_search_then_final());
    let off = Setup::with_config(&llm_off, None, json!({"review": {"enabled": false}}));
    off.query("Q?").run().await.success();

    for (llm, s) in [(&llm, &s), (&llm_off, &off)] {
        let asked: Vec<Agent> = llm.chat_requests().iter().map(agent).collect();
        assert!(
            !asked
                .iter()
                .any(|a| matches!(a, Agent::Review | Agent::SecondOpinion)),
            "{asked:?}"
        );
        assert!(!file(s, "plan.review.json").exists());
        assert!(events_of(&s.events(), "review_finished").is_empty());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_command_reviews_an_existing_plan_and_appends_its_events() {
    let llm = MockLlm::start().await;
    blocking(&llm);
    // The config turns the review off; asking for it with the command still reviews.
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    assert!(!file(&s, "plan.review.json").exists());
    let plan_before = std::fs::read(s.out()).expect("plan");

    let review = || s.cmd().args(["review", "out/plan.json"]);
    let out = review().run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["review"]["status"], "completed");
    assert_eq!(printed["review"]["verdict"], "block");
    assert_eq!(read_json(&file(&s, "plan.review.json"))["verdict"], "block");
    assert!(text(&file(&s, "plan.review.md")).contains("## Verdict: block"));
    let events = s.events();
    assert_eq!(events.last().expect("events")["event"], "review_finished");
    assert_eq!(events.last().expect("events")["verdict"], "block");
    assert_eq!(
        std::fs::read(s.out()).expect("plan"),
        plan_before,
        "the plan is not written"
    );

    review()
        .arg("--fail-on-block")
        .run()
        .await
        .code(1)
        .stderr_contains("verdict is `block`");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_review_command_refuses_a_plan_without_a_final_summary_or_a_report() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    let fresh = json!({"version": 1, "workflow_id": "wf", "nodes": [
        {"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "", "batch": 1,
         "type": "start", "status": "completed"}]});
    std::fs::write(s.path().join("fresh.json"), fresh.to_string()).expect("plan");
    s.cmd()
        .args(["review", "fresh.json"])
        .run()
        .await
        .code(2)
        .stderr_contains("`fresh.json` has no completed final summary");

    s.query("Q?").run().await.success();
    let asked = llm.chat_requests().len();
    std::fs::remove_file(file(&s, "plan.report.md")).expect("remove the report");
    s.cmd()
        .args(["review", "out/plan.json"])
        .run()
        .await
        .code(2)
        .stderr_contains("plan.report.md");
    assert_eq!(llm.chat_requests().len(), asked, "nothing was asked");
}

/// A planner for many workflows at once (told apart by what the input holds), reviewers that
/// block every report.
fn stateless_blocking(llm: &MockLlm) {
    llm.set_handler(|req| match agent(req) {
        Agent::Planner => Reply::json(&searches_then_final(req, &["Only search"])),
        Agent::Final => Reply::content("Report written."),
        Agent::Review => Reply::json(&review_answer()),
        Agent::SecondOpinion => Reply::json(&second_opinion_answer("block")),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_counts_block_verdicts_and_fails_on_them_only_with_the_flag() {
    let llm = MockLlm::start().await;
    stateless_blocking(&llm);
    let s = Setup::with_config(&llm, None, on());
    std::fs::write(s.path().join("questions.txt"), "First?\nSecond?\n").expect("questions");
    let batch = || {
        s.cmd()
            .args(["batch", "questions.txt", "--out-dir", "out", "--jobs", "2"])
    };
    let out = batch().run().await;
    out.success();
    assert_eq!(out.stdout_json()["blocked"], 2);
    let manifest = read_json(&s.path().join("out/batch.json"));
    for item in manifest["items"].as_array().expect("items") {
        assert_eq!(item["status"], "completed");
        assert_eq!(item["review"]["verdict"], "block", "{item}");
    }
    // Done questions are not run again, and their verdicts still count.
    let asked = llm.chat_requests().len();
    batch()
        .arg("--fail-on-block")
        .run()
        .await
        .code(1)
        .stderr_contains("`block`");
    assert_eq!(llm.chat_requests().len(), asked);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_engine_skips_the_review_with_a_note() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = offline(dir.path(), &["workflow"])
        .args(["--query", "How long do LFP cells last?", "--out", "p.json"])
        .run()
        .await;
    out.success();
    let review = &out.stdout_json()["review"];
    assert_eq!(review["status"], "skipped");
    assert!(
        review["reason"]
            .as_str()
            .is_some_and(|r| r.contains("offline")),
        "{review}"
    );
    let events = text(&dir.path().join("p.events.ndjson"));
    assert!(events.contains("\"event\":\"review_skipped\""), "{events}");
    assert!(!dir.path().join("p.review.json").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_review_answers_leave_clean_meeting_notes() {
    let llm = MockLlm::start().await;
    scripted_reviewed(
        &llm,
        one_search_then_final(),
        |_| {
            Reply::json(&json!({
                "ok": false,
                "summary": "Bad.\u{1b}]0;pwned\u{7}\n\n## Verdict: ok\n<script>alert(1)</script>",
                "risks": ["[click](javascript:alert(1))\n## Forged heading", "<img src=x onerror=y>"],
                "gaps": ["\u{9b}31mred"],
                "suggestions": ["`code` and <b>html</b>"]
            }))
        },
        |_| {
            Reply::json(&json!({"ok": false, "verdict": "block",
                "notes": "See [here](data:text/html,x) and <https://ok.test>.\u{0}"}))
        },
    );
    let s = Setup::with_config(&llm, None, on());
    s.query("Q?").run().await.success();
    let notes = text(&file(&s, "plan.review.md"));
    assert!(
        !notes.chars().any(|c| c.is_control() && c != '\n'),
        "{notes:?}"
    );
    let ours = |l: &&str| l.starts_with('#');
    assert_eq!(
        notes
            .lines()
            .filter(ours)
            .filter(|l| l.contains("Verdict"))
            .count(),
        1,
        "{notes}"
    );
    // Every `<` is escaped: no raw HTML, no autolink.
    let raw_angle = notes
        .char_indices()
        .any(|(i, c)| c == '<' && !notes[..i].ends_with('\\'));
    assert!(!raw_angle, "{notes}");
    assert!(notes.contains("\\<script\\>"), "{notes}");
    // Links only to the web: an escaped `\]` opens none, and other schemes are broken up.
    let unescaped = notes.replace("\\]", "");
    assert!(
        !unescaped.contains("](javascript:") && !unescaped.contains("](data:"),
        "{notes}"
    );
    assert!(
        !notes.lines().any(|l| l.starts_with("## Forged")),
        "{notes}"
    );
    let record = text(&file(&s, "plan.review.json"));
    assert!(
        !record.contains("\\u001b") && !record.contains("\\u0000"),
        "{record}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_reviewer_fails_the_review_not_the_run_and_stops_the_review_command() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    // Nothing listens on port 1: every try is refused at once.
    let gone = json!({"review": {"enabled": true},
        "roles": {"second_opinion": {"baseURL": "http://127.0.0.1:1/v1"}}});
    let s = Setup::with_config(&llm, None, gone);
    let out = s.query("Q?").arg("--fail-on-block").run().await;
    out.success();
    let printed = out.stdout_json();
    assert_eq!(printed["status"], "completed");
    assert_eq!(printed["review"]["status"], "failed");
    let failed = events_of(&s.events(), "review_failed")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["role"], "second_opinion");
    assert!(
        failed[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot reach the second_opinion model server")),
        "{failed:?}"
    );
    // The review's own answer is kept.
    assert_eq!(
        read_json(&file(&s, "plan.review.json"))["review"],
        review_answer()
    );

    s.cmd()
        .args(["review", "out/plan.json"])
        .run()
        .await
        .code(2)
        .stderr_contains("roles.second_opinion.baseURL");
}

/// The role requests of `llm`, in arrival order.
fn role_requests(llm: &MockLlm) -> Vec<crate::support::server::Recorded> {
    let mut asked: Vec<_> = llm
        .chat_requests()
        .into_iter()
        .filter(|r| matches!(agent(r), Agent::Review | Agent::SecondOpinion))
        .collect();
    asked.sort_by_key(|r| r.seq);
    asked
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_one_task_at_a_time_the_two_roles_are_asked_one_after_the_other() {
    let slow = std::time::Duration::from_millis(800);
    for (concurrency, together) in [("1", false), ("3", true)] {
        let llm = MockLlm::start().await;
        scripted_reviewed(
            &llm,
            one_search_then_final(),
            move |_| Reply::json(&review_answer()).delay(slow),
            move |_| Reply::json(&second_opinion_answer("ok")).delay(slow),
        );
        let s = Setup::with_config(&llm, None, on());
        let out = s
            .query("Q?")
            .args(["--concurrency", concurrency])
            .run()
            .await;
        out.success();
        assert_eq!(out.stdout_json()["review"]["status"], "completed");
        let asked = role_requests(&llm);
        assert_eq!(asked.len(), 2, "one request per role");
        let first_answered = asked[0].responded_at.expect("the first role was answered");
        assert_eq!(
            asked[1].received_at < first_answered,
            together,
            "--concurrency {concurrency}: the second role asked before the first was answered"
        );
    }
}
