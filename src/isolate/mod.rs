//! Untrusted documents (web pages, corpus files) are parsed in a child process, as browsers run
//! their renderers and Apache Tika its ForkParser: a page that overflows a parser's stack,
//! inflates to gigabytes or loops for minutes costs its own job, never the run. [`Pool`] keeps
//! the workers (this same binary, `researchflow parse-worker`) and gives each job a deadline;
//! [`serve`] is a worker's loop, under the kernel's limits ([`limits`]: address space, CPU per
//! job, ended with its parent); [`frame`] is what they say to each other.
//!
//! This module knows no document kinds: a job is a kind, a JSON value and a body, handled in
//! the worker by the handler its command gives [`serve`].

pub mod frame;
pub mod limits;
pub mod pool;
pub mod serve;
pub mod worker;

pub use pool::{DEFAULT_MEMORY_MB, JobError, Parsing, Pool, WORKER_COMMAND};
pub use serve::{Handler, serve};
