//! Streamed model answers (`"stream": true`) against the mock that streams as real servers do:
//! the assembled answer, the token counts, the negotiation of `stream_options` and of servers
//! that answer whole, the idle timeout (a stall is cut, a slow steady stream is not), and that
//! every cut reaches the server: the mock sees the connection closed and stops its generation
//! before the next call arrives, so that call does not wait behind an abandoned answer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::scenario::{
    Agent, Setup, agent, backed_report, events_of, final_over, node, one_search_then_final,
    requests_of, scripted, searches_round,
};
use crate::support::{MockLlm, MockSearch, Recorded, Reply, SearchKind};

/// Each round of `rounds` answers the planner in turn; sub-agents answer a JSON summary and the
/// final summary a report, each shaped by `shape` (the reply to stream, given its request).
fn answered_by(
    llm: &MockLlm,
    rounds: Vec<Value>,
    shape: impl Fn(&Recorded, Reply) -> Reply + Send + Sync + 'static,
) {
    let round = Arc::new(AtomicUsize::new(0));
    let shape = Arc::new(shape);
    llm.set_handler(move |req| {
        let reply = match agent(req) {
            Agent::Planner => {
                let i = round.fetch_add(1, Ordering::SeqCst);
                Reply::json(&rounds[i.min(rounds.len() - 1)])
            }
            Agent::Final => Reply::content("The report, streamed piece by piece."),
            _ => Reply::json(&json!({"summary": "Found it.", "analysis": "A"})),
        };
        shape(req, reply)
    });
}

