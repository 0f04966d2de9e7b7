//! What each tool does. `research` and `resume` run a workflow as `researchflow workflow`
//! does, through the call's [`Session`] ([`RunWorkflow`]), with settings resolved for the call: the
//! server's config and run flags, then the call's arguments (a corpus under the roots,
//! offline, the round and budget limits), one [`RunArgs`] through [`RunSettings::resolve`].
//! The run is a task of [`Active`](super::active::Active): the call forwards its progress and
//! turns an MCP cancellation into the run's [`Shutdown`](crate::run::Shutdown), then
//! reads the result from the files the run wrote. The read-only tools read plan files
//! (`runs.rs`) and `validate plan`'s check. Errors are messages for the client.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use serde::Serialize;
use tokio::sync::mpsc;

use super::active::HttpCall;
use super::mask::Mask;
use super::plan_check;
use super::progress::{Forward, Note, Tally};
use super::runs::{self, run_out};
use super::setup::ResearchServer;
use super::tools::{
    FindingOut, ListRunsInput, PlanFileInput, ResearchInput, ResumeInput, RunCall, RunList,
    Validation,
};
use super::writable::check_beside;
use crate::cli::RunArgs;
use crate::events::{Event, EventListener};
use crate::output::absolute;
use crate::plan::{PlanFile, PlanStore};
use crate::run::Shutdown;
use crate::session::Session;
use crate::settings::{RunOptions, RunSettings, SettingsError};
use crate::workflow::plan_file::{create_fresh, open_valid};
use crate::workflow::{RunRequest, RunWorkflow};

/// A tool's answer, or the message of its failure.
pub type Answer = Result<CallToolResult, String>;

/// `research`: a new plan under `runs/` of the first root, run to its end.
pub async fn research(
    server: &ResearchServer,
    input: ResearchInput,
    context: RequestContext<RoleServer>,
) -> Answer {
    let question = crate::text::strip_controls(&input.query);
    let query = question.trim();
    if query.is_empty() {
        return Err("`query` is empty: give the research question".into());
    }
    let (session, options) = prepare(server, &input.run).await?;
    let runs = runs_folder(server)?;
    let (store, plan) = create_fresh(&runs, query).map_err(|e| e.to_string())?;
    check_beside(store.real_path())?;
    server.started.remember(store.real_path(), &input.run);
    drive(server, session, options, (store, plan), context).await
}

/// `runs/` of the first root, created when missing, where new runs go: refused when it is a
/// symbolic link that leads out of the roots, as any path a client gave would be.
pub fn runs_folder(server: &ResearchServer) -> Result<std::path::PathBuf, String> {
    let roots = &server.setup.roots;
    let runs = roots.first().join("runs");
    std::fs::create_dir_all(&runs)
        .map_err(|e| format!("cannot create the folder `{}`: {e}", runs.display()))?;
    roots
        .resolve("runs", "folder of runs")
        .map_err(|e| e.to_string())
}

/// `resume`: an existing plan, continued to its end.
pub async fn resume(
    server: &ResearchServer,
    input: ResumeInput,
    context: RequestContext<RoleServer>,
) -> Answer {
    let path = server
        .setup
        .roots
        .resolve(&input.plan_file, "plan file")
        .map_err(|e| e.to_string())?;
    // A run of it that was cancelled may still be saving.
    server.active.settled(&path).await;
    if server.active.state(&path).is_some() {
        return Err(format!(
            "`{}` is being run by this server: wait for that call to end, or cancel it first",
            path.display()
        ));
    }
    // Before the lock is taken: its file is one of those beside the plan.
    check_beside(&path)?;
    plan_check::runnable(&server.setup.roots, &path)?;
    // A run this server started keeps its engine and corpus unless the call gives others.
    let call = server.started.recall(&path, input.run);
    let (session, options) = prepare(server, &call).await?;
    let opened = open_valid(&path).map_err(|e| e.to_string())?;
    server.started.remember(&path, &call);
    drive(server, session, options, opened, context).await
}

/// `get_report`: a run as its files say.
pub async fn get_report(server: &ResearchServer, input: PlanFileInput) -> Answer {
    let path = plan_path(server, &input.plan_file)?;
    server.active.settled(&path).await;
    let roots = &server.setup.roots;
    structured(&run_out(roots, &path, server.active.state(&path))?)
}

