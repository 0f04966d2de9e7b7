//! The run's event log: one JSON object per line in `<out>.events.ndjson`, appended and flushed
//! line by line so a crash keeps every event written so far.
//!
//! Events: `run_started`, `local_index`, `plan_review`, `round_planned`, `planning_failed`,
//! `final_forced`, `task_dropped`, `task_started`, `http_retry`, `rate_limited`,
//! `llm_negotiated`, `input_cut`, `task_completed`, `task_failed`, `file_written`,
//! `review_finished`, `review_failed`, `review_skipped`, `run_finished`. Each carries `ts`
//! (RFC 3339) and `event`. No event ever carries a secret, nor a control character but newlines
//! and tabs: every string is cleaned as it is written ([`crate::text::clean_json`]). Writing an
//! event never fails the run: a broken log is reported once and then skipped.
//!
//! An [`EventListener`] (the terminal's progress display) may watch the events as they are
//! written; it sees every event, also when the file has become unwritable.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::http::{RetryNotice, RetryObserver};

/// Watches the events of a run as they are emitted. Called from the engine and from running
/// tasks (retries), so it must be cheap and must not block for long.
pub trait EventListener: Send + Sync {
    /// `line` is the whole event as written: `ts`, `event` and its fields.
    fn on_event(&self, event: &str, line: &Value);
}

pub struct EventLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
    retries: AtomicU64,
    listener: Option<Arc<dyn EventListener>>,
}

impl EventLog {
    /// Opens (appending) the event log; a resumed run continues the same file.
    pub fn open(path: &Path) -> Result<EventLog, std::io::Error> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(EventLog {
            path: path.to_path_buf(),
            file: Mutex::new(Some(file)),
            retries: AtomicU64::new(0),
            listener: None,
        })
    }

    /// The same log, with `listener` told of every event from now on.
    pub fn with_listener(mut self, listener: Arc<dyn EventListener>) -> EventLog {
        self.listener = Some(listener);
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one event; `fields` must be a JSON object.
    pub fn emit(&self, event: &str, fields: Value) {
        let mut line = json!({
            "ts": crate::clock::now_millis(),
            "event": event,
        });
        if let (Some(obj), Value::Object(extra)) = (line.as_object_mut(), fields) {
            obj.extend(extra);
        }
        // Titles, errors and answers come from servers, models and documents: a terminal
        // escape would act on whoever replays the log (`jq -r`), and a URL may be quoted.
        crate::text::clean_json(&mut line);
        // One write per line: a reader (or a crash) never sees half an event, and the line
        // does not cost one system call per token.
        let text = format!("{line}\n");
        let mut guard = self.file.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(file) = guard.as_mut() {
            let written = file.write_all(text.as_bytes()).and_then(|()| file.flush());
            if let Err(e) = written {
                tracing::warn!(
                    "cannot write event log `{}`: {e}; no more events will be written",
                    self.path.display()
                );
                *guard = None;
            }
        }
        drop(guard);
        if let Some(listener) = &self.listener {
            listener.on_event(event, &line);
        }
    }

    /// HTTP retries reported so far.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// A retry observer that records `http_retry` events for one task (or the planner).
    pub fn observer<'a>(&'a self, node: &str) -> TaskObserver<'a> {
        TaskObserver {
            log: self,
            node: node.to_string(),
        }
    }
}

/// Turns retry notices into `http_retry` events.
pub struct TaskObserver<'a> {
    log: &'a EventLog,
    node: String,
}

impl RetryObserver for TaskObserver<'_> {
    fn on_note(&self, event: &str, fields: Value) {
        let mut line = json!({"node": self.node});
        if let (Some(obj), Value::Object(extra)) = (line.as_object_mut(), fields) {
            obj.extend(extra);
        }
        self.log.emit(event, line);
    }

    fn on_retry(&self, notice: &RetryNotice) {
        self.log.retries.fetch_add(1, Ordering::Relaxed);
        self.log.emit(
            "http_retry",
            json!({
                "node": self.node,
                "what": notice.what,
                "retry": notice.retry,
                "delay_ms": u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
                "cause": notice.cause,
                "retry_after": notice.server_asked,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn events_are_one_json_object_per_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("e.ndjson");
        let log = EventLog::open(&path).expect("open");
        log.emit("run_started", json!({"plan_file": "p.json"}));
        log.observer("b").on_retry(&RetryNotice {
            what: "search LLM".into(),
            retry: 1,
            delay: Duration::from_millis(20),
            cause: "HTTP 429".into(),
            server_asked: true,
        });
        let text = std::fs::read_to_string(&path).expect("read");
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).expect("json line"))
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["event"], "run_started");
        assert_eq!(lines[1]["event"], "http_retry");
        assert_eq!(lines[1]["delay_ms"], 20);
        assert_eq!(lines[1]["node"], "b");
        assert_eq!(log.retries(), 1);
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<(String, Value)>>);

    impl EventListener for Recorder {
        fn on_event(&self, event: &str, line: &Value) {
            self.0
                .lock()
                .expect("lock")
                .push((event.to_string(), line.clone()));
        }
    }

    #[test]
    fn a_listener_sees_every_event_as_written_even_when_the_file_is_broken() {
        let dir = tempfile::tempdir().expect("tempdir");
        let recorder = Arc::new(Recorder::default());
        let log = EventLog::open(&dir.path().join("e.ndjson"))
            .expect("open")
            .with_listener(recorder.clone());
        log.emit("task_started", json!({"node": "b", "title": "T"}));
        // The file goes; events still reach the listener.
        *log.file.lock().expect("lock") = None;
        log.emit("run_finished", json!({"status": "completed"}));
        let seen = recorder.0.lock().expect("lock").clone();
        assert_eq!(seen.len(), 2);
        assert_eq!(seen[0].0, "task_started");
        assert_eq!(seen[0].1["node"], "b");
        assert_eq!(seen[0].1["event"], "task_started");
        assert_eq!(seen[1].1["status"], "completed");
    }
}
