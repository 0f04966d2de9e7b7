//! One file per subcommand, each an `async fn run(args, ...) -> CommandResult`.

pub mod plan;
pub mod validate;
pub mod workflow;

use crate::cli::{Cli, Command};
use crate::exit::CommandResult;

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Plan(args) => plan::run(args, &cli.global).await,
        Command::Workflow(args) => workflow::run(args, &cli.global).await,
    }
}
