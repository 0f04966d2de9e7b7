//! `researchflow watch FILE --dir DIR`: one cron line. Resumes the unfinished run of DIR or
//! starts a new dated one (a folder of DIR that `watch` did not make is warned of and left
//! alone), starts it from the pages the last finished run kept, runs the questions in it as
//! `batch` does, compares each with the last finished run that answered it, tells `--notify`
//! targets what is worth telling, then finishes the run's record, points `DIR/latest` at it,
//! prunes old runs and writes `DIR/index.html`. The pieces are `crate::watch`'s; this file
//! wires them and maps the end to the exit code: 130 interrupted (the next `watch` resumes), 1
//! a question failed, 4 a notification could not be sent, 3 something worth telling changed,
//! else 0.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::batch::{Question, folder, questions};
use crate::cli::{BatchEngine, GlobalArgs, NotifyOn, WatchArgs};
use crate::events::watch::{Notification as NotificationEvent, WatchFinished, WatchStarted};
use crate::events::{Event, EventLog};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::lockfile::LockFile;
use crate::output::{absolute, print_json, print_text, stdout_is_terminal};
use crate::session::batch::run_batch;
use crate::session::{self, Session};
use crate::settings::{RetrySettings, SmtpConfig};
use crate::watch::compare::{Compared, compare_run};
use crate::watch::digest::{counts, worth_telling};
use crate::watch::history::write_history;
use crate::watch::mail::{mail_address, send as send_mail};
use crate::watch::notify::{check_target, post, shown};
use crate::watch::pages;
use crate::watch::record::{Notification, QuestionRecord, Record};
use crate::watch::runs::{Runs, stamp_now};

/// The lock that keeps one `watch` at a time on a watch folder.
const WATCH_LOCK: &str = "watch.lock";

/// A run's own event log, in its folder.
const WATCH_EVENTS: &str = "watch.events.ndjson";

