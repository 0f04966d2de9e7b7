//! An OpenAI-compatible chat-completions server for tests. `POST /v1/chat/completions` is first
//! checked against the [`Refusal`] rules (a refused request gets the error a real server sends
//! and takes no scripted reply); otherwise it takes the next scripted [`Reply`] from a FIFO
//! queue, or asks the fallback handler when the queue is empty; with neither it answers 500 with
//! a message naming the request, so a test sees its own scripting mistake. A rate limit
//! ([`MockLlm::admit_per_second`]) comes before all of that, as on a real server: beyond R
//! accepted requests in the last second, a request gets 429 with `retry-after-ms`, the time
//! until a slot frees (or with no word of when: [`MockLlm::admit_per_second_silently`]); or
//! from a bucket refilled at R a second, announced in OpenAI's `x-ratelimit-*` headers on every
//! answer ([`MockLlm::announce_per_second`]). `GET /v1/models` lists one model; any other path is 404. A required
//! `Authorization` ([`MockLlm::require_authorization`]) is checked on every path, after the rate
//! limit and a crash. Everything is recorded by the shared core in `server.rs`; dropping the
//! [`MockLlm`] shuts the server down.
//!
//! A chat request with `"stream": true` gets a content reply as server-sent events
//! (`sse.rs`), paced and faulted as the [`Reply`] says, unless the server never streams
//! ([`MockLlm::never_streams`]); raw and fault replies are served as they are, streaming or
//! not. Each streamed generation is logged ([`MockLlm::streams`]); it stops when the client
//! goes, unless the server keeps generating ([`MockLlm::keeps_generating`]). In one-at-a-time
//! mode a streamed answer holds the turn until its generation ends.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::json;

use super::fault::Fault;
use super::refusal::{FormatKind, Refusal};
use super::server::{
    Planned, Recorded, Route, Server, Streamed, json_response, lock, raw_response,
};
use super::sse::{self, Generation, StreamLog, StreamScript};

/// The model name answered when a request names none.
pub const DEFAULT_MODEL: &str = "mock-model";

#[derive(Clone, Debug)]
enum ReplyKind {
    Content(Answer),
    Raw { status: u16, body: String },
    Fault(Fault),
}

/// What a `chat.completion` says besides the model and id.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    pub text: String,
    pub finish_reason: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Answer {
    /// `text`, finish_reason "stop", usage 11 + 7 = 18 tokens.
    pub fn new(text: &str) -> Answer {
        Answer {
            text: text.to_owned(),
            finish_reason: "stop".to_owned(),
            prompt_tokens: 11,
            completion_tokens: 7,
        }
    }
}

/// One scripted answer to a chat-completions request.
#[derive(Clone, Debug)]
pub struct Reply {
    kind: ReplyKind,
    delay: Duration,
    stream: StreamScript,
}

impl Reply {
    /// 200 with a full `chat.completion` whose single choice says `text` (model echoed from the
    /// request, usage 11 + 7 = 18 tokens, finish_reason "stop", logprobs null).
    pub fn content(text: &str) -> Reply {
        Reply {
            kind: ReplyKind::Content(Answer::new(text)),
            delay: Duration::ZERO,
            stream: StreamScript::default(),
        }
    }

    /// `text` cut off by `max_tokens`: finish_reason "length". The text is sent as given, so a
    /// truncated JSON answer is simply unfinished JSON.
    pub fn truncated(text: &str) -> Reply {
        Reply::content(text).finish_reason("length")
    }

    /// What a small model sometimes answers: content "", finish_reason "stop", no completion
    /// tokens.
    pub fn empty() -> Reply {
        Reply::content("").usage(11, 0)
    }

    /// Sets the choice's finish_reason ("stop", "length", "content_filter", ...). Only content
    /// replies carry one; for raw and fault replies this does nothing.
    pub fn finish_reason(mut self, reason: &str) -> Reply {
        if let ReplyKind::Content(answer) = &mut self.kind {
            answer.finish_reason = reason.to_owned();
        }
        self
    }

