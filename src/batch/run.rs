//! A batch being run: one run per question, at most `jobs` at once on the run layer's
//! scheduler, each through its [`RunQuestion`] (the batch never sees an engine) inside
//! its [`question_span`], each start and end handed to the batch's [`ManifestWriter`] (which
//! journals it on a thread of its own: the driver never waits for the disk), told to the
//! progress display and logged in one line. Ctrl-C or SIGTERM: no new
//! question starts, running ones checkpoint as a workflow does. An endpoint that cannot be
//! used stops the batch too: no further question starts.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tracing::Instrument;

use super::ask::{Ask, Ran, RunQuestion};
use super::manifest_writer::{ManifestWriter, Pace};
use super::{Item, ItemStatus, Manifest, Question};
use crate::exit::CommandError;
use crate::logging::question_span;
use crate::progress::{BatchUpdate, Progress, ProgressDisplay, QuestionEnd};
use crate::run::Shutdown;
use crate::run::scheduler::{Admit, Done, Scheduler};
use crate::run::shutdown::on_watch;
use crate::settings::RunOptions;

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
    /// The writer of `batch.json` and its journal, from [`Batch::to_run`] to the end.
    writer: Option<ManifestWriter>,
}

type Ended = Result<Ran, CommandError>;

impl<W: RunQuestion> Batch<W> {
    /// A batch in `dir` (its manifest read), each question run by `runner`, with the progress
    /// display on a terminal. `replay_dir`: an earlier batch whose transcripts answer instead
    /// of the servers.
    pub fn new(
        dir: PathBuf,
        manifest: Manifest,
        options: RunOptions,
        runner: W,
        replay_dir: Option<PathBuf>,
    ) -> Batch<W> {
        Batch {
            dir,
            manifest,
            options,
            runner: Arc::new(runner),
            display: ProgressDisplay::for_terminal().map(|d| d as Arc<dyn Progress>),
            replay_dir,
            writer: None,
        }
    }

    /// The new questions put in the manifest as `pending`, saved (with a journal left by a
    /// crash folded in), and the writer started; returns those to run (every question not
    /// done yet), in file order.
    pub fn to_run(&mut self, questions: &[Question]) -> Result<Vec<Question>, CommandError> {
        let mut todo = Vec::new();
        for q in questions {
            match self.manifest.item(&q.id) {
                Some(item) if item.is_done() => {}
                Some(_) => todo.push(q.clone()),
                None => {
                    let item = self.item_of(q, ItemStatus::Pending);
                    self.manifest.put(item);
                    todo.push(q.clone());
                }
            }
        }
        self.open_record()?;
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
            // Only what makes the run waits in the queue: its future and its span (an entry in
            // the log's registry) exist from its start.
            let (ask, runner) = (
                self.ask(&question, on_watch(told.clone())),
                self.runner.clone(),
            );
            let name = question.name.clone();
            questions.queue(question, move || {
                async move { runner.run_question(ask).await }.instrument(question_span(&name))
            });
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
                    // `batch.json` as it stands, while the running ones checkpoint.
                    self.writer()?.write_soon().map_err(CommandError::failure)?;
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
        if let Some(writer) = self.writer.take() {
            writer.finish().await.map_err(CommandError::failure)?;
        }
        Ok(end)
    }

    /// What one question's run is asked.
    fn ask(&self, question: &Question, shutdown: Shutdown) -> Ask {
        Ask {
            place: self.runner.place(&self.dir, question),
            query: question.query.clone(),
            options: self.options,
            shutdown,
            replay: self
                .replay_dir
                .as_ref()
                .map(|dir| dir.join(format!("{}.transcript.jsonl", question.name))),
        }
    }

    /// A question starts: `running` in the manifest, a line on the display (or in the log,
    /// without one).
    fn started(&mut self, question: &Question) -> Result<Admit, CommandError> {
        let item = self.item_of(question, ItemStatus::Running);
        self.record(item)?;
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
        let mut item = self.item_of(&question, ItemStatus::Failed);
        match done.outcome {
            Ok(Ok(ran)) => {
                if ran.unusable {
                    end.unusable = ran.reason.clone();
                }
                item.status = ran.status.into();
                item.report = ran.report.as_ref().map(|p| p.display().to_string());
                item.totals = Some(ran.totals);
                item.reason = ran.reason;
                item.review = ran.review;
                item.answered = ran.answered;
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
        self.record(item)
    }

    fn item_of(&self, q: &Question, status: ItemStatus) -> Item {
        Item {
            id: q.id.clone(),
            query: q.query.clone(),
            status,
            plan_file: self.runner.place(&self.dir, q).display().to_string(),
            report: None,
            totals: None,
            reason: None,
            review: None,
            answered: None,
        }
    }

    /// Puts `item` in the manifest and hands it to the writer.
    fn record(&mut self, item: Item) -> Result<(), CommandError> {
        self.manifest.put(item.clone());
        self.writer()?.record(item).map_err(CommandError::failure)
    }

    /// The writer, opened if [`Batch::to_run`] did not.
    fn writer(&mut self) -> Result<&ManifestWriter, CommandError> {
        if self.writer.is_none() {
            self.open_record()?;
        }
        self.writer
            .as_ref()
            .ok_or_else(|| CommandError::failure(anyhow::anyhow!("the batch has no record")))
    }

    /// `batch.json` saved as the manifest stands (a journal left by a crash is in it: the
    /// folder's manifest was read with it) and the writer started.
    fn open_record(&mut self) -> Result<(), CommandError> {
        // An earlier record ends first (it writes `batch.json` as it ends).
        self.writer = None;
        let writer = ManifestWriter::open(&self.dir, self.manifest.clone(), Pace::default())
            .map_err(CommandError::failure)?;
        self.writer = Some(writer);
        Ok(())
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
