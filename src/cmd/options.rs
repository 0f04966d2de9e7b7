//! Command-line arguments turned into the plain option values of lower layers, so that clap
//! types stay in `cli.rs` and no layer below `cmd` depends on them.

use std::io::IsTerminal;

use crate::cli::{Cli, Command, PlanningLogArgs};
use crate::logging::LogConfig;
use crate::planner::LogOptions;

/// The log set-up for this command line: progress bars for a workflow; colour only on a
/// terminal and without `NO_COLOR` (any non-empty value, as no-color.org says).
pub fn log_config(cli: &Cli) -> LogConfig {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    LogConfig {
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
        progress: matches!(cli.command, Command::Workflow(_)),
        color: !no_color && std::io::stderr().is_terminal(),
    }
}

/// The planner's log options; `echo` says whether the input/output lines are printed even
/// without `--log-full` / `--log-show-instructions`.
pub fn planner_log(args: PlanningLogArgs, echo: bool) -> LogOptions {
    LogOptions {
        echo: echo || args.log_full || args.log_show_instructions,
        full: args.log_full,
        show_instructions: args.log_show_instructions,
    }
}
