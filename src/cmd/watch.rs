//! `researchflow watch FILE --dir DIR`: one cron line. The run is `crate::watch`'s
//! ([`WatchRun`]); this file reads the questions and the run's settings, runs it, prints its
//! end and maps it to the exit code: 130 interrupted (the next `watch` resumes), 1 a question
//! failed, 4 a notification could not be sent, 3 something worth telling changed, else 0.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::batch::questions;
use crate::cli::{GlobalArgs, WatchArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, print_json, print_text, stdout_is_terminal};
use crate::session;
use crate::watch::watch_run::{Finished, WatchEnd, WatchRun};

pub async fn run(args: WatchArgs, global: &GlobalArgs) -> CommandResult {
    let questions = questions::read(&args.file).map_err(CommandError::usage)?;
    let run = session::run_settings(global.config.as_deref(), &args.run, None)?;
    let watch = WatchRun {
        questions,
        dir: args.dir.clone(),
        notify: args.notify.clone(),
        notify_on: args.notify_on,
        keep: args.keep,
        jobs: usize::try_from(args.jobs).unwrap_or(1),
    };
    match watch.run(run).await? {
        WatchEnd::Interrupted => Ok(ExitStatus::Interrupted),
        WatchEnd::Finished(finished) => {
            print_end(args.json, &finished)?;
            Ok(finished.status())
        }
    }
}

/// The run's end: one JSON object, or on a terminal (without `--json`) a few lines.
fn print_end(json: bool, f: &Finished) -> Result<(), CommandError> {
    let mut statuses: BTreeMap<String, usize> = BTreeMap::new();
    for q in &f.record.questions {
        *statuses.entry(q.status.clone()).or_default() += 1;
    }
    let notified: Vec<Value> = f
        .record
        .notifications
        .iter()
        .map(|n| json!({"target": n.target, "sent": n.sent, "error": n.error}))
        .collect();
    let run_dir = absolute(&f.dir);
    let printed = if json || !stdout_is_terminal() {
        print_json(&json!({
            "run": f.name,
            "dir": run_dir,
            "resumed": f.resumed,
            "questions": f.record.questions.len(),
            "counts": statuses,
            "changed": f.changed,
            "notified": notified,
            "pruned": f.pruned,
            "index": f.index.as_deref().map(absolute),
        }))
    } else {
        let mut text = format!("run {}: {} question(s)", f.name, f.record.questions.len());
        for (status, n) in &statuses {
            text.push_str(&format!(", {n} {status}"));
        }
        text.push_str(&match f.changed.is_empty() {
            true => "\nnothing worth telling changed".to_string(),
            false => format!("\nchanged: {}", f.changed.join(", ")),
        });
        text.push_str(&format!("\nrun folder: {run_dir}\n"));
        if let Some(index) = &f.index {
            text.push_str(&format!("index: {}\n", absolute(index)));
        }
        print_text(&text)
    };
    printed.map_err(|e| e.noting(&format!("the run is saved in `{run_dir}`")))
}
