//! researchflow: a batch research-workflow orchestrator.
//!
//! # Layout
//!
//! See `ARCHITECTURE.md` at the repository root for the module map, the layers and the path of
//! one request through them. Imports go down the layers, never up (`tests/it/architecture.rs`
//! checks it): [`cmd`] -> [`workflow`] -> ([`planner`], [`agents`]) -> ([`llm`], [`search`]) ->
//! [`http`], with [`plan`], [`settings`] and the small helpers below.
//!
//! - [`cli`]: every command-line type; [`cmd`]: one file per subcommand.
//! - [`settings`]: config file, environment and secrets, resolved once.
//! - [`run`]: the run layer every driver stands on, knowing nothing of research: scheduler,
//!   shutdown, budget, the event log writer, the services a process builds once.
//! - [`events`]: every event a run writes, and how a run ended (status, totals).
//! - [`session`]: the one place where runs are wired (`Session`: role clients, prompts, tapes,
//!   event logs, search), and what a run's status does to an exit code.
//! - [`workflow`]: the loop from question to final summary, its ledger, status and outcome.
//! - [`offline`]: the offline engine: planner and sub-agents without a model.
//! - [`thinkon`]: the Thinkon runtime: a fractal planner over a tree of blocks.
//! - [`batch`]: a batch's questions file and manifest.
//! - [`eval`]: a question set with gold answers, and the scoring of a run against it.
//! - `queue` (feature `queue`): batches on PostgreSQL: submit, workers, leases, checkpoints in
//!   the database.
//! - `mcp` (feature `mcp`): researchflow as an MCP server (`researchflow mcp`): tools,
//!   resources, roots.
//! - [`planner`]: one planning round (input, contract, write-back).
//! - [`agents`]: the search and summary sub-agents and their dispatch.
//! - [`review`]: the review stage after the report (two roles, their files).
//! - [`llm`]: the chat-completions client; [`search`]: the search providers.
//! - [`read`]: the page reader: a fetched page's text, and its passages ranked for a task.
//! - [`web_providers`]: each web search API (name, key, request, answer) and their registry.
//! - [`http`]: the HTTP client, errors, the one retry policy and each endpoint's rate budget.
//! - [`plan`]: the plan file: model, node ids, refs, info blocks, store.
//! - [`validate`]: the validators (step plans, plan-next answers, plan files).
//! - [`compare`]: what changed between two plan files (sources, findings, directions).
//! - [`transcript`]: the run record of every LLM and search call, and its replay.
//! - [`diagnostics`]: the one findings shape shared by every check.
//! - [`prompts`]: the system prompts; [`text`]: small text helpers; [`markdown`]: model text
//!   made safe in Markdown; [`clock`]: timestamps; [`usage`]: the tokens of model calls;
//!   [`atomic`]: the one atomic file write; [`files`]: the one bounded file read;
//!   [`in_corpus`]: a local document's place in its corpus.
//! - [`exit`]: exit codes; [`logging`]: tracing set-up.

pub mod agents;
pub mod atomic;
pub mod batch;
pub mod cli;
pub mod clock;
pub mod cmd;
pub mod compare;
pub mod diagnostics;
pub mod embed;
pub mod eval;
pub mod events;
pub mod exit;
pub mod files;
pub mod format;
pub mod http;
pub mod in_corpus;
pub mod isolate;
pub mod llm;
pub mod lockfile;
pub mod logging;
pub mod markdown;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod offline;
pub mod output;
pub mod plan;
pub mod planner;
pub mod progress;
pub mod prompts;
#[cfg(feature = "queue")]
pub mod queue;
pub mod read;
pub mod report;
pub mod review;
pub mod run;
pub mod search;
pub mod session;
pub mod settings;
pub mod sync;
pub mod text;
pub mod thinkon;
pub mod transcript;
pub mod usage;
pub mod validate;
pub mod view;
pub mod watch;
pub mod web_providers;
pub mod workflow;
