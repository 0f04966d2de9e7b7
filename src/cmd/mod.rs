//! One file per subcommand, each an `async fn run(args, ...) -> CommandResult`.

pub mod validate;

use crate::cli::{Cli, Command};
use crate::exit::CommandResult;

/// Runs the parsed command line.
pub async fn run(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Plan(_) | Command::Workflow(_) => Err(crate::exit::CommandError::usage(
            anyhow::anyhow!("this command is not built yet"),
        )),
    }
}
