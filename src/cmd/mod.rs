//! One file per subcommand, each an `async fn run(args, ...) -> CommandResult`, none importing
//! another: what commands share lives below them (the kernel's services and plan files, the
//! run settings, `research` for a workflow run, `output` for stdout). This file picks the
//! subcommand and turns the log flags into the plain options of lower layers.

pub mod batch;
pub mod batch_export;
pub mod batch_status;
pub mod completions;
pub mod diff;
pub mod doctor;
pub mod eval;
pub mod graph;
pub mod man;
pub mod mcp;
pub mod plan;
pub mod queue;
pub mod review;
pub mod schema;
pub mod submit;
pub mod thinkon;
pub mod validate;
pub mod view;
pub mod worker;
pub mod workflow;

use std::io::IsTerminal;

use crate::cli::{BatchAction, Cli, ColorWhen, Command, PlanningLogArgs};
use crate::exit::CommandResult;
use crate::logging::LogConfig;
use crate::planner::LogOptions;

/// Runs the parsed command line: the one place that maps a subcommand to its `run`.
pub async fn run(cli: Cli) -> CommandResult {
    match cli.command {
        Command::Validate(args) => validate::run(args).await,
        Command::Plan(args) => plan::run(args, &cli.global).await,
        Command::Workflow(args) => workflow::run(args, &cli.global).await,
        Command::Doctor(args) => doctor::run(args, &cli.global).await,
        Command::Diff(args) => diff::run(args).await,
        Command::Batch(args) => match args.action {
            Some(BatchAction::Status(args)) => batch_status::run(args).await,
            Some(BatchAction::Export(args)) => batch_export::run(args).await,
            // `--out-dir` runs the batch here, whatever `RESEARCHFLOW_QUEUE` says.
            None if args.out_dir.is_none() => submit::run(args).await,
            None => batch::run(args, &cli.global).await,
        },
        Command::Worker(args) => worker::run(args, &cli.global).await,
        Command::Queue(args) => queue::run(args).await,
        Command::Eval(args) => eval::run(args, &cli.global).await,
        Command::Review(args) => review::run(args, &cli.global).await,
        Command::Thinkon(args) => thinkon::run(args, &cli.global).await,
        Command::View(args) => view::run(args).await,
        Command::Graph(args) => graph::run(args).await,
        Command::Completions(args) => completions::run(args).await,
        Command::Man(args) => man::run(args).await,
        Command::Schema(args) => schema::run(args).await,
        Command::Mcp(args) => mcp::run(args, &cli.global).await,
    }
}

/// The log set-up for this command line: a progress display for a workflow, a batch run here,
/// an evaluation and a worker, and the three that run many questions at once keep to their own
/// lines (each question's info lines come back with `-v`); colour as `--color` says: `auto` only on a terminal and without `NO_COLOR` (any non-empty value, as
/// no-color.org says), `always` even so (a flag overrides the variable), `never` none.
pub fn log_config(cli: &Cli) -> LogConfig {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let questions = match &cli.command {
        Command::Batch(args) => args.action.is_none() && args.out_dir.is_some(),
        Command::Eval(_) | Command::Worker(_) => true,
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
