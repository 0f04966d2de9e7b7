//! The run kernel: what every driver of runs (`workflow`, `thinkon`, `batch`, and what starts
//! them) stands on, and nothing any one of them owns.
//!
//! - `event.rs`: [`Event`], the one enum of every event written; `log.rs`: [`EventLog`], the
//!   only way to write an event log, and [`Observer`], a task's calls reported as its events;
//! - `ledger.rs`: [`Ledger`], the only writer of a run's plan, its checkpoints (behind
//!   [`Checkpoints`]), totals and events;
//! - `scheduler.rs`: jobs run with bounded concurrency, knowing nothing of plans;
//! - `budget.rs` and `finish.rs`: the budget check, and a run's status and reason, as plain
//!   functions of what was spent and what happened;
//! - `services.rs`: [`Services`], built once per process: HTTP pool, gates, negotiator,
//!   prompts, search client, the replayed transcript;
//! - `plan_file.rs`: a plan file opened for a run, locked, refused when invalid;
//! - `progress.rs`: what a progress display is told (a run's [`progress::Update`]s, a batch's
//!   [`progress::BatchUpdate`]s), and who shows a batch;
//! - `run.rs`: one workflow run as drivers of many see it ([`RunWorkflow`]);
//! - `shutdown.rs`: [`Shutdown`], the signal to stop;
//! - `outcome.rs`: how a run ended ([`RunStatus`], [`Totals`], [`RunSummary`]).
//!
//! See ARCHITECTURE.md for the layers and for how a driver uses the kernel.

pub mod budget;
pub mod event;
pub mod finish;
pub mod ledger;
pub mod log;
pub mod outcome;
pub mod plan_file;
pub mod progress;
pub mod run;
pub mod scheduler;
pub mod services;
pub mod shutdown;

pub use event::Event;
pub use ledger::{Checkpoints, Ledger, Mirror, Mirrored};
pub use log::{EventListener, EventLog, Observer};
pub use outcome::{BudgetStop, EngineError, RunStatus, RunSummary, Totals};
pub use run::{Finished, RunRequest, RunWorkflow};
pub use services::Services;
pub use shutdown::Shutdown;
