//! researchflow's integration tests, one module per subject, linked into one test binary (as
//! uv's `crates/uv/tests/it/main.rs`): the crate is linked once, not once per file. What the
//! modules share (the mock servers, the binary runner, scenarios) lives once in `support/`;
//! the data they read stays beside this folder (`tests/golden/`, `tests/mcp/`).
//!
//! A module that needs an optional cargo feature is compiled only with it, so the default
//! build of this binary still compiles; `lean` holds the default build's own checks
//! (`cargo test --test it lean::`, as `scripts/test.sh` runs it). One module alone:
//! `cargo test --all-features --test it workflow::`.

mod support;

mod architecture;
mod batch;
mod budgets;
mod claims;
mod conventions;
mod diff;
mod doc_formats;
mod docs;
mod doctor_offline;
mod engine;
mod eval;
mod events_catalogue;
mod golden_events;
mod hostile_documents;
mod hostile_input;
mod kept_pages;
mod lean;
mod local_documents;
#[cfg(feature = "mcp")]
mod mcp_links;
#[cfg(feature = "mcp")]
mod mcp_search;
#[cfg(feature = "mcp")]
mod mcp_security;
#[cfg(feature = "mcp")]
mod mcp_server;
mod meaning;
mod mock_servers;
mod offline;
mod outcomes;
mod parser_props;
mod passage_path;
mod plan_round;
mod quality;
#[cfg(feature = "queue")]
mod queue;
mod rate_limits;
mod read;
mod real_servers;
mod reliability_md;
mod review;
mod search_providers;
mod short_context;
mod stated_answer;
mod stdout;
mod streaming;
mod terminal;
mod thinkon;
mod transcript;
mod validate_cli;
mod validate_plan_file;
mod validate_plan_next;
mod validate_props;
mod validate_steps;
mod view;
mod view_browser;
mod watch;
mod web_site;
mod workflow;
mod written_files;
