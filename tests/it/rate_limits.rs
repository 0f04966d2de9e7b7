//! One rate budget per endpoint: the gate itself on tokio's paused time (closing on a 429 for
//! every caller, reopening after Retry-After, AIMD, token reservations, retries at the gate that
//! do not count against `maxRetries`, the overall cap), then whole workflows of the real binary
//! against a mock that admits R requests a second.

use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use researchflow::http::ramp;
use researchflow::http::{
    AtGate, Gate, GateWait, HttpError, RetryNotice, RetryObserver, WaitReason, with_retry,
    with_retry_at_gate,
};
use researchflow::settings::{RateLimits, RetrySettings};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::support::MockLlm;
use crate::support::scenario::{Setup, events_of, final_over, plan_answer, scripted};

fn limits(rpm: Option<u32>, tpm: Option<u32>) -> RateLimits {
    RateLimits {
        requests_per_minute: rpm.and_then(NonZeroU32::new),
        tokens_per_minute: tpm.and_then(NonZeroU32::new),
    }
}

fn policy(max_retries: usize) -> RetrySettings {
    RetrySettings {
        max_retries,
        base_delay: Duration::from_millis(100),
        max_delay: Duration::from_millis(400),
        max_retry_after: Duration::from_secs(30),
        max_rate_limit_wait: Duration::from_secs(600),
    }
}

fn too_many(retry_after: Option<Duration>) -> HttpError {
    HttpError::Status {
        url: "http://e/v1/chat/completions".into(),
        status: 429,
        body: "Rate limit reached".into(),
        retry_after,
    }
}

/// Records retries and waits at the gate.
#[derive(Default)]
struct Seen {
    retries: Mutex<Vec<RetryNotice>>,
    waits: Mutex<Vec<GateWait>>,
}

impl RetryObserver for Seen {
    fn on_retry(&self, notice: &RetryNotice) {
        self.retries.lock().expect("lock").push(notice.clone());
    }

    fn on_gate_wait(&self, wait: &GateWait) {
        self.waits.lock().expect("lock").push(wait.clone());
    }
}

fn at(gate: &Gate) -> Option<AtGate<'_>> {
    Some(AtGate { gate, tokens: 0 })
}

#[tokio::test(start_paused = true)]
async fn a_429_closes_the_gate_for_every_caller_until_its_retry_after() {
    let gate = Gate::new("http://e/v1 m", RateLimits::default());
    let t0 = Instant::now();
    let tries = AtomicUsize::new(0);
    let (seen_a, seen_b) = (Seen::default(), Seen::default());
    let p = policy(3);
    let refused_once = with_retry_at_gate(&p, "a", &seen_a, at(&gate), || async {
        match tries.fetch_add(1, Ordering::SeqCst) {
            0 => Err(too_many(Some(Duration::from_secs(2)))),
            _ => Ok(Instant::now()),
        }
    });
    let other = async {
        // Starts after the 429 and never sees one, yet waits for the gate to reopen.
        tokio::time::sleep(Duration::from_millis(100)).await;
        with_retry_at_gate(&p, "b", &seen_b, at(&gate), || async {
            Ok::<_, HttpError>(Instant::now())
        })
        .await
    };
    let (a, b) = tokio::join!(refused_once, other);
    let (a, b) = (a.expect("a"), b.expect("b"));
    assert_eq!(
        a - t0,
        Duration::from_secs(2),
        "a retries when the gate reopens"
    );
    // The limit was unknown: the 429 met the ramp's first rate (200 a second), which, with no
    // answer to measure, is halved when the gate opens: b goes 10 ms after a. The two answers
    // then raise it a step each (5% of the refused rate over 20 steps: 30 a minute).
    assert_eq!(
        b - t0,
        Duration::from_millis(2010),
        "b waits at the closed gate too"
    );
    assert_eq!(gate.rate(), Some(ramp::START_RPM / 2.0 + 60.0));
    let waits = seen_b.waits.lock().expect("lock").clone();
    assert_eq!(
        waits.len(),
        1,
        "a wait over a second is reported: {waits:?}"
    );
    assert_eq!(
        waits[0],
        GateWait {
            endpoint: "http://e/v1 m".into(),
            wait_ms: 1910,
            reason: "retry_after"
        }
    );
    let retries = seen_a.retries.lock().expect("lock").clone();
    assert_eq!(retries.len(), 1);
    assert_eq!(retries[0].delay, Duration::from_secs(2));
    assert!(retries[0].server_asked);
}