    /// Sets the usage block (total = prompt + completion). Only content replies carry one; for
    /// raw and fault replies this does nothing.
    pub fn usage(mut self, prompt: u64, completion: u64) -> Reply {
        if let ReplyKind::Content(answer) = &mut self.kind {
            answer.prompt_tokens = prompt;
            answer.completion_tokens = completion;
        }
        self
    }

    /// `content(value.to_string())`: the assistant answers with this JSON text.
    pub fn json(value: &serde_json::Value) -> Reply {
        Reply::content(&value.to_string())
    }

    /// Serve this fault instead of a completion.
    pub fn fault(fault: Fault) -> Reply {
        Reply {
            kind: ReplyKind::Fault(fault),
            delay: Duration::ZERO,
            stream: StreamScript::default(),
        }
    }

    /// An arbitrary (possibly malformed) body with `content-type: application/json`.
    pub fn raw(status: u16, body: &str) -> Reply {
        Reply {
            kind: ReplyKind::Raw {
                status,
                body: body.to_owned(),
            },
            delay: Duration::ZERO,
            stream: StreamScript::default(),
        }
    }

    /// Wait `d` before answering (also before a fault); a streamed answer waits before its
    /// response head.
    pub fn delay(mut self, d: Duration) -> Reply {
        self.delay = d;
        self
    }

    /// When streamed, each piece of the text takes `d` to generate, so an answer of n pieces
    /// takes about n x `d` after its head (default zero). Not streamed, this does nothing.
    pub fn pace(mut self, d: Duration) -> Reply {
        self.stream.pace(d);
        self
    }

    /// When streamed, sends the first `n` pieces, then nothing more, and never ends the body:
    /// a server gone silent mid-answer. The generation ends when the client goes (with
    /// [`MockLlm::keeps_generating`], never: the server is hung). Replaces a
    /// [`Reply::cut_after`].
    pub fn stall_after(mut self, n: usize) -> Reply {
        self.stream.stall_after(n);
        self
    }

    /// When streamed, sends the first `n` pieces, then ends the body cleanly, with no
    /// finish_reason chunk, no usage and no `[DONE]`: a stream cut short. Replaces a
    /// [`Reply::stall_after`].
    pub fn cut_after(mut self, n: usize) -> Reply {
        self.stream.cut_after(n);
        self
    }

    /// When streamed, sends the first `n` pieces, then `data: [DONE]`, with no finish_reason
    /// chunk and no usage: what llama-cpp-python 0.3.x sent now and then for a `json_object`
    /// request with a schema (`n` = 0: the role chunk, then `[DONE]`; the same request asked
    /// again was answered). Replaces a [`Reply::cut_after`] or [`Reply::stall_after`].
    pub fn done_after(mut self, n: usize) -> Reply {
        self.stream.done_after(n);
        self
    }

    /// When streamed, sends the first `n` pieces, then closes the connection without ending
    /// the body: a server that crashed or restarted mid-answer (the client reads an end of
    /// file where the next chunk's size should be). Replaces the other stream endings.
    pub fn die_after(mut self, n: usize) -> Reply {
        self.stream.die_after(n);
        self
    }

    /// When streamed, sends the whole answer (finish_reason and usage chunks included) and
    /// ends the body without `data: [DONE]`.
    pub fn without_done(mut self) -> Reply {
        self.stream.without_done();
        self
    }

    /// When streamed, sends one event whose data is not JSON (a chunk cut off mid-object)
    /// after the first `n` pieces (after the last one if the text has fewer), then goes on
    /// normally.
    pub fn malformed_event_after(mut self, n: usize) -> Reply {
        self.stream.malformed_event_after(n);
        self
    }

    fn plan(self, request: &Recorded) -> Planned {
        let planned = match self.kind {
            ReplyKind::Content(answer) => {
                Planned::respond(json_response(200, &completion_of(request, &answer)))
            }
            ReplyKind::Raw { status, body } => Planned::respond(raw_response(
                status,
                &[("content-type", "application/json")],
                &body,
            )),
            ReplyKind::Fault(fault) => Planned::fault(fault),
        };
        planned.delay(self.delay)
    }
}

/// The `chat.completion` object for `text`, answering `request` (finish_reason "stop", usage
/// 11 + 7).
pub fn completion(request: &Recorded, text: &str) -> serde_json::Value {
    completion_of(request, &Answer::new(text))
}

