//! What a run says of itself, in the program's words: every kind of event it writes
//! (`catalogue.rs`: [`Event`], checked against the book's catalogue, `docs/src/event-log.md`), how
//! it ended (`outcome.rs`: [`RunStatus`], [`Totals`]), and what a task's calls report, as its
//! events (`observer.rs`: [`Observer`]; a streamed attempt that broke: `attempt.rs`), and a `watch`
//! run's own events (`watch.rs`). The log that writes them is the run layer's
//! ([`crate::run::EventLog`]); this module fills it with the research's events.

pub mod attempt;
pub mod catalogue;
pub mod observer;
pub mod outcome;
pub mod watch;

pub use catalogue::Event;
pub use observer::Observer;
pub use outcome::{RunStatus, Totals};

/// A run's event log, of the program's events.
pub type EventLog = crate::run::EventLog<Event>;

/// Watches a run's events as they are written (the terminal's display, an MCP client).
pub use crate::run::EventListener;
