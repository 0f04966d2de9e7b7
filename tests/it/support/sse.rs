//! Streamed chat completions, as OpenAI-compatible servers send them for `"stream": true`:
//! server-sent events, each `data: {json}\n\n` with a `chat.completion.chunk`. The first chunk's
//! delta is `{"role": "assistant", "content": ""}`, then one chunk per piece of the text (see
//! [`pieces`]), then an empty delta with the finish_reason, then (only when the request asked
//! `stream_options.include_usage`) a chunk with no choices and the usage, then `data: [DONE]`.
//!
//! A [`StreamScript`] paces the pieces and scripts a stream's faults: a stall, a cut, a missing
//! `[DONE]`, a `[DONE]` with no finish_reason before it, an event that is not JSON. The generation runs as the server core's producer
//! task and logs what it did in a [`StreamLog`]. It stops when the client goes unless the
//! server keeps generating ([`Generation::keeps_generating`]). Which requests are streamed is
//! decided in `mock_llm.rs`; how a body is fed and a disconnection seen lives in `server.rs`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::mock_llm::{Answer, created_now, model_of};
use super::server::{BodySender, Planned, Recorded, Streamed, lock};

/// Pieces longer than this many characters (JSON without spaces, long words) are split.
const LONGEST_PIECE: usize = 8;

/// The event a `malformed_event_after` stream sends: a chunk cut off mid-JSON.
const MALFORMED: &str = "data: {\"choices\": [{\"delta\": {\"content\": \"x\"\n\n";

const DONE: &str = "data: [DONE]\n\n";

/// How a streamed answer ends.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum End {
    /// finish_reason, usage if asked, `[DONE]`.
    #[default]
    Full,
    /// After n pieces, nothing more, and the body is never ended.
    StallAfter(usize),
    /// After n pieces, the body ends without finish_reason or `[DONE]`.
    CutAfter(usize),
    /// After n pieces, `[DONE]`, with no finish_reason and no usage before it.
    DoneAfter(usize),
    /// After n pieces, the connection is closed mid-body: a server that crashed.
    DieAfter(usize),
}

/// What follows a stream's last event.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Tail {
    /// The body ends.
    Ends,
    /// Nothing, and the body is never ended.
    Stalls,
    /// The connection is closed without the body's end.
    Dies,
}

/// How a content reply is streamed: the pace of its pieces and the faults of its stream. Set
/// through `Reply`'s builders; it changes nothing when the reply is not streamed.
#[derive(Clone, Debug, Default)]
pub struct StreamScript {
    pace: Duration,
    end: End,
    without_done: bool,
    malformed_after: Option<usize>,
}

impl StreamScript {
    pub fn pace(&mut self, pace: Duration) {
        self.pace = pace;
    }

    pub fn stall_after(&mut self, n: usize) {
        self.end = End::StallAfter(n);
    }

    pub fn cut_after(&mut self, n: usize) {
        self.end = End::CutAfter(n);
    }

    pub fn done_after(&mut self, n: usize) {
        self.end = End::DoneAfter(n);
    }

    pub fn die_after(&mut self, n: usize) {
        self.end = End::DieAfter(n);
    }

    pub fn without_done(&mut self) {
        self.without_done = true;
    }

    pub fn malformed_event_after(&mut self, n: usize) {
        self.malformed_after = Some(n);
    }
}

/// What one streamed answer's generation did, as the mock saw it.
#[derive(Clone, Debug)]
pub struct StreamLog {
    /// The request's [`Recorded::seq`].
    pub seq: usize,
    /// Pieces of the text the answer has ([`pieces`]).
    pub total_pieces: usize,
    /// Pieces whose pace has elapsed, sent or not (with `keeps_generating`, after the client
    /// went too).
    pub pieces_generated: usize,
    /// Pieces handed to the connection.
    pub pieces_sent: usize,
    /// The generation went through its whole script (a cut stream: up to the cut), whether or
    /// not the client was still there; false when it stopped because the client went, or is
    /// still running.
    pub completed: bool,
    /// When generation began (after the reply's delay, with the head sent).
    pub started_at: Instant,
    /// When the mock saw that the client had gone (a send failed, or the body was dropped).
    pub client_gone_at: Option<Instant>,
    /// When generation stopped: at its end, when the client went, or, with
    /// `keeps_generating`, when the abandoned generation finished. `None` while running.
    pub generation_ended_at: Option<Instant>,
}

