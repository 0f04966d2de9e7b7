//! Self-tests of the test-support harness in `tests/it/support/`: the mock LLM and search servers
//! are driven directly with reqwest (scripted replies, faults, delays, concurrency, auth, and
//! the LLM's streamed answers read event by event, as a streaming client does), and
//! the binary harness runs `researchflow --version` and `--help`. Everything here stays on
//! 127.0.0.1 and is meant to finish in a few seconds.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support;
use crate::support::mock_search::{result_url, slug};
use crate::support::sse::pieces;
use crate::support::{
    Fault, FormatKind, MockLlm, MockSearch, Recorded, Refusal, Reply, SearchKind, StreamLog,
    researchflow,
};

fn client() -> reqwest::Client {
    support::http_client().build().expect("reqwest client")
}

fn chat_body(user: &str) -> Value {
    json!({
        "model": "gpt-test",
        "messages": [
            { "role": "system", "content": "You are a planner." },
            { "role": "user", "content": "first question" },
            { "role": "assistant", "content": "ok" },
            { "role": "user", "content": user },
        ],
    })
}

async fn chat(client: &reqwest::Client, llm: &MockLlm, user: &str) -> reqwest::Response {
    client
        .post(format!("{}/chat/completions", llm.base_url()))
        .bearer_auth("sk-test")
        .json(&chat_body(user))
        .send()
        .await
        .expect("chat request")
}

