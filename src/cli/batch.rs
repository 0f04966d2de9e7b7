//! `researchflow batch`'s arguments: a questions file run here into a folder, or submitted to
//! a queue.

use std::path::PathBuf;

use clap::Args;

use super::{BatchAction, BatchEngine, RunArgs};

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BatchArgs {
    #[command(subcommand)]
    pub action: Option<BatchAction>,

    /// The questions: one per line (blank lines and `#` comments skipped), or JSON lines
    /// `{"id": ..., "query": ...}`.
    #[arg(value_name = "FILE", required = true)]
    pub file: Option<PathBuf>,

    /// Where each question's plan, report and events go, with the manifest `batch.json`.
    #[arg(long, value_name = "DIR", required_unless_present = "queue")]
    pub out_dir: Option<PathBuf>,

    /// Submit the questions to this queue (`postgres://USER:PASSWORD@HOST/DB`) instead of
    /// running them here; prints `{"batch", "submitted", "already_queued", "already_done"}`.
    /// --out-dir runs the batch here whatever RESEARCHFLOW_QUEUE says.
    #[arg(
        long,
        value_name = "URL",
        env = "RESEARCHFLOW_QUEUE",
        hide_env_values = true
    )]
    pub queue: Option<String>,

    /// With --queue: the batch's name in the queue [default: FILE's stem].
    #[arg(long, value_name = "NAME", requires = "queue")]
    pub batch: Option<String>,

    /// Most workflows running at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,

    /// An earlier batch's folder: for every question it also answered, write
    /// `DIR/<name>.changes.md` (what is new, gone and changed).
    #[arg(long, value_name = "OLD_DIR")]
    pub previous: Option<PathBuf>,

    /// Print the batch's end as JSON even when stdout is a terminal (where a short summary is
    /// printed otherwise; a pipe always gets JSON).
    #[arg(long)]
    pub json: bool,

    /// What runs each question: a research workflow over `DIR/<name>.json`, or a Thinkon goal
    /// in `DIR/<name>.thinkon/` (a model is required; never a shell; not with `--queue` or
    /// `--previous`).
    #[arg(long, value_enum, default_value_t = BatchEngine::Workflow)]
    pub engine: BatchEngine,

    /// How each question's workflow runs (with --fail-on-block a `block` verdict makes the
    /// batch exit 1).
    #[command(flatten)]
    pub run: RunArgs,
}
