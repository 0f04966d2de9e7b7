//! `researchflow eval SET.jsonl`: every question of a set run as a batch would, each report
//! scored against its gold answers and evidence, through the binary: against the mock LLM and
//! mock search, and offline over the shipped corpus; `--replay` scores again from the
//! transcripts without a request; `--previous` says what got better or worse; the exit codes;
//! the leading statement scored strictly beside the gold found anywhere, and the warning for a
//! set whose evidence names no document of the corpus.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::{corpus, fixture, offline, root};
use crate::support::mock_search::result_url;
use crate::support::scenario::{Agent, Setup, agent, final_over, read_json, searches_round};
use crate::support::{MockLlm, MockSearch, Reply, SearchKind};

/// The three questions of the mock's set, each told apart by its word: `alpha` is answered
/// from its first result, `beta` has no answer and the report says so, `gamma` is answered
/// wrongly from a result that is not the evidence.
const SET: &str = "alpha";

/// The search query the mock's query writer gives for a question about `word`.
fn query_of(word: &str) -> String {
    format!("{word} facts")
}

/// The word of the question a request is about.
fn word_of(prompt: &str) -> &'static str {
    ["alpha", "beta", "gamma", "delta"]
        .into_iter()
        .find(|w| prompt.to_lowercase().contains(w))
        .unwrap_or("other")
}

/// One search, then the final report; what the report says for each question comes from
/// `report`.
fn scripted(llm: &MockLlm, report: fn(&str) -> Reply) {
    llm.set_handler(move |req| {
        let prompt = req.user_prompt().unwrap_or_default();
        match agent(req) {
            Agent::Planner if prompt.contains("### b:") => Reply::json(&final_over("b:summary")),
            Agent::Planner => Reply::json(&searches_round(&["Look it up"])),
            Agent::Queries => Reply::json(&json!({"queries": [query_of(word_of(&prompt))]})),
            Agent::Analysis => Reply::json(&json!({
                "summary": format!("The results are about {} [1].", word_of(&prompt)),
                "analysis": "1. Facts [1]."
            })),
            Agent::Final => report(word_of(&prompt)),
            _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
        }
    });
}

fn first_reports(word: &str) -> Reply {
    Reply::content(match word {
        "alpha" => "Alpha facts are forty two [1].",
        "beta" => "The search results do not answer what beta is.",
        _ => "Gamma facts are seven [2].",
    })
}

/// Gamma is answered right this time, from its evidence.
fn better_reports(word: &str) -> Reply {
    match word {
        "gamma" => Reply::content("Gamma facts are nine [1]."),
        _ => first_reports(word),
    }
}

fn write_set(dir: &Path) -> PathBuf {
    let lines = [
        json!({"id": "a1", "question": "What is alpha?", "answers": ["forty two"],
               "evidence": [result_url(&query_of("alpha"), 1), result_url(&query_of("alpha"), 3)]}),
        json!({"id": "b1", "question": "What is beta?", "answers": [], "evidence": []}),
        json!({"id": "c1", "question": "What is gamma?", "answers": ["nine"],
               "evidence": [result_url(&query_of("gamma"), 1)]}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path = dir.join(format!("{SET}.jsonl"));
    std::fs::write(&path, text).expect("set");
    path
}

fn eval(s: &Setup, args: &[&str]) -> support::bin::Cmd {
    s.cmd()
        .args(["eval", "alpha.jsonl", "--jobs", "2"])
        .args(args)
}

fn question<'a>(evaluation: &'a Value, id: &str) -> &'a Value {
    evaluation["questions"]
        .as_array()
        .and_then(|q| q.iter().find(|q| q["id"] == id))
        .unwrap_or_else(|| panic!("{id} in {evaluation}"))
}

