//! `researchflow workflow`: a whole research run, from a new question (`--query`) or an
//! existing plan file (`--plan`, resume) to the final summary.
//!
//! Everything is resolved before any work starts: settings, prompts, the search provider and
//! the output paths. Outputs sit beside the plan file: `<stem>.report.md`,
//! `<stem>.events.ndjson` and, after the review, `<stem>.review.json` and `<stem>.review.md`.
//! stdout gets one JSON object with the paths, the totals and the review.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use serde_json::json;

use super::options::planner_log;
use super::output::{absolute, eprint_line, print_json};
use super::research;
use super::review::verdict_exit;
use super::runner::{Shared, shutdown_signal};
use crate::cli::{BudgetArgs, EndingArgs, GlobalArgs, WorkflowArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::kernel::{EngineError, EventListener, RunStatus, RunSummary};
use crate::logging::{Escape, escape_controls};
use crate::plan::{PlanFile, PlanStore, StoreError};
use crate::progress::ProgressDisplay;
use crate::settings::{Budget, Settings};
use crate::transcript::Replayer;
use crate::workflow::WorkflowOptions;

/// Planning rounds of one invocation when neither the flag nor a replayed run says.
pub const DEFAULT_MAX_ROUNDS: u32 = 8;

pub async fn run(args: WorkflowArgs, global: &GlobalArgs) -> CommandResult {
    let mut settings = research::settings(global, &args.corpus)?;
    if args.review.no_review {
        settings.review = false;
    }
    // In a workflow the planner's full input is debug output unless asked for.
    let log = planner_log(args.log, global.verbose > 0);
    let replay = match &args.replay {
        Some(path) => Some(Arc::new(Replayer::load(path).map_err(CommandError::usage)?)),
        None => None,
    };
    let options = WorkflowOptions {
        max_rounds: args
            .max_rounds
            .or_else(|| replay.as_ref().and_then(|r| r.max_rounds()))
            .unwrap_or(DEFAULT_MAX_ROUNDS),
        concurrency: usize::try_from(args.concurrency).unwrap_or(1),
        budget: budget(&settings, args.budget, args.ending),
    };
    let shared = Shared::new(settings, log).await?;
    let query = args
        .query
        .as_deref()
        .or_else(|| replay.as_ref().and_then(|r| r.query()));
    let (store, plan) = match (query, &args.plan) {
        (Some(query), _) => start(query, args.out.as_deref())?,
        (None, Some(path)) => super::plan_file::open_valid(path)?,
        (None, None) => {
            return Err(CommandError::usage(anyhow::anyhow!(
                "give `--query TEXT` to start a workflow or `--plan FILE` to resume one"
            )));
        }
    };
    let display = ProgressDisplay::for_terminal().map(|d| d as Arc<dyn EventListener>);
    let finished = shared
        .run(store, plan, options, shutdown_signal(), display, replay)
        .await?;
    let summary = finished.summary;
    let plan_file = absolute(&finished.plan_path);
    print_json(&json!({
        "status": summary.status,
        "reason": summary.reason,
        "plan_file": plan_file,
        "report": summary.report.as_deref().map(absolute),
        "events": absolute(&finished.events_path),
        "transcript": absolute(&finished.transcript_path),
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
    let review = summary.review.clone();
    let status = exit_status(summary, &finished.plan_path)?;
    Ok(verdict_exit(
        status,
        review.as_ref(),
        args.review.fail_on_block,
    ))
}

/// The run's budget: the flags, else the config.
pub fn budget(settings: &Settings, args: BudgetArgs, ending: EndingArgs) -> Budget {
    let secs = |flag: Option<u64>, config: Option<std::time::Duration>| {
        flag.map(std::time::Duration::from_secs).or(config)
    };
    let config = settings.budget;
    Budget {
        max_tokens: args.max_tokens.or(config.max_tokens),
        max_time: secs(args.max_time, config.max_time),
        grace: secs(ending.grace, config.grace),
        final_time: secs(ending.final_time, config.final_time),
    }
}

/// The exit code a run's status maps to, with a line on stderr for anything short of
/// `completed` (README: exit codes).
pub fn exit_status(summary: RunSummary, plan_path: &Path) -> CommandResult {
    let shown = plan_path.display();
    let reason = summary.reason.unwrap_or_default();
    // A server's words may be in the reason: escape what could act on the terminal.
    let escaped = escape_controls(&reason, Escape::KeepLines);
    match summary.status {
        RunStatus::Completed => Ok(ExitStatus::Success),
        RunStatus::Interrupted => Ok(ExitStatus::Interrupted),
        // The user asked for the limit: a partial run is a success, said plainly.
        RunStatus::Partial => {
            eprint_line(&format!(
                "note: partial run: {escaped}; the report says so at its top"
            ));
            Ok(ExitStatus::Success)
        }
        RunStatus::Degraded => {
            eprint_line(&format!(
                "error: degraded run: {escaped}; the report says so at its top; fix the cause and run again"
            ));
            Ok(ExitStatus::Failure)
        }
        RunStatus::FinalFailed => {
            eprint_line(&format!(
                "error: {escaped}; completed results are in `{shown}`: fix the cause and resume with `--plan {shown}`"
            ));
            Ok(ExitStatus::Failure)
        }
        RunStatus::Failed => {
            let failure = summary
                .failure
                .map_or_else(|| anyhow::anyhow!(reason), anyhow::Error::new);
            let unusable = failure
                .downcast_ref::<EngineError>()
                .is_some_and(|e| matches!(e, EngineError::Unusable(_)));
            let failure = failure.context(format!(
                "the run stopped; what it completed is saved in `{shown}`"
            ));
            Err(if unusable {
                CommandError::usage(failure)
            } else {
                CommandError::failure(failure)
            })
        }
    }
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
        let plan = PlanFile::new(query, workflow_id(), crate::clock::now());
        let store = PlanStore::create(out, &plan).map_err(CommandError::usage)?;
        return Ok((store, plan));
    }
    // A random suffix makes a clash unlikely; `create` refusing an existing file makes it
    // impossible, and another suffix is tried.
    let mut last = None;
    for _ in 0..8 {
        let id = workflow_id();
        let name = PathBuf::from(format!("runs/plan_{}.json", id.trim_start_matches("wf-")));
        let plan = PlanFile::new(query, id, crate::clock::now());
        match PlanStore::create(&name, &plan) {
            Ok(store) => return Ok((store, plan)),
            Err(e @ (StoreError::AlreadyExists { .. } | StoreError::Locked { .. })) => {
                last = Some(e)
            }
            Err(e) => return Err(CommandError::usage(e)),
        }
    }
    Err(CommandError::usage(anyhow::anyhow!(
        "cannot find a free plan file name under `runs/`: {}",
        last.map_or_else(String::new, |e| e.to_string())
    )))
}

/// `wf-<UTC time>-<6 random hex digits>`.
pub fn workflow_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    // A fresh `RandomState` is seeded from the OS once per process and varied per instance.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Utc::now().timestamp_nanos_opt().unwrap_or(0) as u128);
    hasher.write_u32(std::process::id());
    let stamp = Utc::now().format("%Y%m%dT%H%M%SZ");
    format!("wf-{stamp}-{:06x}", hasher.finish() & 0x00ff_ffff)
}
