//! The research workflow: the loop from a question to the final summary (`engine.rs`, with
//! `rounds.rs`, `tasks.rs` and `finish.rs`) and the review after its report
//! (`review_step.rs`). Its events, outcome and shutdown are the kernel's
//! ([`crate::kernel`]), its report [`crate::report`]'s. See `ARCHITECTURE.md` for the path of
//! one run through the modules.

pub mod engine;
pub mod finish;
pub mod review_step;
pub mod rounds;
pub mod tasks;

pub use engine::{Engine, ReviewStep, RunParts};