/// The `chat.completion` object for `answer`, answering `request`, shaped like
/// llama-cpp-python's (which also sends `"logprobs": null` in each choice).
pub fn completion_of(request: &Recorded, answer: &Answer) -> serde_json::Value {
    json!({
        "id": format!("chatcmpl-mock-{}", request.seq),
        "object": "chat.completion",
        "created": created_now(),
        "model": model_of(request),
        "choices": [{
            "index": 0,
            "message": { "role": "assistant", "content": answer.text },
            "logprobs": null,
            "finish_reason": answer.finish_reason,
        }],
        "usage": {
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens,
        },
    })
}

/// The model a request names, [`DEFAULT_MODEL`] if none.
pub fn model_of(request: &Recorded) -> &str {
    request
        .body
        .get("model")
        .and_then(|m| m.as_str())
        .unwrap_or(DEFAULT_MODEL)
}

/// A completion's `created`: seconds since the Unix epoch.
pub fn created_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

type Handler = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

#[derive(Default)]
struct State {
    queue: Mutex<VecDeque<Reply>>,
    handler: Mutex<Option<Handler>>,
    refusals: Mutex<Vec<Refusal>>,
    refused: AtomicUsize,
    admit: Mutex<Option<Window>>,
    rate_refused: AtomicUsize,
    /// Dies, like llama-cpp-python, on a grammar its converter cannot build.
    grammar_crash: AtomicBool,
    /// Died: every connection is closed without an answer from now on.
    dead: AtomicBool,
    /// The model's context in tokens (0: unbounded), see [`MockLlm::context_tokens`].
    context: AtomicUsize,
    /// The only `Authorization` accepted, see [`MockLlm::require_authorization`].
    authorization: Mutex<Option<String>>,
    /// Answers `"stream": true` with plain JSON, see [`MockLlm::never_streams`].
    never_streams: AtomicBool,
    /// Takes `stream_options` and sends no usage, see [`MockLlm::no_usage_in_streams`].
    no_usage_in_streams: AtomicBool,
    /// Streamed generations outlive their client, see [`MockLlm::keeps_generating`].
    keeps_generating: AtomicBool,
    /// Every streamed generation, in the order they started.
    streams: Arc<Mutex<Vec<StreamLog>>>,
}

/// The rate limit of [`MockLlm::admit_per_second`] and its kin: a sliding one-second window
/// over the requests it accepted, or (announcing its budget) a bucket of `per_second`
/// requests refilled continuously, as OpenAI's limits are.
struct Window {
    per_second: usize,
    accepted: VecDeque<Instant>,
    /// The bucket's requests left, and when it was last refilled.
    bucket: Option<(f64, Instant)>,
    /// A 429 says when to come back (`retry-after-ms`).
    retry_after: bool,
}

const SECOND: Duration = Duration::from_secs(1);

impl Window {
    /// Accepts a request now (`Ok`), or says how long until a slot frees; with the headers
    /// that announce the budget, if it does.
    fn admit(&mut self, now: Instant) -> (Result<(), Duration>, Vec<(String, String)>) {
        let rate = self.per_second as f64;
        if let Some((left, at)) = &mut self.bucket {
            *left = (*left + now.duration_since(*at).as_secs_f64() * rate).min(rate);
            *at = now;
            let verdict = match *left >= 1.0 {
                true => {
                    *left -= 1.0;
                    Ok(())
                }
                false => Err(Duration::from_secs_f64((1.0 - *left) / rate)),
            };
            let reset = Duration::from_secs_f64((rate - *left) / rate);
            let headers = [
                ("x-ratelimit-limit-requests", format!("{}", self.per_second)),
                (
                    "x-ratelimit-remaining-requests",
                    format!("{}", left.floor()),
                ),
                (
                    "x-ratelimit-reset-requests",
                    format!("{}ms", reset.as_millis()),
                ),
            ];
            return (verdict, headers.map(|(k, v)| (k.to_string(), v)).to_vec());
        }
        while self
            .accepted
            .front()
            .is_some_and(|t| now.duration_since(*t) >= SECOND)
        {
            self.accepted.pop_front();
        }
        if self.accepted.len() < self.per_second {
            self.accepted.push_back(now);
            return (Ok(()), Vec::new());
        }
        let oldest = self.accepted.front().copied().unwrap_or(now);
        (
            Err(SECOND.saturating_sub(now.duration_since(oldest))),
            Vec::new(),
        )
    }
}

