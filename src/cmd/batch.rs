//! `researchflow batch FILE --out-dir DIR`: one workflow per question, up to `--jobs` at once
//! in one process, sharing one HTTP pool, one structured-output negotiation and one rate
//! budget. Each question's plan, report and events sit in DIR under its stable name; the
//! manifest `DIR/batch.json` is saved as each question starts and ends.
//!
//! A rerun skips the questions that are done (completed or partial: their files are not
//! touched) and resumes the others from their plan files. Ctrl-C or SIGTERM: no new question
//! starts, running ones checkpoint as a workflow does, exit 130. An endpoint that cannot be
//! used stops the batch too (exit 2). `DIR/batch.lock` keeps two batches off one folder.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::json;
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::output::{absolute, eprint_line, print_json};
use super::research;
use super::runner::{Finished, Shared, shutdown_signal};
use super::workflow::{budget, workflow_id};
use crate::batch::{Item, Manifest, Question, manifest, questions};
use crate::cli::{BatchArgs, GlobalArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::kernel::{EngineError, RunStatus, Shutdown};
use crate::plan::{PlanFile, PlanStore};
use crate::planner::LogOptions;
use crate::progress::{ProgressDisplay, Update};
use crate::workflow::WorkflowOptions;

pub async fn run(args: BatchArgs, global: &GlobalArgs) -> CommandResult {
    let questions = questions::read(&args.file).map_err(CommandError::usage)?;
    let previous = args.previous.as_deref().map(previous_dir).transpose()?;
    std::fs::create_dir_all(&args.out_dir).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "cannot create the batch folder `{}`: {e}",
            args.out_dir.display()
        ))
    })?;
    // Absolute, so that the manifest's paths hold wherever it is read from.
    let dir = std::fs::canonicalize(&args.out_dir).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "cannot use `{}`: {e}",
            args.out_dir.display()
        ))
    })?;
    let _lock = manifest::lock(&dir).map_err(CommandError::usage)?;
    let mut manifest = Manifest::load(&dir).map_err(CommandError::usage)?;
    let mut settings = research::settings(global, &args.corpus)?;
    if args.review.no_review {
        settings.review = false;
    }
    let options = WorkflowOptions {
        max_rounds: args.max_rounds,
        concurrency: usize::try_from(args.concurrency).unwrap_or(1),
        budget: budget(&settings, args.budget, args.ending),
    };
    let shared = Arc::new(Shared::new(settings, LogOptions::default()).await?);

    let mut todo = VecDeque::new();
    for q in &questions {
        match manifest.item(&q.id) {
            Some(item) if item.is_done() => {}
            Some(item) => todo.push_back((q.clone(), item.status.clone())),
            None => {
                manifest.put(item_of(q, &dir, "pending"));
                todo.push_back((q.clone(), "pending".to_string()));
            }
        }
    }
    save(&manifest, &dir)?;
    let skipped = questions.len() - todo.len();
    tracing::info!(
        "batch of {} question(s): {} to run, {skipped} already done",
        questions.len(),
        todo.len()
    );

    let mut batch = Batch {
        dir: dir.clone(),
        shared,
        options,
        manifest,
        display: ProgressDisplay::for_terminal(),
        stop: watch::channel(false),
        unusable: None,
    };
    let interrupted = batch.run_all(todo, args.jobs).await?;
    if let Some(previous) = &previous {
        write_changes(&questions, &dir, previous, &batch.manifest);
    }
    finish(&batch, &questions, interrupted, args.review.fail_on_block)
}

/// A batch being run: its folder, what its workflows share, and its manifest.
struct Batch {
    dir: PathBuf,
    shared: Arc<Shared>,
    options: WorkflowOptions,
    manifest: Manifest,
    display: Option<Arc<ProgressDisplay>>,
    /// Set to true on Ctrl-C or SIGTERM; every workflow's shutdown watches it.
    stop: (watch::Sender<bool>, watch::Receiver<bool>),
    /// Set when an endpoint cannot be used: no further question starts.
    unusable: Option<String>,
}

type Ended = (Question, Result<Finished, CommandError>);

