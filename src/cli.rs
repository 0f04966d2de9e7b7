//! Every command-line type, here and in `cli/` (`bounds.rs`, `mcp_args.rs`, `watch.rs`, ...).
//! Doc comments are the help text; every environment variable a flag reads is named here with
//! `env = "RESEARCHFLOW_..."`, and the old names some had are read as aliases (`env_aliases.rs`,
//! applied by [`parse`]).

// Doc comments here are help text first: `<timestamp>` is meant for the terminal, not HTML.
#![allow(rustdoc::invalid_html_tags)]

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod batch;
mod bounds;
mod env_aliases;
mod eval;
mod mcp_args;
pub mod outputs;
mod queue;
mod thinkon;
mod watch;

pub use batch::BatchArgs;
pub use bounds::{Bounded, Budget, Count, LimitArgs, RunBounds, Seconds, SecondsFromZero, Tokens};
pub use env_aliases::{ENV_ALIASES, parse};
pub use eval::EvalArgs;
pub use mcp_args::McpArgs;
pub use outputs::*;
pub use queue::{
    BatchAction, BatchExportArgs, BatchStatusArgs, QueueAction, QueueArgs, QueueCommand, WorkerArgs,
};
pub use thinkon::{BatchEngine, DEFAULT_MAX_BLOCKS, ThinkonArgs};
pub use watch::{DEFAULT_KEEP, NotifyOn, WatchArgs};

/// Batch research-workflow orchestrator: an LLM planner, search and summary sub-agents, one
/// JSON plan file.
#[derive(Debug, Parser)]
#[command(name = "researchflow", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// Flags accepted by every command.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// More log output on stderr (-v debug, -vv trace); RUST_LOG overrides.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,

    /// Only warnings and errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Configuration file [default: ./agent.config.json].
    #[arg(long, global = true, env = "RESEARCHFLOW_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,

    /// Colours in log lines and the progress display: auto (on a terminal, unless NO_COLOR is
    /// set), always, never.
    #[arg(long, global = true, env = "RESEARCHFLOW_COLOR", value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always, even into a file or pipe and with `NO_COLOR`.
    Always,
    /// Never.
    Never,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one planning round on a plan file: ask the planner for the next 0-3 tasks and write
    /// them back.
    Plan(PlanArgs),
    /// Run a whole research workflow, from a question (or an existing plan) to the final
    /// summary.
    Workflow(WorkflowArgs),
    /// Check a document against a contract: a plan file, a step plan, a plan-next answer, or a
    /// review's answers.
    Validate(ValidateArgs),
    /// Run many questions, one workflow each, in one process: a shared HTTP pool and rate
    /// budget, a manifest, resumable. With --queue, submit them to a queue on PostgreSQL
    /// instead, for `researchflow worker` processes on any number of machines.
    Batch(BatchArgs),
    /// Run a questions file from cron: each run in a new dated folder of DIR, every question
    /// compared with the last run that answered it (facts, sources, directions), `DIR/latest`, old
    /// runs pruned, `DIR/index.html`, and what changed POSTed or mailed to --notify. Exit 0 when
    /// nothing worth telling changed, 3 when something did, 1 when a question failed, 4 when a
    /// notification could not be sent.
    Watch(WatchArgs),
    /// Run every question of a set with gold answers as a batch would, then score each
    /// report: answer match, token F1, citation precision, evidence recall, supported claims,
    /// tokens and seconds. Writes `eval.json` in the out-dir.
    Eval(EvalArgs),
    /// Run the questions of a queue's batches (`batch FILE --queue URL`), up to --jobs at once,
    /// on any number of machines at once, until stopped (or, with --drain, until nothing is
    /// left). Ctrl-C or SIGTERM: no new question, running ones checkpoint, exit 130.
    Worker(WorkerArgs),
    /// The queue on PostgreSQL: `queue migrate` creates or upgrades its schema.
    Queue(QueueCommand),
    /// Probe every configured endpoint (each role's model server, and the search provider):
    /// reachable, key accepted, model listed, structured output and token limit accepted,
    /// one round trip. Offline (--offline, or no model and a corpus given): check the corpus,
    /// its index and the embedding model instead. Exit 0 when all work, 1 otherwise, 2
    /// without a usable configuration (no model and no corpus, a wrong setting).
    Doctor(DoctorArgs),
    /// Compare two plan files of one question: the sources that are new or no longer found,
    /// the findings whose summaries changed and the directions that are new or dropped, nodes
    /// matched by title. Markdown on stdout, or JSON with --json; exit 0 whatever changed.
    Diff(DiffArgs),
    /// Review the report of an existing plan (`<stem>.report.md` beside it): two roles answer,
    /// written to `<stem>.review.json` and the meeting notes `<stem>.review.md`.
    Review(ReviewArgs),
    /// Work on a goal with the Thinkon fractal planner: a tree of blocks, each planned with one
    /// plan-next answer, run by the search and summary sub-agents (and `shell:` when allowed).
    /// Resumable: running again on the same folder continues an unfinished tree.
    Thinkon(ThinkonArgs),
    /// Write a run as one self-contained HTML file: the report, the plan as a graph, each
    /// node's details, a timeline, the reviews and the totals. No script, no network.
    View(ViewArgs),
    /// Print the plan as a graph for other tools: Graphviz DOT, Mermaid, or SVG.
    Graph(GraphArgs),
    /// Print a shell completion script (bash, zsh, fish or powershell) on stdout.
    Completions(CompletionsArgs),
    /// Write the manual pages: researchflow.1 on stdout, or one page per command into a folder.
    Man(ManArgs),
    /// Print the JSON Schema of a plan file, the config file or a questions file's JSON lines,
    /// generated from the types researchflow reads them with.
    Schema(SchemaArgs),
    /// Serve researchflow to agents and editors over the Model Context Protocol (MCP): tools
    /// `research` (with progress; cancellable, resumable), `resume`, `get_report`,
    /// `list_runs`, `validate_plan`, and every run's plan and report as resources. Over
    /// stdio, or streamable HTTP with --http.
    Mcp(McpArgs),
    /// A parser process of another researchflow process: reads the web pages and corpus files
    /// it is sent on stdin, within memory and CPU limits. Started by researchflow itself.
    #[command(hide = true)]
    ParseWorker(ParseWorkerArgs),
}

