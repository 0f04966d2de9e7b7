//! The flags of `researchflow mcp`, apart from `cli.rs` to keep that file short.

use std::path::PathBuf;

use clap::Args;

use super::RunArgs;

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve the streamable HTTP transport at ADDR, path `/mcp` (e.g. `127.0.0.1:8765`; a
    /// port alone, `8765`, is loopback; port 0 picks a free one, shown on stderr), instead of
    /// stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<String>,

    /// Let --http listen on an address that is not loopback. There is no authentication:
    /// whoever reaches it can run research with your keys and read the runs under the roots.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,

    /// A folder the tools may read and write (plan files, corpora); repeatable. Paths
    /// outside every root, or through a symbolic link that leaves them, are refused; new runs
    /// go to `runs/` of the first [default: the current folder].
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,

    /// Every call's defaults; a call's own arguments win.
    #[command(flatten)]
    pub run: RunArgs,
}
