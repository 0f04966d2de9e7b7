//! `researchflow batch export --queue URL --batch NAME --out-dir DIR`: what a local batch
//! writes (plan files, reports, events, transcripts, `batch.json`), for every question of a
//! batch in the queue that has ended.

use serde_json::json;

use crate::cli::BatchExportArgs;
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, print_json};
use crate::queue::export::export;

pub async fn run(args: BatchExportArgs) -> CommandResult {
    let db = crate::queue::open(&args.queue.queue, 2)
        .await
        .map_err(|e| e.into_command())?;
    // Absolute, so that the manifest's paths hold wherever it is read from.
    let dir = std::fs::create_dir_all(&args.out_dir)
        .and_then(|()| std::fs::canonicalize(&args.out_dir))
        .map_err(|e| {
            CommandError::usage(anyhow::anyhow!(
                "cannot use the folder `{}`: {e}",
                args.out_dir.display()
            ))
        })?;
    let exported = export(&db, &args.batch, &dir)
        .await
        .map_err(|e| e.into_command())?;
    print_json(&json!({
        "batch": args.batch,
        "manifest": absolute(&exported.manifest),
        "ended": exported.ended,
        "counts": exported.counts,
        "left_out": exported.left_out,
    }))?;
    Ok(ExitStatus::Success)
}
