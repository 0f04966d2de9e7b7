//! `thinkon`: a Thinkon goal run as a task of the server, as `researchflow thinkon` runs one,
//! through the call's [`Session`](crate::session::Session): a new tree in a new folder under
//! `runs/` of the first root, or the tree of a folder under the roots continued. Its progress
//! is blocks done of blocks planned; a cancellation saves the tree and ends it
//! `interrupted`. Shell executors are never enabled over MCP: a client's goal must not run
//! commands on the server's machine.

use rmcp::RoleServer;
use rmcp::service::RequestContext;

use super::calls::{Answer, prepare, runs_folder, structured, supervise};
use super::progress::Tally;
use super::runs::REPORT_MAX_BYTES;
use super::setup::ResearchServer;
use super::tools::{BlocksOut, RunCall, ThinkonInput, ThinkonOut};
use crate::cli::DEFAULT_MAX_BLOCKS;
use crate::files::read_opened;
use crate::output::absolute;
use crate::session::ThinkonGoal;
use crate::thinkon::{
    ExecutorSet, RunError, StartError, ThinkonOptions, Tree, TreeMeta, TreeStore, open_folder,
};

/// `thinkon`: the goal's tree run until the root returns, a limit is reached, or the call is
/// cancelled.
pub async fn thinkon(
    server: &ResearchServer,
    input: ThinkonInput,
    context: RequestContext<RoleServer>,
) -> Answer {
    if server.setup.base.settings().llm.is_none() {
        return Err("`thinkon` needs a model and this server has none: start it with a config that sets `baseURL` and `model`".into());
    }
    if input.goal.is_none() && input.dir.is_none() {
        return Err("give a `goal` to start a tree, or the `dir` of a tree to continue".into());
    }
    let mut call = RunCall::default();
    call.bounds.budget.limits = input.limits;
    let (session, options) = prepare(server, &call).await?;
    let (store, meta, tree, executors) = open_tree(server, &input).await?;
    let goal_options = ThinkonOptions {
        max_depth: meta.max_depth,
        max_blocks: input.max_blocks.unwrap_or(DEFAULT_MAX_BLOCKS).count(),
        budget: options.budget,
        compact_prompt: input.compact_prompt.unwrap_or(false),
    };
    let dir = store.dir().to_path_buf();
    let finished = supervise(
        server,
        &dir,
        &context,
        Tally::of_blocks(),
        |stop, listener| {
            let goal = ThinkonGoal {
                store,
                meta,
                tree,
                executors,
                options: goal_options,
                shell: None,
                stop,
                listener,
            };
            async move { session.thinkon(goal).await }
        },
    )
    .await?
    .map_err(|e| e.to_string())?;
    let outcome = finished.summary.map_err(|e| match e {
        RunError::Stop(why) => format!(
            "{why}; the tree is saved in `{}`: call `thinkon` with this `dir` to continue it",
            absolute(&finished.dir)
        ),
        RunError::Store(e) => e.to_string(),
    })?;
    let result_markdown = outcome.result.as_deref().and_then(|path| {
        let (file, meta) = server.setup.roots.open_inside(path).ok()?;
        read_opened(file, &meta, path, REPORT_MAX_BYTES).ok()
    });
    structured(&ThinkonOut {
        status: outcome.status.as_str().to_string(),
        reason: outcome.reason,
        dir: absolute(&finished.dir),
        result_markdown,
        result_file: outcome.result.as_deref().map(absolute),
        blocks: BlocksOut {
            total: outcome.blocks.total,
            completed: outcome.blocks.completed,
            failed: outcome.blocks.failed,
            open: outcome.blocks.open,
        },
        calls: outcome.spent.calls,
        tokens: outcome.spent.usage.total_tokens,
    })
}

/// The call's folder (a new one under `runs/` when it names none), locked, with its built-in
/// executors and the tree of its goal, new or continued; refused in the tool's terms.
async fn open_tree(
    server: &ResearchServer,
    input: &ThinkonInput,
) -> Result<(TreeStore, TreeMeta, Tree, ExecutorSet), String> {
    let dir = match &input.dir {
        Some(dir) => server
            .setup
            .roots
            .resolve(dir, "Thinkon folder")
            .map_err(|e| e.to_string())?,
        None => new_folder(server)?,
    };
    // A run of it that was cancelled may still be saving.
    server.active.settled(&dir).await;
    let (store, executors, meta, tree) = open_folder(&dir, input.goal.as_deref(), input.max_depth)
        .map_err(|e| match e {
            StartError::EmptyGoal => "`goal` is empty: say what the tree should achieve".into(),
            StartError::NoTree { .. } => format!(
                "`{}` holds no tree to continue: give a `goal` to start one",
                dir.display()
            ),
            StartError::OtherGoal { goal, .. } => format!(
                "`{}` holds the tree of another goal (`{goal}`): leave `goal` out to continue it, or leave `dir` out to start a new tree",
                dir.display()
            ),
            other => other.to_string(),
        })?;
    Ok((store, meta, tree, executors))
}

/// A new folder under `runs/` of the first root, named by the time and a random suffix.
fn new_folder(server: &ResearchServer) -> Result<std::path::PathBuf, String> {
    let runs = runs_folder(server)?;
    let id = crate::plan::workflow_id().replacen("wf-", "thinkon-", 1);
    let dir = runs.join(id);
    std::fs::create_dir(&dir)
        .map_err(|e| format!("cannot create the folder `{}`: {e}", dir.display()))?;
    Ok(dir)
}