/// The scores without the seconds, which no two runs share.
fn without_seconds(evaluation: &Value) -> Value {
    let mut questions = evaluation["questions"].clone();
    for q in questions.as_array_mut().expect("questions") {
        q.as_object_mut().map(|o| o.remove("seconds"));
    }
    let mut totals = evaluation["totals"].clone();
    totals.as_object_mut().map(|o| o.remove("seconds"));
    json!({"questions": questions, "totals": totals})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_known_set_is_scored_exactly_replayed_without_a_request_and_compared() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    scripted(&llm, first_reports);
    let s = Setup::new(&llm, Some(&search));
    write_set(s.path());

    let out = eval(&s, &["--out-dir", "one", "--json"]).run().await;
    out.success();
    let printed = out.stdout_json();
    let saved = read_json(&s.path().join("one/eval.json"));
    assert_eq!(printed, saved, "stdout is what eval.json holds");

    let a = question(&saved, "a1");
    assert_eq!(a["status"], "completed");
    assert_eq!(a["answer_match"], true);
    // "alpha facts are forty two" against "forty two": precision 2/5, recall 1; kept whole in
    // JSON (it was rounded to 0.571), rounded only in the table.
    let f1_a = 2.0 * 0.4 * 1.0 / (0.4 + 1.0);
    assert_eq!(a["f1"].as_f64(), Some(f1_a));
    assert_eq!(a["cited"], json!([result_url(&query_of("alpha"), 1)]));
    assert_eq!(a["citation_precision"], 1.0);
    assert_eq!(a["evidence_recall"], 0.5);

    let b = question(&saved, "b1");
    assert_eq!(
        (
            b["status"].clone(),
            b["answer_match"].clone(),
            b["f1"].clone()
        ),
        (json!("completed"), json!(true), json!(1.0)),
        "saying there is no answer is right, and not junk: {b}"
    );
    assert_eq!(b["cited"], json!([]));
    // It answers nothing, rightly: its state is `not answered`, counted in the totals.
    assert_eq!(b["answered"], false, "{b}");
    assert_eq!(a["answered"], true, "{a}");
    assert!(b["citation_precision"].is_null() && b["evidence_recall"].is_null());

    let c = question(&saved, "c1");
    assert_eq!(c["answer_match"], false);
    assert_eq!(c["f1"], 0.0);
    assert_eq!(c["cited"], json!([result_url(&query_of("gamma"), 2)]));
    assert_eq!(
        (
            c["citation_precision"].as_f64(),
            c["evidence_recall"].as_f64()
        ),
        (Some(0.0), Some(0.0))
    );

    // Each question's claims and tokens are its run's.
    let manifest = read_json(&s.path().join("one/batch.json"));
    for q in saved["questions"].as_array().expect("questions") {
        let item = manifest["items"]
            .as_array()
            .and_then(|i| i.iter().find(|i| i["id"] == q["id"]))
            .expect("a manifest item");
        let plan = read_json(Path::new(item["plan_file"].as_str().expect("plan file")));
        let fin = plan["nodes"]
            .as_array()
            .and_then(|n| n.iter().find(|n| n["batch"] == -1))
            .expect("final node");
        let claims = fin["claims"].as_array().cloned().unwrap_or_default();
        let supported = claims.iter().filter(|c| c["supported"] == true).count();
        assert_eq!(q["claims_cited"], claims.len(), "{q}");
        assert_eq!(q["claims_supported"], supported, "{q}");
        assert_eq!(q["tokens"], item["totals"]["total_tokens"], "{q}");
        assert_eq!(q["claims_cited"], item["totals"]["claims_cited"], "{q}");
        assert!(
            q["tokens"].as_u64().is_some_and(|t| t > 0 && t % 18 == 0),
            "{q}"
        );
    }
    let totals = &saved["totals"];
    assert_eq!(
        (totals["questions"].clone(), totals["scored"].clone()),
        (json!(3), json!(3))
    );
    assert_eq!(totals["answer_matches"], 2);
    assert_eq!(totals["not_answered"], 1);
    assert_eq!(totals["f1"].as_f64(), Some((f1_a + 1.0 + 0.0) / 3.0));
    assert_eq!(
        totals["citation_precision"], 0.5,
        "b1 cites nothing and is left out"
    );
    assert_eq!(totals["evidence_recall"], 0.25);

    // Scored again from the transcripts: not one request, the same scores.
    let (chats, searches) = (llm.chat_requests().len(), search.requests().len());
    eval(&s, &["--replay", "one", "--out-dir", "two", "--json"])
        .run()
        .await
        .success();
    assert_eq!(
        (llm.chat_requests().len(), search.requests().len()),
        (chats, searches),
        "a replay asks nothing"
    );
    let replayed = read_json(&s.path().join("two/eval.json"));
    assert_eq!(without_seconds(&replayed), without_seconds(&saved));

    // Gamma answered right: better, the others the same.
    scripted(&llm, better_reports);
    let out = eval(&s, &["--previous", "one", "--out-dir", "three"])
        .run()
        .await;
    out.success();
    let now = read_json(&s.path().join("three/eval.json"));
    let verdicts: Vec<(String, String)> = now["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap_or_default().into(),
                c["verdict"].as_str().unwrap_or_default().into(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("a1".into(), "same".into()),
            ("b1".into(), "same".into()),
            ("c1".into(), "better".into())
        ]
    );
    assert!(
        now["changes"][2]["moved"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m == "precision: 0.000 -> 1.000")),
        "{now}"
    );
    // On a terminal or not, the table is Markdown, with the change in its last column.
    out.stdout_contains("| c1 | completed | right | yes |")
        .stdout_contains("| a1 | completed | right | yes | 0.571 |")
        .stdout_contains("| b1 | not answered | abstained | yes |")
        .stdout_contains("better (leading: wrong -> right, answer: 0.000 -> 1.000")
        .stdout_contains(
            "| **total** | 3 of 3 scored, 1 not answered | 2 right, 0 wrong, 1 abstained | 3 of 3 |",
        );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_question_whose_run_left_no_report_exits_1_and_a_bad_set_line_exits_2() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    scripted(&llm, |word| match word {
        "gamma" => Reply::raw(400, r#"{"error": {"message": "no"}}"#),
        _ => first_reports(word),
    });
    let s = Setup::new(&llm, Some(&search));
    write_set(s.path());
    let out = eval(&s, &["--out-dir", "one", "--json"]).run().await;
    out.code(1).stderr_contains("error: question `c1`");
    let saved = read_json(&s.path().join("one/eval.json"));
    let c = question(&saved, "c1");
    assert_eq!(c["reported"], false, "{c}");
    assert_ne!(c["status"], "completed");
    assert_eq!(
        question(&saved, "a1")["answer_match"],
        true,
        "the others are scored"
    );
    assert_eq!(saved["totals"]["scored"], 2);

    let mut text = std::fs::read_to_string(s.path().join("alpha.jsonl")).expect("set");
    text.push_str("{\"id\": \"d1\", \"question\": \"What?\", \"answers\": \"nine\"}\n");
    std::fs::write(s.path().join("alpha.jsonl"), text).expect("set");
    eval(&s, &["--out-dir", "two"])
        .run()
        .await
        .code(2)
        .stderr_contains("alpha.jsonl")
        .stderr_contains("line 4: field `answers`");
    assert!(
        !s.path().join("two").exists(),
        "nothing is run for a bad set"
    );
}

