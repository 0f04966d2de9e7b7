//! The research workflow: the loop from a question to the final summary, its event log and
//! its report. See `ARCHITECTURE.md` for the path of one run through the modules.

pub mod engine;
pub mod events;
pub mod report;

pub use engine::{Agents, Engine, RunStatus, RunSummary, Totals, WorkflowOptions};
pub use events::EventLog;
