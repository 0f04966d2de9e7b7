//! The planning agent: input assembly, answer parsing, the output contract, write-back and
//! the round that ties them together.

pub mod answer;
pub mod apply;
pub mod contract;
pub mod input;
pub mod round;

pub use apply::{Applied, apply, bootstrap};
pub use contract::{PlanAnswer, PlannedTask};
pub use input::{FailedTask, RoundNotes};
pub use round::{Planner, RoundError, RoundOutcome};
