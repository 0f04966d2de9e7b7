//! The planning agent: input assembly, the output contract, the plan review, write-back
//! and the round that ties them together.

pub mod apply;
pub mod contract;
pub mod input;
pub mod plan_review;
pub mod plan_review_file;
pub mod round;
pub mod schema;

pub use apply::{Applied, Dropped, apply, bootstrap, force_final};
pub use contract::{PlanAnswer, PlannedTask};
pub use input::{FailedTask, RoundNotes};
pub use plan_review::{Issue, PlanReview, Severity};
pub use round::{LogOptions, PlanRound, Planner, RoundError, RoundOutcome};
