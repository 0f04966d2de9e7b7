//! What changed between two plan files of one question: the sources that are new or no
//! longer found, the findings whose summaries changed, the final report's facts that changed,
//! are new or are gone, and the directions (nodes) that are new or dropped. `researchflow diff`
//! prints it; a recurring batch writes it beside each answer
//! ([`crate::plan::beside::changes_file_name`]). This module compares values and renders text;
//! it reads and writes no file. See `ARCHITECTURE.md` for where it sits.
//!
//! - [`plan_diff`]: [`diff`] and the [`PlanDiff`] it returns (matching rules there).
//! - [`url`]: the URL key two sources are compared by.
//! - [`citations`]: citation numbers read as the sources they name.
//! - [`facts`]: the final reports' claims compared by their figures and names, not wording.
//! - [`markdown`]: [`to_markdown`], the digest a person reads.

pub mod citations;
pub mod facts;
pub mod markdown;
pub mod plan_diff;
pub mod url;

pub use facts::FactChange;
pub use markdown::to_markdown;
pub use plan_diff::{ChangedNode, NodeRef, PlanDiff, diff};
