//! What a model call reports beyond its retries and gate waits ([`RetryObserver`]): a form or
//! parameter its server refused and what replaces it, an input cut to fit, and the pages a
//! search sub-agent read, how a streamed answer is coming along, and what a streamed attempt
//! that broke had cost. Whoever asks a model passes one; the run records each as an event
//! (`llm_negotiated`, `input_cut`, `llm_streamed`, `llm_attempt_failed`), shows the progress,
//! and counts a failed attempt's tokens in its totals and budget.

pub use super::stream::{Progress, Spent};
use crate::http::{NoObserver, RetryObserver};
use crate::text::Cut;

/// A refusal learnt from a model's server: from now on `to` is sent instead of `from`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Negotiated {
    /// The role whose call was refused, as in the config.
    pub role: &'static str,
    pub model: String,
    /// The endpoint, without its password.
    pub url: String,
    /// What was refused: a response format, a token-limit parameter, the temperature.
    pub refused: &'static str,
    pub from: String,
    pub to: String,
    pub status: u16,
}

/// A page behind a search result, as a task's events tell it: read (and how much of it the
/// model saw), or why not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageNote {
    /// As the search result gave it.
    pub url: String,
    pub outcome: Result<PageSeen, String>,
}

/// A page that was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageSeen {
    /// `html`, `pdf`, `text` or `markdown`.
    pub kind: &'static str,
    /// The characters of its text.
    pub chars: usize,
    /// Why it stops early, when it does.
    pub cut: Option<String>,
    /// The passages of it the model was given (0: none matched; its snippet stands in).
    pub passages: usize,
    /// `web` (fetched now), `memory` (read before in the run or batch) or `transcript` (a
    /// replay).
    pub from: &'static str,
}

/// Receives what model calls report; every method but [`RetryObserver::on_retry`] may be
/// ignored.
pub trait CallObserver: RetryObserver {
    fn on_negotiated(&self, _change: &Negotiated) {}

    /// An input of the call was cut to fit (`what`, from `chars` to `kept` characters).
    fn on_input_cut(&self, _cut: &Cut) {}

    /// A page behind a search result was read, or not.
    fn on_page(&self, _note: &PageNote) {}

    /// A streamed answer received another piece (about a token).
    fn on_tokens(&self, _progress: &Progress) {}

    /// A streamed answer is complete: how fast it came.
    fn on_streamed(&self, _call: &Streamed) {}

    /// A streamed attempt broke after its server had written part of the answer: the tokens
    /// billed for an answer nobody gets, which no answer's usage counts.
    fn on_attempt_failed(&self, _attempt: &FailedAttempt) {}
}

/// A model call's attempt whose stream broke after its server had written part of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedAttempt {
    /// The role asked, as in the config.
    pub role: &'static str,
    pub model: String,
    /// What the server bills for it.
    pub spent: Spent,
}

/// A model call whose answer was streamed, once it is complete.
#[derive(Debug, Clone, PartialEq)]
pub struct Streamed {
    /// The role asked, as in the config.
    pub role: &'static str,
    pub model: String,
    pub progress: Progress,
    /// The answer's tokens as the server reported them (or as counted, without a report).
    pub completion_tokens: u64,
}

impl CallObserver for NoObserver {}
