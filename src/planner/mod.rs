//! The planning agent: input assembly, the output contract, the plan gate, write-back
//! and the round that ties them together.

pub mod apply;
pub mod contract;
pub mod gate;
pub mod gate_file;
pub mod input;
pub mod round;
pub mod schema;

pub use apply::{Applied, Dropped, apply, bootstrap, force_final};
pub use contract::{PlanAnswer, PlannedTask};
pub use gate::{GateVerdict, Issue, Severity};
pub use input::{FailedTask, RoundNotes};
pub use round::{LogOptions, PlanRound, Planner, RoundError, RoundOutcome};
