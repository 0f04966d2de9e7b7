//! The research workflow: the loop from a question to the final summary (`engine.rs`, with
//! `rounds.rs`, `tasks.rs`, `spending.rs` and `finish.rs`, each owning its state), the only writer of its plan (`ledger.rs`), how
//! it ends (`ending.rs`: status and reason as plain functions; `outcome.rs`: what it
//! reports), the review after its report (`review_step.rs`), its plan file opened for a run
//! (`plan_file.rs`), and how drivers of many runs see one (`driver.rs`: [`RunWorkflow`]).
//! It stands on the run layer ([`crate::run`]: scheduler, budget, event log, shutdown); its
//! events are [`crate::events`]', its report [`crate::report`]'s. See `ARCHITECTURE.md` for
//! the path of one run through the modules.

pub mod driver;
pub mod ending;
pub mod engine;
pub mod finish;
pub mod ledger;
pub mod outcome;
pub mod plan_file;
pub mod review_step;
pub mod rounds;
mod spending;
pub mod tasks;

pub use driver::{Finished, RunRequest, RunWorkflow};
pub use engine::{Engine, RunParts};
pub use ledger::{Checkpoints, Ledger, Mirror, Mirrored};
pub use outcome::{EngineError, RunSummary};
pub use review_step::ReviewStep;
