//! HTTP plumbing shared by the LLM client and the search providers: the client, errors, how a
//! request is addressed and authorised, one attempt, the one retry policy, and the rate budget
//! of each endpoint (its gate, which reads the budget the server announces).

pub mod aimd;
pub mod announced;
pub mod auth;
pub mod client;
pub mod error;
pub mod gate;
pub mod gates;
pub mod retry;
pub mod send;

pub use auth::request;
pub use client::{client, client_without_redirects};
pub use error::{HttpError, Unusable};
pub use gate::{Admission, Gate, Sharing, WaitReason};
pub use gates::Gates;
pub use retry::{
    AtGate, GateWait, NoObserver, RetryNotice, RetryObserver, with_retry, with_retry_at_gate,
};
pub use send::send_once;
