//! One rate budget per endpoint: the gate itself on tokio's paused time (closing on a 429 for
//! every caller, reopening after Retry-After, the configured rate, the adaptive one, a budget
//! the server announces, token reservations, retries at the gate that do not count against
//! `maxRetries`, the overall cap), a burst against a mock that announces its budget, then
//! whole workflows of the real binary against a mock that admits R requests a second (with
//! and without Retry-After, or announcing its budget in OpenAI's headers).

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::StreamExt;
use researchflow::http::{
    AtGate, Gate, GateWait, Gates, HttpError, RetryNotice, RetryObserver, Sharing, WaitReason,
    with_retry, with_retry_at_gate,
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
    // One request sent says nothing of a rate: the 429 only closed the gate.
    assert_eq!(gate.rate(), None);
    assert_eq!(
        b - t0,
        Duration::from_secs(2),
        "b waits at the closed gate too"
    );
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
            wait_ms: 1900,
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

/// Once the adaptive rate paces the calls, a 429 that names no delay only lowers the rate: a
/// pause of the backoff's length for every caller would idle the budget at each refusal.
#[tokio::test(start_paused = true)]
async fn a_429_without_retry_after_while_paced_lowers_the_rate_and_closes_nothing() {
    let gate = Gate::new("e", RateLimits::default());
    for _ in 0..20 {
        gate.admit(0).await;
        gate.succeeded();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first = gate.admit(0).await;
    let closed = gate.refused(&first, Duration::from_secs(2), WaitReason::Backoff);
    assert_eq!(closed, Duration::from_secs(2), "unpaced, the gate closes");
    tokio::time::sleep(Duration::from_secs(2)).await;
    gate.admit(0).await;
    let paced = gate.rate().expect("a rate after the first 429");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let refused = gate.admit(0).await;
    let closed = gate.refused(&refused, Duration::from_secs(2), WaitReason::Backoff);
    assert_eq!(closed, Duration::ZERO, "paced, nothing closes");
    let t0 = Instant::now();
    let next = gate.admit(0).await;
    assert!(
        Instant::now() - t0 <= Duration::from_secs_f64(60.0 / (paced * 0.9)),
        "the next call goes at the pace, not after the backoff: {:?}",
        Instant::now() - t0
    );
    assert_ne!(next.reason, Some(WaitReason::Backoff));
    assert!(
        gate.rate().is_some_and(|r| r < paced),
        "lowered: {:?}",
        gate.rate()
    );
}

#[tokio::test(start_paused = true)]
async fn a_configured_rate_is_spread_evenly_and_a_429_only_closes_the_gate() {
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
    gate.refused(
        &admitted[3],
        Duration::from_millis(500),
        WaitReason::RetryAfter,
    );
    assert_eq!(
        gate.rate(),
        None,
        "the configured rate holds, nothing adapts"
    );
    let t1 = Instant::now();
    for _ in 0..3 {
        gate.admit(0).await;
    }
    assert_eq!(
        Instant::now() - t1,
        Duration::from_millis(700),
        "closed for 500 ms, then 10 a second again"
    );
}

/// Without any limit known, a 429 sets the rate just under what the server accepted before it,
/// once the gate opens; each success raises it a step, and another 429 lowers it again; 429s
/// of calls admitted before a decrease are old news.
#[tokio::test(start_paused = true)]
async fn without_a_limit_429s_lower_the_rate_and_successes_raise_it() {
    let close = |rate: Option<f64>, want: f64| rate.is_some_and(|r| (r - want).abs() < 1e-6);
    let gate = Gate::new("e", RateLimits::default());
    let mut last = None;
    for _ in 0..20 {
        last = Some(gate.admit(0).await);
        gate.succeeded();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(gate.rate(), None, "no limit until a 429");
    let refused = gate.admit(0).await;
    gate.refused(&refused, Duration::ZERO, WaitReason::RetryAfter);
    assert_eq!(gate.rate(), None, "lowered when the gate opens, not before");
    let t0 = Instant::now();
    gate.admit(0).await;
    // 20 of the 21 sent in the two seconds before the 429 were taken: 600 a minute, 90% of it
    // from then on.
    assert!(close(gate.rate(), 540.0), "{:?}", gate.rate());
    gate.refused(
        &last.expect("admitted"),
        Duration::ZERO,
        WaitReason::RetryAfter,
    );
    gate.admit(0).await;
    assert!(
        close(gate.rate(), 540.0),
        "an older call's 429 changes nothing"
    );
    for _ in 0..10 {
        gate.succeeded();
        gate.admit(0).await;
    }
    assert!(
        Instant::now() - t0 >= Duration::from_millis(10 * 108),
        "paced at 540 to 552 a minute: {:?}",
        Instant::now() - t0
    );
    assert!(
        close(gate.rate(), 552.0),
        "ten steps of 1.2: {:?}",
        gate.rate()
    );
    let again = gate.admit(0).await;
    gate.refused(&again, Duration::ZERO, WaitReason::RetryAfter);
    gate.admit(0).await;
    assert!(
        close(gate.rate(), 552.0 * 0.9),
        "lowered again: {:?}",
        gate.rate()
    );
}

/// A burst that met a limit others spent takes too little to measure a share by: the rate
/// starts from what the server took and doubles each second without a 429, until a 429
/// measures it.
#[tokio::test(start_paused = true)]
async fn a_crowded_out_burst_starts_slow_and_doubles() {
    let close = |rate: Option<f64>, want: f64| rate.is_some_and(|r| (r - want).abs() < 1e-6);
    let gate = Gate::new("e", RateLimits::default());
    gate.admit(0).await;
    gate.succeeded();
    let mut burst = Vec::new();
    for _ in 0..10 {
        burst.push(gate.admit(0).await);
    }
    for admission in &burst {
        gate.refused(
            admission,
            Duration::from_millis(500),
            WaitReason::RetryAfter,
        );
    }
    let again = gate.admit(0).await;
    assert!(again.waited >= Duration::from_millis(500));
    assert!(
        close(gate.rate(), 60.0),
        "one taken in a second: {:?}",
        gate.rate()
    );
    tokio::time::sleep(Duration::from_millis(2100)).await;
    gate.admit(0).await;
    assert!(
        close(gate.rate(), 240.0),
        "two quiet seconds: {:?}",
        gate.rate()
    );
    for _ in 0..4 {
        gate.admit(0).await;
        gate.succeeded();
    }
    assert!(
        close(gate.rate(), 240.0) || close(gate.rate(), 480.0),
        "successes add nothing while it starts, only quiet seconds: {:?}",
        gate.rate()
    );
    let refused = gate.admit(0).await;
    gate.refused(&refused, Duration::ZERO, WaitReason::RetryAfter);
    gate.admit(0).await;
    // Measured now: 5 taken in the 1.125 s before the 429 (paced at 480 a minute by then),
    // 267 a minute, 90% of it.
    assert!(close(gate.rate(), 240.0), "{:?}", gate.rate());
}

/// A queue's workers share the adaptive rate: the rate one measured after a 429 is heard by the
/// others' gates, which set theirs just under the mean of the estimates of the last second
/// (a burst lets some workers through and crowds others out: together they measure it), and
/// each paces at its share of it.
#[tokio::test(start_paused = true)]
async fn workers_set_the_rate_from_the_mean_of_what_they_measured() {
    let close = |rate: Option<f64>, want: f64| rate.is_some_and(|r| (r - want).abs() < 1e-6);
    let share = Arc::new(AtomicU32::new(2));
    let (tell, mut told) = tokio::sync::mpsc::unbounded_channel();
    let gates = Gates::shared_by(Sharing {
        share: Arc::clone(&share),
        tell: Some(tell),
    });
    let gate = gates.gate("k", "e", RateLimits::default());
    let other = gates.clone().gate("other", "o", RateLimits::default());
    gates.heard("k", 600.0);
    assert!(close(gate.rate(), 540.0), "{:?}", gate.rate());
    assert_eq!(other.rate(), None, "another endpoint's rate is its own");
    gates.heard("k", 200.0);
    assert!(
        close(gate.rate(), 360.0),
        "the mean of the last second's, 400, less 10%: {:?}",
        gate.rate()
    );
    // Paced at its share: 360 a minute between two workers is one call every 333 ms.
    gate.admit(0).await;
    gate.succeeded();
    let t0 = Instant::now();
    let last = gate.admit(0).await;
    let spacing = Instant::now() - t0;
    assert!(
        (Duration::from_millis(333)..=Duration::from_millis(334)).contains(&spacing),
        "{spacing:?}"
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    // One success took a step for both workers (2 x 0.8); its own 429 is measured as the rate
    // refused, and told to the others.
    gate.refused(&last, Duration::ZERO, WaitReason::RetryAfter);
    gate.admit(0).await;
    let (key, estimate) = told.try_recv().expect("told");
    assert_eq!(key, "k");
    assert!((estimate - 361.6).abs() < 1e-6, "{estimate}");
    assert!(close(gate.rate(), 361.6 * 0.9), "{:?}", gate.rate());
    gates.heard("nowhere", 1.0);
}

/// The server's headers pace a burst: what remains is spread over the time to the reset,
/// counting the calls admitted since the answer that told it; none left, the calls wait for
/// the reset, when the budget is whole again.
#[tokio::test(start_paused = true)]
async fn an_announced_budget_spreads_what_remains_over_the_time_to_its_reset() {
    use researchflow::http::announced::{Announced, Left};
    let gate = Gate::new("e", RateLimits::default());
    let first = gate.admit(0).await;
    let left = |remaining: f64, reset_ms: u64| Announced {
        requests: Some(Left {
            limit: Some(10.0),
            remaining,
            reset: Duration::from_millis(reset_ms),
        }),
        tokens: None,
        at: Instant::now(),
    };
    gate.announced(&first, &left(4.0, 1000));
    let t0 = Instant::now();
    let mut times = Vec::new();
    for _ in 0..4 {
        gate.admit(0).await;
        times.push((Instant::now() - t0).as_millis());
    }
    // 4 over 1 s: 250 ms, then 3 over 750 ms, and so on.
    assert_eq!(times, vec![0, 250, 500, 750]);
    let fifth = gate.admit(0).await;
    assert_eq!(
        Instant::now() - t0,
        Duration::from_secs(1),
        "none left: the reset"
    );
    assert_eq!(fifth.reason, Some(WaitReason::RequestsPerMinute));
    // An answer to an earlier call says less than the one heard: it is ignored.
    gate.announced(&first, &left(0.0, 60_000));
    let t1 = Instant::now();
    gate.admit(0).await;
    assert!(Instant::now() - t1 < Duration::from_secs(1));
    assert_eq!(
        gate.rate(),
        None,
        "a server that announces is never guessed at"
    );
}

/// The headers of a server that announces its budget keep a burst of 40 calls at 8 at once
/// clear of its limit: none is refused, and the server is kept busy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_headers_pace_a_burst_so_that_nothing_is_refused() {
    let llm = MockLlm::start().await;
    llm.announce_per_second(20);
    llm.set_handler(|_| crate::support::Reply::content("ok"));
    let http = researchflow::http::client().expect("client");
    let gate = Gate::new("mock", RateLimits::default());
    let url =
        researchflow::settings::BaseUrl::parse(&format!("{}/chat/completions", llm.base_url()))
            .expect("url");
    let started = std::time::Instant::now();
    let calls = (0..40).map(|_| {
        let (http, gate, url) = (&http, &gate, &url);
        async move {
            with_retry_at_gate(&policy(1), "t", &Seen::default(), at(gate), || async {
                let request = researchflow::http::request(http, reqwest::Method::POST, url, None)
                    .json(&json!({"model": "m", "messages": []}));
                researchflow::http::send_once(request, url, Duration::from_secs(10), &[]).await
            })
            .await
        }
    });
    let mut running = futures_util::stream::iter(calls).buffer_unordered(8);
    let mut answered = 0;
    while let Some(answer) = futures_util::StreamExt::next(&mut running).await {
        answer.expect("answered");
        answered += 1;
    }
    let took = started.elapsed();
    assert_eq!(answered, 40);
    assert_eq!(llm.rate_refused(), 0, "no request refused");
    // A bucket of 20, refilled at 20 a second: 40 calls need at least a second.
    assert!(took < Duration::from_millis(2600), "{took:?}");
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
    against(r, MockLlm::admit_per_second, limits).await
}

/// [`against_admit_per_second`], the server's limit set by `limit`.
async fn against(r: u32, limit: fn(&MockLlm, u32), limits: Value) -> (usize, usize) {
    let llm = MockLlm::start().await;
    limit(&llm, r);
    scripted(&llm, searches(4));
    let s = Setup::with_config(&llm, None, crate::support::one_retry(limits.clone()));
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
    eprintln!("{r} a second, limits {limits}: {requests} requests, {refused} refused, {took:?}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_against_a_server_that_announces_its_budget_is_not_refused() {
    let (requests, refused) = against(5, MockLlm::announce_per_second, json!({})).await;
    assert_eq!(requests - refused, 18);
    assert!(refused <= 1, "{refused} of {requests} refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workflow_against_429s_without_retry_after_completes() {
    let (requests, refused) = against(5, MockLlm::admit_per_second_silently, json!({})).await;
    assert!(
        refused > 0,
        "the test must meet the limit: {requests} requests"
    );
    assert_eq!(requests - refused, 18);
}

/// The header parsers of `http::announced`: OpenAI's, the IETF draft's, and what cannot be read
/// (ignored, never a panic).
mod headers {
    use reqwest::header::HeaderMap;
    use researchflow::http::announced::Announced;
    use std::time::Duration;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, v.parse().expect("value"));
        }
        h
    }

    #[test]
    fn go_durations_and_seconds() {
        let ms = |v: &str| {
            let h = headers(&[
                ("x-ratelimit-remaining-requests", "1"),
                ("x-ratelimit-reset-requests", v),
            ]);
            Announced::read(&h)
                .and_then(|a| a.requests)
                .map(|l| l.reset.as_millis())
        };
        assert_eq!(ms("1s"), Some(1000));
        assert_eq!(ms("6m0s"), Some(360_000));
        assert_eq!(ms("20ms"), Some(20));
        assert_eq!(ms("1h2m3.5s"), Some(3_723_500));
        assert_eq!(ms("0.25"), Some(250));
        for bad in [
            "", "s", "1x", "-1s", "1.2.3s", "NaN", "inf", "9999h", "1s2", "ms20",
        ] {
            assert_eq!(ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn openai_headers_for_requests_and_tokens() {
        let read = Announced::read(&headers(&[
            ("x-ratelimit-limit-requests", "60"),
            ("x-ratelimit-remaining-requests", "59"),
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-tokens", "149984"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]))
        .expect("read");
        let requests = read.requests.expect("requests");
        assert_eq!((requests.limit, requests.remaining), (Some(60.0), 59.0));
        assert_eq!(requests.reset, Duration::from_secs(1));
        let tokens = read.tokens.expect("tokens");
        assert_eq!(
            (tokens.limit, tokens.reset),
            (None, Duration::from_secs(360))
        );
    }

    #[test]
    fn ietf_fields_apart_and_combined() {
        let apart = Announced::read(&headers(&[
            ("ratelimit-limit", "100, 100;w=60"),
            ("ratelimit-remaining", "50"),
            ("ratelimit-reset", "30"),
        ]));
        let combined = Announced::read(&headers(&[(
            "ratelimit",
            "limit=100, remaining=50, reset=30",
        )]));
        let structured = Announced::read(&headers(&[
            ("ratelimit", "\"default\";r=50;t=30"),
            ("ratelimit-policy", "\"default\";q=100;w=60"),
        ]));
        for read in [apart, combined, structured] {
            let left = read.and_then(|r| r.requests).expect("read");
            assert_eq!(left.limit, Some(100.0));
            assert_eq!(
                (left.remaining, left.reset),
                (50.0, Duration::from_secs(30))
            );
        }
    }

    #[test]
    fn what_cannot_be_read_is_ignored() {
        for pairs in [
            vec![("x-ratelimit-remaining-requests", "many")],
            vec![
                ("x-ratelimit-remaining-requests", "-3"),
                ("x-ratelimit-reset-requests", "1s"),
            ],
            vec![
                ("x-ratelimit-remaining-requests", "3"),
                ("x-ratelimit-reset-requests", "soon"),
            ],
            vec![("ratelimit", "r=;t=1"), ("ratelimit-remaining", "x")],
            vec![("ratelimit", ";;==,"), ("ratelimit-reset", "1e400")],
        ] {
            assert_eq!(Announced::read(&headers(&pairs)), None, "{pairs:?}");
        }
        let unreadable_limit = Announced::read(&headers(&[
            ("x-ratelimit-limit-requests", "lots"),
            ("x-ratelimit-remaining-requests", "3"),
            ("x-ratelimit-reset-requests", "2s"),
        ]));
        assert_eq!(
            unreadable_limit.and_then(|r| r.requests.map(|l| l.limit)),
            Some(None)
        );
    }
}
