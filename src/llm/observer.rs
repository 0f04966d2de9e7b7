//! What a model call reports beyond its retries and gate waits ([`RetryObserver`]): a form or
//! parameter its server refused and what replaces it, and an input cut to fit. Whoever asks a
//! model passes one; the run records each as an event (`llm_negotiated`, `input_cut`).

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

/// Receives what model calls report; every method but [`RetryObserver::on_retry`] may be
/// ignored.
pub trait CallObserver: RetryObserver {
    fn on_negotiated(&self, _change: &Negotiated) {}

    /// An input of the call was cut to fit (`what`, from `chars` to `kept` characters).
    fn on_input_cut(&self, _cut: &Cut) {}
}

impl CallObserver for NoObserver {}
