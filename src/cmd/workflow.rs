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
use super::research;
use crate::agents::{Agents, TaskRunner};
use crate::cli::{GlobalArgs, WorkflowArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::http::Gates;
use crate::llm::{LlmClient, Negotiator};
use crate::logging::{Escape, escape_controls};
use crate::offline::{ExtractivePlanner, ExtractiveRunner};
use crate::plan::{PlanFile, PlanStore, StoreError};
use crate::planner::{LogOptions, PlanRound, Planner, bootstrap};
use crate::prompts::Prompts;
use crate::search::SearchClient;
use crate::settings::{EngineKind, Role, Settings};
use crate::workflow::{
    Engine, EngineError, EngineParts, EventLog, ProgressDisplay, RunStatus, RunSummary,
    WorkflowOptions,
};

pub async fn run(args: WorkflowArgs, global: &GlobalArgs) -> CommandResult {
    let settings = research::settings(global, &args.corpus)?;
    let prompts = Prompts::load(settings.prompts_dir.as_deref()).map_err(CommandError::usage)?;
    let http = crate::http::client().map_err(CommandError::failure)?;
    // One rate budget per endpoint for every call of the process.
    let gates = Arc::new(Gates::new());
    let search = research::search_client(http.clone(), &settings, &gates).await?;

    let (store, mut plan) = match (&args.query, &args.plan) {
        (Some(query), _) => start(query, args.out.as_deref())?,
        (None, Some(path)) => super::plan_file::open_valid(path)?,
        (None, None) => {
            return Err(CommandError::usage(anyhow::anyhow!(
                "give `--query TEXT` to start a workflow or `--plan FILE` to resume one"
            )));
        }
    };
    if bootstrap(&mut plan) {
        store.save(&plan).map_err(CommandError::failure)?;
    }
    let (report_path, events_path) = outputs_beside(store.real_path());
    let mut events = EventLog::open(&events_path).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "cannot open the event log `{}`: {e}",
            events_path.display()
        ))
    })?;
    if let Some(report) = search.as_ref().and_then(SearchClient::index_report) {
        events.emit(
            "local_index",
            json!({
                "documents": report.documents,
                "read": report.read,
                "added": report.added,
                "updated": report.updated,
                "removed": report.removed,
                "unchanged": report.unchanged,
                "warnings": report.warnings,
            }),
        );
    }
    if let Some(display) = ProgressDisplay::for_terminal() {
        events = events.with_listener(display);
    }
    tracing::info!(
        "workflow `{}`: plan `{}`, events `{}`",
        plan.workflow_id,
        store.path().display(),
        events_path.display()
    );
    let run = Run {
        store,
        plan,
        events: Arc::new(events),
        options: WorkflowOptions {
            max_rounds: args.max_rounds,
            concurrency: usize::try_from(args.concurrency).unwrap_or(1),
        },
        report_path,
        events_path,
        corpus_url: search
            .as_ref()
            .and_then(SearchClient::local_index)
            .map(|index| {
                let url = crate::search::local::url::file_url(&index.corpus().to_string_lossy());
                format!("{}/", url.trim_end_matches('/'))
            }),
    };

    if settings.engine == EngineKind::Extractive {
        let search = search.ok_or_else(|| CommandError::usage(anyhow::anyhow!("no corpus")))?;
        let index = search
            .local_index()
            .ok_or_else(|| CommandError::usage(anyhow::anyhow!("no local index")))?;
        let planner = ExtractivePlanner {
            index: Arc::clone(&index),
        };
        return run.with(ExtractiveRunner { search, index }, planner).await;
    }
    // In a workflow the planner's full input is debug output unless asked for.
    let log = planner_log(args.log, global.verbose > 0);
    let (agents, planner) = llm_engine(http, &settings, &gates, search, prompts, log)?;
    run.with(agents, planner).await
}