async fn chat_content(client: &reqwest::Client, llm: &MockLlm, user: &str) -> String {
    let response = chat(client, llm, user).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("completion json");
    body["choices"][0]["message"]["content"]
        .as_str()
        .expect("content string")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_serves_scripted_replies_in_fifo_order_and_records_requests() {
    let llm = MockLlm::start().await;
    assert!(llm.base_url().starts_with("http://127.0.0.1:"));
    assert!(llm.base_url().ends_with("/v1"));
    llm.push(Reply::content("one"));
    llm.push(Reply::json(&json!({ "steps": [1, 2] })));
    llm.push(Reply::content("three"));
    let client = client();

    let response = chat(&client, &llm, "q1").await;
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["content-type"].to_str().unwrap(),
        "application/json"
    );
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "gpt-test");
    assert!(body["id"].is_string());
    assert!(body["created"].is_u64());
    assert_eq!(body["choices"][0]["index"], 0);
    assert_eq!(body["choices"][0]["message"]["role"], "assistant");
    assert_eq!(body["choices"][0]["message"]["content"], "one");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        body["usage"],
        json!({ "prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18 })
    );

    let second = chat_content(&client, &llm, "q2").await;
    assert_eq!(
        serde_json::from_str::<Value>(&second).unwrap(),
        json!({ "steps": [1, 2] })
    );
    assert_eq!(chat_content(&client, &llm, "q3").await, "three");
    assert_eq!(llm.pending(), 0);

    let requests = llm.requests();
    assert_eq!(requests.len(), 3);
    for (i, r) in requests.iter().enumerate() {
        assert_eq!(r.seq, i);
        assert_eq!(r.method, "POST");
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(r.query, "");
        assert_eq!(r.header("Authorization"), Some("Bearer sk-test"));
        assert_eq!(r.body["model"], "gpt-test");
        assert_eq!(r.system_prompt().as_deref(), Some("You are a planner."));
        assert_eq!(r.user_prompt(), Some(format!("q{}", i + 1)));
        assert!(r.responded_at.is_some());
        assert_eq!(serde_json::from_str::<Value>(&r.raw_body).unwrap(), r.body);
    }
    assert!(
        requests
            .iter()
            .all(|r| r.headers.iter().all(|(k, _)| *k == k.to_lowercase()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_falls_back_to_the_handler_when_the_queue_is_empty() {
    let llm = MockLlm::start().await;
    llm.push(Reply::content("scripted"));
    llm.set_handler(|r| Reply::content(&format!("echo: {}", r.user_prompt().unwrap())));
    let client = client();
    assert_eq!(chat_content(&client, &llm, "a").await, "scripted");
    assert_eq!(chat_content(&client, &llm, "b").await, "echo: b");
    llm.push(Reply::content("scripted again"));
    assert_eq!(chat_content(&client, &llm, "c").await, "scripted again");
    assert_eq!(chat_content(&client, &llm, "d").await, "echo: d");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_answers_500_naming_the_request_when_nothing_is_scripted() {
    let llm = MockLlm::start().await;
    let client = client();
    llm.push(Reply::content("only one"));
    assert_eq!(chat_content(&client, &llm, "a").await, "only one");
    let response = chat(&client, &llm, "b").await;
    assert_eq!(response.status(), 500);
    let body: Value = response.json().await.unwrap();
    assert_eq!(
        body["error"]["message"],
        "mock llm: no scripted reply for request 1"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_lists_models_and_404s_unknown_paths() {
    let llm = MockLlm::start().await;
    let client = client();
    let models: Value = client
        .get(format!("{}/models", llm.base_url()))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["object"], "list");
    assert!(!models["data"].as_array().unwrap().is_empty());
    let missing = client
        .post(format!("{}/completions", llm.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
    // Recorded too, with no body.
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].path, "/v1/completions");
    assert_eq!(requests[1].body, Value::Null);
    assert_eq!(llm.chat_requests().len(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_delay_holds_the_answer_back() {
    let llm = MockLlm::start().await;
    let delay = Duration::from_millis(200);
    llm.push(Reply::content("late").delay(delay));
    llm.push(Reply::fault(Fault::server_error(503)).delay(delay));
    let client = client();
    let started = Instant::now();
    assert_eq!(chat_content(&client, &llm, "a").await, "late");
    assert!(started.elapsed() >= delay);
    let started = Instant::now();
    assert_eq!(chat(&client, &llm, "b").await.status(), 503);
    assert!(started.elapsed() >= delay);
    for r in llm.requests() {
        assert!(r.latency().unwrap() >= delay);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_counts_requests_in_flight() {
    let delay = Duration::from_millis(300);
    let client = client();

    let concurrent = MockLlm::start().await;
    concurrent.set_handler(move |_| Reply::content("x").delay(delay));
    let (a, b, c) = tokio::join!(
        chat_content(&client, &concurrent, "a"),
        chat_content(&client, &concurrent, "b"),
        chat_content(&client, &concurrent, "c"),
    );
    assert_eq!((a.as_str(), b.as_str(), c.as_str()), ("x", "x", "x"));
    assert_eq!(concurrent.max_in_flight(), 3);
    assert_eq!(concurrent.in_flight(), 0);

    let sequential = MockLlm::start().await;
    sequential.set_handler(|_| Reply::content("y").delay(Duration::from_millis(20)));
    for q in ["a", "b", "c"] {
        assert_eq!(chat_content(&client, &sequential, q).await, "y");
    }
    assert_eq!(sequential.max_in_flight(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_admits_r_requests_a_second_and_says_when_a_slot_frees() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| Reply::content("ok"));
    llm.admit_per_second(3);
    let client = client();
    let first = Instant::now();
    let mut statuses = Vec::new();
    let mut waits = Vec::new();
    for q in ["a", "b", "c", "d", "e"] {
        if q != "a" && q <= "c" {
            // Spaced, so that one slot frees at a time.
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let r = chat(&client, &llm, q).await;
        statuses.push(r.status().as_u16());
        if let Some(ms) = r.headers().get("retry-after-ms") {
            let ms: u64 = ms.to_str().expect("ascii").parse().expect("a number");
            waits.push(Duration::from_millis(ms));
            let body: Value = r.json().await.expect("json body");
            assert_eq!(body["error"]["type"], "rate_limit_exceeded");
        }
    }
    let elapsed = first.elapsed();
    assert!(
        elapsed < Duration::from_millis(900),
        "too slow to test: {elapsed:?}"
    );
    assert_eq!(statuses, [200, 200, 200, 429, 429]);
    assert_eq!(llm.rate_refused(), 2);
    assert_eq!(
        llm.chat_requests().len(),
        5,
        "refused requests are recorded too"
    );
    for wait in &waits {
        // The oldest accepted request leaves the window one second after it came.
        assert!(
            *wait >= Duration::from_secs(1) - elapsed && *wait <= Duration::from_secs(1),
            "{wait:?} after {elapsed:?}"
        );
    }
    tokio::time::sleep(waits[1]).await;
    assert_eq!(
        chat(&client, &llm, "f").await.status(),
        200,
        "a slot is free"
    );
    assert_eq!(chat(&client, &llm, "g").await.status(), 429, "and only one");
    assert_eq!(llm.rate_refused(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_status_faults_reach_the_client() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::rate_limited(Some("2"))));
    llm.push(Reply::fault(Fault::rate_limited(None)));
    llm.push(Reply::fault(Fault::rate_limited_ms(150)));
    llm.push(Reply::fault(Fault::insufficient_quota()));
    llm.push(Reply::fault(Fault::server_error(502)));
    llm.push(Reply::fault(
        Fault::status(418, r#"{"error":{"message":"teapot"}}"#).header("x-custom", "yes"),
    ));
    let client = client();

    let r = chat(&client, &llm, "1").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "2");
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "rate_limit_exceeded");
    assert_eq!(body["error"]["message"], "Rate limit reached");

    let r = chat(&client, &llm, "2").await;
    assert_eq!(r.status(), 429);
    assert!(r.headers().get("retry-after").is_none());

    let r = chat(&client, &llm, "3").await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after-ms"], "150");

    let r = chat(&client, &llm, "4").await;
    assert_eq!(r.status(), 429);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["type"], "insufficient_quota");
    assert_eq!(body["error"]["code"], "insufficient_quota");
    assert_eq!(body["error"]["message"], "You exceeded your current quota");

    let r = chat(&client, &llm, "5").await;
    assert_eq!(r.status(), 502);
    assert_eq!(r.headers()["content-type"], "application/json");
    let body: Value = r.json().await.unwrap();
    assert!(body["error"]["message"].is_string());

    let r = chat(&client, &llm, "6").await;
    assert_eq!(r.status(), 418);
    assert_eq!(r.headers()["x-custom"], "yes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_hang_makes_the_client_time_out() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::Hang));
    let client = support::http_client()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let started = Instant::now();
    let err = client
        .post(format!("{}/chat/completions", llm.base_url()))
        .json(&chat_body("hang"))
        .send()
        .await
        .expect_err("a hanging request must not be answered");
    assert!(err.is_timeout(), "{err:?}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let requests = llm.requests();
    assert_eq!(requests.len(), 1);
    assert!(requests[0].responded_at.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_a_mock_ends_hanging_requests() {
    let llm = MockLlm::start().await;
    llm.set_handler(|_| Reply::fault(Fault::Hang));
    let url = format!("{}/chat/completions", llm.base_url());
    let pending =
        tokio::spawn(async move { client().post(url).json(&chat_body("x")).send().await });
    let deadline = Instant::now() + Duration::from_secs(2);
    while llm.in_flight() == 0 {
        assert!(Instant::now() < deadline, "request never arrived");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    drop(llm);
    let outcome = tokio::time::timeout(Duration::from_secs(2), pending)
        .await
        .expect("dropping the mock must close the hanging connection")
        .unwrap();
    assert!(outcome.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_drop_closes_the_connection_without_a_response() {
    let llm = MockLlm::start().await;
    llm.push(Reply::fault(Fault::Drop));
    llm.push(Reply::content("after the drop"));
    let client = client();
    let err = client
        .post(format!("{}/chat/completions", llm.base_url()))
        .json(&chat_body("drop"))
        .send()
        .await
        .expect_err("a dropped connection must not produce a response");
    assert!(!err.is_timeout(), "{err:?}");
    assert!(err.status().is_none(), "{err:?}");
    assert!(err.is_request() || err.is_connect(), "{err:?}");
    // The server keeps serving on new connections.
    assert_eq!(chat_content(&client, &llm, "next").await, "after the drop");
    let requests = llm.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].responded_at.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_raw_bodies_pass_through_unchanged() {
    let llm = MockLlm::start().await;
    llm.push(Reply::raw(200, r#"{"choices": [ {"message": "#));
    llm.push(Reply::raw(200, r#"{"choices":[]}"#));
    let client = client();
    let r = chat(&client, &llm, "a").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "application/json");
    assert_eq!(r.text().await.unwrap(), r#"{"choices": [ {"message": "#);
    let r = chat(&client, &llm, "b").await;
    assert_eq!(r.text().await.unwrap(), r#"{"choices":[]}"#);
}

async fn chat_json(client: &reqwest::Client, llm: &MockLlm, body: &Value) -> (u16, Value) {
    let response = client
        .post(format!("{}/chat/completions", llm.base_url()))
        .json(body)
        .send()
        .await
        .expect("chat request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("json body"))
}

/// A chat body with `extra` merged into its top level.
fn chat_with(extra: Value) -> Value {
    let mut body = chat_body("q");
    for (k, v) in extra.as_object().expect("an object") {
        body[k] = v.clone();
    }
    body
}

fn json_schema_format() -> Value {
    json!({ "response_format": {
        "type": "json_schema",
        "json_schema": { "name": "plan", "schema": { "type": "object" } },
    }})
}

fn json_object_with_schema() -> Value {
    json!({ "response_format": { "type": "json_object", "schema": { "type": "object" } } })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_replies_carry_finish_reason_usage_and_logprobs() {
    let llm = MockLlm::start().await;
    llm.push_all([
        Reply::content("full"),
        Reply::truncated(r#"{"tasks": [{"title": "Batt"#),
        Reply::empty(),
        Reply::content("counted").usage(100, 20),
        Reply::content("filtered").finish_reason("content_filter"),
        Reply::raw(200, r#"{"choices":[]}"#)
            .finish_reason("length")
            .usage(1, 2),
    ]);
    let client = client();
    let body = chat_with(json!({}));

    let (status, full) = chat_json(&client, &llm, &body).await;
    assert_eq!(status, 200);
    let choice = &full["choices"][0];
    assert_eq!(choice["finish_reason"], "stop");
    assert!(choice.get("logprobs").is_some_and(Value::is_null), "{full}");
    assert_eq!(full["usage"]["total_tokens"], 18);

    let (_, cut) = chat_json(&client, &llm, &body).await;
    assert_eq!(cut["choices"][0]["finish_reason"], "length");
    assert_eq!(
        cut["choices"][0]["message"]["content"],
        r#"{"tasks": [{"title": "Batt"#
    );

    let (_, empty) = chat_json(&client, &llm, &body).await;
    assert_eq!(empty["choices"][0]["message"]["content"], "");
    assert_eq!(empty["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        empty["usage"],
        json!({ "prompt_tokens": 11, "completion_tokens": 0, "total_tokens": 11 })
    );

    let (_, counted) = chat_json(&client, &llm, &body).await;
    assert_eq!(
        counted["usage"],
        json!({ "prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120 })
    );
    assert_eq!(counted["choices"][0]["finish_reason"], "stop");

    let (_, filtered) = chat_json(&client, &llm, &body).await;
    assert_eq!(filtered["choices"][0]["finish_reason"], "content_filter");
    assert_eq!(filtered["usage"]["total_tokens"], 18);

    // A raw body is sent as scripted: neither setter adds anything to it.
    let (_, raw) = chat_json(&client, &llm, &body).await;
    assert_eq!(raw, json!({ "choices": [] }));
}

/// The body llama-cpp-python 0.3.x answered to a `json_schema` response_format, byte for byte.
const LLAMA_CPP_JSON_SCHEMA_500: &str = r#"{"error":{"message":"1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/root/.cache/local-llm/venv/lib/python3.11/site-packages/llama_cpp/server/app.py\", line 376, in create_chat_completion\n    POST /v1/chat/completions","type":"internal_server_error","param":null,"code":null}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llama_cpp_python_refuses_json_schema_with_its_500_and_keeps_the_queue() {
    let llm = MockLlm::llama_cpp_python().await;
    llm.push(Reply::json(&json!({ "tasks": [] })));
    let client = client();

    let response = client
        .post(format!("{}/chat/completions", llm.base_url()))
        .json(&chat_with(json_schema_format()))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 500);
    assert_eq!(response.headers()["content-type"], "application/json");
    assert_eq!(response.text().await.unwrap(), LLAMA_CPP_JSON_SCHEMA_500);
    assert_eq!(llm.refused(), 1);
    assert_eq!(llm.pending(), 1, "a refused request must not take a reply");

    // The grammar-backed form is accepted and gets the scripted reply.
    let (status, body) = chat_json(&client, &llm, &chat_with(json_object_with_schema())).await;
    assert_eq!(status, 200);
    assert_eq!(body["choices"][0]["message"]["content"], r#"{"tasks":[]}"#);
    assert_eq!((llm.refused(), llm.pending()), (1, 0));

    // Both were recorded, the refused one with its body and as answered.
    let requests = llm.chat_requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].body["response_format"]["type"], "json_schema");
    assert!(requests[0].responded_at.is_some());
    assert_eq!(requests[1].body["response_format"]["type"], "json_object");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusal_bodies_follow_the_status_and_name_the_refused_field() {
    let client = client();
    // (rule, request extras, texts the body must contain)
    let cases: Vec<(Refusal, Value, Vec<&str>)> = vec![
        (
            Refusal::format(FormatKind::JsonSchema, 422),
            json_schema_format(),
            vec!["response_format", "json_schema"],
        ),
        (
            Refusal::format(FormatKind::JsonSchema, 400),
            json_schema_format(),
            vec!["response_format", "json_schema"],
        ),
        (
            Refusal::format(FormatKind::JsonObjectWithSchema, 500),
            json_object_with_schema(),
            vec!["response_format", "schema"],
        ),
        (
            Refusal::format(FormatKind::JsonObjectWithSchema, 400),
            json_object_with_schema(),
            vec!["response_format", "schema"],
        ),
        (
            Refusal::format(FormatKind::JsonObject, 500),
            json!({ "response_format": { "type": "json_object" } }),
            vec!["response_format", "json_object"],
        ),
        (
            Refusal::param("max_tokens", 500),
            json!({ "max_tokens": 512 }),
            vec!["('body', 'max_tokens')", "'input': 512"],
        ),
        (
            Refusal::param("max_tokens", 422),
            json!({ "max_tokens": 512 }),
            vec!["max_tokens", "input_value=512"],
        ),
        (
            Refusal::param("max_tokens", 400),
            json!({ "max_tokens": 512 }),
            vec!["max_tokens", "max_completion_tokens"],
        ),
        (
            Refusal::param("temperature", 400),
            json!({ "temperature": 0 }),
            vec!["temperature", "does not support 0"],
        ),
    ];
    for (rule, extra, needles) in cases {
        let llm = MockLlm::start().await;
        let status = rule.status();
        llm.refuse(rule.clone());
        let (got, body) = chat_json(&client, &llm, &chat_with(extra)).await;
        assert_eq!(got, status, "{rule:?}");
        let text = body.to_string();
        for needle in needles {
            assert!(text.contains(needle), "{rule:?}: {needle:?} not in {text}");
        }
        match status {
            500 => {
                assert_eq!(body["error"]["type"], "internal_server_error", "{body}");
                let message = body["error"]["message"].as_str().unwrap();
                assert!(message.starts_with("1 validation error:\n  {'type': '"));
            }
            422 => {
                assert_eq!(body["object"], "error");
                assert_eq!(body["type"], "BadRequestError");
                assert_eq!(body["code"], 422);
            }
            _ => {
                assert_eq!(body["error"]["type"], "invalid_request_error");
                assert!(body["error"]["param"].is_string(), "{body}");
            }
        }
        assert_eq!(llm.refused(), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_refusals_match_the_real_bodies() {
    let llm = MockLlm::start().await;
    llm.refuse(Refusal::param("max_tokens", 400));
    llm.refuse(Refusal::param("temperature", 400));
    llm.refuse(Refusal::format(FormatKind::JsonSchema, 400));
    let client = client();

    let (_, body) = chat_json(&client, &llm, &chat_with(json!({ "max_tokens": 64 }))).await;
    assert_eq!(
        body,
        json!({"error":{"message":"Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.","type":"invalid_request_error","param":"max_tokens","code":"unsupported_parameter"}})
    );
    let (_, body) = chat_json(&client, &llm, &chat_with(json!({ "temperature": 0 }))).await;
    assert_eq!(
        body,
        json!({"error":{"message":"Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.","type":"invalid_request_error","param":"temperature","code":"unsupported_value"}})
    );
    let (_, body) = chat_json(&client, &llm, &chat_with(json_schema_format())).await;
    assert_eq!(
        body,
        json!({"error":{"message":"Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model.","type":"invalid_request_error","param":"response_format","code":null}})
    );
    // The first matching rule answers; with no rule matching, the queue does.
    llm.push(Reply::content("allowed"));
    let (status, body) = chat_json(
        &client,
        &llm,
        &chat_with(json!({ "max_completion_tokens": 64 })),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body["choices"][0]["message"]["content"], "allowed");
    assert_eq!(llm.refused(), 3);
    assert_eq!(llm.chat_requests().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusal_rules_match_only_their_own_kind() {
    let schema = chat_with(json_schema_format());
    let object_schema = chat_with(json_object_with_schema());
    let object = chat_with(json!({ "response_format": { "type": "json_object" } }));
    let text = chat_with(json!({ "response_format": { "type": "text" } }));
    let plain = chat_with(json!({}));
    assert_eq!(FormatKind::of(&schema), Some(FormatKind::JsonSchema));
    assert_eq!(
        FormatKind::of(&object_schema),
        Some(FormatKind::JsonObjectWithSchema)
    );
    assert_eq!(FormatKind::of(&object), Some(FormatKind::JsonObject));
    assert_eq!(FormatKind::of(&text), None);
    assert_eq!(FormatKind::of(&plain), None);

    let rule = Refusal::format(FormatKind::JsonObject, 500);
    assert!(rule.matches(&object));
    assert!(!rule.matches(&object_schema) && !rule.matches(&schema) && !rule.matches(&plain));
    let rule = Refusal::format(FormatKind::JsonObjectWithSchema, 500);
    assert!(rule.matches(&object_schema) && !rule.matches(&object));
    let rule = Refusal::param("max_tokens", 400);
    assert!(rule.matches(&chat_with(json!({ "max_tokens": 1 }))));
    assert!(!rule.matches(&chat_with(json!({ "max_completion_tokens": 1 }))));
    assert!(!rule.matches(&plain));

    // Only chat requests are refused: the model list still answers.
    let llm = MockLlm::start().await;
    llm.refuse(Refusal::param("model", 400));
    let r = client()
        .get(format!("{}/models", llm.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(llm.refused(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_at_a_time_answers_requests_in_turn() {
    let delay = Duration::from_millis(150);
    let llm = MockLlm::llama_cpp_python().await;
    llm.set_handler(move |_| Reply::content("z").delay(delay));
    let client = client();
    let started = Instant::now();
    let (a, b, c) = tokio::join!(
        chat_content(&client, &llm, "a"),
        chat_content(&client, &llm, "b"),
        chat_content(&client, &llm, "c"),
    );
    assert_eq!((a.as_str(), b.as_str(), c.as_str()), ("z", "z", "z"));
    assert!(started.elapsed() >= delay * 3, "{:?}", started.elapsed());
    // All three arrived at once (they wait in flight), but were answered one after another.
    assert_eq!(llm.max_in_flight(), 3);
    let mut answered: Vec<Instant> = llm
        .requests()
        .iter()
        .map(|r| r.responded_at.unwrap())
        .collect();
    answered.sort();
    for pair in answered.windows(2) {
        assert!(pair[1] - pair[0] >= delay, "{answered:?}");
    }
}

#[test]
fn slugs_and_query_decoding() {
    assert_eq!(slug("Rust  async/await: why?"), "rust-async-await-why");
    assert_eq!(slug("--Hello--"), "hello");
    assert_eq!(slug("a".repeat(50).as_str()).len(), 40);
    assert_eq!(slug("?!"), "empty");
    assert_eq!(
        result_url("Tokio Runtime", 2),
        "https://example.test/tokio-runtime/2"
    );
    assert_eq!(
        support::server::url_decode("a+b%20c%2Fd%zz%"),
        "a b c/d%zz%"
    );
    assert_eq!(
        support::server::query_pairs("q=x%26y&format=json&flag"),
        vec![
            ("q".to_owned(), "x&y".to_owned()),
            ("format".to_owned(), "json".to_owned()),
            ("flag".to_owned(), String::new()),
        ]
    );
}

async fn searxng(
    client: &reqwest::Client,
    search: &MockSearch,
    query: &[(&str, &str)],
) -> reqwest::Response {
    client
        .get(format!("{}/search", search.base_url()))
        .query(query)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searxng_shape_format_and_auth() {
    let search = MockSearch::start(SearchKind::Searxng).await;
    assert_eq!(search.kind(), SearchKind::Searxng);
    assert!(!search.base_url().ends_with('/'));
    let client = client();

    let r = searxng(&client, &search, &[("q", "Rust async"), ("format", "json")]).await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["query"], "Rust async");
    assert_eq!(body["number_of_results"], 3);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[0],
        json!({
            "url": "https://example.test/rust-async/1",
            "title": "Result 1 for Rust async",
            "content": "Snippet 1 about Rust async.",
            "engine": "mock",
        })
    );

    let r = searxng(&client, &search, &[("q", "Rust async"), ("format", "html")]).await;
    assert_eq!(r.status(), 403);
    let r = searxng(&client, &search, &[("q", "Rust async")]).await;
    assert_eq!(r.status(), 403);

    search.require_key("sx-key");
    let r = searxng(&client, &search, &[("q", "k"), ("format", "json")]).await;
    assert_eq!(r.status(), 401);
    let r = client
        .get(format!("{}/search", search.base_url()))
        .query(&[("q", "k"), ("format", "json")])
        .bearer_auth("wrong")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 401);
    let r = client
        .get(format!("{}/search", search.base_url()))
        .query(&[("q", "k"), ("format", "json")])
        .bearer_auth("sx-key")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = searxng(
        &client,
        &search,
        &[("q", "k"), ("format", "json"), ("api_key", "sx-key")],
    )
    .await;
    assert_eq!(r.status(), 200);

    let requests = search.requests();
    assert_eq!(requests[0].query_param("q").as_deref(), Some("Rust async"));
    assert_eq!(requests[0].query_param("format").as_deref(), Some("json"));
}

async fn tavily(client: &reqwest::Client, search: &MockSearch, body: Value) -> reqwest::Response {
    client
        .post(format!("{}/search", search.base_url()))
        .json(&body)
        .send()
        .await
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tavily_shape_counts_and_auth() {
    let search = MockSearch::start(SearchKind::Tavily).await;
    let client = client();

    let r = tavily(
        &client,
        &search,
        json!({ "query": "LLM agents", "max_results": 5 }),
    )
    .await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["query"], "LLM agents");
    assert_eq!(body["response_time"], 0.01);
    let results = body["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    assert_eq!(
        results[4],
        json!({
            "title": "Result 5 for LLM agents",
            "url": "https://example.test/llm-agents/5",
            "content": "Snippet 5 about LLM agents.",
            "score": 0.9,
        })
    );

    let body: Value = tavily(
        &client,
        &search,
        json!({ "query": "many", "max_results": 50 }),
    )
    .await
    .json()
    .await
    .unwrap();
    assert_eq!(body["results"].as_array().unwrap().len(), 10);
    let body: Value = tavily(&client, &search, json!({ "query": "default" }))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["results"].as_array().unwrap().len(), 3);

    let r = tavily(&client, &search, json!({ "max_results": 2 })).await;
    assert_eq!(r.status(), 400);

    // GET is not Tavily's method.
    let r = client
        .get(format!("{}/search?q=x", search.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 405);

    search.require_key("tvly-key");
    let r = tavily(&client, &search, json!({ "query": "k" })).await;
    assert_eq!(r.status(), 401);
    let r = tavily(&client, &search, json!({ "query": "k", "api_key": "nope" })).await;
    assert_eq!(r.status(), 401);
    let r = tavily(
        &client,
        &search,
        json!({ "query": "k", "api_key": "tvly-key" }),
    )
    .await;
    assert_eq!(r.status(), 200);
    let r = client
        .post(format!("{}/search", search.base_url()))
        .bearer_auth("tvly-key")
        .json(&json!({ "query": "k" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
}

async fn brave(
    client: &reqwest::Client,
    search: &MockSearch,
    query: &[(&str, &str)],
    token: Option<&str>,
) -> reqwest::Response {
    let mut request = client
        .get(format!("{}/res/v1/web/search", search.base_url()))
        .query(query);
    if let Some(token) = token {
        request = request.header("X-Subscription-Token", token);
    }
    request.send().await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brave_shape_counts_and_auth() {
    let search = MockSearch::start(SearchKind::Brave).await;
    let client = client();

    let r = brave(
        &client,
        &search,
        &[("q", "web search"), ("count", "2")],
        None,
    )
    .await;
    assert_eq!(r.status(), 200);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["type"], "search");
    assert_eq!(body["query"]["original"], "web search");
    assert_eq!(body["web"]["type"], "search");
    let results = body["web"]["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(
        results[1],
        json!({
            "title": "Result 2 for web search",
            "url": "https://example.test/web-search/2",
            "description": "Snippet 2 about web search.",
        })
    );
    let body: Value = brave(&client, &search, &[("q", "d")], None)
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(body["web"]["results"].as_array().unwrap().len(), 3);

    let r = client
        .get(format!("{}/search?q=x", search.base_url()))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    search.require_key("brave-key");
    let r = brave(&client, &search, &[("q", "k")], None).await;
    assert_eq!(r.status(), 401);
    let r = brave(&client, &search, &[("q", "k")], Some("wrong")).await;
    assert_eq!(r.status(), 401);
    let r = brave(&client, &search, &[("q", "k")], Some("brave-key")).await;
    assert_eq!(r.status(), 200);
    assert_eq!(
        search
            .requests()
            .last()
            .unwrap()
            .header("x-subscription-token"),
        Some("brave-key")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_faults_raw_bodies_delay_and_returned_urls() {
    let search = MockSearch::start(SearchKind::Brave).await;
    let client = client();
    search.push_fault(Fault::rate_limited(Some("1")));
    search.push_raw(200, "{ not json");
    search.push_fault(Fault::Drop);

    let r = brave(&client, &search, &[("q", "a")], None).await;
    assert_eq!(r.status(), 429);
    assert_eq!(r.headers()["retry-after"], "1");
    let r = brave(&client, &search, &[("q", "a")], None).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.text().await.unwrap(), "{ not json");
    let err = client
        .get(format!("{}/res/v1/web/search?q=a", search.base_url()))
        .send()
        .await
        .expect_err("dropped");
    assert!(err.status().is_none() && !err.is_timeout(), "{err:?}");
    assert!(search.returned_urls().is_empty());

    brave(&client, &search, &[("q", "Alpha"), ("count", "2")], None).await;
    brave(&client, &search, &[("q", "alpha"), ("count", "3")], None).await;
    brave(&client, &search, &[("q", "beta"), ("count", "1")], None).await;
    assert_eq!(
        search.returned_urls(),
        vec![
            result_url("alpha", 1),
            result_url("alpha", 2),
            result_url("alpha", 3),
            result_url("beta", 1),
        ]
    );

    let delay = Duration::from_millis(150);
    search.set_delay(delay);
    let started = Instant::now();
    let (r1, r2) = tokio::join!(
        brave(&client, &search, &[("q", "x")], None),
        brave(&client, &search, &[("q", "y")], None),
    );
    assert!(started.elapsed() >= delay);
    assert_eq!((r1.status().as_u16(), r2.status().as_u16()), (200, 200));
    assert_eq!(search.max_in_flight(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_hang_times_out() {
    let search = MockSearch::start(SearchKind::Tavily).await;
    search.push_fault(Fault::Hang);
    let client = support::http_client()
        .timeout(Duration::from_millis(300))
        .build()
        .unwrap();
    let err = client
        .post(format!("{}/search", search.base_url()))
        .json(&json!({ "query": "q" }))
        .send()
        .await
        .expect_err("hang");
    assert!(err.is_timeout(), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_harness_runs_version_and_help() {
    let version = researchflow().arg("--version").run().await;
    version.success();
    assert!(version.stdout.contains("researchflow"), "{version:?}");

    let help = researchflow()
        .args(["--help"])
        .env("RUST_LOG", "trace")
        .timeout(Duration::from_secs(30))
        .run()
        .await;
    help.code(0);
    assert!(help.stdout.contains("researchflow"), "{help:?}");
}

fn stream_request(user: &str, include_usage: bool) -> Value {
    let mut body = chat_body(user);
    body["stream"] = json!(true);
    if include_usage {
        body["stream_options"] = json!({ "include_usage": true });
    }
    body
}

async fn post(client: &reqwest::Client, llm: &MockLlm, body: &Value) -> reqwest::Response {
    client
        .post(format!("{}/chat/completions", llm.base_url()))
        .json(body)
        .send()
        .await
        .expect("chat request")
}

/// A server-sent-event body read one event at a time, as a streaming client reads it.
struct Events {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Events {
    fn of(response: reqwest::Response) -> Events {
        assert_eq!(response.status(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events {
            response,
            buffer: Vec::new(),
        }
    }

    /// The data of the next event, `None` once the body has ended.
    async fn next(&mut self) -> Option<String> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let event = String::from_utf8(event).expect("an event in UTF-8");
                let data = event.strip_prefix("data: ").expect("a data line");
                return Some(data.trim_end_matches('\n').to_owned());
            }
            match self.response.chunk().await.expect("a body chunk") {
                Some(bytes) => self.buffer.extend_from_slice(&bytes),
                None => {
                    assert!(self.buffer.is_empty(), "unfinished event {:?}", self.buffer);
                    return None;
                }
            }
        }
    }

    /// Every remaining event's data, to the end of the body.
    async fn rest(mut self) -> Vec<String> {
        let mut events = Vec::new();
        while let Some(event) = self.next().await {
            events.push(event);
        }
        events
    }

    /// Reads until `n` content pieces have come.
    async fn pieces(&mut self, n: usize) {
        let mut seen = 0;
        while seen < n {
            let event = self.next().await.expect("a piece before the end");
            seen += usize::from(delta_content(&event).is_some_and(|c| !c.is_empty()));
        }
    }
}

/// The delta content of an event, if it is a JSON chunk with one.
fn delta_content(event: &str) -> Option<String> {
    let chunk: Value = serde_json::from_str(event).ok()?;
    chunk["choices"][0]["delta"]["content"]
        .as_str()
        .map(str::to_owned)
}

/// The text a client assembles from the events it could parse.
fn assembled(events: &[String]) -> String {
    events.iter().filter_map(|e| delta_content(e)).collect()
}

fn chunks(events: &[String]) -> Vec<Value> {
    events
        .iter()
        .map(|e| serde_json::from_str(e).unwrap_or_else(|_| panic!("not JSON: {e}")))
        .collect()
}

/// Polls `llm`'s stream logs until `done` holds for the one of request `seq` (2 s at most).
async fn stream_log(llm: &MockLlm, seq: usize, done: impl Fn(&StreamLog) -> bool) -> StreamLog {
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let log = llm.streams().into_iter().find(|log| log.seq == seq);
        if let Some(log) = log.filter(&done) {
            return log;
        }
        assert!(Instant::now() < deadline, "{:?}", llm.streams());
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[test]
fn stream_pieces_are_words_and_join_into_the_text() {
    assert_eq!(pieces("Hello, world!"), ["Hello, ", "world!"]);
    assert_eq!(
        pieces("  lead\n\nand  trail  "),
        ["  lead\n\n", "and  ", "trail  "]
    );
    assert_eq!(pieces(""), Vec::<&str>::new());
    assert_eq!(pieces("   "), ["   "]);
    assert_eq!(
        pieces(r#"{"steps":[1,2]} ok"#),
        [r#"{"steps""#, r#":[1,2]} "#, "ok"]
    );
    assert_eq!(pieces("ünïcödé-wörds 🦀"), ["ünïcödé-", "wörds ", "🦀"]);
    for text in [
        "plain words here",
        "Grüße, 世界! 🦀🦀🦀🦀🦀🦀🦀🦀🦀🦀 tail\n",
        &json!({ "title": "A plan", "steps": ["one", "two three"] }).to_string(),
        "supercalifragilisticexpialidocious   ",
    ] {
        assert_eq!(pieces(text).concat(), text);
        assert!(pieces(text).iter().all(|p| !p.is_empty()));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_streams_content_as_openai_chunks() {
    let llm = MockLlm::start().await;
    let text = "Grüße, wörld — 世界 🦀\nsecond  line ";
    let plan = json!({ "title": "Ünïcode \"quoted\" plan", "steps": ["a b", "c\nd"] });
    llm.push(Reply::content(text));
    llm.push(Reply::json(&plan).finish_reason("length").usage(5, 3));
    llm.push(Reply::content("not streamed"));
    let client = client();

    let events = Events::of(post(&client, &llm, &stream_request("a", false)).await)
        .rest()
        .await;
    assert_eq!(events.last().map(String::as_str), Some("[DONE]"));
    let chunks = chunks(&events[..events.len() - 1]);
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["id"], "chatcmpl-mock-0");
        assert_eq!(chunk["model"], "gpt-test");
        assert!(chunk["created"].is_u64());
        assert_eq!(chunk["choices"][0]["index"], 0);
    }
    assert_eq!(
        chunks[0]["choices"][0]["delta"],
        json!({ "role": "assistant", "content": "" })
    );
    let content = &chunks[1..chunks.len() - 1];
    assert_eq!(content.len(), pieces(text).len());
    assert!(
        content
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null())
    );
    let last = &chunks[chunks.len() - 1];
    assert_eq!(last["choices"][0]["delta"], json!({}));
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert!(
        chunks.iter().all(|c| c.get("usage").is_none()),
        "no usage asked"
    );
    assert_eq!(assembled(&events), text);

    // With include_usage, a usage chunk without choices comes before [DONE].
    let events = Events::of(post(&client, &llm, &stream_request("b", true)).await)
        .rest()
        .await;
    let n = events.len();
    assert_eq!(events[n - 1], "[DONE]");
    let usage: Value = serde_json::from_str(&events[n - 2]).unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({ "prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8 })
    );
    let finish: Value = serde_json::from_str(&events[n - 3]).unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "length");
    assert_eq!(assembled(&events), plan.to_string());

    // Without `stream: true`, the plain completion as before.
    assert_eq!(chat_content(&client, &llm, "c").await, "not streamed");

    let logs = llm.streams();
    assert_eq!(logs.iter().map(|l| l.seq).collect::<Vec<_>>(), [0, 1]);
    for log in &logs {
        assert!(log.completed, "{log:?}");
        assert_eq!(log.pieces_sent, log.total_pieces);
        assert_eq!(log.pieces_generated, log.total_pieces);
        assert!(log.client_gone_at.is_none());
        assert!(log.generation_ended_at.unwrap() >= log.started_at);
    }
    assert_eq!(logs[1].total_pieces, pieces(&plan.to_string()).len());
}

/// "w0 w1 ... w{n-1}": n pieces.
fn words(n: usize) -> String {
    (0..n)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_stream_pace_spreads_the_pieces() {
    let llm = MockLlm::start().await;
    let pace = Duration::from_millis(40);
    llm.push(Reply::content(&words(10)).pace(pace));
    let client = client();
    let started = Instant::now();
    let mut events = Events::of(post(&client, &llm, &stream_request("a", false)).await);
    events.pieces(1).await;
    let first = started.elapsed();
    let rest = events.rest().await;
    let elapsed = started.elapsed();
    assert!(first >= pace, "{first:?}");
    assert!(elapsed >= pace * 10, "{elapsed:?}");
    assert_eq!(rest.last().map(String::as_str), Some("[DONE]"));
    let log = stream_log(&llm, 0, |log| log.completed).await;
    assert_eq!((log.total_pieces, log.pieces_sent), (10, 10));
    assert!(log.generation_ended_at.unwrap() - log.started_at >= pace * 10);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_stream_stall_goes_silent_until_the_client_leaves() {
    let llm = MockLlm::start().await;
    llm.push(Reply::content(&words(10)).stall_after(3));
    let client = client();
    let mut events = Events::of(post(&client, &llm, &stream_request("a", true)).await);
    events.pieces(3).await;
    let silent = tokio::time::timeout(Duration::from_millis(300), events.next()).await;
    assert!(
        silent.is_err(),
        "a stalled stream sends nothing more: {silent:?}"
    );
    let running = &llm.streams()[0];
    assert!(running.client_gone_at.is_none() && running.generation_ended_at.is_none());
    let dropped = Instant::now();
    drop(events);
    let log = stream_log(&llm, 0, |log| log.generation_ended_at.is_some()).await;
    let gone = log.client_gone_at.expect("the mock saw the client go");
    assert!(gone >= dropped, "{log:?}");
    assert!(!log.completed);
    assert_eq!((log.pieces_sent, log.total_pieces), (3, 10));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_stream_faults_shape_the_body() {
    let llm = MockLlm::start().await;
    let text = words(5);
    llm.push_all([
        Reply::content(&text).cut_after(2),
        Reply::content(&text).without_done(),
        Reply::content(&text).malformed_event_after(1),
        Reply::content(&text).done_after(0),
        Reply::raw(200, r#"{"choices": ["#),
        Reply::fault(Fault::server_error(503)),
    ]);
    let client = client();
    let body = stream_request("q", true);

    // Cut: the role chunk and two pieces, then the body ends.
    let cut = Events::of(post(&client, &llm, &body).await).rest().await;
    assert_eq!(cut.len(), 3, "{cut:?}");
    assert_eq!(assembled(&cut), "w0 w1 ");
    assert!(
        chunks(&cut)
            .iter()
            .all(|c| c["choices"][0]["finish_reason"].is_null())
    );

    // Without [DONE]: everything else, the usage chunk last.
    let undone = Events::of(post(&client, &llm, &body).await).rest().await;
    assert_eq!(assembled(&undone), text);
    let chunks = chunks(&undone);
    assert_eq!(chunks.len(), 1 + 5 + 2, "{undone:?}");
    assert_eq!(chunks[6]["choices"][0]["finish_reason"], "stop");
    assert_eq!(chunks[7]["usage"]["total_tokens"], 18);

    // Malformed: one event after the first piece is not JSON; the rest follows as usual.
    let malformed = Events::of(post(&client, &llm, &body).await).rest().await;
    assert_eq!(malformed.len(), 1 + 1 + 1 + 4 + 2 + 1, "{malformed:?}");
    assert!(serde_json::from_str::<Value>(&malformed[2]).is_err());
    assert!(malformed[2].starts_with('{'), "{malformed:?}");
    assert_eq!(assembled(&malformed), text);
    assert_eq!(malformed.last().map(String::as_str), Some("[DONE]"));

    // [DONE] after the role chunk alone: no text, no finish_reason, no usage.
    let hollow = Events::of(post(&client, &llm, &body).await).rest().await;
    assert_eq!(hollow.len(), 2, "{hollow:?}");
    assert_eq!(assembled(&hollow), "");
    let role: Value = serde_json::from_str(&hollow[0]).expect("a chunk");
    assert!(role["choices"][0]["finish_reason"].is_null(), "{role}");
    assert_eq!(hollow[1], "[DONE]");

    // Raw replies and faults are served as scripted, not streamed.
    let raw = post(&client, &llm, &body).await;
    assert_eq!(raw.headers()["content-type"], "application/json");
    assert_eq!(raw.text().await.unwrap(), r#"{"choices": ["#);
    assert_eq!(post(&client, &llm, &body).await.status(), 503);

    let logs = llm.streams();
    assert_eq!(logs.len(), 4);
    assert_eq!((logs[0].pieces_sent, logs[0].total_pieces), (2, 5));
    assert_eq!((logs[3].pieces_sent, logs[3].total_pieces), (0, 5));
    assert!(logs.iter().all(|log| log.completed), "{logs:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn llm_may_refuse_stream_options_or_never_stream() {
    let llm = MockLlm::start().await;
    llm.refuse_stream_options();
    llm.push(Reply::content("streamed"));
    let client = client();
    let refused = post(&client, &llm, &stream_request("a", true)).await;
    assert_eq!(refused.status(), 400);
    let body: Value = refused.json().await.unwrap();
    assert_eq!(
        body,
        json!({"error": {
            "message": "Unrecognized request argument supplied: stream_options",
            "type": "invalid_request_error", "param": "stream_options", "code": null,
        }})
    );
    assert_eq!((llm.refused(), llm.pending()), (1, 1));
    let events = Events::of(post(&client, &llm, &stream_request("b", false)).await)
        .rest()
        .await;
    assert_eq!(assembled(&events), "streamed");

    let plain = MockLlm::start().await;
    plain.never_streams();
    plain.push(Reply::content("whole").pace(Duration::from_secs(5)));
    let response = post(&client, &plain, &stream_request("a", true)).await;
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "whole");
    assert!(plain.streams().is_empty());
}

/// One-at-a-time: request 0 streams ten pieces at `pace`, its client reads one and leaves,
/// then request 1 asks for a plain answer. Returns the stream's log and request 1's record.
async fn dropped_stream_then_next(llm: &MockLlm, pace: Duration) -> (StreamLog, Recorded) {
    llm.one_at_a_time();
    llm.push(Reply::content(&words(10)).pace(pace));
    llm.push(Reply::content("next"));
    let client = client();
    let mut events = Events::of(post(&client, llm, &stream_request("a", false)).await);
    events.pieces(1).await;
    drop(events);
    assert_eq!(chat_content(&client, llm, "b").await, "next");
    let log = stream_log(llm, 0, |log| log.generation_ended_at.is_some()).await;
    (log, llm.requests()[1].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_at_a_time_frees_the_slot_when_a_streams_client_leaves() {
    let pace = Duration::from_millis(200);
    let llm = MockLlm::start().await;
    let (log, next) = dropped_stream_then_next(&llm, pace).await;
    let ended = log.generation_ended_at.unwrap();
    assert!(!log.completed, "{log:?}");
    assert!(log.client_gone_at.is_some_and(|gone| gone <= ended));
    assert!(log.pieces_generated < 10 && log.pieces_sent < 10, "{log:?}");
    let answered = next.responded_at.unwrap();
    assert!(answered >= ended, "the turn is held until generation stops");
    assert!(
        answered < log.started_at + pace * 10,
        "answered before the abandoned answer's full generation: {log:?} {next:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_at_a_time_waits_for_a_generation_that_outlives_its_client() {
    let pace = Duration::from_millis(150);
    let llm = MockLlm::start().await;
    llm.keeps_generating();
    let (log, next) = dropped_stream_then_next(&llm, pace).await;
    let ended = log.generation_ended_at.unwrap();
    assert!(log.completed, "{log:?}");
    assert_eq!(log.pieces_generated, 10);
    assert!(log.pieces_sent < 10, "{log:?}");
    assert!(log.client_gone_at.is_some_and(|gone| gone < ended));
    assert!(ended - log.started_at >= pace * 10, "{log:?}");
    assert!(
        next.received_at < ended,
        "request 1 came during the generation"
    );
    assert!(next.responded_at.unwrap() >= ended, "{next:?} {log:?}");
}
