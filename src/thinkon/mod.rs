//! The Thinkon runtime (docs/SPEC.md, "Plan-next answers (Thinkon)"): a fractal planner over a
//! tree of blocks (goal, plan, done), each planned with one `plan-next` answer, with the
//! research sub-agents and an opt-in shell as its executors. See `ARCHITECTURE.md` ("The path
//! of one run") for where it sits.
//!
//! - `runtime.rs`: the loop and its limits; `steps.rs`: each step (define the root, plan a
//!   child, force execution at the depth limit, execute, reflect, receive a child's result).
//! - `block.rs`, `tree.rs`, `store.rs`: the blocks, the tree in memory, the folder on disk;
//!   `start.rs`: a goal's tree opened (new, or continued).
//! - `context.rs`: the planner's Context JSON; `plan_next.rs`: one plan-next call, checked by
//!   `validate plan-next` and repaired; `schema.rs`: its structured-output schema;
//!   `answer.rs`: the parts of a valid answer.
//! - `executors.rs` (the executors file), `executor.rs` (one call to an observation),
//!   `sub_agents.rs` (`search:`, `summarize:`), `shell.rs` (`shell:`).
//! - `reflect.rs`: a block's Core4 result; `outcome.rs`: the run's status and `result.md`.
//!
//! Block ids live only in the tree and its files: the planner never sees one and never writes
//! one.

pub mod answer;
pub mod block;
pub mod context;
pub mod executor;
pub mod executors;
pub mod outcome;
pub mod plan_next;
pub mod reflect;
pub mod runtime;
pub mod schema;
pub mod shell;
pub mod start;
mod steps;
pub mod store;
pub mod sub_agents;
pub mod tree;

pub use block::{Block, BlockStatus, PlanType};
pub use executor::{Executor, ShellOptions};
pub use executors::ExecutorSet;
pub use outcome::{ThinkonStatus, ThinkonSummary};
pub use plan_next::{BlockPlanner, Spent};
pub use reflect::Reflector;
pub use runtime::{RunError, Runtime, RuntimeParts, ThinkonOptions};
pub use start::{StartError, open_folder, open_goal};
pub use store::{StoreError, TreeMeta, TreeStore};
pub use sub_agents::SubAgents;
pub use tree::Tree;
