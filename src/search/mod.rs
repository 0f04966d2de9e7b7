//! The web-search providers the search sub-agent calls: SearXNG, Tavily and Brave, behind one
//! [`SearchClient`] that turns a query into at most `search.maxResults` [`SearchHit`]s.
//!
//! Every call goes through [`crate::http::with_retry`], the one retry policy of the crate. This
//! module only talks to search APIs: it never calls the LLM, never writes the plan file, and
//! never puts an API key in a URL, a log line or an error message. Provider `none` is the
//! caller's business ([`SearchClient::new`] returns `None`); see `ARCHITECTURE.md` for where
//! search sits in a workflow step.

pub mod brave;
pub mod client;
pub mod error;
pub mod hit;
pub mod local;
pub mod searxng;
pub mod tavily;

pub use client::SearchClient;
pub use error::{SearchConfigError, SearchError};
pub use hit::SearchHit;
