//! What a workflow writes to a stderr that is not a terminal (the runner's stderr is a pipe):
//! plain log lines, no progress display, no ANSI escape whether `NO_COLOR` is set or not, and
//! text from servers and models escaped, never written raw.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use support::scenario::{
    Agent, Setup, agent, one_search_then_final, plan_answer, scripted, task_title,
};
use support::{Fault, MockLlm, Reply};

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
        Agent::Planner if round.fetch_add(1, Ordering::SeqCst) == 0 => Reply::json(&plan_answer(
            false,
            json!([
                {"title": "Doomed", "type": "search", "p_node": "a:info"},
                {"title": "Fine", "type": "search", "p_node": "a:info"}
            ]),
            json!(["NEW1:summary", "NEW2:summary"]),
        )),
        Agent::Planner => Reply::json(&plan_answer(
            true,
            json!([{"title": "Final", "type": "summary", "p_node": "c:summary"}]),
            json!([]),
        )),
        Agent::Analysis if task_title(req) == "Doomed" => Reply::fault(Fault::status(500, &body)),
        Agent::Final => Reply::content("Report."),
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
