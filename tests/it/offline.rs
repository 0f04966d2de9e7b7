//! Research without a model: `workflow --offline` over a local corpus (the offline engine),
//! the local search provider and its index, and what happens without any model configured.
//! The corpus is `fixtures/corpus/`, with the questions of `fixtures/corpus_questions.json`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use researchflow::search::local::LocalIndex;
use serde_json::{Value, json};

use crate::support;
use crate::support::fixtures::{copy_corpus, corpus, fixture};
use crate::support::scenario::{Agent, agent, events_of, read_json, read_ndjson};
use crate::support::{MockLlm, Reply, researchflow};

fn questions() -> Vec<Value> {
    let all = read_json(&fixture("corpus_questions.json"));
    all["questions"].as_array().cloned().unwrap_or_default()
}

/// A working folder with its own index folder, so no test touches the user's cache.
struct Offline {
    dir: tempfile::TempDir,
}

impl Offline {
    fn new() -> Offline {
        Offline {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn index(&self) -> PathBuf {
        self.path().join("index")
    }

    fn run(&self, corpus: &Path, question: &str, out: &str) -> support::bin::Cmd {
        researchflow()
            .current_dir(self.path())
            .args(["workflow", "--offline", "--corpus"])
            .arg(corpus)
            .arg("--index-dir")
            .arg(self.index())
            .args(["--query", question, "--out", out])
    }

    fn plan(&self, out: &str) -> Value {
        read_json(&self.path().join(out))
    }

    fn events(&self, out: &str) -> Vec<Value> {
        read_ndjson(&self.path().join(out.replace(".json", ".events.ndjson")))
    }
}

/// The final node of a plan.
fn final_node(plan: &Value) -> Value {
    plan["nodes"]
        .as_array()
        .and_then(|n| n.iter().find(|n| n["batch"] == -1).cloned())
        .expect("a final node")
}

/// The report's quoted sentences with the source number each cites: the answer's (one
/// paragraph of `sentence [n]` quotes, or a comparison's `- **Aspect.** sentence [n]` lines)
/// and the findings' (one `- sentence [n]` each).
fn quotes(summary: &str) -> Vec<(String, usize)> {
    let answer = summary
        .split("## Answer\n\n")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .filter(|line| !line.starts_with("- "));
    let bullets = summary.lines().filter_map(|l| l.strip_prefix("- "));
    let mut out = Vec::new();
    for line in answer.into_iter().chain(bullets) {
        let unlabelled = line.strip_prefix("**").and_then(|l| l.split_once(".** "));
        let mut rest = unlabelled.map_or(line, |(_, quoted)| quoted);
        while let Some(open) = rest.find(" [") {
            let Some(close) = rest[open..].find(']').map(|c| open + c) else {
                break;
            };
            match rest[open + 2..close].parse() {
                Ok(n) => out.push((rest[..open].trim().to_string(), n)),
                Err(_) => break,
            }
            rest = &rest[close + 1..];
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_offline_run_quotes_only_what_its_cited_documents_say() {
    let o = Offline::new();
    let q = "How do solid-state batteries compare with lithium-ion?";
    let out = o.run(&corpus(), q, "run/p.json").run().await;
    out.success();
    assert_eq!(out.stdout_json()["status"], "completed");
    let plan = o.plan("run/p.json");
    let fin = final_node(&plan);
    assert_eq!(fin["status"], "completed");
    // Every cited sentence is a quote, so the claim check supports it: the run stands.
    let claims = fin["claims"].as_array().expect("claims");
    assert!(!claims.is_empty(), "{fin}");
    assert!(
        claims
            .iter()
            .all(|c| c["by"] == "quote" && c["supported"] == true),
        "{claims:?}"
    );
    assert_eq!(out.stdout_json()["answered"], true);
    let searches = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter(|n| n["type"] == "search")
        .count();
    assert!((1..=3).contains(&searches));
    let report = std::fs::read_to_string(o.path().join("run/p.report.md")).expect("report");
    assert!(report.contains("without a language model"), "{report}");
    assert!(
        report.contains("](file://"),
        "corpus documents are links: {report}"
    );

    let summary = fin["summary"].as_str().expect("summary");
    let quoted = quotes(summary);
    assert!(quoted.len() >= 4, "{summary}");
    // An answer first, then findings under a direction; sources numbered without gaps, each
    // one cited.
    let answer = summary.find("\n## Answer\n").expect("an answer");
    let findings = summary
        .find("\n## Findings\n\n### ")
        .expect("findings by direction");
    assert!(answer < findings, "{summary}");
    // The README's question compares: the answer goes aspect by aspect, one line each, with
    // the figures the corpus gives for both chemistries.
    let answered = &summary[answer..findings];
    for figure in ["270 Wh/kg", "400 Wh/kg", "1000 cycles", "1500 cycles"] {
        assert!(answered.contains(figure), "{figure}: {answered}");
    }
    for aspect in ["- **Energy density.** ", "- **Lifetime.** "] {
        assert!(answered.contains(aspect), "{aspect}: {answered}");
    }
    assert!(
        !answered.contains("compare a finished product with a promise"),
        "{answered}"
    );
    let sources = fin["sources"].as_array().expect("sources").len();
    let numbers: BTreeSet<usize> = quoted.iter().map(|(_, n)| *n).collect();
    assert_eq!(numbers, (1..=sources).collect(), "{summary}");
    let sentences: BTreeSet<&str> = quoted.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        sentences.len(),
        quoted.len(),
        "a sentence quoted twice: {summary}"
    );
    let (index, _) = LocalIndex::open(&corpus(), Some(&o.index())).expect("index");
    for (sentence, n) in quoted {
        let url = fin["sources"][n - 1]["url"]
            .as_str()
            .expect("a cited source");
        assert!(url.starts_with("file://"), "{url}");
        let doc = index
            .document(url)
            .expect("the cited document is in the corpus");
        assert!(
            doc.text.contains(&sentence),
            "[{n}] {url} does not say: {sentence}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_known_answering_documents_are_cited_for_every_test_question() {
    let o = Offline::new();
    for (i, q) in questions().iter().enumerate() {
        let question = q["question"].as_str().expect("question");
        let out_name = format!("q{i}.json");
        o.run(&corpus(), question, &out_name).run().await.success();
        let fin = final_node(&o.plan(&out_name));
        let summary = fin["summary"].as_str().unwrap_or_default();
        let cited: BTreeSet<String> = quotes(summary)
            .into_iter()
            .filter_map(|(_, n)| fin["sources"][n - 1]["url"].as_str().map(str::to_string))
            .filter_map(|u| u.rsplit('/').next().map(str::to_string))
            .collect();
        let answering: BTreeSet<&str> = q["answers"]
            .as_array()
            .expect("answers")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert!(!cited.is_empty(), "{question}: nothing cited");
        for file in &cited {
            assert!(
                answering.contains(file.as_str()),
                "{question}: {file} cited, but it is not among the answering documents {answering:?}"
            );
        }
    }
}

/// The plan without what is different every run: times and the workflow id.
fn comparable(mut plan: Value) -> Value {
    for key in ["workflow_id", "created_at", "outcome"] {
        plan.as_object_mut().map(|o| o.remove(key));
    }
    for n in plan["nodes"].as_array_mut().expect("nodes") {
        for key in ["created_at", "updated_at", "finished_at"] {
            n.as_object_mut().map(|o| o.remove(key));
        }
    }
    plan
}

/// The report without its last line, which names the plan file and the workflow id.
fn report_body(o: &Offline, out: &str) -> String {
    let report =
        std::fs::read_to_string(o.path().join(out.replace(".json", ".report.md"))).expect("report");
    report
        .lines()
        .filter(|l| !l.starts_with("_Written by researchflow from"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Five runs of one question, three tasks at a time, over a corpus where every document is
/// there twice (the same file saved in two folders): equal sentences and equal scores
/// everywhere, and a file written again between runs, so the index is updated. Every run
/// gives the same plan (times and ids aside) and the same report; once, the same sentence was
/// cited as [1] in one run and [2] in the next.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_question_five_times_gives_the_same_plan_and_report() {
    let o = Offline::new();
    let corpus = o.path().join("corpus");
    copy_corpus(&corpus.join("copy-a"));
    copy_corpus(&corpus.join("copy-b"));
    let q = "How do solid-state batteries compare with lithium-ion?";
    let mut plans = Vec::new();
    let mut reports = Vec::new();
    for run in 0..5 {
        if run == 2 {
            // The same text written again: read again, its old document deleted.
            let file = corpus.join("copy-a/solid-state-vs-lithium-ion-overview.md");
            let text = std::fs::read(&file).expect("read");
            std::fs::remove_file(&file).expect("remove");
            std::fs::write(&file, text).expect("write");
        }
        let out = format!("run{run}.json");
        o.run(&corpus, q, &out)
            .args(["--concurrency", "3"])
            .run()
            .await
            .success();
        plans.push(comparable(o.plan(&out)));
        reports.push(report_body(&o, &out));
    }
    assert_eq!(index_event(&o, "run2.json")["read"], 1);
    let quoted = quotes(reports[0].as_str());
    assert!(quoted.len() >= 4, "{}", reports[0]);
    for run in 1..5 {
        assert_eq!(plans[run], plans[0], "run {run}'s plan");
        assert_eq!(reports[run], reports[0], "run {run}'s report");
    }
}

fn index_event(o: &Offline, out: &str) -> Value {
    events_of(&o.events(out), "local_index")
        .first()
        .map(|e| (*e).clone())
        .expect("a local_index event")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_is_reused_then_updated_for_exactly_the_changed_files() {
    let o = Offline::new();
    let corpus = o.path().join("corpus");
    copy_corpus(&corpus);
    let q = "What triggers thermal runaway?";
    o.run(&corpus, q, "1.json").run().await.success();
    let first = index_event(&o, "1.json");
    assert_eq!(first["read"], 24);
    o.run(&corpus, q, "2.json").run().await.success();
    let second = index_event(&o, "2.json");
    assert_eq!(
        (second["read"].clone(), second["unchanged"].clone()),
        (json!(0), json!(24))
    );

    std::fs::write(corpus.join("new-note.md"), "# Flow batteries\n\nVanadium flow batteries store energy in liquid electrolytes kept in external tanks.\n").expect("add");
    let changed = corpus.join("battery-glossary.md");
    let text = std::fs::read_to_string(&changed).expect("read");
    std::fs::write(
        &changed,
        format!("{text}\n\nOne more sentence added to the glossary today.\n"),
    )
    .expect("change");
    std::fs::remove_file(corpus.join("cell-formats.html")).expect("remove");
    o.run(&corpus, q, "3.json").run().await.success();
    let third = index_event(&o, "3.json");
    assert_eq!(third["read"], 2, "{third}");
    assert_eq!(third["added"], 1);
    assert_eq!(third["updated"], 1);
    assert_eq!(third["removed"], 1);
    assert_eq!(third["documents"], 24);
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn odd_files_are_warnings_not_failures() {
    let o = Offline::new();
    let corpus = o.path().join("corpus");
    copy_corpus(&corpus);
    std::fs::write(corpus.join("empty.md"), "").expect("empty");
    std::fs::write(corpus.join("binary.txt"), [0u8, 159, 146, 150, 0, 1, 2, 3]).expect("binary");
    std::fs::write(
        corpus.join("latin1.txt"),
        b"Caf\xe9 batteries and their cells are discussed here at length.\n",
    )
    .expect("invalid utf-8");
    std::fs::write(
        corpus.join("huge.txt"),
        "Batteries store energy in cells. ".repeat(160_000),
    )
    .expect("5 MB");
    let outside = o.path().join("outside.md");
    std::fs::write(
        &outside,
        "# Secret\n\nThis file lives outside the corpus.\n",
    )
    .expect("outside");
    std::os::unix::fs::symlink(&outside, corpus.join("link-out.md")).expect("symlink");

    let out = o
        .run(&corpus, "How are batteries recycled?", "p.json")
        .run()
        .await;
    out.success();
    let warnings = index_event(&o, "p.json")["warnings"].to_string();
    for needle in [
        "empty.md",
        "binary.txt",
        "latin1.txt",
        "huge.txt",
        "link-out.md",
    ] {
        assert!(
            warnings.contains(needle),
            "no warning about {needle}: {warnings}"
        );
    }
    let plan = o.plan("p.json").to_string();
    assert!(
        !plan.contains("outside.md"),
        "a link leading out is not followed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_or_empty_corpus_is_a_clear_error() {
    let o = Offline::new();
    let out = o.run(&o.path().join("nope"), "Q?", "p.json").run().await;
    out.code(2);
    assert!(out.stderr.contains("nope"), "{}", out.stderr);
    std::fs::create_dir_all(o.path().join("empty")).expect("mkdir");
    let out = o.run(&o.path().join("empty"), "Q?", "p.json").run().await;
    out.code(2);
    assert!(out.stderr.contains("empty"), "{}", out.stderr);
    let out = researchflow()
        .current_dir(o.path())
        .args(["workflow", "--offline", "--query", "Q?"])
        .run()
        .await;
    out.code(2);
    assert!(out.stderr.contains("--corpus"), "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_model_the_error_names_both_ways_forward() {
    let o = Offline::new();
    let out = researchflow()
        .current_dir(o.path())
        .args(["workflow", "--query", "Q?"])
        .run()
        .await;
    out.code(2);
    assert!(
        out.stderr.contains("agent.config.example.json"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("--offline --corpus DIR"),
        "{}",
        out.stderr
    );
    assert!(!o.path().join("runs").exists(), "nothing is written");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_offline_plans_distinct_searches_from_the_corpus() {
    let o = Offline::new();
    let plan = o.path().join("p.json");
    std::fs::copy(fixture("plan_stage1.json"), &plan).expect("copy");
    let out = researchflow()
        .current_dir(o.path())
        .args(["plan", "p.json", "--offline", "--corpus"])
        .arg(corpus())
        .arg("--index-dir")
        .arg(o.index())
        .run()
        .await;
    out.success();
    let planned = out.stdout_json()["planned"].clone();
    let titles: Vec<&str> = planned
        .as_array()
        .expect("planned")
        .iter()
        .filter_map(|n| n["title"].as_str())
        .collect();
    assert_eq!(titles.len(), 3, "{titles:?}");
    assert!(
        planned
            .as_array()
            .expect("planned")
            .iter()
            .all(|n| n["type"] == "search")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_llm_workflow_with_local_search_cites_corpus_documents() {
    let llm = MockLlm::start().await;
    let round = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let n = round.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Reply::json(&if n == 0 {
                json!({"is_final": false,
                       "tasks": [{"title": "Dendrites and solid electrolytes", "type": "search", "p_node": "a:info"}],
                       "next_check_list": ["NEW1:summary"]})
            } else {
                json!({"is_final": true,
                       "tasks": [{"title": "Final", "type": "summary", "p_node": "b:summary"}],
                       "next_check_list": []})
            })
        }
        Agent::Queries => Reply::json(&json!({"queries": ["lithium dendrites solid electrolyte"]})),
        Agent::Final => Reply::content("Dendrites are suppressed by stiff electrolytes [1]."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A [1]"})),
    });
    let o = Offline::new();
    let config = json!({
        "baseURL": llm.base_url(), "model": "m",
        "search": {"provider": "local", "corpus": corpus(), "indexDir": o.index()},
        "retry": {"maxRetries": 0, "baseDelayMs": 10, "maxDelayMs": 10}
    });
    std::fs::write(o.path().join("agent.config.json"), config.to_string()).expect("config");
    let out = researchflow()
        .current_dir(o.path())
        .args([
            "workflow",
            "--query",
            "How do solid electrolytes stop dendrites?",
            "--out",
            "p.json",
        ])
        .run()
        .await;
    out.success();
    let plan = o.plan("p.json");
    let b = &plan["nodes"][1];
    let sources = b["sources"].as_array().expect("sources");
    assert!(!sources.is_empty());
    assert!(
        sources
            .iter()
            .all(|s| s["url"].as_str().unwrap_or_default().starts_with("file://"))
    );
    let analysis_request = llm
        .chat_requests()
        .into_iter()
        .find(|r| agent(r) == Agent::Analysis)
        .expect("an analysis request");
    let prompt = analysis_request.user_prompt().unwrap_or_default();
    assert!(
        prompt.contains("provider: local") && prompt.contains("dendrite"),
        "{prompt}"
    );
    let report = std::fs::read_to_string(o.path().join("p.report.md")).expect("report");
    assert!(
        report.contains("[1]") && report.contains("fixtures/corpus/"),
        "{report}"
    );
}

/// `--max-rounds 1` leaves its only round to the final summary: the run is `degraded` (nothing
/// was researched), and every place that says why says what happened: no search ran because
/// the round limit left no round for research, and which flag to raise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_rounds_1_says_the_round_limit_left_no_round_for_research() {
    let o = Offline::new();
    let out = o
        .run(&corpus(), "Why do lithium dendrites form?", "p.json")
        .args(["--max-rounds", "1"])
        .run()
        .await;
    out.code(1);
    let stdout = out.stdout_json();
    assert_eq!(stdout["status"], "degraded");
    let reason = stdout["reason"].as_str().expect("a reason").to_string();
    for needle in [
        "`--max-rounds 1`",
        "left no round for research",
        "no search ran",
        "raise `--max-rounds`",
    ] {
        assert!(reason.contains(needle), "{needle}: {reason}");
    }
    assert!(!reason.contains("planner planned no"), "{reason}");
    let plan = o.plan("p.json");
    assert_eq!(plan["outcome"]["reason"], reason.as_str());
    let searches = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .filter(|n| n["type"] == "search")
        .count();
    assert_eq!(searches, 0, "no search was planned");
    let report = std::fs::read_to_string(o.path().join("p.report.md")).expect("report");
    assert!(
        report.contains(&format!("> **Degraded run: {reason}.**")),
        "{report}"
    );
    assert!(
        !report.contains("The searches found no sentence"),
        "no search ran, so none found anything: {report}"
    );
    assert!(report.contains("no source to quote"), "{report}");
    assert!(
        out.stderr.contains("raise `--max-rounds`"),
        "{}",
        out.stderr
    );
}

/// The run flags' variables are `RESEARCHFLOW_...`; their old names (`WORKFLOW_MAX_ROUNDS`,
/// `WORKFLOW_CONCURRENCY`) are still read, and the new name wins when both are set. A round
/// limit of 1 shows in the reason; a concurrency of 0 is refused (exit 2) by whichever
/// variable was read.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_variables_are_read_by_their_new_names_before_their_old_ones() {
    let o = Offline::new();
    let question = "Why do lithium dendrites form?";
    let one_round = |vars: &[(&str, &str)], out: &str| {
        let mut cmd = o.run(&corpus(), question, out);
        for (name, value) in vars {
            cmd = cmd.env(name, value);
        }
        cmd
    };
    for (vars, out) in [
        (&[("RESEARCHFLOW_MAX_ROUNDS", "1")][..], "new.json"),
        (&[("WORKFLOW_MAX_ROUNDS", "1")][..], "old.json"),
        (
            &[
                ("RESEARCHFLOW_MAX_ROUNDS", "1"),
                ("WORKFLOW_MAX_ROUNDS", "8"),
                ("RESEARCHFLOW_CONCURRENCY", "2"),
                ("WORKFLOW_CONCURRENCY", "0"),
            ][..],
            "both.json",
        ),
    ] {
        let out = one_round(vars, out).run().await;
        out.code(1);
        let reason = out.stdout_json()["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        assert!(reason.contains("`--max-rounds 1`"), "{vars:?}: {reason}");
    }
    for vars in [
        &[("RESEARCHFLOW_CONCURRENCY", "0")][..],
        &[("WORKFLOW_CONCURRENCY", "0")][..],
        &[
            ("RESEARCHFLOW_CONCURRENCY", "0"),
            ("WORKFLOW_CONCURRENCY", "2"),
        ][..],
    ] {
        let out = one_round(vars, "refused.json").run().await;
        out.code(2);
        assert!(
            out.stderr.contains("--concurrency"),
            "{vars:?}: {}",
            out.stderr
        );
        assert!(!o.path().join("refused.json").exists());
    }
}

/// A page of 200,000 nested `<div>`s (2.2 MB) is indexed and its text quoted. Parsing it into
/// a tree took over two minutes (the tree builder's work grew with the depth at every tag);
/// the tokenizer's pass takes a fraction of a second, far inside the run's time limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_nested_200000_deep_is_indexed_and_quoted() {
    let o = Offline::new();
    let corpus = o.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    let sentence = "Deeply nested pages are indexed by one pass of the tokenizer over their tags.";
    let n = 200_000;
    let page = format!(
        "<html><head><title>Nested page</title></head><body>{}<p>{sentence}</p>{}</body></html>",
        "<div>".repeat(n),
        "</div>".repeat(n)
    );
    std::fs::write(corpus.join("deep.html"), page).expect("write");
    let out = o
        .run(&corpus, "How are deeply nested pages indexed?", "p.json")
        .run()
        .await;
    out.success();
    let index = index_event(&o, "p.json");
    assert_eq!(
        (index["read"].clone(), index["documents"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(index["warnings"], json!([]), "{index}");
    let fin = final_node(&o.plan("p.json"));
    let quoted = quotes(fin["summary"].as_str().unwrap_or_default());
    assert_eq!(quoted, [(sentence.to_string(), 1)], "{fin}");
    assert_eq!(fin["sources"][0]["title"], "Nested page");
}

/// A licence text as Debian ships them: no extension, hard-wrapped at 72 columns, paragraphs
/// indented by two spaces, a centred title.
const WRAPPED_LICENCE: &str = "\
                     THE EXAMPLE PUBLIC LICENCE
                        Version 2, June 2026

  The licences for most software are designed to take away your
freedom to share and change it.  By contrast, this licence is meant to
guarantee your freedom to share and change free software.

  Finally, any free program is threatened constantly by software
patents.  We wish to avoid the danger that redistributors of a free
program will individually obtain patent licences, in effect making the
program proprietary.  To prevent this, we have made it clear that any
patent must be licensed for everyone's free use or not licensed at all.
Such patents then cannot restrict the freedoms this licence grants to
every recipient of the program.

  1. You may copy and distribute verbatim copies of the program's
source code as you receive it, in any medium, provided that you
publish an appropriate copyright notice on each copy.
";

/// `/usr/share/common-licenses` and every source tree hold text files without an extension
/// (`COPYING`, `GPL-3`, `Apache-2.0`): they are indexed, while binaries and scripts beside
/// them are not documents and raise no warning; a page in ISO-8859-1 that says so is read in
/// it. Before, such a folder gave "no document to index".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_files_without_an_extension_and_a_latin1_page_are_indexed() {
    let o = Offline::new();
    let corpus = o.path().join("licences");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    std::fs::write(corpus.join("EPL-2"), WRAPPED_LICENCE).expect("write");
    std::fs::write(
        corpus.join("COPYING.LESSER"),
        "The lesser licence permits linking a free library with proprietary programs.\n",
    )
    .expect("write");
    let mut elf = b"\x7fELF\x02\x01\x01\0\0\0".to_vec();
    elf.extend(b"licence patent ".repeat(1000));
    std::fs::write(corpus.join("licence-tool"), elf).expect("write");
    std::fs::write(
        corpus.join("configure"),
        "#!/bin/sh\n# Checks the licence and the patent files.\necho ok\n",
    )
    .expect("write");
    std::fs::write(
        corpus.join("faq.html"),
        b"<html><head><meta charset=\"iso-8859-1\"><title>Licence FAQ \xe0 jour</title></head>\
          <body><p>A patent licence that is not free for everyone cannot be combined with \
          this licence, as the caf\xe9 example shows.</p></body></html>"
            .as_slice(),
    )
    .expect("write");
    let out = o
        .run(&corpus, "Must a patent be licensed for free use?", "p.json")
        .run()
        .await;
    out.success();
    let index = index_event(&o, "p.json");
    assert_eq!(index["documents"], 3, "{index}");
    assert_eq!(index["warnings"], json!([]), "{index}");
    let plan = o.plan("p.json");
    let urls: BTreeSet<String> = plan["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .flat_map(|n| n["sources"].as_array().cloned().unwrap_or_default())
        .filter_map(|s| s["url"].as_str().map(str::to_string))
        .collect();
    for name in ["EPL-2", "faq.html"] {
        assert!(urls.iter().any(|u| u.ends_with(name)), "{name}: {urls:?}");
    }
    let text = plan.to_string();
    assert!(
        text.contains("Licence FAQ \u{e0} jour"),
        "the declared charset"
    );
    assert!(text.contains("caf\u{e9} example"), "the declared charset");
    assert!(!text.contains('\u{fffd}'), "no replacement character");
    assert!(!text.contains("licence-tool") && !text.contains("configure"));
}

/// Hard-wrapped text is quoted by whole sentences, never by line: the licence's sentence on
/// patents comes whole (it was quoted from "patent must be licensed...", a line that says the
/// opposite of the sentence), and one that starts mid-thought ("Such patents...") comes with
/// the sentence it follows from.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hard_wrapped_text_is_quoted_by_whole_sentences() {
    let o = Offline::new();
    let corpus = o.path().join("licences");
    std::fs::create_dir_all(&corpus).expect("mkdir");
    std::fs::write(corpus.join("EPL-2"), WRAPPED_LICENCE).expect("write");
    std::fs::write(
        corpus.join("wrapped.txt"),
        WRAPPED_LICENCE.replace("EXAMPLE", "SAMPLE"),
    )
    .expect("write");
    let out = o
        .run(
            &corpus,
            "Can patents restrict the freedoms of this licence?",
            "p.json",
        )
        .run()
        .await;
    out.success();
    let fin = final_node(&o.plan("p.json"));
    let quoted = quotes(fin["summary"].as_str().unwrap_or_default());
    assert!(!quoted.is_empty(), "{fin}");
    let whole = "To prevent this, we have made it clear that any patent must be licensed for \
                 everyone's free use or not licensed at all.";
    assert!(quoted.iter().any(|(q, _)| q.contains(whole)), "{quoted:?}");
    let (index, _) = LocalIndex::open(&corpus, Some(&o.index())).expect("index");
    for (q, n) in &quoted {
        let first = q.chars().next().unwrap_or(' ');
        assert!(!first.is_lowercase(), "a line fragment: {q}");
        if q.contains("Such patents") {
            assert!(
                q.starts_with("To prevent this"),
                "without what it follows from: {q}"
            );
        }
        let url = fin["sources"][n - 1]["url"]
            .as_str()
            .expect("a cited source");
        let doc = index.document(url).expect("in the corpus");
        assert!(doc.text.contains(q.as_str()), "{url} does not say: {q}");
    }
}

/// A question the corpus does not answer ("the capital of France" over a corpus about
/// batteries) ended a green `completed` everywhere. It is `completed` and not answered: the
/// plan's outcome, stdout and a note on stderr say so, its view shows `not answered` instead of
/// the green status, and `--fail-on-unanswered` (or its variable) makes it exit 1; a question
/// the corpus answers is answered, and the flag changes nothing for it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_answered_nothing_is_not_answered_and_can_fail() {
    let o = Offline::new();
    let out = o
        .run(&corpus(), "What is the capital of France?", "fr.json")
        .run()
        .await;
    out.success()
        .stderr_contains("note: not answered: the report says its sources do not answer");
    let printed = out.stdout_json();
    assert_eq!(
        (printed["status"].clone(), printed["answered"].clone()),
        (json!("completed"), json!(false)),
        "{printed}"
    );
    assert_eq!(o.plan("fr.json")["outcome"]["answered"], false);
    let html = std::fs::read_to_string(o.path().join("fr.html")).expect("view");
    assert!(
        html.contains(
            r#"<span class="badge run-not_answered" id="run-status">not answered</span>"#
        ),
        "{html}"
    );
    assert!(!html.contains("badge run-completed"), "no green status");

    let failing = o
        .run(&corpus(), "What is the capital of France?", "fr2.json")
        .arg("--fail-on-unanswered")
        .run()
        .await;
    failing
        .code(1)
        .stderr_contains("error: not answered")
        .stderr_contains("--fail-on-unanswered");
    let by_variable = o
        .run(&corpus(), "What is the capital of France?", "fr3.json")
        .env("RESEARCHFLOW_FAIL_ON_UNANSWERED", "1")
        .run()
        .await;
    by_variable.code(1);

    let q = &questions()[0];
    let answered = o
        .run(
            &corpus(),
            q["question"].as_str().expect("question"),
            "ok.json",
        )
        .arg("--fail-on-unanswered")
        .run()
        .await;
    answered.success();
    assert!(
        !answered.stderr.contains("not answered"),
        "{}",
        answered.stderr
    );
    assert_eq!(answered.stdout_json()["answered"], true);
    let html = std::fs::read_to_string(o.path().join("ok.html")).expect("view");
    assert!(html.contains("badge run-completed"), "answered: green");
}

/// The same in a batch: the manifest records `answered` per question, stdout counts
/// `not_answered`, the index shows the state and counts it apart from `completed`, and
/// `--fail-on-unanswered` makes the batch exit 1.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_counts_and_shows_the_questions_it_did_not_answer() {
    let o = Offline::new();
    let q = &questions()[0];
    std::fs::write(
        o.path().join("q.txt"),
        format!(
            "{}\nWhat is the capital of France?\n",
            q["question"].as_str().expect("question")
        ),
    )
    .expect("questions");
    let batch = |dir: &str| {
        researchflow()
            .current_dir(o.path())
            .args(["batch", "q.txt", "--out-dir", dir, "--offline", "--corpus"])
            .arg(corpus())
            .arg("--index-dir")
            .arg(o.index())
    };
    let out = batch("one").run().await;
    out.success().stderr_contains("1 question(s) not answered");
    let printed = out.stdout_json();
    assert_eq!(printed["not_answered"], 1, "{printed}");
    assert_eq!(printed["counts"]["completed"], 2, "{printed}");
    let manifest = read_json(&o.path().join("one/batch.json"));
    let answered: Vec<Value> = manifest["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["answered"].clone())
        .collect();
    assert_eq!(answered, [json!(true), json!(false)], "{manifest}");
    let index = std::fs::read_to_string(o.path().join("one/index.html")).expect("index");
    assert!(
        index.contains(r#"data-status="completed" data-state="not_answered""#),
        "{index}"
    );
    assert!(
        index.contains(r#"<div data-total="not_answered"><b>1</b>"#)
            && index.contains(r#"<div data-total="completed"><b>1</b>"#),
        "{index}"
    );
    batch("two")
        .arg("--fail-on-unanswered")
        .run()
        .await
        .code(1)
        .stderr_contains("error: 1 question(s) not answered");
}

/// A batch folder whose `batch.json` is of a format this build does not know is refused,
/// naming the file and what to do, and left as it was.
#[tokio::test]
async fn a_batch_folder_of_a_newer_format_is_refused_and_left_untouched() {
    let o = Offline::new();
    std::fs::write(o.path().join("q.txt"), "What is a cathode?\n").expect("questions");
    std::fs::create_dir(o.path().join("newer")).expect("folder");
    let newer = r#"{"version": 2, "items": [], "shards": 4}"#;
    let manifest = o.path().join("newer/batch.json");
    std::fs::write(&manifest, newer).expect("manifest");
    researchflow()
        .current_dir(o.path())
        .args([
            "batch",
            "q.txt",
            "--out-dir",
            "newer",
            "--offline",
            "--corpus",
        ])
        .arg(corpus())
        .arg("--index-dir")
        .arg(o.index())
        .run()
        .await
        .code(2)
        .stderr_contains("newer/batch.json")
        .stderr_contains("format version 2")
        .stderr_contains("upgrade researchflow");
    assert_eq!(std::fs::read_to_string(&manifest).expect("kept"), newer);
}
