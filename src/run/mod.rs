//! The run layer: what every driver of runs (a workflow, a Thinkon goal, a batch of either, a
//! queue worker, the MCP server) stands on, and which knows nothing of research: jobs run with
//! bounded concurrency (`scheduler.rs`), the signal to stop (`shutdown.rs`), the budget check
//! (`budget.rs`), the event log writer and its listener (`log.rs`, generic over the driver's
//! events), and the services a process builds once (`services.rs`: HTTP pool, gates,
//! negotiator, prompts, search client, transcripts). Its errors are its own
//! ([`SetupError`]); what they mean as an exit code is decided above.

pub mod budget;
pub mod log;
pub mod scheduler;
pub mod services;
pub mod shutdown;

pub use budget::BudgetStop;
pub use log::{EventListener, EventLog, LogEvent};
pub use scheduler::{Admit, Done, Scheduler};
pub use services::{Services, SetupError, session};
pub use shutdown::Shutdown;
