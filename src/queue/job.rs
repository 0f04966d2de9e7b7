//! One question's attempt on a worker: its files written from the queue's last checkpoint into
//! the worker's folder (or a new plan), the plan opened as any run's is, and the workflow run
//! through [`RunWorkflow`] with a [`DbMirror`] keeping every checkpoint in the database and its
//! [`super::mirror::Shipper`] sending what the run appends in between.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio_util::task::AbortOnDropHandle;

use super::claim::{Claimed, Files};
use super::db::Db;
use super::mirror::{DbMirror, load};
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
    /// How many bytes of each appended file the database holds (empty when the run never got
    /// as far as its mirror).
    pub kept: HashMap<String, u64>,
}

/// Where question `c`'s plan lives on this worker: one folder per batch under `scratch`.
pub fn plan_path(scratch: &Path, c: &Claimed) -> PathBuf {
    let folder = format!(
        "batch-{:016x}",
        crate::text::stable_hash(c.batch.as_bytes())
    );
    scratch.join(folder).join(format!("{}.json", c.name))
}

/// Runs question `c` from its last checkpoint to an end.
pub async fn attempt<W: RunWorkflow>(
    db: Db,
    runner: Arc<W>,
    c: Claimed,
    scratch: PathBuf,
    options: RunOptions,
    shutdown: Shutdown,
) -> Attempted {
    let lost = Arc::new(AtomicBool::new(false));
    let (store, plan, mirror) = match prepare(db, c, &scratch, Arc::clone(&lost)).await {
        Ok(prepared) => prepared,
        Err(e) => {
            return Attempted {
                finished: Err(e),
                lost: false,
                kept: HashMap::new(),
            };
        }
    };
    let kept = mirror.kept();
    // A task of its own, never polled by the run's: a checkpoint blocks the run's task while it
    // waits for the offsets the shipper holds during a send, and a send polled by that same
    // task would never end (a deadlock). Stopped when the run ends, before the offsets are read.
    let shipper = AbortOnDropHandle::new(tokio::spawn(mirror.shipper().run()));
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
    drop(shipper);
    let kept = kept.lock().await.clone();
    Attempted {
        finished,
        lost: lost.load(Ordering::SeqCst),
        kept,
    }
}

/// Question `c`'s plan opened on the worker's disk from its last checkpoint, with the mirror
/// that keeps its next ones.
async fn prepare(
    db: Db,
    c: Claimed,
    scratch: &Path,
    lost: Arc<AtomicBool>,
) -> Result<(PlanStore, PlanFile, DbMirror), CommandError> {
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
    Ok((store, plan, DbMirror::new(db, c, path, &files, lost)))
}

/// The question's plan on disk: its files written from the checkpoint, or a new plan.
fn open(path: &Path, c: &Claimed, files: &Files) -> Result<(PlanStore, PlanFile), CommandError> {
    super::local::write_all(path, files).map_err(|e| {
        CommandError::failure(anyhow::anyhow!(
            "cannot write question `{}`'s files in `{}`: {e}",
            c.id,
            path.display()
        ))
    })?;
    if files.plan.is_some() {
        return open_valid(path);
    }
    let plan = PlanFile::new(&c.query, crate::plan::workflow_id(), crate::clock::now());
    PlanStore::create(path, &plan)
        .map(|store| (store, plan))
        .map_err(CommandError::usage)
}
