//! A batch's questions run in its folder, by the engine asked for: the part `batch` and
//! `watch` share. The folder is open (locked, its manifest read) before; what is written
//! after (changes, index, the end's summary) is each command's.

use std::path::Path;

use super::{Session, ThinkonQuestions};
use crate::batch::{Batch, BatchEnd, Manifest, Question, RunQuestion};
use crate::cli::BatchEngine;
use crate::exit::CommandError;
use crate::run::shutdown;
use crate::settings::RunOptions;

/// Runs the `questions` of the batch in `dir` not done yet by `engine`, at most `jobs` at
/// once, until they end or a signal stops them; the manifest as it ends.
pub async fn run_batch(
    engine: BatchEngine,
    (dir, manifest): (&Path, Manifest),
    options: RunOptions,
    session: Session,
    questions: &[Question],
    jobs: usize,
) -> Result<(Manifest, BatchEnd), CommandError> {
    let dir = dir.to_path_buf();
    match engine {
        BatchEngine::Workflow => {
            let batch = Batch::new(dir, manifest, options, session, None);
            run_questions(batch, questions, jobs).await
        }
        BatchEngine::Thinkon => {
            let batch = Batch::new(dir, manifest, options, ThinkonQuestions(session), None);
            run_questions(batch, questions, jobs).await
        }
    }
}

/// Runs the questions not done yet, at most `jobs` at once; the manifest as it ends.
async fn run_questions<W: RunQuestion>(
    mut batch: Batch<W>,
    questions: &[Question],
    jobs: usize,
) -> Result<(Manifest, BatchEnd), CommandError> {
    let todo = batch.to_run(questions)?;
    tracing::info!(
        "batch of {} question(s): {} to run, {} already done",
        questions.len(),
        todo.len(),
        questions.len() - todo.len()
    );
    let end = batch.run_all(todo, jobs, shutdown::on_signal()).await?;
    Ok((batch.manifest, end))
}
