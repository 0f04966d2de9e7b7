//! The sub-agents that run tasks: search and summary (including the final report).

pub mod citations;
pub mod search_agent;
pub mod summary_agent;
pub mod task;

pub use search_agent::SearchAgent;
pub use summary_agent::SummaryAgent;
pub use task::{TaskError, TaskInput, TaskOutput};