/// Questions of the shipped set, offline over the shipped corpus: a one-document answer, a
/// two-part question answered from two documents, and one the corpus cannot answer, where the
/// report says so and cites nothing; and two whose quote opens with an uncited sentence (a
/// term restated, a passage cited at its end). No answer of the offline engine, all quoted,
/// is marked as citing no source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_offline_engine_is_scored_exactly_on_shipped_questions() {
    let dir = tempfile::tempdir().expect("tempdir");
    let set: String = std::fs::read_to_string(fixture("eval/batteries.jsonl"))
        .expect("shipped set")
        .lines()
        .filter(|l| {
            ["\"b01\"", "\"b02\"", "\"b09\"", "\"b13\"", "\"b19\""]
                .iter()
                .any(|id| l.contains(id))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(dir.path().join("three.jsonl"), set).expect("set");
    let out = offline(
        dir.path(),
        &["eval", "three.jsonl", "--out-dir", "out", "--json"],
    )
    .env_remove("OPENAI_API_KEY")
    .run()
    .await;
    out.success();
    let e = out.stdout_json();
    let figures = |id: &str| {
        let q = question(&e, id);
        (
            q["answer_match"].clone(),
            q["citation_precision"].clone(),
            q["evidence_recall"].clone(),
            q["cited"].clone(),
            q["claims_cited"].clone(),
            q["claims_supported"].clone(),
            q["tokens"].clone(),
        )
    };
    assert_eq!(
        figures("b02"),
        (
            json!(true),
            json!(1.0),
            json!(1.0),
            json!(["battery-history-timeline.txt"]),
            json!(1),
            json!(1),
            json!(0)
        )
    );
    assert_eq!(
        figures("b09"),
        (
            json!(true),
            json!(1.0),
            json!(1.0),
            json!([
                "battery-recycling-methods.md",
                "critical-minerals-supply-chain.txt"
            ]),
            json!(3),
            json!(3),
            json!(0)
        )
    );
    assert_eq!(
        figures("b13"),
        (
            json!(true),
            Value::Null,
            Value::Null,
            json!([]),
            json!(0),
            json!(0),
            json!(0)
        )
    );
    assert_eq!(
        e["totals"]["supported_claims"], 1.0,
        "quotes support themselves"
    );
    for id in ["b01", "b02", "b09", "b19"] {
        let report = dir.path().join(format!("out/{id}.report.md"));
        let report = std::fs::read_to_string(&report).expect("report");
        assert!(!report.contains("[cites no source]"), "{report}");
    }
}

/// `scripts/check-eval-set.py` passes the shipped sets (batteries, and the Debian Policy and
/// licence-text sets over their own corpora, traps included), and fails (exit 1, naming the
/// question and the file) a set whose alternative evidence does not hold a gold answer, and
/// one whose trap's decoy is not next to the answer or is the answer in other words.
#[test]
fn the_set_checker_passes_the_shipped_set_and_fails_an_alternative_without_the_answer() {
    let check_in = |set: &Path, corpus_dir: &Path| {
        std::process::Command::new("python3")
            .arg(root().join("scripts/check-eval-set.py"))
            .arg(set)
            .arg(corpus_dir)
            .output()
            .expect("python3 runs the checker")
    };
    let check = |set: &Path| check_in(set, &corpus());
    for (set, corpus_dir) in [
        ("eval/batteries.jsonl", corpus()),
        ("eval/debian.jsonl", fixture("corpus-debian")),
        ("eval/licenses.jsonl", fixture("corpus-licenses")),
    ] {
        let shipped = check_in(&fixture(set), &corpus_dir);
        assert!(
            shipped.status.success(),
            "{set}: {}",
            String::from_utf8_lossy(&shipped.stdout)
        );
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let bad = dir.path().join("bad.jsonl");
    let set = std::fs::read_to_string(fixture("eval/batteries.jsonl"))
        .expect("shipped set")
        .replace(
            r#"[["lfp-vs-nmc-comparison.html", "lfp-cathode-chemistry.txt"]]"#,
            r#"[["lfp-vs-nmc-comparison.html", "ev-market-adoption.html"]]"#,
        );
    std::fs::write(&bad, set).expect("set");
    let out = check(&bad);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("b21") && said.contains("ev-market-adoption.html"),
        "{said}"
    );

    // A trap's decoy must sit next to the right answer in its evidence, and must not be one
    // eval's matching would take for the answer.
    let set = std::fs::read_to_string(fixture("eval/batteries.jsonl"))
        .expect("shipped set")
        .replace(
            r#""decoys": ["about 55 percent", "about 90 percent"]"#,
            r#""decoys": ["about 55 percent", "more than 80 percent"]"#,
        )
        .replace(
            r#""decoys": ["170 Wh/kg", "650 Wh/L"]"#,
            r#""decoys": ["170 Wh/kg", "about 380 Wh/L"]"#,
        );
    std::fs::write(&bad, set).expect("set");
    let out = check(&bad);
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(
        said.contains("b41 (line 41): decoy 'more than 80 percent' is not within 600 characters")
            && said.contains(
                "b42 (line 42): decoy 'about 380 Wh/L' and answer '380 Wh/L' hold one another"
            ),
        "{said}"
    );
}

/// Reports built to trap a scorer that looks for the gold anywhere: alpha states a wrong
/// figure first and the right one after it, beta says its sources do not state it (words the
/// run's own check does not take for "not answered"), gamma has its answer only in Findings,
/// delta (a trap) states it. Only delta's leading statement is right.
fn trap_reports(word: &str) -> Reply {
    Reply::content(match word {
        "alpha" => "Alpha facts are seven [1]. Others say forty two [1].",
        "beta" => "The sources do not state what beta is. Snippet 1 is about beta facts [1].",
        "gamma" => {
            "## Answer\n\nGamma is a letter [1].\n\n## Findings\n\n- Gamma facts are nine [1]."
        }
        _ => "Delta facts are nine [1].",
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leading_statement_is_scored_right_wrong_or_abstained_beside_the_gold_anywhere() {
    let llm = MockLlm::start().await;
    let search = MockSearch::start(SearchKind::Searxng).await;
    scripted(&llm, trap_reports);
    let s = Setup::new(&llm, Some(&search));
    let path = write_set(s.path());
    let mut text = std::fs::read_to_string(&path).expect("set");
    text.push_str(
        &json!({"id": "d1", "question": "What is delta?", "answers": ["nine"],
                "evidence": [result_url(&query_of("delta"), 1)], "trap": true,
                "decoys": ["seven"]})
        .to_string(),
    );
    std::fs::write(&path, text).expect("set");

    let out = eval(&s, &["--out-dir", "one"]).run().await;
    out.success();
    let saved = read_json(&s.path().join("one/eval.json"));
    let judged = |id: &str| {
        let q = question(&saved, id);
        (
            q["verdict"].as_str().unwrap_or("null").to_string(),
            q["gold_anywhere"].clone(),
            q["answer_match"].clone(),
        )
    };
    assert_eq!(judged("a1"), ("wrong".into(), json!(true), json!(true)));
    assert_eq!(
        judged("b1"),
        ("abstained".into(), json!(false), json!(false))
    );
    assert_eq!(judged("c1"), ("wrong".into(), json!(true), json!(true)));
    assert_eq!(judged("d1"), ("right".into(), json!(true), json!(true)));
    assert_eq!(
        question(&saved, "a1")["leading_statement"],
        "Alpha facts are seven [1]"
    );
    assert_eq!(
        question(&saved, "c1")["leading_statement"],
        "Gamma is a letter [1]"
    );
    assert_eq!(question(&saved, "d1")["trap"], true);

    let t = &saved["totals"];
    assert_eq!(
        (t["gold_anywhere"].clone(), t["answer_matches"].clone()),
        (json!(3), json!(3))
    );
    let strict = |s: &Value| {
        [
            "right",
            "wrong",
            "abstained",
            "precision",
            "coverage",
            "abstention",
        ]
        .map(|k| s[k].clone())
    };
    assert_eq!(
        strict(&t["strict"]),
        [
            json!(1),
            json!(2),
            json!(1),
            json!(1.0 / 3.0),
            json!(1.0 / 3.0),
            json!(1.0)
        ]
    );
    assert_eq!(
        strict(&t["strict_without_traps"]),
        [
            json!(0),
            json!(2),
            json!(1),
            json!(0.0),
            json!(0.0),
            json!(1.0)
        ]
    );
    // Over web results there is no corpus to check the evidence against: no warning.
    assert_eq!(saved["warnings"], json!([]));
    assert!(
        !out.stderr.contains("no evidence of the set"),
        "{}",
        out.stderr
    );
    out.stdout_contains("| d1 (trap) | completed | right | yes |")
        .stdout_contains("| a1 | completed | wrong | yes |")
        .stdout_contains("| **total** | 4 of 4 scored | 1 right, 2 wrong, 1 abstained | 3 of 4 |")
        .stdout_contains(
            "Leading statements: stated-answer precision 0.333 (1 right of 3 stated), coverage 0.333 (1 of 3 answerable), abstention 1.000 (1 of 1 unanswerable); a gold answer anywhere in the report: 3 of 4.",
        )
        .stdout_contains("Without the 1 traps: stated-answer precision 0.000 (0 right of 2 stated)");
}

/// A set whose evidence names no document of the corpus it runs over is warned of, on stderr
/// and in `eval.json`, naming the set, the corpus and an entry; the same set naming one of its
/// documents is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_set_whose_evidence_names_no_document_of_the_corpus_is_warned_of() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus_dir = dir.path().join("tiny");
    std::fs::create_dir(&corpus_dir).expect("corpus");
    std::fs::write(
        corpus_dir.join("cells.md"),
        "# Cells\n\nSodium-ion cells last about 3000 cycles before they fade.\n",
    )
    .expect("document");
    let write = |evidence: &str| {
        let line = json!({"id": "x1", "question": "How many cycles do sodium-ion cells last?",
                          "answers": ["about 3000 cycles"], "evidence": [evidence]});
        std::fs::write(dir.path().join("tiny.jsonl"), format!("{line}\n")).expect("set");
    };
    let run = |out_dir: &'static str| {
        support::fixtures::offline_over(
            dir.path(),
            &corpus_dir,
            &["eval", "tiny.jsonl", "--out-dir", out_dir],
        )
        .env_remove("OPENAI_API_KEY")
        .run()
    };
    write("battery-glossary.md");
    let out = run("one").await;
    out.success();
    let canonical = std::fs::canonicalize(&corpus_dir).expect("corpus");
    let expected = format!(
        "no evidence of the set `tiny.jsonl` names a document of the corpus `{}` (`battery-glossary.md`, its first, is not there)",
        canonical.display()
    );
    out.stderr_contains(&expected);
    let saved = read_json(&dir.path().join("one/eval.json"));
    let warnings = saved["warnings"].as_array().expect("warnings");
    assert!(
        warnings.len() == 1
            && warnings[0]
                .as_str()
                .is_some_and(|w| w.starts_with(&expected)),
        "{saved}"
    );
    assert!(!question(&saved, "x1")["verdict"].is_null(), "{saved}");

    write("cells.md");
    let out = run("two").await;
    out.success();
    assert!(
        !out.stderr.contains("no evidence of the set"),
        "{}",
        out.stderr
    );
    assert_eq!(
        read_json(&dir.path().join("two/eval.json"))["warnings"],
        json!([])
    );
}

/// `--reports DIR`: nothing runs; reports other systems wrote are scored by the same rules,
/// their citations the addresses they link (a page of the corpus site as the file it serves);
/// a question left without a report is named on stderr and the exit is 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reports_another_system_wrote_are_scored_by_the_same_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let set = dir.path().join("set.jsonl");
    std::fs::write(
        &set,
        [
            json!({"id": "q1", "question": "How many cycles do sodium-ion cells last?",
                   "answers": ["3000 cycles"], "evidence": ["sodium.md"]}),
            json!({"id": "q2", "question": "What energy density do LFP cells reach?",
                   "answers": ["170 Wh/kg"], "evidence": ["lfp.md"]}),
            json!({"id": "q3", "question": "What is the price of cobalt?", "answers": [],
                   "evidence": []}),
        ]
        .map(|q| q.to_string())
        .join("\n"),
    )
    .expect("set");
    let reports = dir.path().join("peer");
    std::fs::create_dir_all(&reports).expect("reports dir");
    // One style cites inline, another by number with a list of sources at the end.
    std::fs::write(
        reports.join("q1.md"),
        "# Sodium-ion cycle life\n\nSodium-ion cells last about 3000 cycles \
         ([sodium](http://127.0.0.1:9/corpus/sodium.md)).\n",
    )
    .expect("q1");
    std::fs::write(
        reports.join("q2.md"),
        "LFP cells keep 55 percent of their capacity at -20 °C [1].\n\n## Sources\n\n\
         [1] http://127.0.0.1:9/corpus/cold.md\n",
    )
    .expect("q2");
    std::fs::write(
        reports.join("q3.meta.json"),
        r#"{"status": "timeout", "seconds": 600}"#,
    )
    .expect("q3 meta");
    let out = dir.path().join("scored");
    let run = support::researchflow()
        .arg("eval")
        .arg(&set)
        .arg("--reports")
        .arg(&reports)
        .args([
            "--site",
            "http://127.0.0.1:9/corpus/",
            "--json",
            "--out-dir",
        ])
        .arg(&out)
        .run()
        .await;
    run.code(1)
        .stderr_contains("question `q3` (timeout): no report");
    let eval = run.stdout_json();
    let q = |i: usize| &eval["questions"][i];
    assert_eq!(q(0)["verdict"], "right", "{eval:#}");
    assert_eq!(q(0)["citation_precision"], 1.0);
    assert_eq!(q(1)["verdict"], "wrong");
    assert_eq!(q(1)["cited"], json!(["cold.md"]));
    assert_eq!(q(1)["citation_precision"], 0.0);
    assert_eq!(
        (q(2)["reported"].clone(), q(2)["seconds"].clone()),
        (json!(false), json!(600.0))
    );
    assert_eq!(eval["totals"]["strict"]["right"], 1);
    assert_eq!(
        read_json(&out.join("eval.json")),
        eval,
        "eval.json is what was printed"
    );
    // A record that is not one is refused, naming the file.
    std::fs::write(reports.join("q3.meta.json"), r#"{"seconds": "ten"}"#).expect("bad meta");
    support::researchflow()
        .arg("eval")
        .arg(&set)
        .arg("--reports")
        .arg(&reports)
        .run()
        .await
        .code(2)
        .stderr_contains("q3.meta.json");
}

/// `eval` of the reports `system` left in the recorded peers' run `fixture` (under
/// `fixtures/peers/`), the site they read served at `site`: its exit code and JSON.
async fn score_recorded(fixture: &str, system: &str, site: &str) -> (i32, Value) {
    let recorded = root().join("fixtures/peers").join(fixture);
    let out = tempfile::tempdir().expect("tempdir");
    let run = support::researchflow()
        .arg("eval")
        .arg(recorded.join("set.jsonl"))
        .arg("--reports")
        .arg(recorded.join(system))
        .args(["--site", site, "--json", "--out-dir"])
        .arg(out.path())
        .run()
        .await;
    (run.status, run.stdout_json())
}

/// The verdicts as [`verdicts`] gives them.
const RIGHT: &str = "\"right\"";
const WRONG: &str = "\"wrong\"";
const ABSTAINED: &str = "\"abstained\"";
const NO_REPORT: &str = "null";

/// Each question's verdict (`null` where there was no report to judge).
fn verdicts(eval: &Value) -> Vec<String> {
    let questions = eval["questions"].as_array().expect("questions");
    questions.iter().map(|q| q["verdict"].to_string()).collect()
}

/// The reports scripts/bench-peers.sh recorded on its first run (SmolLM2 135M, three questions,
/// `fixtures/peers/smollm2-2026-12-05`), scored again: researchflow's degraded reports say so
/// and abstain, local-deep-research's state wrong answers citing the site's pages, GPT
/// Researcher left none; its scores, as the book's table gives them (`docs/src/benchmarks.md`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_peers_recorded_reports_score_as_the_book_says() {
    let score = |system| score_recorded("smollm2-2026-12-05", system, "http://127.0.0.1:39185/");
    let (code, ours) = score("researchflow").await;
    assert_eq!(code, 0);
    assert_eq!(verdicts(&ours), [ABSTAINED; 3], "{ours:#}");
    assert_eq!(ours["totals"]["citation_precision"], 0.5);
    let (code, ldr) = score("ldr").await;
    assert_eq!(code, 0);
    assert_eq!(verdicts(&ldr), [WRONG; 3], "{ldr:#}");
    let cited = ldr["questions"][0]["cited"].as_array().expect("cited");
    assert!(
        cited.contains(&json!("cycle-life-and-degradation.md")),
        "{cited:?}"
    );
    let (code, gptr) = score("gpt-researcher").await;
    assert_eq!(code, 1, "no report: named on stderr, exit 1");
    assert_eq!(gptr["questions"][0]["status"], "failed (exit 1)");
    assert_eq!(gptr["totals"]["strict"]["abstained"], 0);
}

/// The second run's reports (Qwen2.5-Coder 1.5B, b01, d02 and b06,
/// `fixtures/peers/qwen2.5-coder-1.5b-2026-12-06`), scored again as the book's table gives
/// them: local-deep-research's b01 opens "According to [1], the state of charge ... refers to
/// how full a battery is": the citation opening the sentence attributes what follows, so that
/// is its statement, and right. researchflow timed out on b01 and b06 and said its d02 report
/// was no answer; GPT Researcher invented a reference on b01, read no page on d02 and opened
/// b06 with "This report provides a comprehensive analysis of the average price ... in 2015"
/// on the line under `## Introduction`: a statement that does not say the price is not
/// given, so wrong for a question without an answer (a heading is a block of its own).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_second_peers_run_scores_as_the_book_says() {
    let score = |system| {
        score_recorded(
            "qwen2.5-coder-1.5b-2026-12-06",
            system,
            "http://127.0.0.1:46187/",
        )
    };
    let (_, ldr) = score("ldr").await;
    assert_eq!(verdicts(&ldr), [RIGHT, WRONG, WRONG], "{ldr:#}");
    let leading = ldr["questions"][0]["leading_statement"].as_str();
    assert!(
        leading.is_some_and(|l| l.starts_with("According to [1], the state of charge")
            && l.ends_with("current capacity.")),
        "{leading:?}"
    );
    let (_, ours) = score("researchflow").await;
    assert_eq!(
        verdicts(&ours),
        [NO_REPORT, ABSTAINED, NO_REPORT],
        "{ours:#}"
    );
    let statuses: Vec<&Value> = ours["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| &q["status"])
        .collect();
    assert_eq!(statuses, ["timeout", "failed (exit 1)", "timeout"]);
    let (code, gptr) = score("gpt-researcher").await;
    assert_eq!(code, 1, "d02 left no report");
    assert_eq!(verdicts(&gptr), [WRONG, NO_REPORT, WRONG], "{gptr:#}");
    let leading = gptr["questions"][2]["leading_statement"].as_str();
    assert!(
        leading.is_some_and(|l| l.starts_with("This report provides")),
        "{leading:?}"
    );
    let cited = gptr["questions"][0]["cited"].as_array().expect("cited");
    assert!(
        cited.contains(&json!("https://www.example.com")),
        "{cited:?}"
    );
}

/// The fourth run's reports (Qwen2.5-Coder 1.5B, the default six questions, every system at
/// its quickest depth, `fixtures/peers/qwen2.5-coder-1.5b-2026-12-06-six`), scored again as
/// the book's table gives them. local-deep-research's b01 opens "According to [1], [2], and
/// [3], the state of charge ... refers to how full a battery is": a list of markers opens the
/// sentence as one does, so that is its statement, and right. researchflow's d02 states the
/// right limit citing pages that do not give it, and its b03 names the right sensors citing
/// nothing: both runs ended degraded, so both abstain. GPT Researcher read no page on d02 and
/// l01 and left no report. researchflow's run of its own after the change is scored too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fourth_peers_run_scores_as_the_book_says() {
    let score = |system| {
        score_recorded(
            "qwen2.5-coder-1.5b-2026-12-06-six",
            system,
            "http://127.0.0.1:41977/",
        )
    };
    let (code, ours) = score("researchflow").await;
    assert_eq!(code, 0);
    assert_eq!(
        verdicts(&ours),
        [RIGHT, ABSTAINED, WRONG, WRONG, WRONG, ABSTAINED],
        "{ours:#}"
    );
    let (_, ldr) = score("ldr").await;
    assert_eq!(
        verdicts(&ldr),
        [RIGHT, WRONG, WRONG, WRONG, WRONG, RIGHT],
        "{ldr:#}"
    );
    let leading = ldr["questions"][0]["leading_statement"].as_str();
    assert!(
        leading.is_some_and(|l| l.starts_with("According to [1], [2], and [3], the state")),
        "{leading:?}"
    );
    let (code, gptr) = score("gpt-researcher").await;
    assert_eq!(code, 1, "d02 and l01 left no report");
    assert_eq!(
        verdicts(&gptr),
        [WRONG, NO_REPORT, WRONG, WRONG, NO_REPORT, WRONG],
        "{gptr:#}"
    );
    let precision = |e: &Value| e["totals"]["citation_precision"].as_f64().unwrap_or(-1.0);
    assert!(precision(&ldr) > precision(&ours) && precision(&ours) > precision(&gptr));

    // researchflow again, in a run of its own, its final writer reading the searches through
    // their numbered sources only: d02 cites the page that gives the limit and is right; b01
    // and b03 state the right answer citing nothing, and abstain.
    let (_, sources) = score_recorded(
        "qwen2.5-coder-1.5b-2026-12-06-six",
        "researchflow-sources",
        "http://127.0.0.1:43355/",
    )
    .await;
    assert_eq!(
        verdicts(&sources),
        [ABSTAINED, RIGHT, ABSTAINED, WRONG, WRONG, ABSTAINED],
        "{sources:#}"
    );
    assert!(precision(&sources) > precision(&ldr), "{sources:#}");
}