/// The server's behaviour towards a streamed answer, and where it logs the generations.
#[derive(Clone)]
pub struct Generation {
    /// Keep generating (pace elapsing for each remaining piece) after the client went.
    pub keeps_generating: bool,
    pub logs: Arc<Mutex<Vec<StreamLog>>>,
}

/// Whether a request asks for a streamed answer (`"stream": true`).
pub fn wants_stream(body: &Value) -> bool {
    body.get("stream") == Some(&Value::Bool(true))
}

/// The pieces a text is streamed in, one "token" each: every word with the whitespace after
/// it (whitespace before the first word goes with it), a word longer than 8 characters cut
/// every 8 characters. Joined, they are the text exactly.
pub fn pieces(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = 0;
    let mut after_word = false;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            after_word |= in_word;
        } else if after_word {
            words.push(&text[start..i]);
            start = i;
            after_word = false;
        } else {
            in_word = true;
        }
    }
    if start < text.len() {
        words.push(&text[start..]);
    }
    words.into_iter().flat_map(split_long).collect()
}

/// A word cut every [`LONGEST_PIECE`] characters; its trailing whitespace stays with the last
/// part.
fn split_long(word: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = word;
    while rest.trim_end().chars().count() > LONGEST_PIECE {
        let cut = rest
            .char_indices()
            .nth(LONGEST_PIECE)
            .map_or(rest.len(), |(i, _)| i);
        parts.push(&rest[..cut]);
        rest = &rest[cut..];
    }
    parts.push(rest);
    parts
}

/// One event of a stream.
enum Event {
    /// A piece of the text: it takes the pace to generate and counts as sent.
    Piece(String),
    /// Anything else: the role, finish and usage chunks, `[DONE]`, a malformed event.
    Other(String),
}

/// The streamed answer to `request`: a 200 `text/event-stream` whose body a producer task
/// generates.
pub fn planned(
    request: &Recorded,
    answer: &Answer,
    script: &StreamScript,
    generation: Generation,
) -> Planned {
    let include_usage = request.body["stream_options"]["include_usage"] == Value::Bool(true);
    let total_pieces = pieces(&answer.text).len();
    let (events, tail) = events(request, answer, script, include_usage);
    let seq = request.seq;
    let pace = script.pace;
    Planned::stream(Streamed {
        status: 200,
        headers: vec![
            ("content-type".to_owned(), "text/event-stream".to_owned()),
            ("cache-control".to_owned(), "no-cache".to_owned()),
        ],
        produce: Box::new(move |body| {
            Box::pin(async move {
                let generator = Generator::start(body, seq, total_pieces, pace, generation);
                generator.run(events, tail).await;
            })
        }),
    })
}

/// The events of a streamed answer, and what follows them.
fn events(
    request: &Recorded,
    answer: &Answer,
    script: &StreamScript,
    include_usage: bool,
) -> (Vec<Event>, Tail) {
    let base = json!({
        "id": format!("chatcmpl-mock-{}", request.seq),
        "object": "chat.completion.chunk",
        "created": created_now(),
        "model": model_of(request),
    });
    let chunk = |delta: Value, finish: Value| {
        let mut chunk = base.clone();
        chunk["choices"] = json!([{
            "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish,
        }]);
        format!("data: {chunk}\n\n")
    };
    let pieces = pieces(&answer.text);
    let stop = match script.end {
        End::Full => None,
        End::StallAfter(n) | End::CutAfter(n) | End::DoneAfter(n) | End::DieAfter(n) => {
            Some(n.min(pieces.len()))
        }
    };
    let malformed = script.malformed_after.map(|n| n.min(pieces.len()));
    let mut events = vec![Event::Other(chunk(
        json!({"role": "assistant", "content": ""}),
        Value::Null,
    ))];
    for i in 0..=pieces.len() {
        if malformed == Some(i) {
            events.push(Event::Other(MALFORMED.to_owned()));
        }
        if stop == Some(i) {
            if matches!(script.end, End::DoneAfter(_)) {
                events.push(Event::Other(DONE.to_owned()));
            }
            let tail = match script.end {
                End::StallAfter(_) => Tail::Stalls,
                End::DieAfter(_) => Tail::Dies,
                _ => Tail::Ends,
            };
            return (events, tail);
        }
        if let Some(piece) = pieces.get(i) {
            events.push(Event::Piece(chunk(json!({"content": piece}), Value::Null)));
        }
    }
    events.push(Event::Other(chunk(json!({}), json!(answer.finish_reason))));
    if include_usage {
        let mut usage = base.clone();
        usage["choices"] = json!([]);
        usage["usage"] = json!({
            "prompt_tokens": answer.prompt_tokens,
            "completion_tokens": answer.completion_tokens,
            "total_tokens": answer.prompt_tokens + answer.completion_tokens,
        });
        events.push(Event::Other(format!("data: {usage}\n\n")));
    }
    if !script.without_done {
        events.push(Event::Other(DONE.to_owned()));
    }
    (events, Tail::Ends)
}

