//! What a view takes from a run's event log (`<stem>.events.ndjson`, the book's catalogue,
//! `docs/src/event-log.md`): each task's attempts with when they started and ended (`task_started`,
//! then `task_completed`, `task_failed` or `task_not_run`), every round's plan review and the tasks
//! it dropped, and how the run ended (`run_finished`). Read line by line and leniently: a line that
//! is not JSON, or of a kind the view does not show, is skipped, so a log cut by a crash or written
//! by another version still gives what it holds.

use std::collections::BTreeMap;
use std::io::BufRead;

use chrono::{DateTime, FixedOffset};
use serde_json::Value;

/// The most lines of an event log read; a log longer than this is shown up to it.
pub const MAX_LINES: usize = 2_000_000;

/// The longest line of an event log read; a longer one is skipped (counted as bad) without
/// being held in memory.
pub const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// One start of a task and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    pub started: Option<DateTime<FixedOffset>>,
    pub ended: Option<DateTime<FixedOffset>>,
    /// `completed`, `failed`, `not_run`, or `running` when the log says no end.
    pub outcome: &'static str,
    /// The seconds the log gives for it, else the difference of the times.
    pub seconds: Option<f64>,
    pub tokens: Option<u64>,
    /// The error of a failed attempt, or why it did not run.
    pub error: Option<String>,
}

/// What the view shows of an event log.
#[derive(Debug, Clone, Default)]
pub struct RunEvents {
    /// Node id -> its attempts, in the order they started.
    pub tasks: BTreeMap<String, Vec<Attempt>>,
    /// Node ids in the order their first attempt started.
    pub order: Vec<String>,
    /// Every `plan_review` event: `{round, ok, issues}`.
    pub gate_verdicts: Vec<Value>,
    /// Every `task_dropped` event.
    pub dropped: Vec<Value>,
    /// The last `run_finished` event.
    pub finished: Option<Value>,
    /// The first and last times in the log.
    pub first: Option<DateTime<FixedOffset>>,
    pub last: Option<DateTime<FixedOffset>>,
    /// Lines that were not JSON objects.
    pub bad_lines: usize,
    /// Whether the log was longer than [`MAX_LINES`].
    pub cut: bool,
}

impl RunEvents {
    /// Reads an event log from `reader`.
    pub fn read(mut reader: impl BufRead) -> RunEvents {
        let mut events = RunEvents::default();
        let mut line = Vec::new();
        for n in 0.. {
            let Ok(found) = next_line(&mut reader, &mut line) else {
                events.bad_lines += 1;
                break;
            };
            let Some(whole) = found else { break };
            if n >= MAX_LINES {
                events.cut = true;
                break;
            }
            if !whole {
                events.bad_lines += 1;
                continue;
            }
            if line.trim_ascii().is_empty() {
                continue;
            }
            match serde_json::from_slice::<Value>(&line) {
                Ok(Value::Object(map)) => events.add(&Value::Object(map)),
                _ => events.bad_lines += 1,
            }
        }
        events
    }

    fn add(&mut self, event: &Value) {
        let ts = event
            .get("ts")
            .and_then(Value::as_str)
            .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
        if let Some(ts) = ts {
            self.first = Some(self.first.map_or(ts, |f| f.min(ts)));
            self.last = Some(self.last.map_or(ts, |l| l.max(ts)));
        }
        let kind = event.get("event").and_then(Value::as_str).unwrap_or("");
        let node = event
            .get("node")
            .and_then(Value::as_str)
            .map(str::to_string);
        match (kind, node) {
            ("task_started", Some(node)) => {
                if !self.tasks.contains_key(&node) {
                    self.order.push(node.clone());
                }
                self.tasks.entry(node).or_default().push(Attempt {
                    started: ts,
                    ended: None,
                    outcome: "running",
                    seconds: None,
                    tokens: None,
                    error: None,
                });
            }
            ("task_completed", Some(node)) => self.end(node, ts, "completed", event),
            ("task_failed", Some(node)) => self.end(node, ts, "failed", event),
            ("task_not_run", Some(node)) => self.end(node, ts, "not_run", event),
            ("plan_review", _) => self.gate_verdicts.push(event.clone()),
            ("task_dropped", _) => self.dropped.push(event.clone()),
            ("run_finished", _) => self.finished = Some(event.clone()),
            _ => {}
        }
    }

