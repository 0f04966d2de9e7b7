//! `researchflow watch`'s arguments: a questions file run on a schedule (cron), each run in
//! a dated folder of one watch folder, compared with the last, and what changed told.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::RunArgs;

/// How many runs a watch folder keeps by default.
pub const DEFAULT_KEEP: u32 = 30;

#[derive(Debug, Args)]
pub struct WatchArgs {
    /// The questions, as `batch` reads them: one per line, or JSON lines.
    #[arg(value_name = "FILE")]
    pub file: PathBuf,

    /// The watch folder: one dated folder per run (`DIR/<UTC time>/`), `DIR/latest` pointing
    /// at the newest, `DIR/index.html` with every question's history.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,

    /// How many runs to keep; older ones are deleted, but never the run a question was
    /// compared with, nor one in progress.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_KEEP, value_parser = clap::value_parser!(u32).range(1..))]
    pub keep: u32,

    /// Where to tell what changed: an `https://` (or `http://`) URL to POST the digest to as
    /// JSON, or `mailto:ADDR` (through the SMTP server of `notify.smtp` in the config).
    /// Repeatable.
    #[arg(long, value_name = "TARGET")]
    pub notify: Vec<String>,

    /// What is worth telling (and makes the exit code 3): `facts`, a figure or name changed or
    /// a claim new or gone; `sources`, that or a source new or gone; `any`, also a new or
    /// dropped direction or a reworded finding.
    #[arg(long, value_enum, default_value_t = NotifyOn::Facts)]
    pub notify_on: NotifyOn,

    /// Most workflows running at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,

    /// Print the run's end as JSON even when stdout is a terminal.
    #[arg(long)]
    pub json: bool,

    /// How each question's workflow runs.
    #[command(flatten)]
    pub run: RunArgs,
}

/// The least a change must be to be told, from the least to the most.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotifyOn {
    /// Every change: directions new or dropped, findings reworded, and all below.
    Any,
    /// Sources new or gone, and facts.
    Sources,
    /// The final report's facts: a figure or name changed, a claim new or gone.
    Facts,
}
