//! `researchflow workflow`: a whole research run, from a new question (`--query`) or an
//! existing plan file (`--plan`, resume) to the final summary.
//!
//! Everything is resolved before any work starts: the settings of the run
//! ([`session::run_settings`]), the session (prompts, the search provider), the plan. Outputs
//! sit beside the plan file: `<stem>.report.md`, `<stem>.events.ndjson` and, after the review,
//! `<stem>.review.json` and `<stem>.review.md`. stdout gets one JSON object with the paths,
//! the totals and the review.

use std::path::Path;
use std::sync::Arc;

use serde_json::json;

use super::planner_log;
use crate::cli::{GlobalArgs, WorkflowArgs};
use crate::events::{Event, EventListener};
use crate::exit::{CommandError, CommandResult};
use crate::output::{absolute, print_json};
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
    .map_err(|e| {
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
