//! `researchflow workflow`: a whole research run, from a new question (`--query`) or an
//! existing plan file (`--plan`, resume) to the final summary.
//!
//! Everything is resolved before any work starts: settings, prompts, the search provider and
//! the output paths. Outputs sit beside the plan file: `<stem>.report.md` and
//! `<stem>.events.ndjson`. stdout gets one JSON object with the paths and the totals.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use chrono::Utc;
use serde_json::json;

use super::options::planner_log;
use super::output::print_json;
use crate::agents::Agents;
use crate::cli::{GlobalArgs, WorkflowArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::llm::{LlmClient, Negotiator};
use crate::plan::{PlanFile, PlanStore};
use crate::planner::bootstrap;
use crate::prompts::Prompts;
use crate::search::SearchClient;
use crate::settings::{Role, Settings};
use crate::workflow::{
    Engine, EngineParts, EventLog, PlannerSetup, ProgressDisplay, RunStatus, WorkflowOptions,
};

pub async fn run(args: WorkflowArgs, global: &GlobalArgs) -> CommandResult {
    let settings = Settings::load(global.config.as_deref()).map_err(CommandError::usage)?;
    let prompts = Prompts::load(settings.prompts_dir.as_deref()).map_err(CommandError::usage)?;
    let http = crate::http::client().map_err(CommandError::failure)?;
    let search = SearchClient::new(http.clone(), &settings).map_err(CommandError::usage)?;

    let (store, mut plan) = match (&args.query, &args.plan) {
        (Some(query), _) => start(query, args.out.as_deref())?,
        (None, Some(path)) => PlanStore::open(path).map_err(CommandError::usage)?,
        (None, None) => {
            return Err(CommandError::usage(anyhow::anyhow!(
                "give `--query TEXT` to start a workflow or `--plan FILE` to resume one"
            )));
        }
    };
    if bootstrap(&mut plan) {
        store.save(&plan).map_err(CommandError::failure)?;
    }
    let (report_path, events_path) = outputs_beside(store.path());
    let mut events = EventLog::open(&events_path).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "cannot open the event log `{}`: {e}",
            events_path.display()
        ))
    })?;
    if let Some(display) = ProgressDisplay::for_terminal() {
        events = events.with_listener(display);
    }
    tracing::info!(
        "workflow `{}`: plan `{}`, events `{}`",
        plan.workflow_id,
        store.path().display(),
        events_path.display()
    );

    let negotiator = Arc::new(Negotiator::new(settings.structured_output));
    let llm = |role| LlmClient::new(http.clone(), &settings, role, Arc::clone(&negotiator));
    let planner = PlannerSetup {
        llm: llm(Role::Planning),
        system_prompt: prompts.planning.clone(),
        repair_attempts: settings.repair_attempts,
    };
    let agents = Agents {
        search_llm: llm(Role::Search),
        summary_llm: llm(Role::Summary),
        search,
        prompts,
    };
    let plan_path = store.path().to_path_buf();
    let engine = Engine::new(EngineParts {
        store,
        plan,
        events: Arc::new(events),
        runner: Arc::new(agents),
        planner,
        options: WorkflowOptions {
            max_rounds: args.max_rounds,
            concurrency: usize::try_from(args.concurrency).unwrap_or(1),
            // In a workflow the planner's full input is debug output unless asked for.
            log: planner_log(args.log, global.verbose > 0),
        },
        report_path,
        shutdown: Box::pin(shutdown_signal()),
    });
    let summary = engine.run().await.map_err(CommandError::failure)?;

    print_json(&json!({
        "status": summary.status,
        "plan_file": plan_path.display().to_string(),
        "report": summary.report.as_ref().map(|p| p.display().to_string()),
        "events": events_path.display().to_string(),
        "final_node": summary.final_node,
        "totals": summary.totals,
    }));
    Ok(match summary.status {
        RunStatus::Completed => ExitStatus::Success,
        RunStatus::FinalFailed => {
            eprintln!(
                "error: the final summary failed; completed results are in `{}`: fix the cause and resume with `--plan`",
                plan_path.display()
            );
            ExitStatus::Failure
        }
        RunStatus::Interrupted => ExitStatus::Interrupted,
        // A failed run ends with an error, never with a summary.
        RunStatus::Failed => ExitStatus::Failure,
    })
}

/// Creates a new plan file for `query`.
fn start(query: &str, out: Option<&Path>) -> Result<(PlanStore, PlanFile), CommandError> {
    if query.trim().is_empty() {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`--query` is empty: give the research question"
        )));
    }
    let now = Utc::now();
    let stamp = now.format("%Y%m%dT%H%M%SZ").to_string();
    let out = out
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from(format!("runs/plan_{stamp}.json")));
    let nanos = now.timestamp_subsec_nanos() ^ std::process::id().rotate_left(13);
    let workflow_id = format!("wf-{stamp}-{:06x}", nanos & 0x00ff_ffff);
    let plan = PlanFile::new(query.trim(), workflow_id, crate::clock::now());
    let store = PlanStore::create(&out, &plan).map_err(CommandError::usage)?;
    Ok((store, plan))
}

/// `runs/plan_x.json` -> (`runs/plan_x.report.md`, `runs/plan_x.events.ndjson`).
pub fn outputs_beside(plan: &Path) -> (PathBuf, PathBuf) {
    let stem = plan
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "plan".into());
    (
        plan.with_file_name(format!("{stem}.report.md")),
        plan.with_file_name(format!("{stem}.events.ndjson")),
    )
}

/// Resolves on Ctrl-C or SIGTERM; never, where signals cannot be watched.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}
