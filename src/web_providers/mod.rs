//! The web search APIs researchflow speaks, one file each ([`searxng`], [`tavily`], [`brave`]),
//! each a [`WebProvider`]: its name and key, the request of one query, the hits of its answer.
//! [`WEB_PROVIDERS`] lists them; whatever needs to know which providers exist reads that list.
//!
//! This module only describes the APIs: no HTTP client, no settings, no environment. It sits
//! below `settings` so that config parsing can read the registry (names, key variables); the
//! search client (`search/web.rs`) sends the requests. See ARCHITECTURE.md, "Recipes",
//! "A web search provider".

pub mod brave;
pub mod provider;
pub mod registry;
pub mod searxng;
pub mod tavily;

pub use provider::{KeySentAs, ProviderSpec, WebHit, WebProvider};
pub use registry::{WEB_PROVIDERS, find};
