//! What a workflow writes to a stderr that is not a terminal (the runner's stderr is a pipe):
//! plain log lines, no progress display, no ANSI escape whether `NO_COLOR` is set or not, and
//! text from servers and models escaped, never written raw. And what `workflow`, `batch` and
//! `eval` show on a real terminal (a pseudo-terminal, `support::pty`): one progress display,
//! the log kept to the batch's own lines, a short summary at the end; JSON on a piped stdout.
//! (`worker` on a terminal is in `tests/it/queue.rs`, beside its PostgreSQL server.)

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::support::fixtures::{fixture, offline};
use crate::support::scenario::{
    Agent, Setup, agent, final_over, one_search_then_final, read_json, scripted, searches_round,
    task_title,
};
use crate::support::{Fault, MockLlm, Reply, Terminal};

/// A title-setting terminal escape (OSC 0, ended by BEL), as a hostile server would send it.
const HOSTILE: &str = "\x1b]0;pwned\x07";
/// The same, as a log line must show it.
const HOSTILE_ESCAPED: &str = "\\u{1b}]0;pwned\\u{7}";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_stderr_gets_no_ansi_escape_with_or_without_no_color() {
    for no_color in [false, true] {
        let llm = MockLlm::start().await;
        scripted(&llm, one_search_then_final());
        // The planner's first call fails once, so a warning inside a span is logged too.
        llm.push(Reply::fault(Fault::server_error(503)));
        let s = Setup::new(&llm, None);
        let cmd = s.query("How do batteries age?").arg("-v");
        let cmd = match no_color {
            true => cmd.env("NO_COLOR", "1"),
            false => cmd.env_remove("NO_COLOR"),
        };
        let out = cmd.run().await;
        out.success()
            .stderr_contains("WARN")
            .stderr_contains("planning{round=1}")
            .stderr_contains("task b started: Only search")
            .stderr_contains("[planning] USER_INPUT");
        assert!(
            !out.stderr.contains('\x1b'),
            "NO_COLOR set: {no_color}; stderr has an ANSI escape:\n{:?}",
            out.stderr
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_escape_in_an_error_body_reaches_the_log_only_escaped() {
    let llm = MockLlm::start().await;
    let round = Arc::new(AtomicUsize::new(0));
    let body = json!({"error": {"message": "boom"}})
        .to_string()
        .replace("boom", &format!("boom {HOSTILE}"));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner if round.fetch_add(1, Ordering::SeqCst) == 0 => {
            Reply::json(&searches_round(&["Doomed", "Fine"]))
        }
        Agent::Planner => Reply::json(&final_over("c:summary")),
        Agent::Analysis if task_title(req) == "Doomed" => Reply::fault(Fault::status(500, &body)),
        Agent::Final => Reply::content("Report written."),
        _ => Reply::json(&json!({"summary": "S", "analysis": "A"})),
    });
    let s = Setup::new(&llm, None);
    // The question too, echoed in the multi-line `[planning] USER_INPUT` lines with `-v`.
    let out = s.query(&format!("Q{HOSTILE}?")).arg("-v").run().await;
    out.success().stderr_contains("[planning] USER_INPUT");
    let failed = out
        .stderr
        .lines()
        .find(|l| l.contains("task b failed"))
        .unwrap_or_else(|| panic!("no `task b failed` line in:\n{}", out.stderr));
    assert!(failed.contains(HOSTILE_ESCAPED), "{failed}");
    assert!(
        out.stderr
            .lines()
            .any(|l| l.contains("retry 1/3") && l.contains(HOSTILE_ESCAPED)),
        "{}",
        out.stderr
    );
    for raw in ['\x1b', '\x07'] {
        assert!(
            !out.stderr.contains(raw),
            "stderr has a raw {raw:?}:\n{:?}",
            out.stderr
        );
    }
}

/// The first `n` questions of the shipped evaluation set (`fixtures/eval/batteries.jsonl`),
/// which the offline engine answers from `fixtures/corpus`.
fn set_lines(n: usize) -> Vec<Value> {
    std::fs::read_to_string(fixture("eval/batteries.jsonl"))
        .expect("the evaluation set")
        .lines()
        .filter(|l| l.starts_with('{'))
        .take(n)
        .map(|l| serde_json::from_str(l).expect("a set line"))
        .collect()
}

/// A folder with `questions.txt`: the first `n` questions of the set, one a line.
fn batch_folder(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let lines: Vec<String> = set_lines(n)
        .iter()
        .map(|q| q["question"].as_str().expect("question").to_string())
        .collect();
    std::fs::write(dir.path().join("questions.txt"), lines.join("\n")).expect("questions");
    dir
}

/// The log lines at level INFO in what a terminal or a pipe received.
fn info_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| l.contains(" INFO ")).collect()
}

