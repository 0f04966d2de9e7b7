//! The search providers the search sub-agent calls: the web (`web.rs` sends to the one
//! configured provider of [`crate::web_providers`]: SearXNG, Tavily, Brave), a tool of an MCP
//! server (`mcp.rs`, its answers read by `mcp_hits.rs`; feature `mcp`) and a local corpus (`local/`), behind
//! one [`SearchClient`] that turns a query into at most `search.maxResults`
//! [`SearchHit`]s, merging several providers' results (`fusion.rs`).
//!
//! Every web call goes through [`crate::http::with_retry`], the one retry policy of the crate.
//! This module only searches: it never calls the LLM, never writes the plan file, and never
//! puts an API key in a URL, a log line or an error message. No provider at all is the
//! caller's business ([`SearchClient::new`] returns `None`); see `ARCHITECTURE.md` for where
//! search sits in a workflow step.

pub mod client;
pub mod error;
pub mod fusion;
pub mod hit;
pub mod local;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "mcp")]
pub mod mcp_hits;
pub mod web;

pub use client::SearchClient;
pub use error::{SearchConfigError, SearchError};
pub use hit::SearchHit;
#[cfg(feature = "mcp")]
pub use mcp::McpSearch;
pub use web::WebSearch;
