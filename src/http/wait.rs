//! [`WaitReason`]: why a call waited at its endpoint's gate, as events and logs say it.

/// Why a call waited at the gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitReason {
    /// Closed by a 429 until its `Retry-After`.
    RetryAfter,
    /// Closed by a 429 without `Retry-After`, for the retry policy's backoff delay.
    Backoff,
    /// The admitted request rate (configured, or lowered after a 429).
    RequestsPerMinute,
    /// The `tokensPerMinute` budget.
    TokensPerMinute,
}

impl WaitReason {
    /// As events carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitReason::RetryAfter => "retry_after",
            WaitReason::Backoff => "backoff",
            WaitReason::RequestsPerMinute => "requests_per_minute",
            WaitReason::TokensPerMinute => "tokens_per_minute",
        }
    }

    /// As logs say it.
    pub fn describe(self) -> &'static str {
        match self {
            WaitReason::RetryAfter => "closed after a 429, until the server's Retry-After",
            WaitReason::Backoff => "closed after a 429 without Retry-After, for the backoff delay",
            WaitReason::RequestsPerMinute => "the admitted requests per minute",
            WaitReason::TokensPerMinute => "the tokens-per-minute budget",
        }
    }
}
