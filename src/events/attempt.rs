//! `llm_attempt_failed`: a model call's attempt whose stream broke after its server had
//! written part of the answer. Its tokens are billed and in no answer's usage, so the run
//! counts them in its totals and its budget (`crate::run::EventLog::count_unanswered`), and
//! this event says where they went.

use serde::Serialize;

use crate::usage::Usage;

/// `llm_attempt_failed`.
#[derive(Debug, Clone, Serialize)]
pub struct LlmAttemptFailed {
    pub node: String,
    /// The role asked, as in the config.
    pub role: &'static str,
    pub model: String,
    /// `prompt_tokens`, `completion_tokens`, `total_tokens`.
    #[serde(flatten)]
    pub usage: Usage,
    /// The server sent no count: the prompt as estimated before sending, one token a piece
    /// received.
    pub estimated: bool,
}
