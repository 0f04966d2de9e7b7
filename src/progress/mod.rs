//! The terminal's progress display (`display.rs`) and what it shows (`state.rs`), fed by a
//! run's events or a batch's questions.

pub mod display;
pub mod state;

pub use crate::kernel::progress::{Progress, Update};
pub use display::ProgressDisplay;
