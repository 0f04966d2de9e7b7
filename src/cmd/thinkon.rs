//! `researchflow thinkon`: the Thinkon runtime on one goal, in one folder (`--dir`, default
//! `.thinkon`).
//!
//! Everything is resolved before any work starts: the settings (a model is required), the
//! folder and its lock, the tree (a new one for `--goal`, or the one the folder holds), the
//! executors file (written with the built-in executors on a first run), the prompts, the
//! search client, the three roles' model clients recording on `DIR/transcript.jsonl`, and the
//! event log `DIR/events.ndjson`. stdout gets one JSON object: `{status, root, result, blocks,
//! calls, tokens, ...}`.
//!
//! Exit codes: 0 completed, and partial (a limit the user set was reached: said on stderr);
//! 1 failed (the root block failed); 2 usage, configuration, an unreadable folder or executors
//! file, an endpoint that cannot be used; 130 interrupted.

use std::path::Path;

use serde_json::json;

use crate::cli::{GlobalArgs, ThinkonArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, eprint_line, print_json};
use crate::run::shutdown;
use crate::session::{Session, ThinkonGoal};
use crate::settings::Settings;
use crate::thinkon::{
    ExecutorSet, RunError, ShellOptions, StartError, ThinkonOptions, ThinkonStatus, ThinkonSummary,
    Tree, TreeMeta, TreeStore, open_goal,
};

/// Bytes kept of a shell command's stdout, and of its stderr.
pub const SHELL_OUTPUT_CAP: usize = 64 * 1024;

pub async fn run(args: ThinkonArgs, global: &GlobalArgs) -> CommandResult {
    let settings = Settings::load(global.config.as_deref()).map_err(CommandError::usage)?;
    settings.require_llm().map_err(CommandError::usage)?;
    let store = TreeStore::open(&args.dir).map_err(CommandError::usage)?;
    let executors_path = args
        .executors
        .clone()
        .unwrap_or_else(|| store.default_executors_path());
    let executors = ExecutorSet::open(&executors_path, args.executors.is_none())
        .map_err(CommandError::usage)?;
    let mut budget = settings.budget;
    budget.limits = args.limits.or(budget.limits);
    let session = Session::open(settings, None).await?;
    // Last of what can be refused: a run refused for its settings leaves no tree behind.
    let (meta, tree) = open_tree(&store, &args)?;
    let shell = args.allow_shell.then(|| ShellOptions {
        work_dir: store.work_dir(),
        timeout: args.shell_timeout.duration(),
        output_cap: SHELL_OUTPUT_CAP,
    });
    let options = ThinkonOptions {
        max_depth: meta.max_depth,
        max_blocks: args.max_blocks.count(),
        budget,
        compact_prompt: args.compact_prompt,
    };
    let finished = session
        .thinkon(ThinkonGoal {
            store,
            meta,
            tree,
            executors,
            options,
            shell,
            stop: shutdown::on_signal(),
            listener: None,
        })
        .await?;
    let dir = finished.dir;
    match finished.summary {
        Ok(summary) => report(&summary, &dir, &finished.events_path),
        Err(RunError::Stop(why)) => Err(CommandError::usage(anyhow::anyhow!(
            "{why}; the tree is saved in `{}`: run again to continue it",
            dir.display()
        ))),
        Err(RunError::Store(e)) => Err(CommandError::failure(e)),
    }
}

/// The tree the folder holds, or a new one for `--goal`, refused in the flags' terms.
fn open_tree(store: &TreeStore, args: &ThinkonArgs) -> Result<(TreeMeta, Tree), CommandError> {
    let shown = store.dir().display();
    open_goal(store, args.goal.as_deref(), args.max_depth).map_err(|e| {
        CommandError::usage(match e {
            StartError::EmptyGoal => anyhow::anyhow!(
                "`--goal` is empty once control characters and white space are removed: say what the tree should achieve"
            ),
            StartError::NoTree { .. } => anyhow::anyhow!(
                "`{shown}` holds no tree to resume: start one with `--goal TEXT`"
            ),
            StartError::OtherGoal { goal, .. } => anyhow::anyhow!(
                "`{shown}` holds the tree of another goal (`{goal}`): run with `--resume` to continue it, or give a new goal another `--dir`"
            ),
            other => anyhow::Error::new(other),
        })
    })
}

/// Prints the summary and maps it to an exit status.
fn report(summary: &ThinkonSummary, dir: &Path, events: &Path) -> CommandResult {
    print_json(&json!({
        "status": summary.status,
        "reason": summary.reason,
        "root": summary.root,
        "result": summary.result.as_deref().map(absolute),
        "blocks": summary.blocks,
        "calls": summary.spent.calls,
        "tokens": summary.spent.usage.total_tokens,
        "dir": absolute(dir),
        "events": absolute(events),
    }))
    .map_err(|e| e.noting(&format!("the tree is saved in `{}`", absolute(dir))))?;
    let reason = summary.reason.clone().unwrap_or_default();
    match summary.status {
        ThinkonStatus::Completed => Ok(ExitStatus::Success),
        ThinkonStatus::Partial => {
            eprint_line(&format!(
                "note: partial run: {reason}; `{}` holds what exists, and running again on the same folder continues the tree",
                dir.join("result.md").display()
            ));
            Ok(ExitStatus::Success)
        }
        ThinkonStatus::Failed => {
            eprint_line(&format!(
                "error: {reason}; see `{}`",
                dir.join("result.md").display()
            ));
            Ok(ExitStatus::Failure)
        }
        ThinkonStatus::Interrupted => Ok(ExitStatus::Interrupted),
    }
}