/// `list_runs`: the runs of a folder (runs told to stop are waited for: they show as they
/// were saved).
pub async fn list_runs(server: &ResearchServer, input: ListRunsInput) -> Answer {
    server.active.settled_all().await;
    let roots = &server.setup.roots;
    let default = roots.first().join("runs");
    let dir = match &input.dir {
        Some(dir) => roots.resolve(dir, "folder"),
        // No run yet: no folder of runs, and nothing in it.
        None if std::fs::symlink_metadata(&default).is_err() => {
            return structured(&RunList {
                dir: absolute(&default),
                runs: Vec::new(),
            });
        }
        // Resolved like a folder a client names: one that a link leads out of is refused.
        None => roots.resolve("runs", "folder of runs"),
    }
    .map_err(|e| e.to_string())?;
    let runs = runs::list(roots, &dir, |p| server.active.state(p))?;
    structured(&RunList {
        dir: absolute(&dir),
        runs,
    })
}

/// `validate_plan`: `researchflow validate plan` on one file, its findings without the
/// file's values; a file that is not a JSON object is refused unread.
pub fn validate_plan(server: &ResearchServer, input: PlanFileInput) -> Answer {
    let path = server
        .setup
        .roots
        .resolve(&input.plan_file, "plan file")
        .map_err(|e| e.to_string())?;
    let (_, doc) = plan_check::json_object(&server.setup.roots, &path)?;
    let diagnostics = plan_check::findings(&doc);
    let findings = |list: Vec<crate::diagnostics::Finding>| {
        list.into_iter()
            .map(|f| FindingOut {
                code: f.code,
                message: f.message,
                path: f.path,
            })
            .collect()
    };
    structured(&Validation {
        plan_file: absolute(&path),
        valid: diagnostics.valid,
        errors: findings(diagnostics.errors),
        warnings: findings(diagnostics.warnings),
    })
}

/// A plan file under the roots, which must read as one.
fn plan_path(server: &ResearchServer, raw: &str) -> Result<std::path::PathBuf, String> {
    let path = server
        .setup
        .roots
        .resolve(raw, "plan file")
        .map_err(|e| e.to_string())?;
    runs::read_plan(&server.setup.roots, &path)?;
    Ok(path)
}

/// The session and options of a run `call` asks for: the server's run flags, then the call's.
pub async fn prepare(
    server: &ResearchServer,
    call: &RunCall,
) -> Result<(Session, RunOptions), String> {
    let args = run_args(server, call)?;
    let run = RunSettings::resolve(server.setup.config.as_deref(), &args, None).map_err(
        |e| match e {
            SettingsError::NoLlm { where_ } => format!(
                "no model is configured for this server ({where_}): call `research` with `offline: true` and a `corpus` (a folder of documents under the roots) to research without a model, or start the server with a config that sets `baseURL` and `model`"
            ),
            other => other.to_string(),
        },
    )?;
    let session = server
        .setup
        .base
        .for_settings(run.settings)
        .await
        .map_err(|e| e.to_string())?;
    Ok((session, run.options))
}

/// The server's run flags with the call's arguments applied (their bounds are checked
/// against the tool's input schema before: `server.rs`).
fn run_args(server: &ResearchServer, call: &RunCall) -> Result<RunArgs, String> {
    let mut args = server.setup.defaults.clone();
    if let Some(corpus) = &call.corpus {
        let dir = server
            .setup
            .roots
            .resolve(corpus, "corpus")
            .map_err(|e| e.to_string())?;
        args.corpus.corpus = Some(dir);
    }
    if let Some(offline) = call.offline {
        args.corpus.offline = offline;
    }
    args.bounds = call.bounds.or(args.bounds);
    Ok(args)
}

