//! The planning agent: input assembly, the output contract, write-back and the round that ties
//! them together.

pub mod apply;
pub mod contract;
pub mod input;
pub mod round;
pub mod schema;

pub use apply::{Applied, Repeat, apply, bootstrap, force_final};
pub use contract::{PlanAnswer, PlannedTask};
pub use input::{FailedTask, RoundNotes};
pub use round::{LogOptions, PlanRound, Planner, RoundError, RoundOutcome};
