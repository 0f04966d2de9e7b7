//! `researchflow diff OLD.json NEW.json [--json]`: read two plan files, compare them
//! ([`crate::compare::diff`]) and print what changed: Markdown, or the JSON of the
//! [`crate::compare::PlanDiff`] with `--json`. Always Markdown otherwise, terminal or not, so
//! a cron job's output does not depend on where it goes. The digest names both files by their
//! absolute paths, as every command prints paths.
//!
//! The files are only read: no lock, so a plan a workflow is writing can be compared (every
//! save is an atomic rename, so a read sees one whole version). A file that cannot be read or
//! is not a plan file exits 2 with a message naming it; a difference is not a failure (exit 0).

use std::path::Path;

use crate::cli::DiffArgs;
use crate::compare;
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::files::{DEFAULT_MAX_BYTES, read_bounded};
use crate::output::absolute;
use crate::plan::PlanFile;
use crate::plan::store::parse_plan;

pub async fn run(args: DiffArgs) -> CommandResult {
    let old = read_plan(&args.old)?;
    let new = read_plan(&args.new)?;
    let diff = compare::diff(&old, &new);
    if args.json {
        crate::output::print_json(&diff)?;
    } else {
        crate::output::print_text(&compare::to_markdown(
            &diff,
            &absolute(&args.old),
            &absolute(&args.new),
        ))?;
    }
    Ok(ExitStatus::Success)
}

/// The plan file at `path`, or exit 2 with an error naming it.
fn read_plan(path: &Path) -> Result<PlanFile, CommandError> {
    let text = read_bounded(path, DEFAULT_MAX_BYTES).map_err(CommandError::usage)?;
    parse_plan(path, &text).map_err(CommandError::usage)
}
