//! `researchflow validate`: placeholder until the validators land.

use crate::cli::ValidateArgs;
use crate::exit::{CommandError, CommandResult};

pub async fn run(_args: ValidateArgs) -> CommandResult {
    Err(CommandError::usage(anyhow::anyhow!(
        "`validate` is not built yet"
    )))
}