impl Batch {
    /// Runs the questions, at most `jobs` at once. Returns whether a signal stopped it.
    async fn run_all(
        &mut self,
        mut todo: VecDeque<(Question, String)>,
        jobs: u32,
    ) -> Result<bool, CommandError> {
        let mut running: JoinSet<Ended> = JoinSet::new();
        let mut signal = shutdown_signal();
        let mut interrupted = false;
        self.show(Update::Begin);
        self.show(Update::Round {
            round: 1,
            planned: todo.iter().map(|(q, _)| q.name.clone()).collect(),
            tokens: 0,
        });
        loop {
            while !interrupted
                && self.unusable.is_none()
                && running.len() < usize::try_from(jobs).unwrap_or(1)
            {
                let Some((question, _)) = todo.pop_front() else {
                    break;
                };
                self.start(question, &mut running)?;
            }
            if running.is_empty() {
                break;
            }
            tokio::select! {
                () = &mut signal, if !interrupted => {
                    interrupted = true;
                    tracing::warn!("interrupted: no new question starts; running ones checkpoint");
                    let _ = self.stop.0.send(true);
                }
                ended = running.join_next() => {
                    match ended {
                        Some(Ok((question, result))) => self.ended(&question, result)?,
                        Some(Err(e)) => tracing::error!("a question's run ended abnormally: {e}"),
                        None => {}
                    }
                }
            }
        }
        self.show(Update::Finished);
        Ok(interrupted)
    }

    /// Opens (or creates) the question's plan file and starts its workflow.
    fn start(
        &mut self,
        question: Question,
        running: &mut JoinSet<Ended>,
    ) -> Result<(), CommandError> {
        let path = self.dir.join(format!("{}.json", question.name));
        let opened = if path.exists() {
            super::plan_file::open_valid(&path)
        } else {
            let plan = PlanFile::new(&question.query, workflow_id(), crate::clock::now());
            PlanStore::create(&path, &plan)
                .map(|store| (store, plan))
                .map_err(CommandError::usage)
        };
        let (store, plan) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                // One bad plan file fails its question, not the batch.
                let mut item = item_of(&question, &self.dir, "failed");
                item.reason = Some(e.to_string());
                self.manifest.put(item);
                return save(&self.manifest, &self.dir);
            }
        };
        self.manifest.put(item_of(&question, &self.dir, "running"));
        save(&self.manifest, &self.dir)?;
        self.show(Update::Started {
            node: question.name.clone(),
            kind: "question".into(),
            title: question.query.clone(),
            is_final: false,
        });
        let shared = Arc::clone(&self.shared);
        let options = self.options;
        let shutdown = shutdown_on(self.stop.1.clone());
        running.spawn(async move {
            let result = shared.run(store, plan, options, shutdown, None, None).await;
            (question, result)
        });
        Ok(())
    }

    /// Records a question's end in the manifest.
    fn ended(
        &mut self,
        question: &Question,
        result: Result<Finished, CommandError>,
    ) -> Result<(), CommandError> {
        let mut item = item_of(question, &self.dir, "failed");
        match result {
            Ok(finished) => {
                let summary = finished.summary;
                item.status = summary.status.as_str().to_string();
                item.report = summary.report.as_ref().map(|p| p.display().to_string());
                item.totals = serde_json::to_value(&summary.totals).unwrap_or_default();
                item.reason = summary.reason.clone();
                item.review = summary
                    .review
                    .as_ref()
                    .and_then(|r| serde_json::to_value(r).ok());
                if summary.status == RunStatus::Failed
                    && matches!(summary.failure, Some(EngineError::Unusable(_)))
                {
                    self.unusable = summary.reason.clone();
                }
            }
            Err(e) => item.reason = Some(e.to_string()),
        }
        let failed = !matches!(item.status.as_str(), "completed" | "partial");
        let tokens = item.totals["total_tokens"].as_u64().unwrap_or(0);
        self.show(Update::Ended {
            node: question.name.clone(),
            failed,
            tokens,
        });
        tracing::info!("question `{}`: {}", question.name, item.status);
        self.manifest.put(item);
        save(&self.manifest, &self.dir)
    }

    /// Feeds the batch's progress display (one line per running question).
    fn show(&self, update: Update) {
        if let Some(display) = &self.display {
            display.show(update);
        }
    }
}

