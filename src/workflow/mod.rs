//! The research workflow: the loop from a question to the final summary (`engine.rs`, with
//! `rounds.rs`, `batch.rs`, `results.rs` and `finish.rs`) and the review after its report
//! (`review_step.rs`), its outcome, its event log, the terminal's progress display
//! (`progress.rs`, fed by the event log; what it shows in `progress_state.rs`) and its report.
//! See `ARCHITECTURE.md` for the path of one run through the modules.

pub mod batch;
pub mod budget;
pub mod engine;
pub mod events;
pub mod finish;
pub mod outcome;
pub mod progress;
pub mod progress_state;
pub mod report;
pub mod results;
pub mod review_step;
pub mod rounds;

pub use engine::{Engine, EngineError, EngineParts, ReviewStep, Shutdown, WorkflowOptions};
pub use events::{EventListener, EventLog};
pub use outcome::{RunStatus, RunSummary, Totals};
pub use progress::ProgressDisplay;