/// Issue 28 item 9: a batch on a terminal drew no display and logged a dozen lines for each
/// question (522 for 40).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_on_a_terminal_shows_one_display_few_lines_and_a_summary() {
    let dir = batch_folder(4);
    let out = offline(
        dir.path(),
        &["batch", "questions.txt", "--out-dir", "out", "--jobs", "2"],
    )
    .on_terminal(Terminal::Both)
    .run()
    .await;
    out.success();
    let screen = &out.terminal;
    assert!(screen.contains("/4 questions done"), "{screen}");
    assert!(screen.contains(" running · "), "{screen}");
    // The index, the batch's start, and one line as each question ends: no run's own lines.
    let info = info_lines(screen);
    assert!(
        info.len() <= 4 + 2,
        "{} info lines:\n{}",
        info.len(),
        info.join("\n")
    );
    assert_eq!(
        info.iter()
            .filter(|l| l.contains(": completed in "))
            .count(),
        4,
        "{screen}"
    );
    assert!(!screen.contains("task b started"), "{screen}");
    let out_dir = std::fs::canonicalize(dir.path().join("out")).expect("out dir");
    assert!(
        screen.contains("4 questions: 4 completed · "),
        "no summary:\n{screen}"
    );
    for line in [
        format!("manifest  {}", out_dir.join("batch.json").display()),
        format!("index     {}", out_dir.join("index.html").display()),
        format!("reports   {}/<name>.report.md", out_dir.display()),
    ] {
        assert!(screen.contains(&line), "no `{line}` in:\n{screen}");
    }
    assert!(
        !screen.contains("\"manifest\""),
        "JSON on a terminal:\n{screen}"
    );
    assert_eq!(
        read_json(&out_dir.join("batch.json"))["items"][3]["status"],
        "completed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_prints_json_on_a_piped_stdout_and_with_json_on_a_terminal() {
    let dir = batch_folder(2);
    let args = ["batch", "questions.txt", "--out-dir", "out"];
    let out = offline(dir.path(), &args)
        .on_terminal(Terminal::Stderr)
        .run()
        .await;
    out.success();
    assert_eq!(out.stdout_json()["counts"]["completed"], 2);
    assert!(out.terminal.contains("questions done"), "{}", out.terminal);

    let out = offline(dir.path(), &[&args[..], &["--json"]].concat())
        .on_terminal(Terminal::Both)
        .run()
        .await;
    out.success();
    let screen = out.terminal.replace("\r\n", "\n");
    let json = &screen[screen.find("{\n").expect("JSON")..];
    let value: Value = serde_json::from_str(json.trim_end()).expect("one JSON object");
    assert_eq!(value["counts"]["completed"], 2, "{screen}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_piped_batch_logs_a_line_per_question_start_and_end_and_v_brings_the_runs_lines_back() {
    let dir = batch_folder(2);
    let out = offline(dir.path(), &["batch", "questions.txt", "--out-dir", "out"])
        .run()
        .await;
    out.success();
    assert!(!out.stderr.contains('\x1b'), "{:?}", out.stderr);
    let info = info_lines(&out.stderr);
    assert_eq!(
        info.iter().filter(|l| l.ends_with(" starts")).count(),
        2,
        "{}",
        out.stderr
    );
    assert_eq!(
        info.iter()
            .filter(|l| l.contains(": completed in "))
            .count(),
        2,
        "{}",
        out.stderr
    );
    assert_eq!(info.len(), 2 + 4, "{}", out.stderr);

    let out = offline(
        dir.path(),
        &["batch", "questions.txt", "--out-dir", "again", "-v"],
    )
    .run()
    .await;
    out.success().stderr_contains("task b started");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_on_a_terminal_shows_one_display_the_table_and_where_its_files_are() {
    let dir = tempfile::tempdir().expect("tempdir");
    let set: Vec<String> = set_lines(3).iter().map(Value::to_string).collect();
    std::fs::write(dir.path().join("set.jsonl"), set.join("\n")).expect("set");
    let out = offline(dir.path(), &["eval", "set.jsonl", "--out-dir", "ev"])
        .on_terminal(Terminal::Both)
        .run()
        .await;
    out.success();
    let screen = &out.terminal;
    assert!(screen.contains("/3 questions done"), "{screen}");
    assert!(screen.contains("| b01 |"), "no table:\n{screen}");
    let info = info_lines(screen);
    assert!(
        info.len() <= 3 + 2,
        "{} info lines:\n{}",
        info.len(),
        info.join("\n")
    );
    let ev = std::fs::canonicalize(dir.path().join("ev")).expect("out dir");
    for line in [
        "3 questions: 3 completed · ".to_string(),
        format!("evaluation  {}", ev.join("eval.json").display()),
        format!("manifest    {}", ev.join("batch.json").display()),
    ] {
        assert!(screen.contains(&line), "no `{line}` in:\n{screen}");
    }
}

/// Issue 28 item 18: the display named "planning round 3" in a run of two rounds, between
/// its second round (which planned the final summary) and the final summary's start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_on_a_terminal_names_no_round_past_its_last() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (n, q) in set_lines(3).iter().enumerate() {
        let question = q["question"].as_str().expect("question");
        let plan = format!("w{n}.json");
        let out = offline(
            dir.path(),
            &["workflow", "--query", question, "--out", &plan],
        )
        .on_terminal(Terminal::Stderr)
        .run()
        .await;
        out.success();
        let rounds = read_json(&dir.path().join(&plan))["rounds"]
            .as_u64()
            .expect("rounds");
        let screen = &out.terminal;
        assert!(screen.contains("tasks done"), "no display:\n{screen}");
        for (at, _) in screen.match_indices("planning round ") {
            let shown: String = screen[at + "planning round ".len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            let shown: u64 = shown.parse().expect("a round number");
            assert!(
                shown <= rounds,
                "`planning round {shown}` shown in a run of {rounds} round(s):\n{screen}"
            );
        }
    }
}

/// Issue 57 item 5: a workflow on a terminal ends with what was asked for, its answer with the
/// sources it cites and where the report is; `--json` and a pipe get the JSON object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_on_a_terminal_ends_with_its_answer_and_where_the_report_is() {
    let dir = tempfile::tempdir().expect("tempdir");
    let question = "How many cycles does an LFP cell last?";
    let args = ["workflow", "--query", question, "--out", "t.json"];
    let out = offline(dir.path(), &args)
        .on_terminal(Terminal::Both)
        .run()
        .await;
    out.success();
    let screen = out.terminal.replace("\r\n", "\n");
    let report = std::fs::read_to_string(dir.path().join("t.report.md")).expect("report");
    let answer = report
        .split("## Answer\n\n")
        .nth(1)
        .and_then(|a| a.split("\n## ").next())
        .expect("an answer section")
        .trim();
    assert!(screen.contains(answer), "{answer}\n---\n{screen}");
    let first_source = report
        .lines()
        .find(|l| l.starts_with("- [1] "))
        .expect("a source");
    assert!(
        screen.contains(&format!("Sources:\n{first_source}")),
        "{screen}"
    );
    let report_path = dir.path().join("t.report.md").display().to_string();
    assert!(
        screen.contains(&format!("Report: {report_path}")),
        "{screen}"
    );
    assert!(!screen.contains("\"totals\""), "no JSON: {screen}");

    let args = ["workflow", "--query", question, "--out", "j.json", "--json"];
    let out = offline(dir.path(), &args)
        .on_terminal(Terminal::Both)
        .run()
        .await;
    out.success();
    let screen = out.terminal.replace("\r\n", "\n");
    let json = &screen[screen.find("{\n").expect("JSON")..];
    let value: Value = serde_json::from_str(json.trim_end()).expect("one JSON object");
    let json_report = dir.path().join("j.report.md").display().to_string();
    assert_eq!(value["report"], json_report, "{screen}");
    let piped = offline(
        dir.path(),
        &["workflow", "--query", question, "--out", "p.json"],
    )
    .run()
    .await;
    assert_eq!(piped.stdout_json()["status"], "completed");
}