    /// Ends the node's open attempt (or records one without a start, as a log cut at its
    /// beginning leaves it).
    fn end(
        &mut self,
        node: String,
        ts: Option<DateTime<FixedOffset>>,
        outcome: &'static str,
        event: &Value,
    ) {
        if !self.tasks.contains_key(&node) {
            self.order.push(node.clone());
        }
        let attempts = self.tasks.entry(node).or_default();
        if attempts.last().is_none_or(|a| a.outcome != "running") {
            attempts.push(Attempt {
                started: None,
                ended: None,
                outcome,
                seconds: None,
                tokens: None,
                error: None,
            });
        }
        let Some(attempt) = attempts.last_mut() else {
            return;
        };
        attempt.ended = ts;
        attempt.outcome = outcome;
        attempt.seconds = event.get("seconds").and_then(Value::as_f64).or_else(|| {
            let (s, e) = (attempt.started?, ts?);
            Some((e - s).num_milliseconds() as f64 / 1000.0)
        });
        attempt.tokens = event.get("tokens").and_then(Value::as_u64);
        attempt.error = ["error", "why"]
            .iter()
            .find_map(|k| event.get(*k).and_then(Value::as_str))
            .map(str::to_string);
    }

    /// The node's attempts, none when the log has no task of that id.
    pub fn attempts(&self, node: &str) -> &[Attempt] {
        self.tasks.get(node).map_or(&[], Vec::as_slice)
    }
}

/// Reads the next line of `reader` into `line` (without its newline): `None` at the end,
/// `Some(false)` for a line longer than [`MAX_LINE_BYTES`], whose rest is read past and dropped.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::io::Result<Option<bool>> {
    line.clear();
    let mut any = false;
    let mut whole = true;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(any.then_some(whole));
        }
        any = true;
        let (part, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(at) => (&buf[..at], Some(at + 1)),
            None => (buf, None),
        };
        if whole && line.len() + part.len() <= MAX_LINE_BYTES {
            line.extend_from_slice(part);
        } else {
            whole = false;
            line.clear();
        }
        let used = done.unwrap_or(buf.len());
        reader.consume(used);
        if done.is_some() {
            return Ok(Some(whole));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_pair_starts_with_ends_and_bad_lines_are_counted() {
        let log = r#"{"ts":"2026-01-01T10:00:00Z","event":"run_started"}
{"ts":"2026-01-01T10:00:01Z","event":"task_started","node":"b","attempt":1}
not json
{"ts":"2026-01-01T10:00:02Z","event":"task_started","node":"c","attempt":1}
{"ts":"2026-01-01T10:00:04Z","event":"task_completed","node":"b","seconds":3.0,"tokens":42}
{"ts":"2026-01-01T10:00:05Z","event":"task_failed","node":"c","seconds":3.0,"error":"HTTP 500"}
{"ts":"2026-01-01T10:00:06Z","event":"task_started","node":"c","attempt":2}
{"ts":"2026-01-01T10:00:07Z","event":"plan_review","round":1,"ok":true,"issues":[]}
{"ts":"2026-01-01T10:00:09Z","event":"run_finished","status":"completed"}
"#;
        let ev = RunEvents::read(log.as_bytes());
        assert_eq!(ev.order, ["b", "c"]);
        assert_eq!(ev.bad_lines, 1);
        let b = &ev.attempts("b")[0];
        assert_eq!(
            (b.outcome, b.seconds, b.tokens),
            ("completed", Some(3.0), Some(42))
        );
        let c = ev.attempts("c");
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].outcome, c[0].error.as_deref()),
            ("failed", Some("HTTP 500"))
        );
        assert_eq!((c[1].outcome, c[1].ended), ("running", None));
        assert_eq!(ev.gate_verdicts.len(), 1);
        assert!(ev.finished.is_some());
        let span = ev.last.zip(ev.first).map(|(l, f)| (l - f).num_seconds());
        assert_eq!(span, Some(9));
    }

    #[test]
    fn a_line_too_long_is_skipped_and_the_next_is_read() {
        let mut log = format!(
            "{{\"ts\":\"2026-01-01T10:00:00Z\",\"event\":\"task_started\",\"node\":\"b\",\"x\":\"{}\"}}\n",
            "y".repeat(MAX_LINE_BYTES)
        );
        log.push_str(
            "{\"ts\":\"2026-01-01T10:00:01Z\",\"event\":\"task_started\",\"node\":\"c\"}\n",
        );
        // A BufReader smaller than the line, so the line spans many buffers.
        let ev = RunEvents::read(std::io::BufReader::with_capacity(1 << 12, log.as_bytes()));
        assert_eq!(
            (ev.order.as_slice(), ev.bad_lines),
            (&["c".to_string()][..], 1)
        );
        // No newline at the end, a CRLF, an empty line: still lines.
        let ev = RunEvents::read(
            "{\"event\":\"task_started\",\"node\":\"b\"}\r\n\n{\"event\":\"task_started\",\"node\":\"c\"}".as_bytes(),
        );
        assert_eq!((ev.order.len(), ev.bad_lines), (2, 0));
    }
}