#[tokio::test(start_paused = true)]
async fn a_429_without_retry_after_closes_the_gate_for_the_backoff_delay() {
    let gate = Gate::new("e", RateLimits::default());
    let t0 = Instant::now();
    let first = gate.admit(0).await;
    gate.refused(&first, Duration::from_millis(150), WaitReason::Backoff);
    let second = gate.admit(0).await;
    assert_eq!(Instant::now() - t0, Duration::from_millis(150));
    assert_eq!(second.reason, Some(WaitReason::Backoff));
    assert_eq!(second.waited, Duration::from_millis(150));
}

#[tokio::test(start_paused = true)]
async fn a_configured_rate_is_spread_evenly_halved_by_a_blind_429_and_climbs_back() {
    let gate = Gate::new("e", limits(Some(600), None));
    let t0 = Instant::now();
    let mut admitted = Vec::new();
    for _ in 0..4 {
        admitted.push(gate.admit(0).await);
    }
    assert_eq!(
        Instant::now() - t0,
        Duration::from_millis(300),
        "10 a second"
    );
    assert_eq!(admitted[3].reason, Some(WaitReason::RequestsPerMinute));
    // No answer accepted yet: nothing says where the server's limit is, so the rate halves.
    gate.refused(&admitted[3], Duration::ZERO, WaitReason::RetryAfter);
    assert_eq!(
        gate.rate(),
        Some(600.0),
        "lowered when the gate opens, not before"
    );
    let t1 = Instant::now();
    gate.admit(0).await;
    assert_eq!(gate.rate(), Some(300.0));
    // Answers to requests admitted at the old rate say nothing of the new one.
    gate.refused(&admitted[2], Duration::ZERO, WaitReason::RetryAfter);
    gate.admit(0).await;
    assert_eq!(gate.rate(), Some(300.0));
    assert_eq!(
        Instant::now() - t1,
        Duration::from_millis(400),
        "5 a second now"
    );
    for _ in 0..196 {
        gate.succeeded();
    }
    assert_eq!(
        gate.rate(),
        Some(594.0),
        "196 steps of 1.5 to just under the refused rate (99% of it)"
    );
    let mut steps = 0;
    while gate.rate().is_some_and(|r| r < 600.0) {
        gate.succeeded();
        steps += 1;
    }
    assert!(
        (29..=31).contains(&steps),
        "then 20 steps of 0.15 and 10 of 0.3 to the limit, give or take one: {steps}"
    );
    gate.succeeded();
    assert_eq!(gate.rate(), Some(600.0), "and no further");
}

