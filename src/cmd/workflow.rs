//! `researchflow workflow`: a whole research run, from a new question (`--query`) or an
//! existing plan file (`--plan`, resume) to the final summary.
//!
//! Everything is resolved before any work starts: the settings of the run
//! ([`session::run_settings`]), the session (prompts, the search provider), the plan. Outputs
//! sit beside the plan file: `<stem>.report.md`, `<stem>.events.ndjson` and, after the review,
//! `<stem>.review.json` and `<stem>.review.md`. stdout gets one JSON object with the paths,
//! the totals and the review; on a terminal (without `--json`), what a person asked for: the
//! report's answer with the sources it cites, and where the report is.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::planner_log;
use crate::cli::{GlobalArgs, WorkflowArgs};
use crate::events::{Event, EventListener};
use crate::exit::{CommandError, CommandResult};
use crate::output::{absolute, print_json, print_text, stdout_is_terminal};
use crate::plan::{PlanFile, PlanStore};
use crate::progress::ProgressDisplay;
use crate::run::shutdown;
use crate::session::exit::{answer_exit, run_exit, verdict_exit};
use crate::session::{self, Session};
use crate::workflow::plan_file::{create_fresh, open_valid};
use crate::workflow::{RunRequest, RunWorkflow};

pub async fn run(args: WorkflowArgs, global: &GlobalArgs) -> CommandResult {
    let replay = args.replay.as_deref().map(session::replay).transpose()?;
    let recorded_rounds = replay.as_ref().and_then(|r| r.max_rounds());
    let run = session::run_settings(global.config.as_deref(), &args.run, recorded_rounds)?;
    let query = args
        .query
        .as_deref()
        .or_else(|| replay.as_ref().and_then(|r| r.query()))
        .map(str::to_string);
    // In a workflow the planner's full input is debug output unless asked for.
    let session = Session::open(run.settings, replay)
        .await?
        .logging(planner_log(args.log, global.verbose > 0));
    let (store, plan) = match (query, &args.plan) {
        (Some(query), _) => start(&query, args.out.as_deref())?,
        (None, Some(path)) => open_valid(path)?,
        (None, None) => {
            return Err(CommandError::usage(anyhow::anyhow!(
                "give `--query TEXT` to start a workflow or `--plan FILE` to resume one"
            )));
        }
    };
    let request = RunRequest {
        store,
        plan,
        options: run.options,
        shutdown: shutdown::on_signal(),
        listener: ProgressDisplay::for_terminal().map(|d| d as Arc<dyn EventListener<Event>>),
        replay: None,
        mirror: None,
    };
    let finished = session.run(request).await?;
    let summary = finished.summary;
    let plan_file = absolute(&finished.plan_path);
    let printed = if args.json || !stdout_is_terminal() {
        print_json(&json!({
        "status": summary.status,
        "reason": summary.reason,
        "answered": summary.answered,
        "plan_file": plan_file,
        "report": summary.report.as_deref().map(absolute),
        "events": absolute(&finished.events_path),
        "transcript": absolute(&finished.transcript_path),
        "html": finished.html_path.as_deref().map(absolute),
        "final_node": summary.final_node,
        "totals": summary.totals,
        "review": summary.review,
        }))
    } else {
        print_text(&answer_text(
            summary.report.as_deref(),
            &plan_file,
            summary.status.as_str(),
            summary.reason.as_deref(),
        ))
    };
    printed.map_err(|e| {
        e.noting(&format!(
            "the run ended `{}` and is saved in `{plan_file}`",
            summary.status.as_str()
        ))
    })?;
    let (review, answered) = (summary.review.clone(), summary.answered);
    let status = run_exit(summary, &finished.plan_path)?;
    let status = answer_exit(status, answered, run.fail_on_unanswered);
    Ok(verdict_exit(status, review.as_ref(), run.fail_on_block))
}

/// Creates a new plan file for `query`: at `--out` (which must end in `.json`, so that the
/// report and events beside it cannot collide with another run's), else under `runs/` with a
/// name no other run takes, even one started in the same second.
fn start(query: &str, out: Option<&Path>) -> Result<(PlanStore, PlanFile), CommandError> {
    // The question is the start node's title: text for the plan, the report and the log.
    let question = crate::text::strip_controls(query);
    let query = question.trim();
    if query.is_empty() {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`--query` is empty once control characters and white space are removed: give the research question"
        )));
    }
    if let Some(out) = out {
        if !out
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            return Err(CommandError::usage(anyhow::anyhow!(
                "`--out {}` does not end in `.json`: name the plan file `NAME.json`; the report and events are written beside it as `NAME.report.md` and `NAME.events.ndjson`",
                out.display()
            )));
        }
        let plan = PlanFile::new(query, crate::plan::workflow_id(), crate::clock::now());
        let store = PlanStore::create(out, &plan).map_err(CommandError::usage)?;
        return Ok((store, plan));
    }
    create_fresh(Path::new("runs"), query)
}

/// What a person at a terminal reads at the end of a run: the report's answer section, the
/// sources it cites, and where the report is; without a report, how the run ended and where
/// its plan is.
fn answer_text(
    report: Option<&Path>,
    plan_file: &str,
    status: &str,
    reason: Option<&str>,
) -> String {
    let text = report.and_then(|path| crate::files::read_bounded(path, REPORT_MAX_BYTES).ok());
    let (Some(path), Some(text)) = (report, text) else {
        let why = reason.map_or(String::new(), |r| format!(": {r}"));
        return format!("No report: the run ended {status}{why}.\nPlan: {plan_file}\n");
    };
    let (body, sources) = text.split_once("\n## Sources").unwrap_or((&text, ""));
    let answer = crate::markdown::answer_section(body).join("\n");
    let answer = answer.trim();
    let cited: Vec<&str> = sources
        .lines()
        .filter(|line| {
            let number = line.strip_prefix("- [").and_then(|l| l.split_once(']'));
            number.is_some_and(|(n, _)| answer.contains(&format!("[{n}]")))
        })
        .collect();
    let mut out = format!("{answer}\n");
    if !cited.is_empty() {
        out.push_str(&format!("\nSources:\n{}\n", cited.join("\n")));
    }
    if status != "completed" {
        let why = reason.map_or(String::new(), |r| format!(": {r}"));
        out.push_str(&format!("\nThe run ended {status}{why}.\n"));
    }
    out.push_str(&format!("\nReport: {}\n", absolute(path)));
    out
}

/// The most of a report read back for the terminal: far more than any report holds.
const REPORT_MAX_BYTES: u64 = 16 * 1024 * 1024;
