//! Logging set-up: tracing on stderr, filtered by `RUST_LOG`, else by `-v` / `-q`.

use tracing_subscriber::EnvFilter;

use crate::cli::GlobalArgs;

/// Installs the global tracing subscriber. Calling it twice is harmless.
pub fn init(global: &GlobalArgs) {
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