impl State {
    /// The rate limit first, then [`State::route_admitted`]; the budget's headers on either.
    fn route(&self, request: &Recorded) -> Planned {
        let chat = request.method == "POST" && request.path == "/v1/chat/completions";
        let limit = match chat {
            true => lock(&self.admit)
                .as_mut()
                .map(|w| (w.admit(Instant::now()), w.retry_after)),
            false => None,
        };
        let Some(((verdict, headers), retry_after)) = limit else {
            return self.route_admitted(request, chat);
        };
        let Err(wait) = verdict else {
            return self.route_admitted(request, chat).with_headers(headers);
        };
        self.rate_refused.fetch_add(1, Ordering::SeqCst);
        // Whole milliseconds, rounded up and at least one, so that a client that waits as
        // told finds the slot free.
        let ms = u64::try_from(wait.as_micros().div_ceil(1000)).unwrap_or(1000);
        let fault = match retry_after {
            true => Fault::rate_limited_ms(ms.max(1)),
            false => Fault::rate_limited(None),
        };
        Planned::fault(fault).with_headers(headers)
    }

    fn route_admitted(&self, request: &Recorded, chat: bool) -> Planned {
        if self.dead.load(Ordering::SeqCst)
            || (chat
                && self.grammar_crash.load(Ordering::SeqCst)
                && crashes_llama_cpp(&request.body))
        {
            self.dead.store(true, Ordering::SeqCst);
            return Planned::fault(Fault::Drop);
        }
        if let Some(body) = self.unauthorized(request) {
            return Planned::respond(json_response(401, &body));
        }
        if chat && let Some(body) = self.overflow(request) {
            // Streamed, the check fails inside the generator: a 200 stream with no event.
            if sse::wants_stream(&request.body) && !self.never_streams.load(Ordering::SeqCst) {
                return Planned::stream(Streamed {
                    status: 200,
                    headers: vec![("content-type".into(), "text/event-stream".into())],
                    produce: Box::new(|_body| Box::pin(async {})),
                });
            }
            return Planned::respond(json_response(400, &body));
        }
        match (request.method.as_str(), request.path.as_str()) {
            ("POST", "/v1/chat/completions") => match self.refusal(request) {
                Some(refusal) => {
                    self.refused.fetch_add(1, Ordering::SeqCst);
                    Planned::fault(refusal.fault(&request.body))
                }
                None => self.answer(self.next_reply(request), request),
            },
            ("GET", "/v1/models") => Planned::respond(json_response(
                200,
                &json!({
                    "object": "list",
                    "data": [{
                        "id": DEFAULT_MODEL,
                        "object": "model",
                        "created": 0,
                        "owned_by": "mock",
                    }],
                }),
            )),
            (method, path) => Planned::respond(json_response(
                404,
                &json!({ "error": { "message": format!("mock llm: no route for {method} {path}") } }),
            )),
        }
    }

    /// A reply as this server sends it: streamed when it is content, the request asks for a
    /// stream and the server streams; otherwise as scripted.
    fn answer(&self, reply: Reply, request: &Recorded) -> Planned {
        let streams =
            sse::wants_stream(&request.body) && !self.never_streams.load(Ordering::SeqCst);
        match &reply.kind {
            ReplyKind::Content(answer) if streams => {
                let generation = Generation {
                    keeps_generating: self.keeps_generating.load(Ordering::SeqCst),
                    logs: self.streams.clone(),
                };
                let mut asked = request.clone();
                if self.no_usage_in_streams.load(Ordering::SeqCst)
                    && let Some(body) = asked.body.as_object_mut()
                {
                    body.remove("stream_options");
                }
                sse::planned(&asked, answer, &reply.stream, generation).delay(reply.delay)
            }
            _ => reply.plan(request),
        }
    }