#[tokio::test(start_paused = true)]
async fn a_429_lowers_the_rate_to_just_under_what_the_server_accepted() {
    let gate = Gate::new("e", RateLimits::default());
    let t0 = Instant::now();
    let mut admitted = Vec::new();
    for _ in 0..9 {
        admitted.push(gate.admit(0).await);
    }
    assert_eq!(
        Instant::now() - t0,
        Duration::from_millis(40),
        "no limit known: the ramp's first rate, 200 a second"
    );
    for _ in 0..8 {
        gate.succeeded();
    }
    // The gate closes for the server's delay; the answers still in flight come back.
    gate.refused(
        &admitted[8],
        Duration::from_millis(500),
        WaitReason::RetryAfter,
    );
    assert_eq!(
        gate.rate(),
        Some(ramp::START_RPM),
        "held where the ramp stood until the gate opens"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    gate.succeeded();
    let reopened = gate.admit(0).await;
    assert_eq!(reopened.waited, Duration::from_millis(400));
    assert_eq!(reopened.reason, Some(WaitReason::RetryAfter));
    // 9 answers within a second: 540 a minute accepted, 95% of it admitted from now on.
    assert_eq!(gate.rate(), Some(513.0));
    let mut steps = 0;
    while gate.rate().is_some() {
        gate.succeeded();
        steps += 1;
    }
    // 513 to 534.6 (99% of 540) by steps of 1.35, then on to 1080 by steps of 0.135
    // doubling every 20 (342.9 in 140 steps, then 12 of 17.28): 16 + 152 steps, give or take
    // one for floating point.
    assert!(
        (167..=169).contains(&steps),
        "{steps} steps to twice the refused rate, then no limit"
    );
}

/// The rate a 429 lowers to was measured up to the moment the gate opened again: the time it
/// stayed closed, with no call and no success, diluted it (20 answers 100 ms apart, then 2 s
/// closed: 300 a minute "accepted", the rate lowered to 285 where the server takes 600).
#[tokio::test(start_paused = true)]
async fn the_rate_accepted_before_a_429_is_not_diluted_by_the_time_the_gate_stays_closed() {
    let gate = Gate::new("e", RateLimits::default());
    let mut last = None;
    for _ in 0..20 {
        last = Some(gate.admit(0).await);
        gate.succeeded();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last = last.expect("admitted");
    gate.refused(&last, Duration::from_secs(2), WaitReason::RetryAfter);
    gate.admit(0).await;
    // 20 answers, one every 100 ms: 600 a minute accepted, 95% of it admitted from now on.
    assert_eq!(gate.rate(), Some(570.0));
}

#[tokio::test(start_paused = true)]
async fn calls_reserve_their_tokens_and_a_huge_one_is_cut_to_the_budget() {
    // 6000 tokens a minute: 100 a second, a minute's worth at once.
    let gate = Gate::new("e", limits(None, Some(6000)));
    let t0 = Instant::now();
    gate.admit(4000).await;
    assert_eq!(Instant::now(), t0);
    let second = gate.admit(4000).await;
    assert_eq!(
        Instant::now() - t0,
        Duration::from_secs(20),
        "2000 more tokens"
    );
    assert_eq!(second.reason, Some(WaitReason::TokensPerMinute));
    let huge = gate.admit(1_000_000).await;
    assert_eq!(
        huge.waited,
        Duration::from_secs(60),
        "a full budget, not forever"
    );
}

#[tokio::test(start_paused = true)]
async fn retries_at_the_gate_do_not_count_against_max_retries() {
    let run = |gated: bool| async move {
        let gate = Gate::new("e", RateLimits::default());
        let tries = AtomicUsize::new(0);
        let seen = Seen::default();
        let op = || async {
            match tries.fetch_add(1, Ordering::SeqCst) {
                0..5 => Err(too_many(Some(Duration::from_secs(1)))),
                _ => Ok(()),
            }
        };
        let result = if gated {
            with_retry_at_gate(&policy(1), "t", &seen, at(&gate), op).await
        } else {
            with_retry(&policy(1), "t", &seen, op).await
        };
        let delays: Vec<Duration> = seen
            .retries
            .lock()
            .expect("lock")
            .iter()
            .map(|n| n.delay)
            .collect();
        (result.is_ok(), tries.load(Ordering::SeqCst), delays)
    };
    let (ok, tries, delays) = run(true).await;
    assert!(ok, "five 429s and maxRetries 1");
    assert_eq!(tries, 6);
    assert_eq!(
        delays,
        vec![Duration::from_secs(1); 5],
        "each retry still reported"
    );
    let (ok, tries, _) = run(false).await;
    assert!(!ok, "without a gate every 429 counts");
    assert_eq!(tries, 2);
}

#[tokio::test(start_paused = true)]
async fn past_the_overall_cap_a_429_is_an_ordinary_retry() {
    let run = |cap: Duration| async move {
        let gate = Gate::new("e", RateLimits::default());
        let mut p = policy(1);
        p.max_rate_limit_wait = cap;
        let tries = AtomicUsize::new(0);
        let t0 = Instant::now();
        let result: Result<(), _> =
            with_retry_at_gate(&p, "t", &Seen::default(), at(&gate), || async {
                tries.fetch_add(1, Ordering::SeqCst);
                Err(too_many(Some(Duration::from_secs(4))))
            })
            .await;
        (
            result.is_err(),
            tries.load(Ordering::SeqCst),
            Instant::now() - t0,
        )
    };
    let (failed, tries, took) = run(Duration::ZERO).await;
    assert!(failed);
    assert_eq!(tries, 2, "no free retries: one try, one retry");
    assert!(took < Duration::from_secs(60), "{took:?}");
    let (failed, tries, took) = run(Duration::from_secs(10)).await;
    assert!(
        failed,
        "a server that never admits fails the call in the end"
    );
    assert!(tries > 2, "free retries until the cap: {tries}");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(120),
        "{took:?}"
    );
}

/// `rounds` rounds of three searches each (distinct titles), then the final summary.
fn searches(rounds: usize) -> Vec<Value> {
    let words = [
        "Energy density",
        "Safety record",
        "Cost per kWh",
        "Supply chain",
        "Recycling",
        "Charging speed",
        "Cycle life",
        "Cold weather",
        "Manufacturing scale",
        "Patents",
        "Solid electrolytes",
        "Anode materials",
        "Thermal runaway",
        "Grid storage",
        "Regulation",
    ];
    let mut answers: Vec<Value> = words
        .chunks(3)
        .take(rounds)
        .map(|titles| {
            let tasks: Vec<Value> = titles
                .iter()
                .map(|t| json!({"title": t, "type": "search", "p_node": "a:info"}))
                .collect();
            plan_answer(
                false,
                json!(tasks),
                json!(["NEW1:summary", "NEW2:summary", "NEW3:summary"]),
            )
        })
        .collect();
    answers.push(final_over("b:summary, c:summary"));
    answers
}

/// A workflow of `rounds` rounds of three searches at `--concurrency 8` against a mock that
/// admits `r` requests a second; `maxRetries` is 1, so only free retries at the gate can carry
/// it through. Returns (chat requests, refused ones).
async fn against_admit_per_second(r: u32, limits: Value) -> (usize, usize) {
    let llm = MockLlm::start().await;
    llm.admit_per_second(r);
    scripted(&llm, searches(4));
    let s = Setup::with_config(
        &llm,
        None,
        json!({
            "retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 40, "maxRetryAfterMs": 1000},
            "limits": limits,
        }),
    );
    let started = std::time::Instant::now();
    let out = s
        .query("How do solid-state batteries compare?")
        .args(["--concurrency", "8"])
        .run()
        .await;
    out.success();
    let took = started.elapsed();
    assert_eq!(out.stdout_json()["status"], "completed", "{}", out.stdout);
    let plan = s.plan();
    let nodes = plan["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 14, "question, 12 searches, final");
    for n in nodes.iter().skip(1) {
        assert_eq!(n["status"], "completed", "{n:#}");
    }
    let events = s.events();
    assert!(events_of(&events, "task_failed").is_empty());
    let (requests, refused) = (llm.chat_requests().len(), llm.rate_refused());
    eprintln!(
        "admit_per_second({r}), limits {limits}: {requests} requests, {refused} refused, {took:?}"
    );
    (requests, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_against_a_rate_limited_server_completes_on_free_retries() {
    let (requests, refused) = against_admit_per_second(5, json!({})).await;
    assert!(
        refused > 0,
        "the test must meet the limit: {requests} requests"
    );
    assert_eq!(
        requests - refused,
        18,
        "5 planner rounds, 12 analyses, 1 final"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_limit_configured_few_requests_are_refused() {
    let (requests, refused) = against_admit_per_second(5, json!({"requestsPerMinute": 300})).await;
    assert_eq!(requests - refused, 18);
    assert!(refused * 10 <= requests, "{refused} of {requests} refused");
}
