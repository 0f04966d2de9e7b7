//! A batch being run: one workflow per question, at most `jobs` at once on the run layer's
//! scheduler, each through [`RunWorkflow`] (the batch never sees the workflow engine) inside
//! its [`question_span`], the manifest saved as each question starts and ends, each start and
//! end told to the progress display and logged in one line. Ctrl-C or SIGTERM: no new
//! question starts, running ones checkpoint as a workflow does. An endpoint that cannot be
//! used stops the batch too: no further question starts.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tracing::Instrument;

use super::{Item, ItemStatus, Manifest, Question};
use crate::events::RunStatus;
use crate::exit::CommandError;
use crate::logging::question_span;
use crate::plan::{PlanFile, PlanStore};
use crate::progress::{BatchUpdate, Progress, QuestionEnd};
use crate::run::Shutdown;
use crate::run::scheduler::{Admit, Done, Scheduler};
use crate::run::shutdown::on_watch;
use crate::settings::RunOptions;
use crate::transcript::Replayer;
use crate::workflow::plan_file::open_valid;
use crate::workflow::{EngineError, Finished, RunRequest, RunWorkflow};

/// How a batch's run ended.
#[derive(Debug, Default)]
pub struct BatchEnd {
    /// A signal stopped it.
    pub interrupted: bool,
    /// An endpoint could not be used, and why: no further question started.
    pub unusable: Option<String>,
    /// From the first question's start to the last one's end.
    pub took: Duration,
}

/// A batch being run: its folder, its manifest, and what runs each question.
pub struct Batch<W> {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub options: RunOptions,
    pub runner: Arc<W>,
    /// The progress display, on a terminal.
    pub display: Option<Arc<dyn Progress>>,
    /// An earlier batch's folder whose transcripts answer each question instead of the
    /// servers (`eval --replay`): question `x` from `DIR/x.transcript.jsonl`.
    pub replay_dir: Option<PathBuf>,
}

type Ended = Result<Finished, CommandError>;

