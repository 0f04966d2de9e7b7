//! Runs the parsed command line: the one place that maps a subcommand to its `run`.

use crate::cli::{Cli, Command};
use crate::exit::CommandResult;

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Validate(args) => super::validate::run(args).await,
        Command::Plan(args) => super::plan::run(args, &cli.global).await,
        Command::Workflow(args) => super::workflow::run(args, &cli.global).await,
        Command::Doctor(args) => super::doctor::run(args, &cli.global).await,
        Command::Diff(args) => super::diff::run(args).await,
        Command::Batch(args) => super::batch::run(args, &cli.global).await,
        Command::Review(args) => super::review::run(args, &cli.global).await,
        Command::Thinkon(args) => super::thinkon::run(args, &cli.global).await,
    }
}
