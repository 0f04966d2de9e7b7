//! Logging set-up: tracing on stderr, filtered by `RUST_LOG`, else by `-v` / `-q`; and
//! [`line()`], for the fixed-format status lines (`[planning] ...`, `AGENT_STATUS ...`) that
//! scripts read and that therefore carry no timestamp or level.
//!
//! With progress on (a workflow on a terminal), tracing-indicatif draws a bar per span and log
//! lines go through its writer, so they never tear the bars; otherwise output is plain lines.

use std::io::{IsTerminal, Write};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing_indicatif::IndicatifLayer;
use tracing_indicatif::writer::{IndicatifWriter, Stderr};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// How the log is set up, in plain values (the command line is converted in `cmd/`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogConfig {
    /// Only warnings and errors.
    pub quiet: bool,
    /// 0 info, 1 debug for researchflow, 2 or more trace.
    pub verbose: u8,
    /// Progress bars, drawn only when stderr is a terminal and `quiet` is off.
    pub progress: bool,
    /// ANSI colours in log lines; off when stderr is not a terminal or `NO_COLOR` is set.
    pub color: bool,
}

static QUIET: AtomicBool = AtomicBool::new(false);
static BAR_WRITER: OnceLock<IndicatifWriter<Stderr>> = OnceLock::new();

/// Installs the global tracing subscriber. Calling it twice is harmless.
pub fn init(config: LogConfig) {
    QUIET.store(config.quiet, Ordering::Relaxed);
    let default = match (config.quiet, config.verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "researchflow=debug,info",
        (false, _) => "trace",
    };
    let filter = || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    if config.progress && !config.quiet && std::io::stderr().is_terminal() {
        let bars: IndicatifLayer<_> = IndicatifLayer::new();
        let writer = bars.get_stderr_writer();
        let _ = BAR_WRITER.set(writer.clone());
        let _ = tracing_subscriber::registry()
            .with(filter())
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(writer)
                    .with_ansi(config.color)
                    .with_target(false),
            )
            .with(bars)
            .try_init();
    } else {
        let _ = tracing_subscriber::fmt()
            .with_env_filter(filter())
            .with_writer(std::io::stderr)
            .with_ansi(config.color)
            .with_target(false)
            .try_init();
    }
}

fn write_line(text: &str) {
    match BAR_WRITER.get() {
        Some(writer) => {
            let mut w = writer.clone();
            let _ = writeln!(w, "{text}");
        }
        None => {
            let mut err = std::io::stderr().lock();
            let _ = writeln!(err, "{text}");
        }
    }
}

/// Writes one status line to stderr as is, unless `-q` was given.
pub fn line(text: &str) {
    if !QUIET.load(Ordering::Relaxed) {
        write_line(text);
    }
}

/// Writes one status line even under `-q` (the `AGENT_STATUS` signal).
pub fn signal(text: &str) {
    write_line(text);
}