    /// A 401 that echoes the `Authorization` it refused, as some proxies do, when one is
    /// required and the request has another.
    fn unauthorized(&self, request: &Recorded) -> Option<serde_json::Value> {
        let required = lock(&self.authorization).clone()?;
        let sent = request
            .headers
            .iter()
            .find(|(name, _)| name == "authorization")
            .map_or("", |(_, value)| value.as_str());
        (sent != required).then(
            || json!({"error": {"message": format!("invalid credentials: Authorization: {sent}")}}),
        )
    }

    /// llama-cpp-python's 400 when the messages exceed the context (its message counts the
    /// token limit too, but a limit beyond the context is cut to what is left, as measured).
    fn overflow(&self, request: &Recorded) -> Option<serde_json::Value> {
        let context = self.context.load(Ordering::SeqCst);
        if context == 0 {
            return None;
        }
        let messages: usize = request
            .messages()
            .iter()
            .filter_map(|m| m["content"].as_str())
            .map(estimated_tokens)
            .sum();
        let completion = ["max_tokens", "max_completion_tokens"]
            .iter()
            .find_map(|k| request.body.get(*k).and_then(serde_json::Value::as_u64))
            .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let requested = messages + completion;
        (messages > context).then(|| {
            json!({"error": {
                "message": format!("This model's maximum context length is {context} tokens. However, you requested {requested} tokens ({messages} in the messages, {completion} in the completion). Please reduce the length of the messages or completion."),
                "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"
            }})
        })
    }

    /// How long until the rate limit frees a slot, when it refuses a request now.
    /// The first rule that refuses `request`, in the order they were added.
    fn refusal(&self, request: &Recorded) -> Option<Refusal> {
        lock(&self.refusals)
            .iter()
            .find(|rule| rule.matches(&request.body))
            .cloned()
    }

    fn next_reply(&self, request: &Recorded) -> Reply {
        if let Some(reply) = lock(&self.queue).pop_front() {
            return reply;
        }
        // Cloned out so the handler runs without the lock held.
        let handler = lock(&self.handler).clone();
        match handler {
            Some(handler) => handler(request),
            None => Reply::raw(
                500,
                &json!({
                    "error": {
                        "message": format!("mock llm: no scripted reply for request {}", request.seq)
                    }
                })
                .to_string(),
            ),
        }
    }
}

/// A chat-completions server on 127.0.0.1; dropping it shuts the server down.
pub struct MockLlm {
    server: Server,
    state: Arc<State>,
}

impl MockLlm {
    pub async fn start() -> MockLlm {
        let state = Arc::new(State::default());
        let route_state = state.clone();
        let route: Route = Arc::new(move |request: &Recorded| route_state.route(request));
        MockLlm {
            server: Server::start(route).await,
            state,
        }
    }

    /// A mock that behaves like llama-cpp-python 0.3.x serving Gemma 3 270M: `response_format`
    /// of type `json_schema` is refused with its 500 (`json_object` with a `schema` is
    /// accepted), requests are answered one at a time, a stream carries no usage whatever
    /// `stream_options` asks (its generation stops when the client leaves, as measured), and a
    /// schema its grammar converter cannot build kills the server: that request and every
    /// later one get their connection closed without an answer (see [`crashes_llama_cpp`]).
    pub async fn llama_cpp_python() -> MockLlm {
        let llm = MockLlm::start().await;
        llm.refuse(Refusal::format(FormatKind::JsonSchema, 500));
        llm.one_at_a_time();
        llm.no_usage_in_streams();
        llm.state.grammar_crash.store(true, Ordering::SeqCst);
        llm
    }

    /// Gives the model a context of `tokens`: a request whose messages (estimated as SmolLM2's
    /// tokenizer counts them, see [`estimated_tokens`]) exceed it gets llama-cpp-python's 400
    /// `context_length_exceeded`, as SmolLM2 135M (8,192 tokens) answered the Thinkon seed
    /// prompt (9,569 tokens in the messages); asked for a stream, a 200 stream that ends before
    /// its first event, as llama-cpp-python 0.3.36 answered SmolLM2 at 2,048 tokens.
    pub fn context_tokens(&self, tokens: usize) {
        self.state.context.store(tokens, Ordering::SeqCst);
    }

