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

    /// Let --http listen on an address that is not loopback. Needs a bearer token
    /// (`--token-file`, or `RESEARCHFLOW_MCP_TOKEN`): whoever has it can run research with
    /// your keys and read the runs under the roots.
    #[arg(long, requires = "http")]
    pub allow_remote: bool,

    /// A file whose first line is the bearer token every HTTP request must carry
    /// (`Authorization: Bearer TOKEN`; 16 characters or more). Without it, the token is read
    /// from `RESEARCHFLOW_MCP_TOKEN`, if set. Required with --allow-remote.
    #[arg(long, value_name = "FILE", requires = "http")]
    pub token_file: Option<PathBuf>,

    /// Also serve HTTP requests whose `Origin` is ORIGIN (`https://app.example`,
    /// `http://localhost:8080`, `:*` for any port); repeatable. A request from any other
    /// `Origin` is refused (403), except loopback ones when serving on loopback; a request
    /// without `Origin` (not from a browser) is served.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    pub allow_origins: Vec<String>,

    /// Most HTTP sessions open at once; an `initialize` beyond them is refused (503) until one
    /// ends or expires.
    #[arg(long, value_name = "N", default_value_t = 100, requires = "http", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub max_sessions: u32,

    /// Seconds after which an HTTP session with no request for that long, and none in
    /// flight, is closed.
    #[arg(long, value_name = "SECS", default_value_t = 300, requires = "http", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub session_idle: u64,

    /// A folder the tools may read and write (plan files, corpora); repeatable. Paths
    /// outside every root, or through a symbolic link that leaves them, are refused; new runs
    /// go to `runs/` of the first [default: the current folder].
    #[arg(long = "root", value_name = "DIR")]
    pub roots: Vec<PathBuf>,

    /// Every call's defaults; a call's own arguments win.
    #[command(flatten)]
    pub run: RunArgs,
}