/// researchflow's, local-deep-research's and GPT Researcher's reports of the recorded run
/// `fixture` (its site served at `site`) scored again, each system's verdicts asserted to be
/// `expected`'s: their exit codes and JSON, in that order.
async fn scored_run(fixture: &str, site: &str, expected: [[&str; 6]; 3]) -> [(i32, Value); 3] {
    let mut scored = Vec::new();
    for (system, want) in ["researchflow", "ldr", "gpt-researcher"]
        .into_iter()
        .zip(expected)
    {
        let (code, eval) = score_recorded(fixture, system, site).await;
        assert_eq!(verdicts(&eval), want, "{system}: {eval:#}");
        scored.push((code, eval));
    }
    scored.try_into().expect("three systems")
}

/// Whether researchflow cites better than local-deep-research, and that better than GPT
/// Researcher ([`scored_run`]'s order).
fn cites_in_order(scored: &[(i32, Value); 3]) -> bool {
    let precision = |e: &Value| e["totals"]["citation_precision"].as_f64().unwrap_or(-1.0);
    let [ours, ldr, gptr] = scored.each_ref().map(|(_, e)| precision(e));
    ours > ldr && ldr > gptr
}

/// The fifth run (the same model and questions; researchflow's last planning round asked
/// with the finalising prompt, its analyses shown 4,000 characters of passages): researchflow
/// and local-deep-research right on two each, researchflow citing best; b03's report restates
/// the question before its answer, and the answer is what leads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fifth_peers_run_scores_as_the_book_says() {
    let scored = scored_run(
        "qwen2.5-coder-1.5b-2026-12-06-fifth",
        "http://127.0.0.1:36681/",
        [
            [WRONG, RIGHT, WRONG, WRONG, WRONG, RIGHT],
            [RIGHT, WRONG, WRONG, WRONG, WRONG, RIGHT],
            [RIGHT, NO_REPORT, WRONG, WRONG, NO_REPORT, WRONG],
        ],
    )
    .await;
    let [(code, ours), _, (gptr_code, _)] = &scored;
    assert_eq!(*code, 0);
    let b03 = ours["questions"][5]["leading_statement"].as_str();
    assert!(
        b03.is_some_and(|l| l.starts_with("According to [1], modern battery packs add gas")),
        "{b03:?}"
    );
    assert_eq!(ours["totals"]["tokens"], 29_987);
    assert_eq!(*gptr_code, 1, "d02 and l01 left no report");
    assert!(cites_in_order(&scored));
}

/// The sixth run (the same model and questions, after the uncited mark and the figure rule):
/// researchflow right on two (as in the fifth), local-deep-research on one, GPT Researcher on
/// none; researchflow cites best. Its tokens rose from 29,987 to 41,150: d04's final report ran
/// into the 300 s call timeout and was asked again, and b03's analysis was cut off at its token
/// limit and asked for a shorter one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sixth_peers_run_scores_as_the_book_says() {
    let scored = scored_run(
        "qwen2.5-coder-1.5b-2026-12-06-sixth",
        "http://127.0.0.1:46559/",
        [
            [WRONG, RIGHT, WRONG, WRONG, WRONG, RIGHT],
            [WRONG, WRONG, WRONG, WRONG, WRONG, RIGHT],
            [WRONG, NO_REPORT, WRONG, WRONG, NO_REPORT, WRONG],
        ],
    )
    .await;
    let [(code, ours), _, (gptr_code, _)] = &scored;
    assert_eq!(*code, 0);
    assert_eq!(ours["totals"]["tokens"], 41_150);
    assert_eq!(*gptr_code, 1, "d02 and l01 left no report");
    assert!(cites_in_order(&scored));
}