/// Issue 34 item 4: a task whose answer streams shows its tokens so far and their rate.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streaming_task_shows_its_tokens_and_their_rate_on_the_terminal() {
    let llm = MockLlm::start().await;
    let rounds = Arc::new(AtomicUsize::new(0));
    llm.set_handler(move |req| match agent(req) {
        Agent::Planner => {
            let round = rounds.fetch_add(1, Ordering::SeqCst);
            let answer = [searches_round(&["Slow one"]), final_over("b:summary")];
            Reply::json(&answer[round.min(1)])
        }
        // 30 pieces, 60 ms apart: the display (redrawn every 120 ms) sees it come.
        Agent::Analysis => Reply::content(&format!(
            "{{\"summary\": \"{}\", \"analysis\": \"A\"}}",
            "word ".repeat(30).trim_end()
        ))
        .pace(std::time::Duration::from_millis(60)),
        _ => Reply::content("Report written."),
    });
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").on_terminal(Terminal::Stderr).run().await;
    out.success();
    let screen = &out.terminal;
    assert!(
        screen.contains(" tok ") && screen.contains("/s"),
        "no tokens shown:\n{screen}"
    );
}

/// Issue 58 item 4: an index build that takes more than a second shows on the terminal what
/// it has done, its rate and the time left: files read, then chunks embedded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_index_build_on_a_terminal_shows_its_progress() {
    let dir = tempfile::tempdir().expect("tempdir");
    let model = crate::support::fixtures::embedding_model();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).expect("corpus");
    // About 60 chunks: several seconds at today's 14 chunks a second, over one at 40.
    for n in 0..20 {
        let text: String = (0..24)
            .map(|i| {
                format!(
                    "Cell {n} lasted {} cycles in test run {i} of the lab. ",
                    1000 + i
                )
            })
            .collect();
        std::fs::write(
            corpus.join(format!("cell-{n}.md")),
            format!("# Cell {n}\n\n{text}\n"),
        )
        .expect("document");
    }
    let args = [
        "workflow",
        "--query",
        "How long do LFP cells last?",
        "--out",
        "t.json",
    ];
    let out = crate::support::fixtures::offline_over(dir.path(), &corpus, &args)
        .arg("--meaning")
        .arg(&model)
        .on_terminal(Terminal::Stderr)
        .timeout(std::time::Duration::from_secs(240))
        .run()
        .await;
    out.success();
    let screen = &out.terminal;
    assert!(screen.contains("embedding the corpus: "), "{screen}");
    assert!(screen.contains(" chunks · "), "{screen}");
    assert!(screen.contains("/s · about "), "{screen}");

    // Opened again, nothing to read or embed, under a second: no index line.
    let args = [
        "workflow",
        "--query",
        "How long do LFP cells last?",
        "--out",
        "u.json",
    ];
    let again = crate::support::fixtures::offline_over(dir.path(), &corpus, &args)
        .on_terminal(Terminal::Stderr)
        .run()
        .await;
    again.success();
    assert!(
        !again.terminal.contains("indexing the corpus"),
        "{}",
        again.terminal
    );
}