    /// From now on, answers every request (any path) whose `Authorization` header is not
    /// `value` with a 401 whose message echoes the header it got.
    pub fn require_authorization(&self, value: &str) {
        *lock(&self.state.authorization) = Some(value.to_owned());
    }

    /// Whether the mock has died (see [`MockLlm::llama_cpp_python`]).
    pub fn dead(&self) -> bool {
        self.state.dead.load(Ordering::SeqCst)
    }

    /// Refuses every chat request that `rule` matches, before the reply queue: a refused
    /// request is recorded but takes no scripted reply. Rules are checked in the order added.
    pub fn refuse(&self, rule: Refusal) {
        lock(&self.state.refusals).push(rule);
    }

    /// From now on, accepts at most `r` chat requests in any one second (a sliding window over
    /// the accepted ones) and answers 429 beyond it, with `retry-after-ms` saying when the
    /// oldest accepted request leaves the window. Refused requests are recorded, count in
    /// [`MockLlm::rate_refused`] and take no scripted reply.
    pub fn admit_per_second(&self, r: u32) {
        self.limit(r, None, true);
    }

    /// [`MockLlm::admit_per_second`], its 429s saying nothing of when to come back.
    pub fn admit_per_second_silently(&self, r: u32) {
        self.limit(r, None, false);
    }

    /// From now on, admits chat requests from a bucket of `r` refilled at `r` a second, and
    /// announces its budget on every answer as OpenAI does (`x-ratelimit-limit-requests`,
    /// `-remaining-requests`, `-reset-requests`: the time until the bucket is full), and on a
    /// 429 with `retry-after-ms` too.
    pub fn announce_per_second(&self, r: u32) {
        self.limit(r, Some((f64::from(r), Instant::now())), true);
    }

    fn limit(&self, r: u32, bucket: Option<(f64, Instant)>, retry_after: bool) {
        *lock(&self.state.admit) = Some(Window {
            per_second: usize::try_from(r).unwrap_or(usize::MAX),
            accepted: VecDeque::new(),
            bucket,
            retry_after,
        });
    }

    /// How many chat requests the rate limit of [`MockLlm::admit_per_second`] refused.
    pub fn rate_refused(&self) -> usize {
        self.state.rate_refused.load(Ordering::SeqCst)
    }

    /// How many chat requests a [`Refusal`] rule refused.
    pub fn refused(&self) -> usize {
        self.state.refused.load(Ordering::SeqCst)
    }

    /// Answers one request at a time, in arrival order, as llama-cpp-python does: a request
    /// waits (in flight, unanswered) until the ones before it have been answered, delays
    /// included, and a streamed answer until its generation has ended (see
    /// [`MockLlm::keeps_generating`]). A hanging reply then blocks every later request.
    pub fn one_at_a_time(&self) {
        self.server.one_at_a_time();
    }

    /// Refuses every chat request that carries `stream_options` with a 400 `Unrecognized
    /// request argument supplied: stream_options`, as servers that predate the option do (a
    /// [`Refusal::unrecognized`] rule, counted in [`MockLlm::refused`]).
    pub fn refuse_stream_options(&self) {
        self.refuse(Refusal::unrecognized("stream_options", 400));
    }

    /// From now on, takes `stream_options.include_usage` without sending the usage chunk it
    /// asks for, as llama-cpp-python 0.3.x does: a stream then tells no token counts.
    pub fn no_usage_in_streams(&self) {
        self.state.no_usage_in_streams.store(true, Ordering::SeqCst);
    }

    /// From now on, ignores `"stream": true` and answers every content reply with the plain
    /// `chat.completion` JSON, as a server that cannot stream does.
    pub fn never_streams(&self) {
        self.state.never_streams.store(true, Ordering::SeqCst);
    }

    /// From now on, a streamed generation goes on after its client has gone: each remaining
    /// piece still takes its pace, as llama.cpp's server does in some versions, and in
    /// one-at-a-time mode the next request waits for it. Without this, generation stops as
    /// soon as the mock sees the client gone, as vLLM does.
    pub fn keeps_generating(&self) {
        self.state.keeps_generating.store(true, Ordering::SeqCst);
    }

