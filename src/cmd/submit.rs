//! `researchflow batch FILE --queue URL [--batch NAME]`: the questions submitted to a queue on
//! PostgreSQL for workers to run; prints `{"batch", "submitted", "already_queued",
//! "already_done"}`. Submitting again adds nothing that is queued or done.

use crate::batch::questions;
use crate::cli::{BatchArgs, BatchEngine};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::print_json;
use crate::queue::submit::submit;

pub async fn run(args: BatchArgs) -> CommandResult {
    let (Some(file), Some(url)) = (&args.file, &args.queue) else {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`batch` runs FILE here with `--out-dir DIR`, or submits it with `--queue URL`"
        )));
    };
    if args.engine == BatchEngine::Thinkon {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`--engine thinkon` runs here, not in a queue: its workers run workflows; drop `--queue` and give `--out-dir DIR`"
        )));
    }
    let questions = questions::read(file).map_err(CommandError::usage)?;
    let name = match &args.batch {
        Some(name) => name.clone(),
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default(),
    };
    let db = crate::queue::open(url, 2)
        .await
        .map_err(|e| e.into_command())?;
    let submitted = submit(&db, &name, &questions)
        .await
        .map_err(|e| e.into_command())?;
    tracing::info!(
        "batch `{name}` in `{}`: {} question(s) submitted, {} already queued, {} already done",
        db.url.shown(),
        submitted.submitted,
        submitted.already_queued,
        submitted.already_done
    );
    print_json(&submitted)?;
    Ok(ExitStatus::Success)
}
