//! Batch runs: many questions, one process, one shared HTTP pool and rate budget. This module
//! holds the batch's files (the questions file and the manifest); `cmd/batch.rs` runs the
//! questions' workflows.

pub mod manifest;
pub mod questions;

pub use manifest::{Item, Manifest, ManifestError};
pub use questions::{Question, QuestionsError};
