//! The sub-agents that run tasks: search and summary (including the final report), the
//! dispatch between them, and the assembly of a task's input from the plan.

pub mod ask;
pub mod citations;
pub mod claims;
pub mod dispatch;
pub mod final_sources;
pub mod input;
pub mod leading;
pub mod quality;
pub mod reading;
pub mod search_agent;
pub mod searches;
pub mod summary_agent;
pub mod task;
pub mod verifier;

pub use dispatch::{Agents, TaskRunner};
pub use input::task_input;
pub use search_agent::SearchAgent;
pub use summary_agent::SummaryAgent;
pub use task::{Direction, TaskError, TaskInput, TaskOutput};