/// The sub-agents and the planner of a run with a model.
fn llm_engine(
    http: reqwest::Client,
    settings: &Settings,
    gates: &Gates,
    search: Option<SearchClient>,
    prompts: Prompts,
    log: LogOptions,
) -> Result<(Agents, Planner), CommandError> {
    let negotiator = Arc::new(Negotiator::new(settings.structured_output));
    let llm = |role| {
        LlmClient::new(http.clone(), settings, role, Arc::clone(&negotiator), gates)
            .map_err(CommandError::usage)
    };
    let planner = Planner {
        llm: llm(Role::Planning)?,
        system_prompt: prompts.planning.clone(),
        repair_attempts: settings.repair_attempts,
        log,
    };
    let agents = Agents {
        search_llm: llm(Role::Search)?,
        summary_llm: llm(Role::Summary)?,
        search,
        prompts,
    };
    Ok((agents, planner))
}

/// A run ready to start, whichever engine runs it.
struct Run {
    store: PlanStore,
    plan: PlanFile,
    events: Arc<EventLog>,
    options: WorkflowOptions,
    report_path: PathBuf,
    events_path: PathBuf,
    corpus_url: Option<String>,
}

impl Run {
    /// Runs the engine with `runner` and `planner` and reports the outcome.
    async fn with<R: TaskRunner, P: PlanRound>(self, runner: R, planner: P) -> CommandResult {
        let plan_path = self.store.path().to_path_buf();
        let engine = Engine::new(EngineParts {
            store: self.store,
            plan: self.plan,
            events: self.events,
            runner: Arc::new(runner),
            planner,
            options: self.options,
            report_path: self.report_path,
            corpus_url: self.corpus_url,
            shutdown: Box::pin(shutdown_signal()),
        });
        let summary = engine.run().await;
        print_json(&json!({
            "status": summary.status,
            "reason": summary.reason,
            "plan_file": plan_path.display().to_string(),
            "report": summary.report.as_ref().map(|p| p.display().to_string()),
            "events": self.events_path.display().to_string(),
            "final_node": summary.final_node,
            "totals": summary.totals,
        }));
        exit_status(summary, &plan_path)
    }
}

/// The exit code a run's status maps to, with a line on stderr for anything short of
/// `completed` (README: exit codes).
fn exit_status(summary: RunSummary, plan_path: &Path) -> CommandResult {
    let shown = plan_path.display();
    let reason = summary.reason.unwrap_or_default();
    // A server's words may be in the reason: escape what could act on the terminal.
    let escaped = escape_controls(&reason, Escape::KeepLines);
    match summary.status {
        RunStatus::Completed => Ok(ExitStatus::Success),
        RunStatus::Interrupted => Ok(ExitStatus::Interrupted),
        RunStatus::Degraded => {
            eprintln!(
                "error: degraded run: {escaped}; the report says so at its top; fix the cause and run again"
            );
            Ok(ExitStatus::Failure)
        }
        RunStatus::FinalFailed => {
            eprintln!(
                "error: {escaped}; completed results are in `{shown}`: fix the cause and resume with `--plan {shown}`"
            );
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
    if query.trim().is_empty() {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`--query` is empty: give the research question"
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
        let plan = PlanFile::new(query.trim(), workflow_id(), crate::clock::now());
        let store = PlanStore::create(out, &plan).map_err(CommandError::usage)?;
        return Ok((store, plan));
    }
    // A random suffix makes a clash unlikely; `create` refusing an existing file makes it
    // impossible, and another suffix is tried.
    let mut last = None;
    for _ in 0..8 {
        let id = workflow_id();
        let name = PathBuf::from(format!("runs/plan_{}.json", id.trim_start_matches("wf-")));
        let plan = PlanFile::new(query.trim(), id, crate::clock::now());
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
fn workflow_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    // A fresh `RandomState` is seeded from the OS once per process and varied per instance.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(Utc::now().timestamp_nanos_opt().unwrap_or(0) as u128);
    hasher.write_u32(std::process::id());
    let stamp = Utc::now().format("%Y%m%dT%H%M%SZ");
    format!("wf-{stamp}-{:06x}", hasher.finish() & 0x00ff_ffff)
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