/// A workflow's shutdown: resolves when the batch is told to stop.
fn shutdown_on(mut stop: watch::Receiver<bool>) -> Shutdown {
    Box::pin(async move {
        if stop.wait_for(|stopped| *stopped).await.is_err() {
            // The batch is gone without a signal: nothing will ever ask to stop.
            std::future::pending::<()>().await;
        }
    })
}

/// The folder of `--previous`, absolute; a folder that is not there is a usage error, found
/// before any question runs rather than by a batch that silently writes no changes.
fn previous_dir(path: &Path) -> Result<PathBuf, CommandError> {
    let shown = path.display();
    match std::fs::canonicalize(path) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(CommandError::usage(anyhow::anyhow!(
            "`--previous {shown}`: `{shown}` is not a folder: give the `--out-dir` of an earlier batch"
        ))),
        Err(e) => Err(CommandError::usage(anyhow::anyhow!(
            "`--previous {shown}`: cannot use `{shown}`: {e}: give the `--out-dir` of an earlier batch"
        ))),
    }
}

fn item_of(q: &Question, dir: &Path, status: &str) -> Item {
    Item {
        id: q.id.clone(),
        query: q.query.clone(),
        status: status.into(),
        plan_file: dir.join(format!("{}.json", q.name)).display().to_string(),
        report: None,
        totals: serde_json::Value::Null,
        reason: None,
        review: None,
    }
}

fn save(manifest: &Manifest, dir: &Path) -> Result<(), CommandError> {
    manifest.save(dir).map_err(CommandError::failure)
}

/// For every question that ended done here and was answered in `previous` too, writes
/// `DIR/<name>.changes.md`. A pair that cannot be read is a warning, not a failure.
fn write_changes(questions: &[Question], dir: &Path, previous: &Path, manifest: &Manifest) {
    for q in questions {
        let done = manifest.item(&q.id).is_some_and(Item::is_done);
        let old = previous.join(format!("{}.json", q.name));
        let new = dir.join(format!("{}.json", q.name));
        if !done || !old.exists() {
            continue;
        }
        let read = |p: &Path| {
            crate::files::read_bounded(p, crate::files::DEFAULT_MAX_BYTES)
                .map_err(|e| e.to_string())
                .and_then(|t| crate::plan::store::parse_plan(p, &t).map_err(|e| e.to_string()))
        };
        let (old_plan, new_plan) = match (read(&old), read(&new)) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!("no changes file for `{}`: {e}", q.name);
                continue;
            }
        };
        let diff = crate::compare::diff(&old_plan, &new_plan);
        let text = crate::compare::to_markdown(
            &diff,
            &old.display().to_string(),
            &new.display().to_string(),
        );
        let path = dir.join(crate::compare::changes_file_name(&q.name));
        if let Err(e) = crate::atomic::write(&path, text.as_bytes()) {
            tracing::warn!("cannot write `{}`: {e}", path.display());
        }
    }
}

/// Prints the counts and the manifest path, and maps them to the exit code: 130 when
/// interrupted, 2 when an endpoint could not be used, 1 when a question ended degraded or
/// failed (or, with `fail_on_block`, its review's verdict is `block`), else 0 (completed and
/// partial are both what was asked).
fn finish(
    batch: &Batch,
    questions: &[Question],
    interrupted: bool,
    fail_on_block: bool,
) -> CommandResult {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut blocked = 0;
    for q in questions {
        if let Some(item) = batch.manifest.item(&q.id) {
            *counts.entry(item.status.clone()).or_default() += 1;
            blocked += usize::from(item.is_blocked());
        }
    }
    let manifest = absolute(&manifest::path_in(&batch.dir));
    print_json(&json!({
        "manifest": manifest,
        "questions": questions.len(),
        "counts": counts,
        "blocked": blocked,
    }))
    .map_err(|e| e.noting(&format!("the batch's manifest is saved in `{manifest}`")))?;
    if interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = &batch.unusable {
        return Err(CommandError::usage(anyhow::anyhow!(
            "the batch stopped: {why}; rerun the same command once it is fixed"
        )));
    }
    let bad = counts
        .keys()
        .any(|s| !matches!(s.as_str(), "completed" | "partial"));
    if fail_on_block && blocked > 0 {
        eprint_line(&format!(
            "error: the review's verdict on {blocked} question(s) is `block`: see their `.review.md` notes"
        ));
    }
    Ok(if bad || (fail_on_block && blocked > 0) {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
