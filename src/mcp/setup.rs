//! [`ResearchServer`]: what `researchflow mcp` was started with ([`Setup`]: roots, config, run
//! flags, the shared services), the runs it has in flight, and how it started each run
//! ([`Started`]: its engine and corpus, which `resume` keeps). One value, cloned for every
//! connection; `server.rs` is its MCP handler, `calls.rs` what its tools do.

use crate::sync::Locked;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::active::Active;
use super::mask::Mask;
use super::roots::Roots;
use super::tools::RunCall;
use crate::cli::RunArgs;
use crate::planner::LogOptions;
use crate::session::Session;

/// What the server was started with.
pub struct Setup {
    pub roots: Roots,
    /// `--config`, else `RESEARCHFLOW_CONFIG`, else `./agent.config.json`.
    pub config: Option<PathBuf>,
    /// The run flags the server was started with: every call's defaults.
    pub defaults: RunArgs,
    /// The process's HTTP pool, rate budgets and negotiation, which every run shares.
    pub base: Session,
    pub log: LogOptions,
    /// Every secret the server knows, masked in all it sends.
    pub mask: Mask,
}

/// The server: one value, cloned for every connection.
#[derive(Clone)]
pub struct ResearchServer {
    pub setup: Arc<Setup>,
    pub active: Arc<Active>,
    pub started: Arc<Started>,
}

impl ResearchServer {
    pub fn new(setup: Setup) -> ResearchServer {
        ResearchServer {
            setup: Arc::new(setup),
            active: Arc::new(Active::default()),
            started: Arc::new(Started::default()),
        }
    }
}

/// How this server last ran each plan file: `offline` and `corpus`, what decides the
/// engine and what it searches. A `resume` that leaves them out runs the plan as it was
/// started (an offline run stays offline, over its corpus), not with the server's defaults.
/// Kept in memory: after a restart, a `resume` gives them again.
#[derive(Default)]
pub struct Started {
    /// Only `offline` and `corpus` are kept: the limits are each call's own.
    runs: Mutex<HashMap<PathBuf, RunCall>>,
}

impl Started {
    /// Records how `plan` (its real path) is being run.
    pub fn remember(&self, plan: &Path, call: &RunCall) {
        let mut runs = self.runs.locked();
        let kept = RunCall {
            offline: call.offline,
            corpus: call.corpus.clone(),
            ..RunCall::default()
        };
        runs.insert(plan.to_path_buf(), kept);
    }

    /// A call, with `offline` and `corpus` taken from how `plan` was last run where the call
    /// leaves them out.
    pub fn recall(&self, plan: &Path, mut call: RunCall) -> RunCall {
        let runs = self.runs.locked();
        if let Some(kept) = runs.get(plan) {
            call.offline = call.offline.or(kept.offline);
            if call.corpus.is_none() {
                call.corpus.clone_from(&kept.corpus);
            }
        }
        call
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resume_keeps_how_the_run_was_started_unless_it_says_otherwise() {
        let started = Started::default();
        let plan = Path::new("/r/runs/p.json");
        let offline = RunCall {
            offline: Some(true),
            corpus: Some("docs".into()),
            bounds: crate::cli::RunBounds {
                max_rounds: crate::cli::Count::new(2),
                ..Default::default()
            },
        };
        started.remember(plan, &offline);
        let bare = started.recall(plan, RunCall::default());
        assert_eq!(bare.offline, Some(true));
        assert_eq!(bare.corpus.as_deref(), Some("docs"));
        assert_eq!(bare.bounds.max_rounds, None, "limits are each call's own");
        let other = started.recall(
            plan,
            RunCall {
                offline: Some(false),
                corpus: Some("other".into()),
                ..RunCall::default()
            },
        );
        assert_eq!(other.offline, Some(false));
        assert_eq!(other.corpus.as_deref(), Some("other"));
        let unknown = started.recall(Path::new("/r/runs/q.json"), RunCall::default());
        assert_eq!(unknown, RunCall::default());
    }
}
