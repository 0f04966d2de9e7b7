//! [`ResearchServer`]: what `researchflow mcp` was started with ([`Setup`]: roots, config, run
//! flags, the shared services) and the runs it has in flight. One value, cloned for every
//! connection; `server.rs` is its MCP handler, `calls.rs` what its tools do.

use std::path::PathBuf;
use std::sync::Arc;

use super::active::Active;
use super::roots::Roots;
use crate::cli::RunArgs;
use crate::kernel::Services;
use crate::planner::LogOptions;

/// What the server was started with.
pub struct Setup {
    pub roots: Roots,
    /// `--config`, else `AGENT_CONFIG`, else `./agent.config.json`.
    pub config: Option<PathBuf>,
    /// The run flags the server was started with: every call's defaults.
    pub defaults: RunArgs,
    /// The process's HTTP pool, rate budgets and negotiation, which every run shares.
    pub base: Arc<Services>,
    pub log: LogOptions,
}

/// The server: one value, cloned for every connection.
#[derive(Clone)]
pub struct ResearchServer {
    pub setup: Arc<Setup>,
    pub active: Arc<Active>,
}

impl ResearchServer {
    pub fn new(setup: Setup) -> ResearchServer {
        ResearchServer {
            setup: Arc::new(setup),
            active: Arc::new(Active::default()),
        }
    }
}
