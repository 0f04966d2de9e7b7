//! The event sink: [`EventLog`], one JSON object per line in a run's `events.ndjson`, appended
//! and flushed line by line so a crash keeps every event written so far, and [`Observer`],
//! which turns what a task's calls report into events of that task.
//!
//! Every line carries `ts` (RFC 3339) and `event`, then the [`Event`]'s fields; no string in
//! it holds a control character or a URL password. Writing an event never fails the run: a
//! broken log is reported once and then skipped. An [`EventListener`] (the terminal's
//! progress display) may watch the events as they are written; it sees every event, also
//! when the file has become unwritable.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::event::{Event, ReviewFailed, to_fields};
use crate::http::{GateWait, RetryNotice, RetryObserver};
use crate::llm::{CallObserver, Negotiated};
use crate::review::{ReviewFinished, ReviewObserver};
use crate::text::Cut;

/// Watches the events of a run as they are emitted. Called from the driver and from running
/// tasks (retries), so it must be cheap and must not block for long.
pub trait EventListener: Send + Sync {
    fn on_event(&self, event: &Event);
}

/// A run's event log.
pub struct EventLog {
    path: PathBuf,
    file: Mutex<Option<File>>,
    retries: AtomicU64,
    listener: Option<Arc<dyn EventListener>>,
}

impl EventLog {
    /// Opens (appending) the event log; a resumed run continues the same file. A symbolic
    /// link there is refused ([`crate::atomic::append`]).
    pub fn open(path: &Path) -> Result<EventLog, std::io::Error> {
        let file = crate::atomic::append(path, false)?;
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

    /// Appends one event.
    pub fn emit(&self, event: Event) {
        let mut line = serde_json::Map::new();
        line.insert("ts".into(), Value::from(crate::clock::now_millis()));
        line.extend(to_fields(&event));
        let mut line = Value::Object(line);
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
            listener.on_event(&event);
        }
    }

    /// HTTP retries reported so far.
    pub fn retries(&self) -> u64 {
        self.retries.load(Ordering::Relaxed)
    }

    /// What the calls of one task (`node`: a node id, `planner`, `review`, a block id) report,
    /// as events of that task.
    pub fn observer<'a>(&'a self, node: &str) -> Observer<'a> {
        Observer {
            log: self,
            node: node.to_string(),
        }
    }
}

/// Turns what one task's calls report into its events.
pub struct Observer<'a> {
    log: &'a EventLog,
    node: String,
}

impl Observer<'_> {
    /// The task the events are of.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Writes `event` to the task's log.
    pub fn emit(&self, event: Event) {
        self.log.emit(event);
    }
}

impl RetryObserver for Observer<'_> {
    fn on_retry(&self, notice: &RetryNotice) {
        self.log.retries.fetch_add(1, Ordering::Relaxed);
        self.emit(Event::HttpRetry {
            node: self.node.clone(),
            what: notice.what.clone(),
            retry: notice.retry,
            delay_ms: u64::try_from(notice.delay.as_millis()).unwrap_or(u64::MAX),
            cause: notice.cause.clone(),
            retry_after: notice.server_asked,
        });
    }

    fn on_gate_wait(&self, wait: &GateWait) {
        self.emit(Event::RateLimited {
            node: self.node.clone(),
            endpoint: wait.endpoint.clone(),
            wait_ms: wait.wait_ms,
            reason: wait.reason,
        });
    }
}

impl CallObserver for Observer<'_> {
    fn on_negotiated(&self, change: &Negotiated) {
        self.emit(Event::LlmNegotiated {
            node: self.node.clone(),
            role: change.role,
            model: change.model.clone(),
            url: change.url.clone(),
            refused: change.refused,
            from: change.from.clone(),
            to: change.to.clone(),
            status: change.status,
        });
    }

    fn on_input_cut(&self, cut: &Cut) {
        self.emit(Event::InputCut {
            node: self.node.clone(),
            what: cut.what.clone(),
            chars: cut.chars,
            kept: cut.kept,
        });
    }
}

impl ReviewObserver for Observer<'_> {
    fn on_review_failed(&self, role: Option<&str>, error: &str, codes: &[String]) {
        let node = self.node.clone();
        let error = error.to_string();
        self.emit(Event::ReviewFailed(match role {
            Some(role) => ReviewFailed::Role {
                node,
                role: role.to_string(),
                error,
                codes: codes.to_vec(),
            },
            None => ReviewFailed::Review { node, error },
        }));
    }

    fn on_review_finished(&self, finished: &ReviewFinished) {
        self.emit(Event::ReviewFinished {
            node: self.node.clone(),
            verdict: finished.verdict,
            complete: finished.complete,
            files: finished.files.clone(),
            tokens: finished.tokens,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::event::RunStarted;
    use std::time::Duration;

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
        log.emit(Event::RunStarted(RunStarted::Thinkon {
            goal: "G\u{1b}]0;x\u{7}".into(),
            blocks: 0,
            max_depth: 3,
        }));
        log.observer("b").on_retry(&RetryNotice {
            what: "search LLM".into(),
            retry: 1,
            delay: Duration::from_millis(20),
            cause: "HTTP 429".into(),
            server_asked: true,
        });
        let lines = lines(&path);
        assert_eq!(lines.len(), 2);
        let keys: Vec<&String> = lines[0].as_object().expect("object").keys().collect();
        assert_eq!(keys[..2], ["ts", "event"]);
        assert_eq!(lines[0]["event"], "run_started");
        assert_eq!(lines[0]["goal"], "G", "no terminal sequence is written");
        assert_eq!(lines[1]["event"], "http_retry");
        assert_eq!(lines[1]["delay_ms"], 20);
        assert_eq!(lines[1]["node"], "b");
        assert_eq!(log.retries(), 1);
    }

    #[derive(Default)]
    struct Recorder(Mutex<Vec<&'static str>>);

    impl EventListener for Recorder {
        fn on_event(&self, event: &Event) {
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
        log.emit(Event::BlockCompleted { block: "a".into() });
        // The file goes; events still reach the listener.
        *log.file.lock().expect("lock") = None;
        log.emit(Event::BlockStarted {
            block: "b".into(),
            attempts: 1,
        });
        let seen = recorder.0.lock().expect("lock").clone();
        assert_eq!(seen, ["block_completed", "block_started"]);
    }
}
