//! researchflow as an MCP server (`researchflow mcp`): agents and editors reach its research
//! through the Model Context Protocol, over stdio or streamable HTTP, built on the official
//! Rust SDK (`rmcp`). It sits above `session`, which wires each run; it holds no engine
//! of its own and never writes to stdout outside the protocol.
//!
//! - `setup.rs`: [`ResearchServer`]: what the server was started with, its runs in flight;
//! - `server.rs`: its MCP handler: tools, resources, each call to its function;
//! - `tools.rs`: the tools' arguments and results, whose schemas the client reads;
//! - `calls.rs`: what each tool does (`research`, `resume`, `get_report`, `list_runs`,
//!   `validate_plan`); a run's progress and cancellation (`supervise`); `thinkon.rs`: the
//!   `thinkon` tool, a Thinkon goal run the same way;
//! - `active.rs`: the runs in flight, one per plan file, each with its stop;
//! - `progress.rs`: a run's events as progress notifications;
//! - `runs.rs`: runs read from their files; `resources.rs`: plans and reports by `file://` URI;
//! - `roots.rs`: [`Roots`], the folders a client's paths must stay within;
//! - `plan_check.rs`: a file named as a plan, read and checked without quoting it;
//! - `writable.rs`: the files a run writes beside its plan, none a symbolic link;
//! - `mask.rs`: every secret the server knows, masked in all it sends;
//! - `serve.rs`: the two transports, and stopping with every run saved;
//! - `gate.rs`: what every HTTP request passes first (the bearer token, broken JSON, the
//!   session cap, closed streams); `sessions.rs`: the HTTP sessions, capped and expired;
//!   `token.rs`: the bearer token.
//!
//! See ARCHITECTURE.md, "The MCP server".

pub mod active;
pub mod calls;
pub mod intake;
pub mod mask;
pub mod plan_check;
pub mod progress;
pub mod resources;
pub mod roots;
pub mod runs;
pub mod serve;
pub mod server;
pub mod sessions;
pub mod setup;
pub mod thinkon;
pub mod token;
pub mod tools;
pub mod writable;

pub use roots::Roots;
pub use setup::{ResearchServer, Setup};