    /// What each streamed generation did so far, in the order they started.
    pub fn streams(&self) -> Vec<StreamLog> {
        lock(&self.state.streams).clone()
    }

    /// [`MockLlm::streams`], readable from anywhere (a condition of `Cmd::signal_when`).
    pub fn streams_reader(&self) -> impl Fn() -> Vec<StreamLog> + Send + Sync + 'static {
        let streams = Arc::clone(&self.state.streams);
        move || lock(&streams).clone()
    }

    /// "http://127.0.0.1:PORT/v1"
    pub fn base_url(&self) -> String {
        format!("{}/v1", self.server.url())
    }

    /// Queues `reply`: each `POST /v1/chat/completions` takes the next one, first in first out.
    pub fn push(&self, reply: Reply) {
        lock(&self.state.queue).push_back(reply);
    }

    /// Queues each of `replies` in order.
    pub fn push_all(&self, replies: impl IntoIterator<Item = Reply>) {
        lock(&self.state.queue).extend(replies);
    }

    /// Scripted replies not yet taken.
    pub fn pending(&self) -> usize {
        lock(&self.state.queue).len()
    }

    /// Answers chat requests with `f` whenever the queue is empty (replaces any earlier handler).
    pub fn set_handler(&self, f: impl Fn(&Recorded) -> Reply + Send + Sync + 'static) {
        *lock(&self.state.handler) = Some(Arc::new(f));
    }

    /// Every request so far, in arrival order (any path).
    pub fn requests(&self) -> Vec<Recorded> {
        self.server.requests()
    }

    /// Only the `POST /v1/chat/completions` requests, in arrival order.
    pub fn chat_requests(&self) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path == "/v1/chat/completions")
            .collect()
    }

    /// The most requests that were being handled at the same moment.
    pub fn max_in_flight(&self) -> usize {
        self.server.max_in_flight()
    }

    /// Requests being handled right now (delayed or hanging ones included).
    pub fn in_flight(&self) -> usize {
        self.server.in_flight()
    }
}

/// Whether the `json_object` schema of a request kills llama-cpp-python 0.3.x: its grammar
/// converter expands a `maxLength` into one optional rule per character, and the grammar
/// parser gives up ("number of rules that are going to be repeated multiplied by the new
/// repetition exceeds sane defaults") beyond about a thousand (1000 was served, 1200 killed the
/// server, against SmolLM2 135M); a pattern with a shorthand such as `\s` or `\d` kills it too.
pub fn crashes_llama_cpp(body: &serde_json::Value) -> bool {
    fn walk(v: &serde_json::Value) -> bool {
        match v {
            serde_json::Value::Object(map) => {
                map.get("maxLength")
                    .and_then(serde_json::Value::as_u64)
                    .is_some_and(|n| n > 1000)
                    || map
                        .get("pattern")
                        .and_then(serde_json::Value::as_str)
                        .is_some_and(|p| p.contains("\\s") || p.contains("\\d"))
                    || map.values().any(walk)
            }
            serde_json::Value::Array(items) => items.iter().any(walk),
            _ => false,
        }
    }
    body.get("response_format")
        .and_then(|f| f.get("schema"))
        .is_some_and(walk)
}

/// The first JSON example of a request's system prompt (a fenced ```json block) that contains
/// `marker`, as a tiny model answers: Gemma 3 270M, asked with the Thinkon planner prompt,
/// returned its example A word for word, whatever the goal; asked for a reflection, it wrote
/// the shape's `...` in every section.
pub fn copied_example(request: &Recorded, marker: &str) -> Option<serde_json::Value> {
    let prompt = request.system_prompt()?;
    prompt
        .split("```json")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .filter(|text| text.contains(marker))
        .find_map(|text| serde_json::from_str(text.trim()).ok())
}

/// Tokens of `text` as SmolLM2's tokenizer about counts them: 3.5 ASCII characters a token and
/// 2 tokens a CJK or other non-ASCII character (the seed's planner prompt, 8,565 ASCII and
/// 3,448 other characters, came to about 9,300 tokens).
pub fn estimated_tokens(text: &str) -> usize {
    let ascii = text.chars().filter(char::is_ascii).count();
    let other = text.chars().count() - ascii;
    ascii * 2 / 7 + other * 2
}
