//! researchflow: a batch research-workflow orchestrator.
//!
//! # Layout
//!
//! See `ARCHITECTURE.md` at the repository root for the module map and the path of one
//! request through it.
//!
//! - [`cli`]: every command-line type; [`cmd`]: one file per subcommand.
//! - [`search`]: the web-search providers (SearXNG, Tavily, Brave) behind one client.
//! - [`plan`]: the plan file: model, node ids, refs, info blocks, store.
//! - [`diagnostics`]: the one findings shape shared by every check.
//! - [`exit`]: exit codes; [`logging`]: tracing set-up.

pub mod cli;
pub mod cmd;
pub mod diagnostics;
pub mod exit;
pub mod http;
pub mod llm;
pub mod logging;
pub mod plan;
pub mod planner;
pub mod prompts;
pub mod search;
pub mod settings;
pub mod agents;
pub mod workflow;
