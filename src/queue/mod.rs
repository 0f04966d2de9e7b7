//! Batches on PostgreSQL, for any number of workers on any number of machines: the queue is
//! apalis-postgres's (its jobs table, taken with `FOR UPDATE SKIP LOCKED`, its workers'
//! heartbeats and the re-enqueueing of what a silent worker held); researchflow keeps beside
//! it one row per question, each question's checkpoints and files, in its own schema.
//!
//! - `url.rs`: the `--queue` URL, its password held apart; `db.rs`: the pool, the one-line
//!   connection errors, statements retried while the server restarts;
//! - `schema.rs`: the versioned schema (`queue migrate`) and the check that refuses an older
//!   one;
//! - `submit.rs`: `batch FILE --queue`, idempotent by question id;
//! - `claim.rs`: taking questions, fenced by a claim token; `end.rs`: an attempt's end stored;
//!   `lease.rs`: heartbeats and orphaned jobs;
//! - `worker.rs`: [`Worker`], the driver of runs on the run layer's scheduler; `job.rs`: one
//!   attempt from the last checkpoint; `writer.rs`: the worker's one writer of what its runs
//!   append and checkpoint, fed over a channel;
//!   `local.rs`: a question's files on the worker's disk; `scratch.rs`: the worker's folder
//!   for them, and the removal of those dead workers left;
//! - `workers.rs`: the count of live workers, among which each endpoint's configured rate
//!   budget is divided;
//! - `status.rs`: `batch status`; `export.rs`: `batch export`.
//!
//! See ARCHITECTURE.md, "Batches on PostgreSQL".

pub mod claim;
pub mod db;
pub mod end;
pub mod ender;
pub mod export;
pub mod job;
pub mod lease;
pub mod local;
pub mod schema;
pub mod scratch;
pub mod status;
pub mod submit;
pub mod url;
pub mod worker;
pub mod workers;
pub mod writer;

pub use db::{Db, QueueError};
pub use schema::open;
pub use url::QueueUrl;
pub use worker::{Worker, WorkerEnd, WorkerOptions};
