//! HTTP plumbing shared by the LLM client and the search providers: the client, errors, one
//! attempt, and the one retry policy.

pub mod client;
pub mod error;
pub mod retry;
pub mod send;

pub use client::client;
pub use error::{HttpError, Unusable};
pub use retry::{NoObserver, RetryNotice, RetryObserver, with_retry};
pub use send::send_once;