#[derive(Debug, Args)]
pub struct ParseWorkerArgs {
    /// The address space this process may map, in MB.
    #[arg(long, value_name = "MB")]
    pub memory_mb: u64,

    /// The process that started this one: when it is gone, this one ends.
    #[arg(long, value_name = "PID")]
    pub parent: u32,
}

#[derive(Debug, Args)]
pub struct ReviewArgs {
    /// The plan file whose report is reviewed.
    #[arg(value_name = "PLAN.json")]
    pub plan: PathBuf,

    /// Exit 1 when the second opinion's verdict is `block`.
    #[arg(long)]
    pub fail_on_block: bool,
}

/// The review of the report after a run.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct ReviewFlags {
    /// Do not review the report (the config's `review.enabled: false` does the same).
    #[arg(long, env = "RESEARCHFLOW_NO_REVIEW", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_review: bool,

    /// Exit 1 when the review's verdict is `block` (a run that would exit 0 otherwise).
    #[arg(long, env = "RESEARCHFLOW_FAIL_ON_BLOCK", value_parser = clap::builder::BoolishValueParser::new(), conflicts_with = "no_review")]
    pub fail_on_block: bool,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The earlier plan file.
    #[arg(value_name = "OLD.json")]
    pub old: PathBuf,

    /// The later plan file.
    #[arg(value_name = "NEW.json")]
    pub new: PathBuf,

    /// Print the differences as one JSON object instead of Markdown.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the findings as one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Research without a model (--offline, or no model configured and a corpus given):
    /// check the corpus, its index and the embedding model instead of the endpoints.
    #[command(flatten)]
    pub corpus: CorpusArgs,
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The plan file (must end in .json) [default: ./plan_test.json].
    #[arg(value_name = "FILE.json", env = "RESEARCHFLOW_PLAN_FILE")]
    pub file: Option<PathBuf>,

    /// Copy x.json to x.copy.json beside it first and plan on the copy. An existing
    /// x.copy.json is never replaced without --overwrite-copy.
    #[arg(long)]
    pub on_copy: bool,

    /// With --on-copy: replace an existing x.copy.json (and the work in it) with a fresh copy
    /// of x.json; the files runs on the old copy left beside it (events, transcript, report,
    /// reviews, view) are removed with it. A copy another process is using is never replaced.
    #[arg(long, requires = "on_copy")]
    pub overwrite_copy: bool,

    /// Answer the planner from TRANSCRIPT (a `<plan>.transcript.jsonl`) instead of the
    /// server: no network; exit 1 when the round asks what the transcript does not hold.
    #[arg(long, value_name = "TRANSCRIPT")]
    pub replay: Option<PathBuf>,

    #[command(flatten)]
    pub corpus: CorpusArgs,

    #[command(flatten)]
    pub log: PlanningLogArgs,
}

/// How much of the planner's input the `[planning]` log lines show.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct PlanningLogArgs {
    /// Print the planner input and output in full instead of truncated.
    #[arg(long, env = "RESEARCHFLOW_LOG_FULL", value_parser = clap::builder::BoolishValueParser::new())]
    pub log_full: bool,

    /// Also print the planner's system prompt.
    #[arg(long, env = "RESEARCHFLOW_LOG_SHOW_INSTRUCTIONS", value_parser = clap::builder::BoolishValueParser::new())]
    pub log_show_instructions: bool,
}

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("start").required(true).multiple(true).args(["query", "plan", "replay"])))]
pub struct WorkflowArgs {
    /// Start a new plan with this question.
    #[arg(long, value_name = "TEXT", conflicts_with = "plan")]
    pub query: Option<String>,

    /// Continue (resume) an existing plan file.
    #[arg(long, value_name = "FILE")]
    pub plan: Option<PathBuf>,