/// One generation in progress: sends its events, watches the client, logs as it goes.
struct Generator {
    body: BodySender,
    pace: Duration,
    keeps_generating: bool,
    logs: Arc<Mutex<Vec<StreamLog>>>,
    /// This generation's entry in `logs`.
    index: usize,
    gone: bool,
}

impl Generator {
    fn start(
        body: BodySender,
        seq: usize,
        total_pieces: usize,
        pace: Duration,
        generation: Generation,
    ) -> Generator {
        let index = {
            let mut logs = lock(&generation.logs);
            logs.push(StreamLog {
                seq,
                total_pieces,
                pieces_generated: 0,
                pieces_sent: 0,
                completed: false,
                started_at: Instant::now(),
                client_gone_at: None,
                generation_ended_at: None,
            });
            logs.len() - 1
        };
        Generator {
            body,
            pace,
            keeps_generating: generation.keeps_generating,
            logs: generation.logs,
            index,
            gone: false,
        }
    }

    fn log(&self, f: impl FnOnce(&mut StreamLog)) {
        f(&mut lock(&self.logs)[self.index]);
    }

    async fn run(mut self, events: Vec<Event>, tail: Tail) {
        for event in events {
            let going_on = match event {
                Event::Piece(text) => self.generate().await && self.deliver(text, true).await,
                Event::Other(text) => self.deliver(text, false).await,
            };
            if !going_on {
                return self.end(false);
            }
        }
        if tail == Tail::Dies {
            self.body.abort().await;
            return self.end(true);
        }
        if tail == Tail::Stalls {
            // Silent until the client goes; a server that keeps generating stays hung.
            if !self.gone {
                self.body.closed().await;
                self.client_left();
            }
            if self.keeps_generating {
                std::future::pending::<()>().await;
            }
            return self.end(false);
        }
        self.end(true);
    }

    /// Spends the pace on one piece; false when the client went and generation stops.
    async fn generate(&mut self) -> bool {
        let pace = tokio::time::sleep(self.pace);
        tokio::pin!(pace);
        if !self.gone {
            let left = tokio::select! {
                () = &mut pace => false,
                () = self.body.closed() => true,
            };
            if left {
                self.client_left();
            }
        }
        if self.gone {
            if !self.keeps_generating {
                return false;
            }
            pace.await;
        }
        self.log(|log| log.pieces_generated += 1);
        true
    }

    /// Sends one event if the client is still there; false when generation stops.
    async fn deliver(&mut self, text: String, piece: bool) -> bool {
        if self.gone {
            return self.keeps_generating;
        }
        if self.body.send(text).await.is_err() {
            self.client_left();
            return self.keeps_generating;
        }
        if piece {
            self.log(|log| log.pieces_sent += 1);
        }
        true
    }

    fn client_left(&mut self) {
        self.gone = true;
        self.log(|log| log.client_gone_at = Some(Instant::now()));
    }

    fn end(&self, completed: bool) {
        self.log(|log| {
            log.completed = completed;
            log.generation_ended_at = Some(Instant::now());
        });
    }
}
