//! The flags of the queue on PostgreSQL: `worker`, `queue migrate`, and `batch status` /
//! `batch export` (`batch FILE --queue` is `BatchArgs`'s). Part of `cli`: every clap type in
//! one module.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::RunArgs;

/// What is done with a batch in a queue.
#[derive(Debug, Subcommand)]
pub enum BatchAction {
    /// Counts per status of a batch in the queue, and each running question's worker, attempt
    /// and age.
    Status(BatchStatusArgs),
    /// Write what a local batch writes (plan files, reports, events, transcripts, batch.json)
    /// for every question of a batch in the queue that has ended.
    Export(BatchExportArgs),
}

/// The queue on PostgreSQL.
#[derive(Debug, Clone, Args)]
pub struct QueueArgs {
    /// The queue's database: `postgres://USER:PASSWORD@HOST:PORT/DB`.
    #[arg(
        long,
        value_name = "URL",
        env = "RESEARCHFLOW_QUEUE",
        hide_env_values = true
    )]
    pub queue: String,
}

#[derive(Debug, Args)]
pub struct BatchStatusArgs {
    #[command(flatten)]
    pub queue: QueueArgs,

    /// The batch's name in the queue.
    #[arg(long, value_name = "NAME")]
    pub batch: String,

    /// Print `{"batch", "counts", "running"}` instead of a table.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct BatchExportArgs {
    #[command(flatten)]
    pub queue: QueueArgs,

    /// The batch's name in the queue.
    #[arg(long, value_name = "NAME")]
    pub batch: String,

    /// Where the files and `batch.json` go.
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,

    /// Write no HTML view beside each report and no `index.html`.
    #[arg(long, env = "RESEARCHFLOW_NO_HTML", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_html: bool,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub queue: QueueArgs,

    /// Run only this batch's questions [default: every batch in the queue].
    #[arg(long, value_name = "NAME")]
    pub batch: Option<String>,

    /// Most workflows running at once in this worker.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,

    /// A question whose run fails (or whose worker is lost) this many times ends `failed`
    /// with its last error.
    #[arg(long, value_name = "K", default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_attempts: u32,

    /// A question whose worker has not been heard from for this many seconds (killed, machine
    /// gone, network cut) is taken over by another worker, from its last checkpoint.
    #[arg(long, value_name = "SECS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub lease: u64,

    /// Exit 0 once the batch (or every batch) has nothing left to run.
    #[arg(long)]
    pub drain: bool,

    /// Print the worker's end as JSON even when stdout is a terminal (where a short summary
    /// is printed otherwise; a pipe always gets JSON).
    #[arg(long)]
    pub json: bool,

    /// How each question's workflow runs.
    #[command(flatten)]
    pub run: RunArgs,
}

#[derive(Debug, Args)]
pub struct QueueCommand {
    #[command(subcommand)]
    pub action: QueueAction,
}

#[derive(Debug, Subcommand)]
pub enum QueueAction {
    /// Create or upgrade the queue's schema (versioned); workers and submissions refuse an
    /// older one.
    Migrate(QueueArgs),
}
