//! The review stage after the final report (docs/SPEC.md, "The review of a report"): two
//! roles read the report, `review`
//! (`{ok, summary, risks, gaps, suggestions}`, with the report and its sources) and
//! `second_opinion` (`{ok, verdict, notes}`, with the question, the plan's tasks and the
//! report), and their answers become `<out>.review.json` and the meeting notes
//! `<out>.review.md`. The contracts are the validators' ([`crate::validate::review`],
//! [`crate::validate::second_opinion`]); the check and repair rounds are the planner's
//! ([`crate::llm::checked`]).
//!
//! - `input.rs`: what each role reads, bounded; `schema.rs`: the schemas sent;
//! - `reviewer.rs`: the two roles and their one call each; `record.rs`: the JSON file;
//!   `notes.rs`: the Markdown notes; `stage.rs`: one review, its files and events.

pub mod input;
pub mod notes;
pub mod record;
pub mod reviewer;
pub mod schema;
pub mod stage;

pub use record::ReviewRecord;
pub use reviewer::{Meeting, Reviewer};
pub use stage::{
    ReviewFiles, ReviewFinished, ReviewObserver, ReviewPaths, ReviewStatus, ReviewSummary,
    review_report,
};
