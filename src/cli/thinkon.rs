//! The flags of `researchflow thinkon`, and `batch --engine`'s choice of Thinkon. Part of
//! [`super`] (re-exported there), in a file of its own only to keep files short.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::{Count, LimitArgs, Seconds};

/// Most blocks in a tree unless `--max-blocks` (or an MCP call's `max_blocks`) says.
pub const DEFAULT_MAX_BLOCKS: Count = match Count::new(50) {
    Some(n) => n,
    None => panic!("50 is a count"),
};

/// What runs each question of a batch (`batch --engine`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BatchEngine {
    /// A research workflow over `DIR/<name>.json`.
    Workflow,
    /// A Thinkon goal in `DIR/<name>.thinkon/`.
    Thinkon,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("start").required(true).multiple(true).args(["goal", "resume"])))]
pub struct ThinkonArgs {
    /// The goal of a new tree; on a folder that holds a tree, the goal it was started with.
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,

    /// Continue the unfinished tree in DIR.
    #[arg(long)]
    pub resume: bool,

    /// The folder of the tree: blocks, context, executors, work folder, result, events.
    #[arg(long, value_name = "DIR", default_value = ".thinkon")]
    pub dir: PathBuf,

    /// Depth at which blocks are no longer split: the runtime executes their items without
    /// asking the planner [default: 3, or the tree's].
    #[arg(long, value_name = "N")]
    pub max_depth: Option<u32>,

    /// The executors file [default: DIR/executors/executors.yaml, written with the built-in
    /// executors when absent].
    #[arg(long, value_name = "FILE")]
    pub executors: Option<PathBuf>,

    /// Let `shell: <command>` run (through `sh -c`, in DIR/work, with a timeout and an output
    /// cap). Without it no shell command ever starts and a block that calls one fails.
    #[arg(long)]
    pub allow_shell: bool,

    /// Ask the planner with a compact prompt (`thinkon.planner.compact.md`, about 1,000 tokens)
    /// instead of the full one (about 9,500): for models whose context is 8k tokens or less.
    #[arg(long)]
    pub compact_prompt: bool,

    /// Seconds a shell command may run before it and everything it started are killed.
    #[arg(long, value_name = "SECS", default_value = "60")]
    pub shell_timeout: Seconds,

    /// Most blocks in the tree; reaching it stops planning and returns what exists, partial.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_BLOCKS)]
    pub max_blocks: Count,

    #[command(flatten)]
    pub limits: LimitArgs,
}
