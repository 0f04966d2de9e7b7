//! researchflow: a batch research-workflow orchestrator.
//!
//! # Layout
//!
//! See `ARCHITECTURE.md` at the repository root for the module map and the path of one
//! request through it.
//!
//! - [`cli`]: every command-line type; [`cmd`]: one file per subcommand.
//! - [`plan`]: the plan file: model, node ids, refs, info blocks, store.
//! - [`diagnostics`]: the one findings shape shared by every check.
//! - [`validate`]: the validators (step plans, plan-next answers, plan files).
//! - [`exit`]: exit codes; [`logging`]: tracing set-up.

pub mod cli;
pub mod cmd;
pub mod diagnostics;
pub mod exit;
pub mod logging;
pub mod plan;
pub mod validate;
