//! The OpenAI-compatible chat-completions client: requests and answers, the schemas of
//! structured answers, and what each endpoint is found to accept.

pub mod checked;
pub mod client;
pub mod json;
pub mod negotiate;
pub mod probe;
pub mod schema;
pub mod types;

pub use checked::{Checked, CheckedError, Contract, ask_checked};
pub use client::{ChatAnswer, LlmClient, LlmError, Want};
pub use json::extract_json;
pub use negotiate::Negotiator;
pub use schema::JsonSchema;
pub use types::{Message, Usage};
