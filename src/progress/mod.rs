//! The terminal's progress display (`display.rs`) and what it shows: a run's tasks and
//! rounds (`state.rs`, from its events) or a batch's questions (`questions.rs`).

pub mod display;
pub mod questions;
pub mod state;

pub use crate::kernel::progress::{BatchUpdate, Progress, QuestionEnd, Update};
pub use display::ProgressDisplay;
