//! The terminal's progress display (`display.rs`) and what it shows: a run's tasks and
//! rounds (`state.rs`, from its events), a batch's questions (`questions.rs`) or a corpus
//! being indexed (`index.rs`); what any
//! display is told (`update.rs`).

pub mod display;
pub mod index;
pub mod questions;
pub mod state;
pub mod update;

pub use display::ProgressDisplay;
pub use update::{BatchUpdate, Progress, QuestionEnd, Update};
