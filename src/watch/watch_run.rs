//! [`WatchRun`]: one run of a watch folder, the whole of what one cron line does. It resumes
//! the unfinished run of the folder or starts a new dated one (a folder that `watch` did not
//! make is warned of and left alone), starts it from the pages the last finished run kept, runs
//! the questions in it as `batch` does, compares each with the last finished run that answered
//! it, tells the notification targets what is worth telling, then finishes the run's record,
//! points `latest` at it, prunes old runs and writes the folder's `index.html`. How it ended
//! is a [`WatchEnd`]; the command prints it and maps it to an exit code.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::compare::{Compared, compare_run};
use super::digest::{counts, worth_telling};
use super::history::write_history;
use super::mail::{mail_address, send as send_mail};
use super::notify::{check_target, post, shown};
use super::pages;
use super::record::{Notification, QuestionRecord, Record};
use super::runs::{Runs, stamp_now};
use crate::batch::{Question, folder};
use crate::cli::{BatchEngine, NotifyOn};
use crate::events::watch::{Notification as NotificationEvent, WatchFinished, WatchStarted};
use crate::events::{Event, EventLog};
use crate::exit::{CommandError, ExitStatus};
use crate::lockfile::LockFile;
use crate::output::absolute;
use crate::session::Session;
use crate::session::batch::run_batch;
use crate::settings::{RetrySettings, RunSettings, SmtpConfig};

/// The lock that keeps one `watch` at a time on a watch folder.
const WATCH_LOCK: &str = "watch.lock";

/// A run's own event log, in its folder.
const WATCH_EVENTS: &str = "watch.events.ndjson";

/// What one `watch` is asked to do.
pub struct WatchRun {
    pub questions: Vec<Question>,
    /// The watch folder.
    pub dir: PathBuf,
    /// Where to tell what changed: webhook URLs and `mailto:` addresses.
    pub notify: Vec<String>,
    pub notify_on: NotifyOn,
    /// How many runs to keep.
    pub keep: u32,
    /// Most workflows at once.
    pub jobs: usize,
}

/// How a watch run ended.
pub enum WatchEnd {
    /// Stopped by a signal: the next `watch` on the folder resumes the run.
    Interrupted,
    Finished(Box<Finished>),
}

/// A watch run that went to its end.
pub struct Finished {
    pub name: String,
    /// The run's folder, absolute.
    pub dir: PathBuf,
    pub resumed: bool,
    pub record: Record,
    /// The names of the questions worth telling of.
    pub changed: Vec<String>,
    /// How many questions did not finish.
    pub failed: usize,
    pub notify_failed: bool,
    /// The runs pruned.
    pub pruned: Vec<String>,
    pub index: Option<PathBuf>,
}

impl Finished {
    /// 1 a question failed, 4 a notification could not be sent, 3 something worth telling
    /// changed, else 0.
    pub fn status(&self) -> ExitStatus {
        match () {
            _ if self.failed > 0 => ExitStatus::Failure,
            _ if self.notify_failed => ExitStatus::NotifyFailed,
            _ if !self.changed.is_empty() => ExitStatus::Changed,
            _ => ExitStatus::Success,
        }
    }
}

/// The run being worked on, in its folder.
struct Open {
    runs: Runs,
    name: String,
    record: Record,
    resumed: bool,
    events: EventLog,
}

impl WatchRun {
    /// Runs the watch with the run settings `run`: the folder is locked for as long as it
    /// runs.
    pub async fn run(self, run: RunSettings) -> Result<WatchEnd, CommandError> {
        let smtp = run.settings.smtp.clone();
        for target in &self.notify {
            check_target(target, smtp.is_some())
                .map_err(|e| CommandError::usage(anyhow::anyhow!(e)))?;
        }
        let (runs, _lock) = open_watch(&self.dir)?;
        let (name, record, resumed) = this_run(&runs)?;
        let events = start_events(&runs, &name, resumed, self.questions.len())?;
        let mut open = Open {
            runs,
            name,
            record,
            resumed,
            events,
        };
        let how = How {
            retry: run.settings.retry,
            smtp: smtp.as_ref(),
        };
        let Some(compared) = self.research(&open, run).await? else {
            return Ok(WatchEnd::Interrupted);
        };
        let finished = self.tell(&mut open, &compared, &how).await?;
        Ok(WatchEnd::Finished(Box::new(finished)))
    }

