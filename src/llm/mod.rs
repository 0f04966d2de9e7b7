//! The OpenAI-compatible chat-completions client.

pub mod client;
pub mod types;

pub use client::{ChatAnswer, LlmClient, LlmError, Want, truncate};
pub use types::Message;