/// Runs the opened plan to its end as a task of the server ([`supervise`]), and reads the
/// answer from the files the run wrote.
async fn drive(
    server: &ResearchServer,
    session: Session,
    options: RunOptions,
    (store, plan): (PlanStore, PlanFile),
    context: RequestContext<RoleServer>,
) -> Answer {
    let path = store.real_path().to_path_buf();
    let session = session.logging(server.setup.log);
    let finished = supervise(
        server,
        &path,
        &context,
        Tally::default(),
        |stop, listener| {
            let request = RunRequest {
                store,
                plan,
                options,
                shutdown: stop,
                listener,
                replay: None,
                mirror: None,
            };
            async move { session.run(request).await }
        },
    )
    .await?
    .map_err(|e| e.to_string())?;
    let summary = finished.summary;
    let mut out = run_out(&server.setup.roots, &path, None)?;
    out.status = summary.status.as_str().to_string();
    out.reason = summary.reason;
    out.totals = Some((&summary.totals).into());
    structured(&out)
}

/// Runs `start`'s run as a task of the server, under `path` (a plan file, a Thinkon folder):
/// progress is sent as the run goes (counted by `tally`), and a cancellation of the call, a
/// closed stream or the server's stop fires the run's stop (it saves what it did and ends
/// `interrupted`). Refused while the server runs `path` already.
pub async fn supervise<T, F>(
    server: &ResearchServer,
    path: &Path,
    context: &RequestContext<RoleServer>,
    mut tally: Tally,
    start: impl FnOnce(Shutdown, Option<Arc<dyn EventListener<Event>>>) -> F,
) -> Result<T, String>
where
    T: Send + 'static,
    F: Future<Output = T> + Send + 'static,
{
    let http = http_call(context);
    let Some(slot) = server.active.claim(path, context.ct.clone(), http) else {
        return Err(format!(
            "`{}` is being run by this server already",
            path.display()
        ));
    };
    let stop = slot.stop.clone();
    let token = context.meta.get_progress_token();
    let (tx, mut updates) = mpsc::unbounded_channel();
    let listener = token
        .as_ref()
        .map(|_| Arc::new(Forward(tx)) as Arc<dyn EventListener<Event>>);
    let work = start(Box::pin(stop.clone().cancelled_owned()), listener);
    let mut run = server.active.spawn(async move {
        let finished = work.await;
        drop(slot);
        finished
    });
    let peer = &context.peer;
    let mask = &server.setup.mask;
    let send = |note: Note| notify(peer, token.clone(), note, mask);
    send(tally.start(&absolute(path))).await;
    let joined = loop {
        tokio::select! {
            joined = &mut run => break joined,
            Some(update) = updates.recv() => {
                if let Some(note) = tally.on(update).filter(|_| !stop.is_cancelled()) {
                    send(note).await;
                }
            }
            () = context.ct.cancelled(), if !stop.is_cancelled() => {
                tracing::info!("the call was cancelled: stopping the run of `{}`", path.display());
                stop.cancel();
            }
        }
    };
    while let Ok(update) = updates.try_recv() {
        if let Some(note) = tally.on(update) {
            send(note).await;
        }
    }
    joined.map_err(|e| format!("the run of `{}` ended abnormally: {e}", path.display()))
}

/// The session and request of a call made over streamable HTTP in a session, which the HTTP
/// gate stops when the client closes its stream or ends the session.
fn http_call(context: &RequestContext<RoleServer>) -> Option<HttpCall> {
    let parts = context.extensions.get::<axum::http::request::Parts>()?;
    let session = parts.headers.get("mcp-session-id")?.to_str().ok()?;
    let id = serde_json::to_value(&context.id).ok()?;
    Some(HttpCall {
        session: session.to_string(),
        request: HttpCall::key(&id),
    })
}

/// Sends one progress notification (secrets masked), when the client asked for them; a
/// client that is gone is no error of the run's.
async fn notify(peer: &Peer<RoleServer>, token: Option<ProgressToken>, note: Note, mask: &Mask) {
    let Some(token) = token else { return };
    let message = mask.text(&note.message);
    let mut param = ProgressNotificationParam::new(token, note.progress).with_message(message);
    if let Some(total) = note.total {
        param = param.with_total(total);
    }
    if let Err(e) = peer.notify_progress(param).await {
        tracing::debug!("cannot send a progress notification: {e}");
    }
}

/// A tool's structured answer (also as JSON text, for clients that read only text).
pub fn structured(value: &impl Serialize) -> Answer {
    serde_json::to_value(value)
        .map(CallToolResult::structured)
        .map_err(|e| format!("cannot encode the answer: {e}"))
}