    /// Runs the questions in the run's folder, from the pages the last finished run kept, and
    /// compares each with the last run that answered it; `None` when a signal stopped it.
    async fn research(
        &self,
        open: &Open,
        run: RunSettings,
    ) -> Result<Option<Vec<Compared>>, CommandError> {
        let (runs, name) = (&open.runs, open.name.as_str());
        let (run_dir, _batch_lock, manifest) = folder::open(&runs.path(name))?;
        let seeded = pages::seed(runs, name, &open.record);
        let session = Session::open(run.settings, None).await?;
        let (manifest, end) = run_batch(
            BatchEngine::Workflow,
            (&run_dir, manifest),
            run.options,
            session,
            &self.questions,
            self.jobs,
        )
        .await?;
        if end.interrupted {
            tracing::info!("interrupted: the next `watch` on this folder resumes run {name}");
            return Ok(None);
        }
        if let Some(why) = &end.unusable {
            return Err(CommandError::usage(anyhow::anyhow!(
                "the run stopped: {why}; the next `watch` resumes it once that is fixed"
            )));
        }
        if let Some(seeded) = &seeded {
            pages::write_changes(runs, name, seeded);
        }
        let compared = compare_run(runs, name, &self.questions, &manifest).map_err(io_error)?;
        Ok(Some(compared))
    }

    /// Records each question's comparison, tells the targets, finishes the record and the
    /// folder, and writes `watch_finished`.
    async fn tell(
        &self,
        open: &mut Open,
        compared: &[Compared],
        how: &How<'_>,
    ) -> Result<Finished, CommandError> {
        let run_dir = open.runs.path(&open.name);
        open.record.questions = compared
            .iter()
            .map(|c| question_record(c, self.notify_on))
            .collect();
        open.record.write(&run_dir).map_err(io_error)?;
        let telling: Vec<&Compared> = compared
            .iter()
            .filter(|c| worth_telling(&c.changes, self.notify_on))
            .collect();
        let body = notification(&open.runs, &open.name, &telling, self.notify_on);
        let notify_failed = notify(&self.notify, &body, how, open).await;
        open.record.finished = Some(crate::clock::now());
        open.record.write(&run_dir).map_err(io_error)?;
        let (pruned, index) = finish(open, compared, &self.questions, self.keep);
        let finished = Finished {
            name: open.name.clone(),
            dir: run_dir,
            resumed: open.resumed,
            record: open.record.clone(),
            changed: telling.iter().map(|c| c.question.name.clone()).collect(),
            failed: compared.iter().filter(|c| !c.done).count(),
            notify_failed,
            pruned,
            index,
        };
        // Written before the command prints the end: a closed stdout does not unfinish the run.
        open.events.emit(Event::WatchFinished(WatchFinished {
            run: finished.name.clone(),
            changed: finished.changed.clone(),
            failed: finished.failed,
            exit_code: finished.status().code(),
        }));
        Ok(finished)
    }
}

/// The watch folder, created if need be, absolute, and locked against a second `watch`.
fn open_watch(dir: &Path) -> Result<(Runs, LockFile), CommandError> {
    let usage = |e: String| CommandError::usage(anyhow::anyhow!(e));
    std::fs::create_dir_all(dir).map_err(|e| {
        usage(format!(
            "cannot create the watch folder `{}`: {e}",
            dir.display()
        ))
    })?;
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| usage(format!("cannot use `{}`: {e}", dir.display())))?;
    let lock = LockFile::take(&dir.join(WATCH_LOCK)).map_err(|e| {
        usage(format!(
            "{e}: another `watch` is running on `{}`; this one stops",
            dir.display()
        ))
    })?;
    let runs = Runs::new(&dir);
    for stranger in runs.strangers().unwrap_or_default() {
        tracing::warn!(
            "`{}` is named like a run but is not one `watch` made here (its `watch.json` does not name it): it is left alone, never resumed, compared with nor pruned",
            runs.path(&stranger).display()
        );
    }
    Ok((runs, lock))
}

/// The run to work on: the unfinished one, resumed, else a new one in a folder made now (never
/// one that was there); its record, written as started and naming its folder.
fn this_run(runs: &Runs) -> Result<(String, Record, bool), CommandError> {
    let (name, mut record, resumed) = match runs.unfinished().map_err(io_error)? {
        Some(name) => {
            let record = Record::read(&runs.path(&name)).unwrap_or_else(|| Record::start(&name));
            tracing::info!("resuming run {name}, which did not finish");
            (name, record, true)
        }
        None => {
            let name = runs.new_name(&stamp_now());
            std::fs::create_dir(runs.path(&name)).map_err(io_error)?;
            let record = Record::start(&name);
            (name, record, false)
        }
    };
    // A record written before records named their run now names it.
    record.run = Some(name.clone());
    record.write(&runs.path(&name)).map_err(io_error)?;
    Ok((name, record, resumed))
}

