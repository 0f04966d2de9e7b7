//! The run kernel: what every driver of runs (`workflow`, `thinkon`, `batch`, and what starts
//! them) stands on, and nothing any one of them owns.
//!
//! - `event.rs`: [`Event`], the one enum of every event written; `log.rs`: [`EventLog`], the
//!   only way to write an event log, and [`Observer`], a task's calls reported as its events;
//! - `shutdown.rs`: [`Shutdown`], the signal to stop;
//! - `outcome.rs`: how a run ended ([`RunStatus`], [`Totals`], [`RunSummary`]).
//!
//! See ARCHITECTURE.md for the layers and for how a driver uses the kernel.

pub mod event;
pub mod log;
pub mod outcome;
pub mod shutdown;

pub use event::Event;
pub use log::{EventListener, EventLog, Observer};
pub use outcome::{BudgetStop, EngineError, RunStatus, RunSummary, Totals};
pub use shutdown::Shutdown;
