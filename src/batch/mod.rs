//! Batch runs: many questions, one process, one shared HTTP pool and rate budget: the
//! questions file (`questions.rs`), the manifest (`manifest.rs`) with its journal
//! (`journal.rs`) and their one writer while a batch runs (`manifest_writer.rs`), the run of every
//! question (`run.rs`, each through a [`RunQuestion`]: a workflow, or a Thinkon goal;
//! `ask.rs`), its folder as a command opens it (`folder.rs`), what changed since an earlier
//! batch (`changes.rs`), the batch's `index.html` (`index.rs`) and its end in words for a
//! terminal (`summary.rs`).

pub mod ask;
pub mod changes;
pub mod folder;
pub mod index;
pub mod journal;
pub mod manifest;
pub mod manifest_writer;
pub mod questions;
pub mod run;
pub mod summary;

pub use ask::{Ask, Ran, RunQuestion};
pub use manifest::{Item, ItemStatus, Manifest, ManifestError};
pub use questions::{Question, QuestionsError};
pub use run::{Batch, BatchEnd};
