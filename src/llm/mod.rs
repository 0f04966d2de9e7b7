//! The OpenAI-compatible chat-completions client: requests and answers, the schemas of
//! structured answers, and what each endpoint is found to accept.

mod answer;
pub mod checked;
pub mod client;
pub mod fit;
pub mod json;
pub mod negotiate;
pub mod observer;
pub mod probe;
pub mod schema;
pub mod stream;
mod taped;
pub mod types;

pub use answer::{ChatAnswer, LlmError};
pub use checked::{Checked, CheckedError, Contract, ask_checked};
pub use client::{LlmClient, Want};
pub use json::extract_json;
pub use negotiate::Negotiator;
pub use observer::{
    CallObserver, FailedAttempt, Negotiated, PageNote, PageSeen, Progress, Streamed,
};
pub use schema::JsonSchema;
pub use types::Message;
