//! `researchflow batch status --queue URL --batch NAME [--json]`: a batch in the queue, its
//! counts per status and each running question's worker, attempt and age.

use crate::cli::BatchStatusArgs;
use crate::exit::{CommandResult, ExitStatus};
use crate::output::{print_json, print_text};
use crate::queue::status;

pub async fn run(args: BatchStatusArgs) -> CommandResult {
    let db = crate::queue::open(&args.queue.queue, 2)
        .await
        .map_err(|e| e.into_command())?;
    let status = status::read(&db, &args.batch)
        .await
        .map_err(|e| e.into_command())?;
    if args.json {
        print_json(&status)?;
    } else {
        print_text(&status.to_text())?;
    }
    Ok(ExitStatus::Success)
}
