//! The flags of the commands that show or describe what exists rather than run anything:
//! `view`, `graph`, `completions`, `man` and `schema`. Part of [`super`] (re-exported there),
//! in a file of its own only to keep files short.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// The plan file of the run; its report, events and reviews are read from beside it.
    #[arg(value_name = "PLAN.json")]
    pub plan: PathBuf,

    /// Where the HTML goes [default: beside the plan, `<stem>.html`]. Never the plan or a
    /// file beside it; an existing file only when it is a page researchflow wrote, unless
    /// `--force`.
    #[arg(long, value_name = "FILE.html")]
    pub out: Option<PathBuf>,

    /// Replace the file at `--out` even when it is not a page researchflow wrote (never the
    /// plan or a file beside it).
    #[arg(long)]
    pub force: bool,

    /// The corpus the run searched: its documents' `file:` URLs become links (no other
    /// `file:` URL ever does).
    #[arg(long, env = "RESEARCHFLOW_CORPUS", value_name = "DIR")]
    pub corpus: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The plan file.
    #[arg(value_name = "PLAN.json")]
    pub plan: PathBuf,

    /// The language of the graph.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// Graphviz DOT (`dot -Tsvg`).
    Dot,
    /// A Mermaid flowchart.
    Mermaid,
    /// The SVG drawing of `view`.
    Svg,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: CompletionShell,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
    Powershell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write researchflow.1 and a page per command (researchflow-workflow.1, ...) here instead
    /// of printing researchflow.1.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which document.
    #[arg(value_enum)]
    pub document: SchemaDocument,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaDocument {
    /// A plan file.
    Plan,
    /// The config file (agent.config.json).
    Config,
    /// One JSON line of a batch's questions file.
    Questions,
}