impl<W: RunWorkflow + 'static> Batch<W> {
    /// The new questions put in the manifest as `pending`, saved; returns those to run (every
    /// question not done yet), in file order.
    pub fn to_run(&mut self, questions: &[Question]) -> Result<Vec<Question>, CommandError> {
        let mut todo = Vec::new();
        for q in questions {
            match self.manifest.item(&q.id) {
                Some(item) if item.is_done() => {}
                Some(_) => todo.push(q.clone()),
                None => {
                    self.manifest
                        .put(item_of(q, &self.dir, ItemStatus::Pending));
                    todo.push(q.clone());
                }
            }
        }
        self.save()?;
        Ok(todo)
    }

    /// Runs `todo`, at most `jobs` at once, until every question ended or a signal (`stop`)
    /// or an unusable endpoint stopped the batch.
    pub async fn run_all(
        &mut self,
        todo: Vec<Question>,
        jobs: usize,
        mut stop: Shutdown,
    ) -> Result<BatchEnd, CommandError> {
        let (tell, told) = watch::channel(false);
        let clock = Instant::now();
        let mut end = BatchEnd::default();
        let mut questions = Scheduler::new(jobs);
        self.show(BatchUpdate::Begin {
            total: Some(todo.len()),
        });
        for question in todo {
            let job = self.job(&question, on_watch(told.clone()));
            questions.queue(question, job);
        }
        loop {
            if !end.interrupted && end.unusable.is_none() {
                questions.start(|q| self.started(q))?;
            }
            if questions.is_idle() {
                break;
            }
            tokio::select! {
                () = &mut stop, if !end.interrupted => {
                    end.interrupted = true;
                    tracing::warn!("interrupted: no new question starts; running ones checkpoint");
                    let _ = tell.send(true);
                }
                done = questions.next() => {
                    if let Some(done) = done {
                        self.ended(done, &mut end)?;
                    }
                }
            }
        }
        self.show(BatchUpdate::Finished);
        end.took = clock.elapsed();
        Ok(end)
    }

    /// One question's run: its plan opened (or created) when it starts, then its workflow.
    fn job(
        &self,
        question: &Question,
        shutdown: Shutdown,
    ) -> impl Future<Output = Ended> + Send + 'static {
        let path = plan_path(&self.dir, question);
        let query = question.query.clone();
        let (runner, options) = (Arc::clone(&self.runner), self.options);
        let transcript = self
            .replay_dir
            .as_ref()
            .map(|dir| dir.join(format!("{}.transcript.jsonl", question.name)));
        let span = question_span(&question.name);
        async move {
            let replay = match transcript {
                Some(path) => Some(Arc::new(
                    Replayer::load(&path).map_err(CommandError::usage)?,
                )),
                None => None,
            };
            let (store, plan) = open_or_create(&path, &query)?;
            let request = RunRequest {
                store,
                plan,
                options,
                shutdown,
                listener: None,
                replay,
                mirror: None,
            };
            Ok(runner.run(request).await?)
        }
        .instrument(span)
    }

    /// A question starts: `running` in the manifest, a line on the display (or in the log,
    /// without one).
    fn started(&mut self, question: &Question) -> Result<Admit, CommandError> {
        self.manifest
            .put(item_of(question, &self.dir, ItemStatus::Running));
        self.save()?;
        match self.display {
            Some(_) => tracing::debug!("question `{}` starts", question.name),
            None => tracing::info!("question `{}` starts", question.name),
        }
        self.show(BatchUpdate::Started {
            name: question.name.clone(),
            query: question.query.clone(),
        });
        Ok(Admit::Run)
    }

    /// Records a question's end in the manifest.
    fn ended(
        &mut self,
        done: Done<Question, Ended>,
        end: &mut BatchEnd,
    ) -> Result<(), CommandError> {
        let question = done.key;
        let mut item = item_of(&question, &self.dir, ItemStatus::Failed);
        match done.outcome {
            Ok(Ok(finished)) => {
                let summary = finished.summary;
                item.status = summary.status.into();
                item.report = summary.report.as_ref().map(|p| p.display().to_string());
                item.totals = Some(summary.totals.clone());
                item.reason = summary.reason.clone();
                item.review = summary.review.clone();
                item.answered = summary.answered;
                if summary.status == RunStatus::Failed
                    && matches!(summary.failure, Some(EngineError::Unusable(_)))
                {
                    end.unusable = summary.reason.clone();
                }
            }
            // One bad plan file fails its question, not the batch.
            Ok(Err(e)) => item.reason = Some(e.to_string()),
            Err(panic) => {
                tracing::error!(
                    "question `{}`'s run ended abnormally: {panic}",
                    question.name
                );
                item.reason = Some(format!("the run stopped on an internal error: {panic}"));
            }
        }
        self.show(BatchUpdate::Ended {
            name: question.name.clone(),
            end: ended_as(item.status),
            tokens: item.totals.as_ref().map_or(0, |t| t.tokens.total_tokens),
        });
        tracing::info!("question `{}`: {}", question.name, ended_line(&item));
        self.manifest.put(item);
        self.save()
    }

    fn save(&self) -> Result<(), CommandError> {
        self.manifest.save(&self.dir).map_err(CommandError::failure)
    }

    /// Feeds the batch's progress display (one line per running question).
    fn show(&self, update: BatchUpdate) {
        if let Some(display) = &self.display {
            display.show(update);
        }
    }
}

/// How the display counts a question that ended `status`.
fn ended_as(status: ItemStatus) -> QuestionEnd {
    match status {
        ItemStatus::Completed | ItemStatus::Partial => QuestionEnd::Done,
        ItemStatus::Interrupted | ItemStatus::Pending | ItemStatus::Running => QuestionEnd::Stopped,
        ItemStatus::Degraded | ItemStatus::FinalFailed | ItemStatus::Failed => QuestionEnd::Failed,
    }
}

/// `completed in 12.3 s, 4,567 tokens`, and why it ended short.
fn ended_line(item: &Item) -> String {
    let mut line = item.status.as_str().to_string();
    if let Some(t) = &item.totals {
        line.push_str(&format!(
            " in {:.1} s, {} tokens",
            t.seconds,
            crate::progress::state::grouped(t.tokens.total_tokens)
        ));
    }
    if let Some(reason) = &item.reason {
        line.push_str(&format!(": {}", crate::text::one_line(reason, 200)));
    }
    line
}

/// The question's plan file in the batch folder.
fn plan_path(dir: &Path, question: &Question) -> PathBuf {
    dir.join(format!("{}.json", question.name))
}

/// The question's plan, resumed when its file exists, else created.
fn open_or_create(path: &Path, query: &str) -> Result<(PlanStore, PlanFile), CommandError> {
    if path.exists() {
        return open_valid(path);
    }
    let plan = PlanFile::new(query, crate::plan::workflow_id(), crate::clock::now());
    PlanStore::create(path, &plan)
        .map(|store| (store, plan))
        .map_err(CommandError::usage)
}

fn item_of(q: &Question, dir: &Path, status: ItemStatus) -> Item {
    Item {
        id: q.id.clone(),
        query: q.query.clone(),
        status,
        plan_file: plan_path(dir, q).display().to_string(),
        report: None,
        totals: None,
        reason: None,
        review: None,
        answered: None,
    }
}