    /// Where a new plan is written [default: runs/plan_<timestamp>.json].
    #[arg(long, value_name = "FILE", conflicts_with = "plan")]
    pub out: Option<PathBuf>,

    /// Answer every LLM and search call from TRANSCRIPT (the `<plan>.transcript.jsonl` of an
    /// earlier run) instead of the servers: nothing goes over the network, and the run stops
    /// (exit 1) at the first call the transcript does not hold. Starts a new plan (`--out`)
    /// on the recorded question, or on `--query`.
    #[arg(long, value_name = "TRANSCRIPT", conflicts_with = "plan")]
    pub replay: Option<PathBuf>,

    /// Print the run's end as JSON even when stdout is a terminal (where the answer and the
    /// report's path are printed otherwise; a pipe always gets JSON).
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub run: RunArgs,

    #[command(flatten)]
    pub log: PlanningLogArgs,
}

/// How a workflow run goes: the flags of `workflow`, `batch` and every command that runs
/// workflows, each with one default and one environment variable (flags win over the
/// environment, the environment over the config). `settings::RunSettings::resolve` merges
/// them with the config.
#[derive(Debug, Clone, Default, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub bounds: RunBounds,

    /// Most tasks running at once within a workflow [default: 3]; at 1 the review's two
    /// roles are asked one after the other too.
    #[arg(long, env = "RESEARCHFLOW_CONCURRENCY", value_parser = clap::value_parser!(u32).range(1..=64))]
    pub concurrency: Option<u32>,

    #[command(flatten)]
    pub corpus: CorpusArgs,

    #[command(flatten)]
    pub review: ReviewFlags,

    /// Write no HTML view (`<stem>.html`) beside the report, and for a batch no `index.html`.
    #[arg(long, env = "RESEARCHFLOW_NO_HTML", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_html: bool,

    /// Exit 1 when a report answers nothing (it says its sources do not answer), however the
    /// run ended; for a batch, when any question's does.
    #[arg(long, env = "RESEARCHFLOW_FAIL_ON_UNANSWERED", value_parser = clap::builder::BoolishValueParser::new())]
    pub fail_on_unanswered: bool,
}

/// A local corpus, and research without a model over it.
#[derive(Debug, Clone, Default, Args)]
pub struct CorpusArgs {
    /// Research without a model and without network: a deterministic planner and extractive
    /// summaries over the local corpus (needs --corpus or search.corpus).
    #[arg(long, env = "RESEARCHFLOW_OFFLINE", value_parser = clap::builder::BoolishValueParser::new())]
    pub offline: bool,

    /// Search this folder of documents (.md, .txt, .html, .pdf) with the local provider
    /// [config: search.corpus].
    #[arg(long, env = "RESEARCHFLOW_CORPUS", value_name = "DIR")]
    pub corpus: Option<PathBuf>,

    /// Where the local index lives [config: search.indexDir; default: the user's cache
    /// folder].
    #[arg(long, env = "RESEARCHFLOW_INDEX_DIR", value_name = "DIR")]
    pub index_dir: Option<PathBuf>,

    /// Rank the corpus by meaning too, with this sentence-embedding model folder (as
    /// scripts/setup/embedding-model.sh makes it) [config: search.embeddings.model].
    #[arg(long, env = "RESEARCHFLOW_EMBEDDINGS", value_name = "MODEL_DIR")]
    pub meaning: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Output form of the diagnostics.
    #[arg(long, global = true, value_enum, default_value_t = OutputFormat::Json)]
    pub format: OutputFormat,

    #[command(subcommand)]
    pub target: ValidateCommand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The diagnostics as one JSON object.
    Json,
    /// One line per finding with its path.
    Text,
}

#[derive(Debug, Subcommand)]
pub enum ValidateCommand {
    /// Integrity of a researchflow plan file.
    Plan {
        /// The plan file.
        file: PathBuf,
    },
    /// A structured step plan (JSON or YAML) against an atom registry.
    Steps {
        /// The step plan.
        file: PathBuf,
        /// The atom registry: a folder of JSON files, or one JSON file (list or map).
        #[arg(long, value_name = "PATH")]
        atoms: PathBuf,
    },
    /// A planner's plan-next answer (Thinkon protocol).
    PlanNext {
        /// The plan-next JSON document.
        file: PathBuf,
        /// executors.yaml declaring the available executors [default:
        /// .thinkon/executors/executors.yaml when it exists; without any, only `shell: ...`
        /// commands are valid].
        #[arg(long, value_name = "FILE")]
        executors: Option<PathBuf>,
        /// context.json with think, path and max_depth, for depth and no-repeat rules.
        #[arg(long, value_name = "FILE")]
        context: Option<PathBuf>,
    },
    /// A review answer: {ok, summary, risks, suggestions, gaps?}.
    Review {
        /// The answer: one JSON object.
        file: PathBuf,
    },
    /// A second opinion: {ok, verdict: ok|warn|block, notes}.
    SecondOpinion {
        /// The answer: one JSON object.
        file: PathBuf,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}
