//! The event sink: [`EventLog`], one JSON object per line in a run's `events.ndjson`, appended
//! and flushed line by line so a crash keeps every event written so far. What an event is
//! the driver's: any [`LogEvent`] (the program's catalogue is `crate::events::Event`).
//!
//! Every line carries `ts` (RFC 3339, to the millisecond) and `event`, then the event's
//! fields; no string in it holds a control character or a URL password. Writing an event
//! never fails the run: a broken log is reported once and then skipped. An
//! [`EventListener`] (the terminal's progress display) may watch the events as they are
//! written; it sees every event, also when the file has become unwritable.

use crate::atomic::{LineFile, Tee};
use crate::sync::Locked;
use crate::usage::Usage;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};

/// One kind of line of an event log: its fields, `event` (the kind's name) first.
pub trait LogEvent: Send + Sync + 'static {
    /// The kind, as the `event` field names it.
    fn name(&self) -> &'static str;

    /// The line's fields without `ts`, `event` first.
    fn fields(&self) -> Map<String, Value>;
}

/// Watches the events of a run as they are emitted. Called from the driver and from running
/// tasks (retries), so it must be cheap and must not block for long.
pub trait EventListener<E>: Send + Sync {
    fn on_event(&self, event: &E);

    /// A running task's streamed answer has come `tokens` far, at `per_second` since its
    /// first token: shown, never written (no event a token).
    fn on_tokens(&self, _node: &str, _tokens: u64, _per_second: Option<f64>) {}
}

/// A run's event log.
pub struct EventLog<E> {
    file: LineFile,
    retries: AtomicU64,
    unanswered: Mutex<Usage>,
    listener: Option<Arc<dyn EventListener<E>>>,
}

impl<E: LogEvent> EventLog<E> {
    /// Opens (appending) the event log; a resumed run continues the same file. A symbolic
    /// link there is refused ([`crate::atomic::append`]).
    pub fn open(path: &Path) -> Result<EventLog<E>, std::io::Error> {
        EventLog::open_teed(path, None)
    }

    /// [`EventLog::open`], each line handed to `tee` too (a queue worker's writer).
    pub fn open_teed(path: &Path, tee: Option<Tee>) -> Result<EventLog<E>, std::io::Error> {
        let file = crate::atomic::append(path, false)?;
        Ok(EventLog {
            file: LineFile::new(path, "event log", file, tee),
            retries: AtomicU64::new(0),
            unanswered: Mutex::new(Usage::default()),
            listener: None,
        })
    }

    /// The same log, with `listener` told of every event from now on.
    pub fn with_listener(mut self, listener: Arc<dyn EventListener<E>>) -> EventLog<E> {
        self.listener = Some(listener);
        self
    }

    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Tells the listener how far a running task's streamed answer has come; writes nothing.
    pub fn tokens(&self, node: &str, tokens: u64, per_second: Option<f64>) {
        if let Some(listener) = &self.listener {
            listener.on_tokens(node, tokens, per_second);
        }
    }

    /// Appends one event.
    pub fn emit(&self, event: E) {
        let mut line = serde_json::Map::new();
        line.insert("ts".into(), Value::from(crate::clock::now_millis()));
        line.extend(event.fields());
        let mut line = Value::Object(line);
        // Titles, errors and answers come from servers, models and documents: a terminal
        // escape would act on whoever replays the log (`jq -r`), and a URL may be quoted.
        crate::text::clean_json(&mut line);
        self.file.write(format!("{line}\n").as_bytes());
        if let Some(listener) = &self.listener {
            listener.on_event(&event);
        }
    }

    /// HTTP retries reported so far ([`EventLog::count_retry`]).
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// Counts one HTTP retry of the run (its event is written apart).
    pub fn count_retry(&self) {
        self.retries.fetch_add(1, Ordering::Relaxed);
    }

    /// The tokens of the run's model attempts that broke after their server had written part
    /// of an answer ([`EventLog::count_unanswered`]): billed, and in no answer's usage.
    pub fn unanswered(&self) -> Usage {
        *self.unanswered.locked()
    }

    /// Counts the tokens of one such attempt (its event is written apart).
    pub fn count_unanswered(&self, usage: Usage) {
        self.unanswered.locked().add(usage);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// A driver's own kinds of events.
    #[derive(Debug, Clone, serde::Serialize)]
    #[serde(tag = "event", rename_all = "snake_case")]
    enum Seen {
        Started { goal: String },
        Retried { node: String, delay_ms: u64 },
        Ended { block: String },
    }

    impl LogEvent for Seen {
        fn name(&self) -> &'static str {
            match self {
                Seen::Started { .. } => "started",
                Seen::Retried { .. } => "retried",
                Seen::Ended { .. } => "ended",
            }
        }

        fn fields(&self) -> Map<String, Value> {
            match serde_json::to_value(self) {
                Ok(Value::Object(fields)) => fields,
                _ => Map::new(),
            }
        }
    }

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .expect("read")
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect()
    }

    #[test]
    fn events_are_one_json_object_per_line_stamped_first() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("e.ndjson");
        let log = EventLog::open(&path).expect("open");
        log.emit(Seen::Started {
            goal: "G\u{1b}]0;x\u{7}".into(),
        });
        log.count_retry();
        log.emit(Seen::Retried {
            node: "b".into(),
            delay_ms: u64::try_from(Duration::from_millis(20).as_millis()).expect("small"),
        });
        let lines = lines(&path);
        assert_eq!(lines.len(), 2);
        let keys: Vec<&String> = lines[0].as_object().expect("object").keys().collect();
        assert_eq!(keys[..2], ["ts", "event"]);
        assert_eq!(lines[0]["event"], "started");
        assert_eq!(lines[0]["goal"], "G", "no terminal sequence is written");
        assert_eq!(lines[1]["event"], "retried");
        assert_eq!(lines[1]["delay_ms"], 20);
        assert_eq!(lines[1]["node"], "b");
        assert_eq!(log.retries(), 1);
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<&'static str>>);

    impl EventListener<Seen> for Recorder {
        fn on_event(&self, event: &Seen) {
            self.0.lock().expect("lock").push(event.name());
        }
    }

    #[test]
    fn a_listener_sees_every_event_even_when_the_file_is_broken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let recorder = Arc::new(Recorder::default());
        let log = EventLog::open(&dir.path().join("e.ndjson"))
            .expect("open")
            .with_listener(recorder.clone());
        log.emit(Seen::Ended { block: "a".into() });
        // The file goes; events still reach the listener.
        log.file.lose();
        log.emit(Seen::Started { goal: "b".into() });
        let seen = recorder.0.lock().expect("lock").clone();
        assert_eq!(seen, ["ended", "started"]);
    }
}
