//! The events of a `watch` run, in its folder's `watch.events.ndjson` (each question's own
//! log is beside its plan, as in a batch): the run started or resumed, each notification
//! sent or failed, the run's end with its exit code.

use serde::Serialize;

/// `watch_started`.
#[derive(Debug, Clone, Serialize)]
pub struct WatchStarted {
    /// The run's folder name (its UTC time).
    pub run: String,
    /// Whether an interrupted run is resumed.
    pub resumed: bool,
    pub questions: usize,
}

/// `notification`: this run's changes told to one target, or not.
#[derive(Debug, Clone, Serialize)]
pub struct Notification {
    /// As shown everywhere: scheme, host and a hash of the URL, or `mailto:ADDR`.
    pub target: String,
    /// `webhook` or `mail`.
    pub channel: &'static str,
    /// The questions told.
    pub questions: usize,
    pub sent: bool,
    /// Why it could not be sent (secrets redacted).
    pub error: Option<String>,
}

/// `watch_finished`: the last line of a run that ran to its end.
#[derive(Debug, Clone, Serialize)]
pub struct WatchFinished {
    pub run: String,
    /// The questions (by name) with a change worth telling.
    pub changed: Vec<String>,
    /// The questions not done (failed, blocked, ...).
    pub failed: usize,
    /// What `watch` exits with (74 instead, should its summary then fail to print).
    pub exit_code: u8,
}
