//! One question's attempt on a worker: its files written from the queue's last checkpoint into
//! the worker's folder (or a new plan), the plan opened as any run's is, and the workflow run
//! through [`RunWorkflow`] with a [`DbMirror`] keeping every checkpoint, and every line the run
//! appends, in the database through the worker's [`Writer`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::claim::{Claimed, Files, load};
use super::db::Db;
use super::writer::{DbMirror, QuestionWriter, Writer};
use crate::exit::CommandError;
use crate::plan::{PlanFile, PlanStore};
use crate::run::Shutdown;
use crate::settings::RunOptions;
use crate::workflow::plan_file::open_valid;
use crate::workflow::{Finished, RunRequest, RunWorkflow};

/// How an attempt ended on this worker.
pub struct Attempted {
    pub finished: Result<Finished, CommandError>,
    /// Another worker took the question meanwhile: nothing of this run may be stored.
    pub lost: bool,
}

/// Where question `c`'s plan lives on this worker: one folder per batch under `scratch`.
pub fn plan_path(scratch: &Path, c: &Claimed) -> PathBuf {
    let folder = format!(
        "batch-{:016x}",
        crate::text::stable_hash(c.batch.as_bytes())
    );
    scratch.join(folder).join(format!("{}.json", c.name))
}

/// Runs question `c` from its last checkpoint to an end; every line its run appended is in
/// the database when it returns (or the attempt failed).
pub async fn attempt<W: RunWorkflow>(
    db: Db,
    writer: Writer,
    runner: Arc<W>,
    c: Claimed,
    scratch: PathBuf,
    options: RunOptions,
    shutdown: Shutdown,
) -> Attempted {
    let lost = Arc::new(AtomicBool::new(false));
    let (store, plan, question) = match prepare(db, &writer, c, &scratch).await {
        Ok(prepared) => prepared,
        Err(e) => {
            return Attempted {
                finished: Err(e),
                lost: false,
            };
        }
    };
    let mirror = DbMirror::new(question.clone(), Arc::clone(&lost));
    let finished = runner
        .run(RunRequest {
            store,
            plan,
            options,
            shutdown,
            listener: None,
            replay: None,
            mirror: Some(Box::new(mirror)),
        })
        .await
        .map_err(CommandError::from);
    let finished = match question.flush().await {
        Ok(held) => {
            lost.fetch_or(!held, Ordering::SeqCst);
            finished
        }
        Err(e) => Err(CommandError::failure(anyhow::anyhow!(
            "cannot store what the run wrote: {e}"
        ))),
    };
    Attempted {
        finished,
        lost: lost.load(Ordering::SeqCst),
    }
}

/// Question `c`'s plan opened on the worker's disk from its last checkpoint, with its way to
/// the writer.
async fn prepare(
    db: Db,
    writer: &Writer,
    c: Claimed,
    scratch: &Path,
) -> Result<(PlanStore, PlanFile, QuestionWriter), CommandError> {
    let files = if c.stored {
        load(&db, &c.batch, &c.id)
            .await
            .map_err(CommandError::failure)?
    } else {
        Files::default()
    };
    let path = plan_path(scratch, &c);
    let (store, plan) = open(&path, &c, &files)?;
    if files.plan.is_some() {
        tracing::info!(
            "question `{}`: attempt {} resumes from its last checkpoint",
            c.id,
            c.attempt
        );
    }
    Ok((store, plan, writer.question(c, &files.next)))
}

/// The question's plan on disk: its files written from the checkpoint, or a new plan.
fn open(path: &Path, c: &Claimed, files: &Files) -> Result<(PlanStore, PlanFile), CommandError> {
    super::local::write_all(path, files, crate::atomic::write_scratch).map_err(|e| {
        CommandError::failure(anyhow::anyhow!(
            "cannot write question `{}`'s files in `{}`: {e}",
            c.id,
            path.display()
        ))
    })?;
    if files.plan.is_some() {
        return open_valid(path).map(|(store, plan)| (store.scratch(), plan));
    }
    let plan = PlanFile::new(&c.query, crate::plan::workflow_id(), crate::clock::now());
    PlanStore::create(path, &plan)
        .map(|store| (store.scratch(), plan))
        .map_err(CommandError::usage)
}
