//! `researchflow worker --queue URL [--batch NAME] [--jobs N] ...`: runs the questions of a
//! queue's batches, up to `--jobs` at once, until stopped (exit 130 after its running
//! questions checkpoint and go back to the queue) or, with `--drain`, until nothing is left
//! (exit 0). The services are built once, as for a local batch; the driver is the queue's. On
//! a terminal the progress display shows its questions, and its end is a line of text (JSON
//! in a pipe or with `--json`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use crate::cli::{GlobalArgs, WorkerArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{print_json, print_text, stdout_is_terminal};
use crate::progress::{Progress, ProgressDisplay};
use crate::queue::status;
use crate::queue::submit::check_name;
use crate::queue::worker::worker_name;
use crate::queue::{Worker, WorkerOptions};
use crate::run::shutdown;
use crate::session::{self, Session};

pub async fn run(args: WorkerArgs, global: &GlobalArgs) -> CommandResult {
    // First: a signal during the set-up stops the worker cleanly too.
    let stop = shutdown::on_signal();
    if let Some(batch) = &args.batch {
        check_name(batch).map_err(|e| e.into_command())?;
    }
    let mut run = session::run_settings(global.config.as_deref(), &args.run, None)?;
    // A question's view would be written to the worker's folder, which the queue does not
    // keep: `batch export` writes the views from what the queue holds.
    run.settings.html = false;
    // A connection per job, and the worker's own: its writer, heartbeats, the live-worker
    // count, the rates' listener (which holds one) and a spare.
    let db = crate::queue::open(&args.queue.queue, args.jobs + 5)
        .await
        .map_err(|e| e.into_command())?;
    if let Some(batch) = &args.batch
        && !status::exists(&db, batch)
            .await
            .map_err(|e| e.into_command())?
    {
        // Draining a batch that is not there would end at once, as if it had been done.
        if args.drain {
            return Err(status::no_such_batch(&db, batch).into_command());
        }
        tracing::warn!("the queue holds no batch `{batch}` yet: waiting for it to be submitted");
    }
    // Each endpoint's configured budget is divided among the live workers.
    let name = worker_name();
    let lease = Duration::from_secs(args.lease);
    let gates = crate::queue::workers::gates(db.clone(), name.clone(), lease);
    let session = Session::with_gates(run.settings, gates).await?;
    let scratch = crate::queue::scratch::Scratch::create().map_err(|e| {
        CommandError::failure(anyhow::anyhow!("cannot create the worker's folder: {e}"))
    })?;
    let worker = Worker {
        db,
        runner: Arc::new(session),
        run_options: run.options,
        options: WorkerOptions {
            batch: args.batch.clone(),
            jobs: usize::try_from(args.jobs).unwrap_or(1),
            max_attempts: args.max_attempts,
            lease,
            drain: args.drain,
        },
        name,
        scratch: scratch.path().to_path_buf(),
        display: ProgressDisplay::for_terminal().map(|d| d as Arc<dyn Progress>),
    };
    tracing::info!(
        "worker `{}` on `{}`: {} job(s) at once, lease {} s",
        worker.name,
        worker.db.url.shown(),
        args.jobs,
        args.lease
    );
    let end = worker.run(stop).await.map_err(|e| e.into_command())?;
    if args.json || !stdout_is_terminal() {
        print_json(
            &json!({"worker": worker.name, "ran": end.ran, "interrupted": end.interrupted}),
        )?;
    } else {
        let ended = if end.interrupted {
            "interrupted"
        } else {
            "ended"
        };
        print_text(&format!(
            "worker `{}` {ended}: ran {} question(s) to an end; `researchflow batch status --queue URL --batch NAME` shows each\n",
            worker.name, end.ran
        ))?;
    }
    if end.interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = end.unusable {
        return Err(CommandError::usage(anyhow::anyhow!(
            "the worker stopped: {why}; its question went back to the queue: start the worker again once it is fixed"
        )));
    }
    Ok(ExitStatus::Success)
}