/// The run's own event log, opened, with `watch_started` in it.
fn start_events(
    runs: &Runs,
    name: &str,
    resumed: bool,
    questions: usize,
) -> Result<EventLog, CommandError> {
    let events = EventLog::open(&runs.path(name).join(WATCH_EVENTS)).map_err(io_error)?;
    events.emit(Event::WatchStarted(WatchStarted {
        run: name.to_string(),
        resumed,
        questions,
    }));
    Ok(events)
}

fn question_record(c: &Compared, notify_on: NotifyOn) -> QuestionRecord {
    QuestionRecord {
        id: c.question.id.clone(),
        name: c.question.name.clone(),
        status: c.status.clone(),
        compared_with: c.compared_with.clone(),
        changes: counts(&c.changes),
        worth_telling: worth_telling(&c.changes, notify_on),
    }
}

/// The JSON a webhook receives: the run and every question worth telling, with its changes
/// and where its files are.
fn notification(runs: &Runs, name: &str, telling: &[&Compared], notify_on: NotifyOn) -> Value {
    let dir = runs.path(name);
    let file = |q: &Question, suffix: &str| absolute(&dir.join(format!("{}{suffix}", q.name)));
    let questions: Vec<Value> = telling
        .iter()
        .map(|c| {
            json!({
                "id": c.question.id,
                "question": c.question.query,
                "status": c.status,
                "compared_with": c.compared_with,
                "changes": c.changes,
                "files": {
                    "report": file(&c.question, ".report.md"),
                    "changes": file(&c.question, ".changes.md"),
                    "digest": file(&c.question, ".digest.json"),
                    "plan": file(&c.question, ".json"),
                },
            })
        })
        .collect();
    json!({
        "watch": absolute(runs.dir()),
        "run": name,
        "notify_on": notify_on,
        "questions": questions,
    })
}

/// How notifications are sent: the retry policy, and the SMTP server for mail.
struct How<'a> {
    retry: RetrySettings,
    smtp: Option<&'a SmtpConfig>,
}

/// Sends `body` to every target not yet told of this run (a webhook, or a mail), when it has
/// a question to tell; each outcome recorded at once, in the run's record and as an event.
/// Whether one failed.
async fn notify(targets: &[String], body: &Value, how: &How<'_>, open: &mut Open) -> bool {
    let questions = body["questions"].as_array().map_or(0, Vec::len);
    let nothing = body["questions"].as_array().is_none_or(Vec::is_empty);
    let mut failed = false;
    for target in targets {
        let label = shown(target);
        if nothing || open.record.sent_to(&label) {
            continue;
        }
        let (channel, outcome) = match (mail_address(target), how.smtp) {
            (Some(to), Some(smtp)) => ("mail", send_mail(to, smtp, body, &how.retry).await),
            _ => ("webhook", post(target, &body.to_string(), &how.retry).await),
        };
        if let Err(e) = &outcome {
            tracing::warn!("could not notify `{label}`: {e}");
            failed = true;
        }
        open.events.emit(Event::Notification(NotificationEvent {
            target: label.clone(),
            channel,
            questions,
            sent: outcome.is_ok(),
            error: outcome.clone().err(),
        }));
        open.record.notifications.push(Notification {
            target: label.clone(),
            at: crate::clock::now(),
            sent: outcome.is_ok(),
            error: outcome.err(),
        });
        if let Err(e) = open.record.write(&open.runs.path(&open.name)) {
            tracing::warn!("cannot record the notification of `{label}`: {e}");
        }
    }
    failed
}

/// Points `latest` at the run, prunes the runs beyond `keep` (never this one nor one it was
/// compared with) and writes the index, each failure a warning: the runs pruned and the index.
fn finish(
    open: &Open,
    compared: &[Compared],
    questions: &[Question],
    keep: u32,
) -> (Vec<String>, Option<PathBuf>) {
    let (runs, name) = (&open.runs, open.name.as_str());
    if let Err(e) = runs.point_latest(name) {
        tracing::warn!("cannot point `latest` at {name}: {e}");
    }
    let mut protected: BTreeSet<String> = compared
        .iter()
        .filter_map(|c| c.compared_with.clone())
        .collect();
    protected.insert(name.to_string());
    let keep = usize::try_from(keep).unwrap_or(usize::MAX);
    let pruned = runs.prune(keep, &protected).unwrap_or_else(|e| {
        tracing::warn!("cannot prune old runs: {e}");
        Vec::new()
    });
    (pruned, write_history(runs, questions))
}

fn io_error(e: std::io::Error) -> CommandError {
    CommandError::failure(anyhow::anyhow!("the watch folder: {e}"))
}
