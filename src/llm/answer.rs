//! What a chat call returns: the model's answer, or why there is none.

use crate::http::error::StatedContext;
use crate::http::{HttpError, Unusable};
use crate::usage::Usage;

/// A model's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatAnswer {
    pub content: String,
    pub usage: Usage,
    /// As the server said it (`stop`, `length`, ...), when it said one.
    pub finish_reason: Option<String>,
}

impl ChatAnswer {
    /// Whether the answer was cut off by the token limit.
    pub fn truncated(&self) -> bool {
        self.finish_reason.as_deref() == Some("length")
    }
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    #[error(transparent)]
    Http(#[from] HttpError),
    #[error("`{url}` answered with something that is not a chat completion: {message}")]
    Malformed { url: String, message: String },
    #[error("`{url}` answered with an empty message")]
    Empty { url: String },
    /// The endpoint cannot be used as configured (unreachable, key refused, unknown model,
    /// quota exhausted): the message names the endpoint and what to fix.
    #[error("{message}")]
    Unusable { why: Unusable, message: String },
    /// The messages and the token limit do not fit in the model's context; the message names
    /// the model and what to change, `stated` what the server said of its context.
    #[error("{message}")]
    TooLong {
        message: String,
        stated: StatedContext,
    },
    /// A replay asked what the transcript does not hold: the run must stop.
    #[error("{0}")]
    Diverged(String),
    /// A replayed call that failed when it was recorded, with the recorded error.
    #[error("{0} (as recorded)")]
    Recorded(String),
}

impl LlmError {
    /// Whether the endpoint cannot be used as configured: the run must stop, not go on.
    pub fn is_unusable(&self) -> bool {
        matches!(self, LlmError::Unusable { .. })
    }

    /// Whether a replay diverged from its transcript: the run must stop.
    pub fn is_diverged(&self) -> bool {
        matches!(self, LlmError::Diverged(_))
    }
}
