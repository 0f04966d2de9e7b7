//! Logging set-up: tracing on stderr, filtered by `RUST_LOG`, else by `-v` / `-q`; and
//! [`line`], for the fixed-format status lines (`[planning] ...`, `AGENT_STATUS ...`) that
//! scripts read and that therefore carry no timestamp or level.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing_subscriber::EnvFilter;

use crate::cli::GlobalArgs;

static QUIET: AtomicBool = AtomicBool::new(false);

/// Installs the global tracing subscriber. Calling it twice is harmless.
pub fn init(global: &GlobalArgs) {
    QUIET.store(global.quiet, Ordering::Relaxed);
    let default = match (global.quiet, global.verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "researchflow=debug,info",
        (false, _) => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

/// Writes one status line to stderr as is, unless `-q` was given.
pub fn line(text: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
    }
}

/// Writes one status line even under `-q` (the `AGENT_STATUS` signal).
pub fn signal(text: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}
