//! HTTP plumbing shared by the LLM client and the search providers: errors, one attempt, and
//! the one retry policy.

pub mod error;
pub mod retry;
pub mod send;

pub use error::HttpError;
pub use retry::{LogOnly, RetryNotice, RetryObserver, with_retry};
pub use send::send_once;

/// Builds the shared reqwest client (rustls with the ring provider; no OpenSSL).
pub fn client() -> Result<reqwest::Client, reqwest::Error> {
    // Installing twice is harmless: the second call reports the provider already set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("researchflow/", env!("CARGO_PKG_VERSION")))
        .build()
}