fn ms(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("not a number of ms: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answers_are_streamed_assembled_and_counted_and_each_call_records_its_speed() {
    let llm = MockLlm::start().await;
    answered_by(&llm, one_search_then_final(), |_, r| {
        r.pace(Duration::from_millis(5)).usage(20, 9)
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();

    let chats = llm.chat_requests();
    assert!(chats.len() >= 4, "{}", chats.len());
    for req in &chats {
        assert_eq!(req.body["stream"], true, "{}", req.raw_body);
        assert_eq!(req.body["stream_options"], json!({"include_usage": true}));
    }
    let streams = llm.streams();
    assert_eq!(streams.len(), chats.len(), "every answer was streamed");
    assert!(
        streams
            .iter()
            .all(|s| s.completed && s.client_gone_at.is_none())
    );
    assert!(s.report().contains("The report, streamed piece by piece."));
    let plan = s.plan();
    assert_eq!(node(&plan, "b")["status"], "completed");
    assert_eq!(
        node(&plan, "b")["usage"],
        json!({"prompt_tokens": 20, "completion_tokens": 9, "total_tokens": 29}),
        "the server's counts, from the stream's last chunk"
    );
    let events = s.events();
    let streamed = events_of(&events, "llm_streamed");
    assert_eq!(
        streamed.len(),
        chats.len(),
        "one event a call: {streamed:?}"
    );
    for e in &streamed {
        assert_eq!(e["tokens"], 9, "{e}");
        assert!(ms(&e["first_token_ms"]) <= ms(&e["ms"]), "{e}");
        assert!(
            e["tokens_per_second"].as_f64().is_some_and(|r| r > 0.0),
            "{e}"
        );
    }
    assert!(events_of(&events, "http_retry").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stall_is_cut_at_idle_ms_the_server_stops_and_the_retry_is_answered() {
    let llm = MockLlm::start().await;
    let stalled = Arc::new(AtomicUsize::new(0));
    let once = stalled.clone();
    answered_by(&llm, one_search_then_final(), move |req, r| {
        let search = agent(req) == Agent::Analysis;
        match search && once.fetch_add(1, Ordering::SeqCst) == 0 {
            true => r.stall_after(2),
            false => r,
        }
    });
    let s = Setup::with_config(
        &llm,
        None,
        json!({"timeouts": {"llmMs": 20000, "idleMs": 400}}),
    );
    s.query("Q?").run().await.success();

    let events = s.events();
    let retries = events_of(&events, "http_retry");
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0]["cause"], "silent");
    let streams = llm.streams();
    let cut = streams
        .iter()
        .find(|s| !s.completed)
        .expect("the stalled stream");
    assert_eq!(cut.pieces_sent, 2);
    let gone = cut
        .client_gone_at
        .expect("the mock saw the connection closed");
    let waited = gone.duration_since(cut.started_at);
    assert!(waited >= Duration::from_millis(400), "cut after {waited:?}");
    let ended = cut.generation_ended_at.expect("the generation stopped");
    let next = &llm.chat_requests()[cut.seq + 1];
    assert!(
        ended <= next.received_at,
        "the server stopped generating before the retry arrived"
    );
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_steady_stream_longer_than_idle_ms_is_not_cut() {
    let llm = MockLlm::start().await;
    // 150 ms between pieces, idle 400 ms: each answer takes well over 400 ms in all.
    answered_by(&llm, one_search_then_final(), |_, r| {
        r.pace(Duration::from_millis(150))
    });
    let s = Setup::with_config(
        &llm,
        None,
        json!({"timeouts": {"llmMs": 20000, "idleMs": 400}}),
    );
    s.query("Q?").run().await.success();
    assert!(events_of(&s.events(), "http_retry").is_empty());
    let streams = llm.streams();
    assert!(streams.iter().all(|s| s.completed), "{streams:?}");
    let longest = streams
        .iter()
        .filter_map(|s| Some(s.generation_ended_at?.duration_since(s.started_at)))
        .max()
        .expect("streams");
    assert!(longest > Duration::from_millis(400), "{longest:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_cut_short_or_with_a_broken_event_is_asked_again_and_one_without_done_is_kept() {
    let llm = MockLlm::start().await;
    let n = Arc::new(AtomicUsize::new(0));
    let count = n.clone();
    answered_by(&llm, one_search_then_final(), move |req, r| {
        if agent(req) != Agent::Analysis {
            return r.without_done();
        }
        match count.fetch_add(1, Ordering::SeqCst) {
            0 => r.cut_after(1),
            1 => r.malformed_event_after(1),
            _ => r,
        }
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let events = s.events();
    let retries = events_of(&events, "http_retry");
    assert_eq!(retries.len(), 2, "{retries:?}");
    assert!(
        retries
            .iter()
            .all(|r| r["cause"] == "connection dropped" && r["node"] == "b"),
        "{retries:?}"
    );
    assert_eq!(n.load(Ordering::SeqCst), 3);
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
    assert!(
        s.report().contains("The report, streamed piece by piece."),
        "an answer with its finish reason and no [DONE] is whole"
    );
}

/// A server that dies mid-answer (the bench's recording proxy killed, a llama.cpp server
/// restarted) closes the connection inside the chunked body: reqwest reports it as an error
/// decoding the body, over the body error. It was taken for a malformed answer and the final
/// summary failed at once; it is a dropped connection, asked again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_mid_answer_is_asked_again() {
    let llm = MockLlm::start().await;
    let finals = Arc::new(AtomicUsize::new(0));
    let count = finals.clone();
    answered_by(&llm, one_search_then_final(), move |req, r| {
        match agent(req) {
            Agent::Final if count.fetch_add(1, Ordering::SeqCst) == 0 => r.die_after(2),
            _ => r,
        }
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let events = s.events();
    let retries = events_of(&events, "http_retry");
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0]["cause"], "connection dropped", "{retries:?}");
    assert_eq!(finals.load(Ordering::SeqCst), 2);
    assert_eq!(node(&s.plan(), "c")["status"], "completed");
    assert!(s.report().contains("The report, streamed piece by piece."));
}

/// llama-cpp-python 0.3.x ends some streamed `json_object` answers with `[DONE]` right after
/// their role: no text, no finish reason (the same request every time: a review asked four
/// times, 30 s each), and answers them whole. Before, that read as the model answering
/// nothing, and the search task failed; now the call is asked again whole, and so is every
/// later call to that server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_done_before_any_text_is_asked_again_whole() {
    let llm = MockLlm::start().await;
    answered_by(&llm, one_search_then_final(), move |req, r| {
        match agent(req) {
            Agent::Queries => {}
            // The run has sources: its report cites them.
            Agent::Final => return Reply::content(&backed_report(req)),
            _ => return r,
        }
        let queries = Reply::json(&json!({"queries": ["written by the model"]}));
        match req.body["stream"] == true {
            true => queries.done_after(0),
            false => queries,
        }
    });
    let search = MockSearch::start(SearchKind::Searxng).await;
    let s = Setup::new(&llm, Some(&search));
    s.query("Q?").run().await.success();
    assert_eq!(
        requests_of(&llm, Agent::Queries).len(),
        2,
        "the query writer asked twice"
    );
    let events = s.events();
    let retries = events_of(&events, "http_retry");
    assert_eq!(retries.len(), 1, "{retries:?}");
    assert_eq!(retries[0]["node"], "b");
    assert_eq!(retries[0]["cause"], "hollow stream");
    let negotiated = events_of(&events, "llm_negotiated");
    assert_eq!(negotiated.len(), 1, "{negotiated:?}");
    assert_eq!(negotiated[0]["refused"], "stream");
    let chats = llm.chat_requests();
    let first = chats
        .iter()
        .position(|r| agent(r) == Agent::Queries)
        .expect("the query writer");
    assert_eq!(chats[first].body["stream"], true);
    for later in &chats[first + 1..] {
        assert!(later.body.get("stream").is_none(), "{}", later.raw_body);
    }
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
    let searched = search.requests();
    assert_eq!(searched.len(), 1);
    assert_eq!(
        searched[0].query_param("q").as_deref(),
        Some("written by the model")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_stream_options_is_dropped_once_and_answers_still_stream() {
    let llm = MockLlm::start().await;
    llm.refuse_stream_options();
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let chats = llm.chat_requests();
    assert_eq!(llm.refused(), 1, "refused once, then not sent again");
    assert!(chats[0].body.get("stream_options").is_some());
    for req in &chats[1..] {
        assert_eq!(req.body["stream"], true);
        assert!(req.body.get("stream_options").is_none(), "{}", req.raw_body);
    }
    let events = s.events();
    let negotiated = events_of(&events, "llm_negotiated");
    assert_eq!(negotiated.len(), 1, "{negotiated:?}");
    assert_eq!(negotiated[0]["refused"], "stream_options");
    assert!(events_of(&events, "http_retry").is_empty());
    // Without the server's counts, the pieces and the prompt's estimate count.
    let plan = s.plan();
    let usage = &node(&plan, "b")["usage"];
    assert!(ms(&usage["completion_tokens"]) > 0, "{usage}");
    assert!(ms(&usage["prompt_tokens"]) > 0, "{usage}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_whole_is_asked_for_whole_answers_from_then_on() {
    let llm = MockLlm::start().await;
    llm.never_streams();
    scripted(&llm, one_search_then_final());
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let chats = llm.chat_requests();
    assert_eq!(chats[0].body["stream"], true);
    assert!(
        chats[1..].iter().all(|r| r.body.get("stream").is_none()),
        "learnt at the first answer"
    );
    let negotiated = events_of(&s.events(), "llm_negotiated")
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();
    assert_eq!(negotiated.len(), 1, "{negotiated:?}");
    assert_eq!(
        (&negotiated[0]["refused"], &negotiated[0]["to"]),
        (&json!("stream"), &json!("whole"))
    );
    assert_eq!(node(&s.plan(), "b")["status"], "completed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_false_in_the_config_asks_for_whole_answers() {
    let llm = MockLlm::start().await;
    scripted(&llm, one_search_then_final());
    let s = Setup::with_config(&llm, None, json!({"roles": {"search": {"stream": false}}}));
    s.query("Q?").run().await.success();
    for req in llm.chat_requests() {
        let search = matches!(agent(&req), Agent::Queries | Agent::Analysis);
        assert_eq!(req.body.get("stream").is_none(), search, "{}", req.raw_body);
    }
    assert_eq!(llm.streams().len(), llm.chat_requests().len() - 1);
}

/// A single-slot server (llama-cpp-python) whose answer stalls: the cut frees the slot at once
/// when the server stops on a disconnect, and the retry waits for the abandoned generation
/// when the server goes on with it.
async fn slot_freed_after_a_cut(keeps_generating: bool) -> (Duration, Duration) {
    let llm = MockLlm::start().await;
    llm.one_at_a_time();
    if keeps_generating {
        llm.keeps_generating();
    }
    let first = Arc::new(AtomicUsize::new(0));
    let once = first.clone();
    // The first answer comes a piece every 400 ms, slower than idleMs: it is cut at 300 ms,
    // and generating the whole of it takes 6 x 400 ms.
    answered_by(&llm, vec![final_over("a:info")], move |_, r| {
        match once.fetch_add(1, Ordering::SeqCst) {
            0 => Reply::content("one two three four five six").pace(Duration::from_millis(400)),
            _ => r,
        }
    });
    let s = Setup::with_config(
        &llm,
        None,
        json!({"timeouts": {"llmMs": 20000, "idleMs": 300}}),
    );
    s.query("Q?").run().await;
    let chats = llm.chat_requests();
    assert!(chats.len() >= 2, "{}", chats.len());
    let (cut, retry) = (&chats[0], &chats[1]);
    let log = llm.streams();
    let gone = log[0]
        .client_gone_at
        .expect("the cut closed the connection");
    let served = retry.responded_at.expect("the retry was answered");
    assert!(retry.received_at >= gone);
    (
        served.duration_since(retry.received_at),
        gone.duration_since(cut.received_at),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_cut_the_next_call_on_a_single_slot_server_does_not_wait_behind_it() {
    let (waited, _) = slot_freed_after_a_cut(false).await;
    assert!(
        waited < Duration::from_millis(1500),
        "the server stopped on the disconnect: the retry waited {waited:?}"
    );
    let (waited, _) = slot_freed_after_a_cut(true).await;
    assert!(
        waited >= Duration::from_millis(1000),
        "a server that goes on generating holds its slot: {waited:?}"
    );
}

/// Ctrl-C or SIGTERM (a terminal, cron's or systemd's stop) while an answer streams: the
/// run exits 130, and the stream is closed so the server stops generating at once.
async fn a_signal_closes_the_stream_in_flight(signal: &'static str) {
    let llm = MockLlm::start().await;
    answered_by(
        &llm,
        vec![searches_round(&["Slow"]), final_over("b:summary")],
        |req, r| match agent(req) == Agent::Analysis {
            true => Reply::content(&"word ".repeat(200)).pace(Duration::from_millis(100)),
            false => r,
        },
    );
    let s = Setup::with_config(&llm, None, json!({"timeouts": {"llmMs": 60000}}));
    let streams = llm.streams_reader();
    let out = s
        .query("Q?")
        .signal_when(signal, move || {
            streams()
                .iter()
                .any(|s| s.total_pieces == 200 && s.pieces_sent >= 3)
        })
        .run()
        .await;
    assert_eq!(out.status, 130, "SIG{signal}: {}", out.stderr);
    let log = llm.streams();
    let slow = log.iter().find(|s| s.total_pieces == 200).expect("slow");
    assert!(!slow.completed);
    let gone = slow
        .client_gone_at
        .unwrap_or_else(|| panic!("SIG{signal} closed the stream"));
    let ended = slow.generation_ended_at.expect("the generation stopped");
    assert!(ended.duration_since(gone) < Duration::from_secs(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_closes_the_stream_in_flight() {
    a_signal_closes_the_stream_in_flight("INT").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_closes_the_stream_in_flight() {
    a_signal_closes_the_stream_in_flight("TERM").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spent_time_budget_cuts_the_stream_in_flight_and_the_server_sees_it() {
    let llm = MockLlm::start().await;
    answered_by(
        &llm,
        vec![searches_round(&["Slow"]), final_over("b:summary")],
        |req, r| {
            match agent(req) == Agent::Analysis {
                // 200 pieces at 100 ms: 20 s, far past the budget and its grace.
                true => Reply::content(&"word ".repeat(200)).pace(Duration::from_millis(100)),
                false => r,
            }
        },
    );
    let s = Setup::with_config(&llm, None, json!({"timeouts": {"llmMs": 60000}}));
    let out = s
        .query("Q?")
        .args(["--max-time", "2", "--grace", "1"])
        .run()
        .await;
    let log = llm.streams();
    let slow = log.iter().find(|s| s.total_pieces == 200).expect("slow");
    let gone = slow.client_gone_at.expect("the cut closed the stream");
    let ended = slow.generation_ended_at.expect("the generation stopped");
    assert!(!slow.completed, "{slow:?}");
    assert!(ended.duration_since(gone) < Duration::from_secs(1));
    assert!(
        gone.duration_since(slow.started_at) < Duration::from_secs(10),
        "cut at the budget, not at the answer's end"
    );
    assert_eq!(node(&s.plan(), "b")["status"], "failed", "{}", out.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_without_token_counts_is_counted_by_its_pieces_as_llama_cpp_python_needs() {
    let llm = MockLlm::llama_cpp_python().await;
    let analysis = json!({"summary": "Solid-state cells hold about 400 Wh/kg.", "analysis": "A"});
    let text = analysis.to_string();
    answered_by(&llm, one_search_then_final(), move |req, r| {
        match agent(req) == Agent::Analysis {
            true => Reply::content(&text),
            false => r,
        }
    });
    let s = Setup::new(&llm, None);
    s.query("Q?").run().await.success();
    let chats = llm.chat_requests();
    assert!(
        chats.iter().all(|r| r.body.get("stream_options").is_some()),
        "taken, not refused"
    );
    let plan = s.plan();
    let usage = &node(&plan, "b")["usage"];
    let pieces = crate::support::sse::pieces(&analysis.to_string()).len() as u64;
    assert_eq!(usage["completion_tokens"], pieces, "{usage}");
    assert!(ms(&usage["prompt_tokens"]) > 0, "{usage}");
}

/// Issue 56: a streamed answer cut short had its pieces billed by the server and counted
/// nowhere: a stream cut at 32 MiB left the totals at 72 tokens, and under `--max-tokens 1000`
/// two cut attempts of about 80,000 pieces each never reached the budget. Now each failed
/// attempt's pieces are counted (estimated, the server sending no count before its end) into
/// the totals and the budget, and recorded (`llm_attempt_failed`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pieces_of_a_stream_cut_short_are_counted_in_the_totals_and_the_budget() {
    let llm = MockLlm::start().await;
    let long = "piece ".repeat(1200);
    answered_by(&llm, one_search_then_final(), move |req, r| {
        match agent(req) == Agent::Analysis {
            true => Reply::content(&long).cut_after(1000),
            false => r,
        }
    });
    let s = Setup::with_config(
        &llm,
        None,
        json!({"retry": {"maxRetries": 1, "baseDelayMs": 1, "maxDelayMs": 2},
            "timeouts": {"llmMs": 30000}}),
    );
    let out = s.query("Q?").args(["--max-tokens", "1000"]).run().await;
    let streams = llm.streams();
    let cut: Vec<_> = streams.iter().filter(|s| s.pieces_sent == 1000).collect();
    assert_eq!(
        cut.len(),
        2,
        "two attempts cut at 1000 pieces: {}",
        out.stderr
    );
    let events = s.events();
    let failed = events_of(&events, "llm_attempt_failed");
    assert_eq!(failed.len(), 2, "{failed:?}");
    for e in &failed {
        assert_eq!(e["node"], "b", "{e}");
        assert_eq!(e["completion_tokens"], 1000, "{e}");
        assert_eq!(e["estimated"], true, "{e}");
        assert!(ms(&e["prompt_tokens"]) > 0, "{e}");
    }
    let reached = events_of(&events, "budget_reached");
    assert_eq!(reached.len(), 1, "{reached:?}\n{}", out.stderr);
    assert_eq!(reached[0]["limit"], "max_tokens");
    assert!(ms(&reached[0]["used"]) >= 2000, "{}", reached[0]);
    let finished = events_of(&events, "run_finished");
    let totals = &finished[0]["totals"];
    assert!(ms(&totals["completion_tokens"]) >= 2000, "{totals}");
    assert!(ms(&totals["total_tokens"]) >= 2000, "{totals}");
    // Nothing was researched, so the run is degraded; its reason names the budget.
    assert_eq!(finished[0]["status"], "degraded", "{}", finished[0]);
    let reason = finished[0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("the token budget (1000 tokens) was reached"),
        "{reason}"
    );
    let plan = s.plan();
    assert!(
        ms(&plan["outcome"]["budget"]["used_tokens"]) >= 2000,
        "{}",
        plan["outcome"]
    );
}

/// An answer cut off at its token limit whose shorter retry fails (a 400 the server does not
/// explain): the task fails, and the cut-off answer, which the server billed and no answer
/// kept counts, is an `llm_attempt_failed` in the totals and the budget (before, its tokens
/// were counted nowhere).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_whose_shorter_retry_fails_is_counted_in_the_totals() {
    let llm = MockLlm::start().await;
    answered_by(&llm, one_search_then_final(), move |req, r| {
        match (agent(req), req.messages().len()) {
            (Agent::Analysis, 2) => Reply::truncated("{\"summary\": \"Lo").usage(700, 300),
            (Agent::Analysis, _) => Reply::raw(400, r#"{"error": {"message": "bad request"}}"#),
            _ => r,
        }
    });
    let s = Setup::new(&llm, None);
    let out = s.query("Q?").run().await;
    let events = s.events();
    let failed = events_of(&events, "llm_attempt_failed");
    assert_eq!(failed.len(), 1, "{failed:?}\n{}", out.stderr);
    assert_eq!(failed[0]["node"], "b");
    assert_eq!(failed[0]["total_tokens"], 1000);
    assert_eq!(failed[0]["estimated"], false);
    let finished = events_of(&events, "run_finished");
    let totals = &finished[0]["totals"];
    assert!(ms(&totals["total_tokens"]) >= 1000, "{totals}");
}