pub async fn run(args: WatchArgs, global: &GlobalArgs) -> CommandResult {
    let questions = questions::read(&args.file).map_err(CommandError::usage)?;
    let run = session::run_settings(global.config.as_deref(), &args.run, None)?;
    let smtp = run.settings.smtp.clone();
    for target in &args.notify {
        check_target(target, smtp.is_some())
            .map_err(|e| CommandError::usage(anyhow::anyhow!(e)))?;
    }
    let (runs, _lock) = open_watch(&args.dir)?;
    let (name, mut record, resumed) = this_run(&runs)?;
    let events = start_events(&runs, &name, resumed, questions.len())?;
    let (run_dir, _batch_lock, manifest) = folder::open(&runs.path(&name))?;
    let seeded = pages::seed(&runs, &name, &record);
    let retry = run.settings.retry;
    let session = Session::open(run.settings, None).await?;
    let jobs = usize::try_from(args.jobs).unwrap_or(1);
    let (manifest, end) = run_batch(
        BatchEngine::Workflow,
        (&run_dir, manifest),
        run.options,
        session,
        &questions,
        jobs,
    )
    .await?;
    if end.interrupted {
        tracing::info!("interrupted: the next `watch` on this folder resumes run {name}");
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = &end.unusable {
        return Err(CommandError::usage(anyhow::anyhow!(
            "the run stopped: {why}; the next `watch` resumes it once that is fixed"
        )));
    }
    if let Some(seeded) = &seeded {
        pages::write_changes(&runs, &name, seeded);
    }
    let compared = compare_run(&runs, &name, &questions, &manifest).map_err(io_error)?;
    record.questions = compared
        .iter()
        .map(|c| question_record(c, args.notify_on))
        .collect();
    record.write(&runs.path(&name)).map_err(io_error)?;
    let telling: Vec<&Compared> = compared
        .iter()
        .filter(|c| worth_telling(&c.changes, args.notify_on))
        .collect();
    let body = notification(&runs, &name, &telling, args.notify_on);
    let how = How {
        retry,
        smtp: smtp.as_ref(),
    };
    let told = Told {
        runs: &runs,
        name: &name,
        events: &events,
    };
    let notify_failed = notify(&args.notify, &body, &how, &told, &mut record).await;
    record.finished = Some(crate::clock::now());
    record.write(&runs.path(&name)).map_err(io_error)?;
    let end = finish(&runs, &name, &compared, &questions, args.keep);
    let failed = compared.iter().filter(|c| !c.done).count();
    let status = match () {
        _ if failed > 0 => ExitStatus::Failure,
        _ if notify_failed => ExitStatus::NotifyFailed,
        _ if !telling.is_empty() => ExitStatus::Changed,
        _ => ExitStatus::Success,
    };
    // Written before the summary is printed: a closed stdout does not unfinish the run.
    events.emit(Event::WatchFinished(WatchFinished {
        run: name.clone(),
        changed: telling.iter().map(|c| c.question.name.clone()).collect(),
        failed,
        exit_code: status.code(),
    }));
    let shown = Shown {
        resumed,
        record: &record,
        telling: &telling,
        end,
    };
    print_end(&args, &runs, &name, &shown)?;
    Ok(status)
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

/// Where a notification's outcome is recorded: the run's record and its event log.
struct Told<'a> {
    runs: &'a Runs,
    name: &'a str,
    events: &'a EventLog,
}

/// Sends `body` to every target not yet told of this run (a webhook, or a mail), when it has
/// a question to tell; each outcome recorded at once, in the record and as an event. Whether
/// one failed.
async fn notify(
    targets: &[String],
    body: &Value,
    how: &How<'_>,
    told: &Told<'_>,
    record: &mut Record,
) -> bool {
    let questions = body["questions"].as_array().map_or(0, Vec::len);
    let nothing = body["questions"].as_array().is_none_or(Vec::is_empty);
    let mut failed = false;
    for target in targets {
        let label = shown(target);
        if nothing || record.sent_to(&label) {
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
        told.events.emit(Event::Notification(NotificationEvent {
            target: label.clone(),
            channel,
            questions,
            sent: outcome.is_ok(),
            error: outcome.clone().err(),
        }));
        record.notifications.push(Notification {
            target: label.clone(),
            at: crate::clock::now(),
            sent: outcome.is_ok(),
            error: outcome.err(),
        });
        if let Err(e) = record.write(&told.runs.path(told.name)) {
            tracing::warn!("cannot record the notification of `{label}`: {e}");
        }
    }
    failed
}

/// What the end of the run did to the folder.
struct End {
    pruned: Vec<String>,
    index: Option<PathBuf>,
}

/// Points `latest` at the run, prunes the runs beyond `keep` (never this one nor one it was
/// compared with) and writes the index; each failure a warning.
fn finish(
    runs: &Runs,
    name: &str,
    compared: &[Compared],
    questions: &[Question],
    keep: u32,
) -> End {
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
    End {
        pruned,
        index: write_history(runs, questions),
    }
}

/// What is printed at the end.
struct Shown<'a> {
    resumed: bool,
    record: &'a Record,
    telling: &'a [&'a Compared],
    end: End,
}

fn print_end(args: &WatchArgs, runs: &Runs, name: &str, s: &Shown) -> Result<(), CommandError> {
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for q in &s.record.questions {
        *statuses.entry(q.status.clone()).or_default() += 1;
    }
    let changed: Vec<&str> = s.telling.iter().map(|c| c.question.name.as_str()).collect();
    let notified: Vec<Value> = s
        .record
        .notifications
        .iter()
        .map(|n| json!({"target": n.target, "sent": n.sent, "error": n.error}))
        .collect();
    let run_dir = absolute(&runs.path(name));
    let printed = if args.json || !stdout_is_terminal() {
        print_json(&json!({
            "run": name,
            "dir": run_dir,
            "resumed": s.resumed,
            "questions": s.record.questions.len(),
            "counts": statuses,
            "changed": changed,
            "notified": notified,
            "pruned": s.end.pruned,
            "index": s.end.index.as_deref().map(absolute),
        }))
    } else {
        let mut text = format!("run {name}: {} question(s)", s.record.questions.len());
        for (status, n) in &statuses {
            text.push_str(&format!(", {n} {status}"));
        }
        text.push_str(&match changed.is_empty() {
            true => "\nnothing worth telling changed".to_string(),
            false => format!("\nchanged: {}", changed.join(", ")),
        });
        text.push_str(&format!("\nrun folder: {run_dir}\n"));
        if let Some(index) = &s.end.index {
            text.push_str(&format!("index: {}\n", absolute(index)));
        }
        print_text(&text)
    };
    printed.map_err(|e| e.noting(&format!("the run is saved in `{run_dir}`")))
}

fn io_error(e: std::io::Error) -> CommandError {
    CommandError::failure(anyhow::anyhow!("the watch folder: {e}"))
}
