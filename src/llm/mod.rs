//! The OpenAI-compatible chat-completions client.

pub mod client;
pub mod json;
pub mod types;

pub use client::{ChatAnswer, LlmClient, LlmError, Want};
pub use json::extract_json;
pub use types::{Message, Usage};
