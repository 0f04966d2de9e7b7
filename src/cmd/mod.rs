//! One file per subcommand, each an `async fn run(args, ...) -> CommandResult`, none importing
//! another: what commands share lives below them (the run layer's services, the workflow's plan files, the
//! run settings, `research` for a workflow run, `output` for stdout). This file picks the
//! subcommand and turns the log flags into the plain options of lower layers.

pub mod batch;
#[cfg(feature = "queue")]
pub mod batch_export;
#[cfg(feature = "queue")]
pub mod batch_status;
pub mod completions;
pub mod diff;
pub mod doctor;
pub mod eval;
pub mod graph;
pub mod man;
#[cfg(feature = "mcp")]
pub mod mcp;
pub mod parse_worker;
pub mod plan;
#[cfg(feature = "queue")]
pub mod queue;
pub mod review;
pub mod schema;
#[cfg(feature = "queue")]
pub mod submit;
pub mod thinkon;
pub mod validate;
pub mod view;
pub mod watch;
#[cfg(feature = "queue")]
pub mod worker;
pub mod workflow;

use std::io::IsTerminal;

use crate::cli::{
    BatchAction, BatchArgs, Cli, ColorWhen, Command, GlobalArgs, McpArgs, PlanningLogArgs,
    QueueCommand, WorkerArgs,
};
#[cfg(not(all(feature = "queue", feature = "mcp")))]
use crate::exit::CommandError;
use crate::exit::CommandResult;
use crate::logging::LogConfig;
use crate::planner::LogOptions;

/// Runs the parsed command line: the one place that maps a subcommand to its `run`.
pub async fn run(cli: Cli) -> CommandResult {
    // The keys of the environment are masked by every command, also those that read no
    // settings (`view`, `diff`): a file they write may quote one.
    crate::settings::secret::remember_environment();
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Plan(args) => plan::run(args, &cli.global).await,
        Command::Workflow(args) => workflow::run(args, &cli.global).await,
        Command::Doctor(args) => doctor::run(args, &cli.global).await,
        Command::Diff(args) => diff::run(args).await,
        // `--out-dir` runs the batch here, whatever `RESEARCHFLOW_QUEUE` says.
        Command::Batch(args) if args.action.is_none() && args.out_dir.is_some() => {
            batch::run(args, &cli.global).await
        }
        Command::Batch(args) => queued(args).await,
        Command::Watch(args) => watch::run(args, &cli.global).await,
        Command::Worker(args) => worker(args, &cli.global).await,
        Command::Queue(args) => queue_command(args).await,
        Command::Eval(args) => eval::run(args, &cli.global).await,
        Command::Review(args) => review::run(args, &cli.global).await,
        Command::Thinkon(args) => thinkon::run(args, &cli.global).await,
        Command::View(args) => view::run(args).await,
        Command::Graph(args) => graph::run(args).await,
        Command::Completions(args) => completions::run(args).await,
        Command::Man(args) => man::run(args).await,
        Command::Schema(args) => schema::run(args).await,
        Command::Mcp(args) => mcp(args, &cli.global).await,
        Command::ParseWorker(args) => Ok(parse_worker::run(&args)),
    }
}

/// `batch status`, `batch export`, and `batch FILE --queue`: the queue's side of `batch`.
#[cfg(feature = "queue")]
async fn queued(mut args: BatchArgs) -> CommandResult {
    match args.action.take() {
        Some(BatchAction::Status(args)) => batch_status::run(args).await,
        Some(BatchAction::Export(args)) => batch_export::run(args).await,
        None => submit::run(args).await,
    }
}

#[cfg(not(feature = "queue"))]
async fn queued(args: BatchArgs) -> CommandResult {
    let command = match args.action {
        Some(BatchAction::Status(_)) => "batch status",
        Some(BatchAction::Export(_)) => "batch export",
        None => "batch --queue",
    };
    Err(CommandError::missing_feature(command, "queue"))
}

#[cfg(feature = "queue")]
async fn worker(args: WorkerArgs, global: &GlobalArgs) -> CommandResult {
    worker::run(args, global).await
}

#[cfg(not(feature = "queue"))]
async fn worker(_: WorkerArgs, _: &GlobalArgs) -> CommandResult {
    Err(CommandError::missing_feature("worker", "queue"))
}

#[cfg(feature = "queue")]
async fn queue_command(args: QueueCommand) -> CommandResult {
    queue::run(args).await
}

#[cfg(not(feature = "queue"))]
async fn queue_command(_: QueueCommand) -> CommandResult {
    Err(CommandError::missing_feature("queue", "queue"))
}

#[cfg(feature = "mcp")]
async fn mcp(args: McpArgs, global: &GlobalArgs) -> CommandResult {
    mcp::run(args, global).await
}

#[cfg(not(feature = "mcp"))]
async fn mcp(_: McpArgs, _: &GlobalArgs) -> CommandResult {
    Err(CommandError::missing_feature("mcp", "mcp"))
}

/// The log set-up for this command line: a progress display for a workflow, a batch run here,
/// an evaluation and a worker, and the three that run many questions at once keep to their own
/// lines (each question's info lines come back with `-v`); colour as `--color` says: `auto` only on a terminal and without `NO_COLOR` (any non-empty value, as
/// no-color.org says), `always` even so (a flag overrides the variable), `never` none.
pub fn log_config(cli: &Cli) -> LogConfig {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let questions = match &cli.command {
        Command::Batch(args) => args.action.is_none() && args.out_dir.is_some(),
        Command::Eval(_) | Command::Worker(_) | Command::Watch(_) => true,
        _ => false,
    };
    LogConfig {
        quiet: cli.global.quiet,
        verbose: cli.global.verbose,
        progress: questions || matches!(cli.command, Command::Workflow(_)),
        quiet_questions: questions,
        color: match cli.global.color {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => !no_color && std::io::stderr().is_terminal(),
        },
    }
}

/// The planner's log options; `echo` says whether the input/output lines are printed even
/// without `--log-full` / `--log-show-instructions`.
fn planner_log(args: PlanningLogArgs, echo: bool) -> LogOptions {
    LogOptions {
        echo: echo || args.log_full || args.log_show_instructions,
        full: args.log_full,
        show_instructions: args.log_show_instructions,
    }
}
