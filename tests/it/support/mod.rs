//! Test support for researchflow's integration tests: real HTTP servers on loopback that play
//! an OpenAI-compatible chat-completions API ([`MockLlm`], streamed answers in `sse.rs`) and
//! three web-search APIs ([`MockSearch`]), scripted faults ([`Fault`]) shared by both, the
//! refusals real LLM servers answer with ([`Refusal`]), and a builder that runs the real
//! `researchflow` binary in an isolated environment ([`researchflow`]), on a real terminal if
//! asked (`pty.rs`); whole
//! workflow scenarios over the mocks (`scenario.rs`); the repository's fixtures and offline
//! runs over its corpus (`fixtures.rs`); a web site of real documents for a page reader
//! ([`WebSite`], its pages in `web_docs.rs`); and the edits and assertions of the validator
//! tests (`doc.rs`), which start no server. A helper more than one module needs lives here. Every
//! module of the test binary draws on it; a build without the `queue` or `mcp` feature
//! compiles out the modules that alone use parts of it, hence the `dead_code` and
//! `unused_imports` allowances.
#![allow(dead_code, unused_imports)]

pub mod bin;
pub mod browser;
pub mod doc;
pub mod fault;
pub mod fixtures;
pub mod hostile_docs;
pub mod mcp;
pub mod mock_llm;
pub mod mock_search;
pub mod postgres;
pub mod pty;
pub mod python;
pub mod reading;
pub mod refusal;
pub mod scenario;
pub mod server;
pub mod smtp;
pub mod sse;
pub mod thinkon;
pub mod web_bodies;
pub mod web_docs;
pub mod web_site;

pub use bin::{Cmd, RunOutput, Stdout, Terminal, program, researchflow};
pub use fault::Fault;
pub use mock_llm::{MockLlm, Reply, crashes_llama_cpp};
pub use mock_search::{MockSearch, SearchHit, SearchKind};
pub use refusal::{FormatKind, Refusal};
pub use server::Recorded;
pub use sse::StreamLog;
pub use web_site::WebSite;

/// A config for a run against a rate-limited mock: one retry only, short delays (a 429 that
/// the gate waits out does not count against it), and the rate `limits` given (`{}`: none).
pub fn one_retry(limits: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "retry": {"maxRetries": 1, "baseDelayMs": 10, "maxDelayMs": 40, "maxRetryAfterMs": 1000},
        "limits": limits,
    })
}

/// A `reqwest` client builder for talking to the mocks directly from a test. The crate builds
/// reqwest with `rustls-no-provider`, so this installs rustls' ring provider first (harmless if
/// one is already installed); the mocks themselves speak plain HTTP on 127.0.0.1.
pub fn http_client() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy()
}
