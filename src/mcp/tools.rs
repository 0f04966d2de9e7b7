//! The tools `researchflow mcp` offers: their arguments and results as types, whose JSON
//! Schemas (derived, `schemars`) are the tools' input and output schemas, and
//! [`definitions`], the list a client reads with `tools/list`. Arguments are snake_case, as
//! the plan file's fields are; an unknown argument is refused, naming it.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::cli::{Count, LimitArgs, RunBounds};
use crate::events::Totals;

/// How a workflow run goes: the arguments `research` and `resume` share, declared once and
/// flattened into both (an unknown argument is still refused, from the tool's input schema:
/// see `server.rs`). Its bounds are the run flags' own ([`RunBounds`]): their names in
/// snake_case, their ranges.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct RunCall {
    /// Research without a model and without network: a deterministic planner and extractive
    /// summaries over `corpus` (which it needs).
    #[serde(default)]
    pub offline: Option<bool>,
    /// A folder of documents (.md, .txt, .html, .pdf) under the server's roots, searched
    /// with the web search provider if one is configured.
    #[serde(default)]
    pub corpus: Option<String>,
    #[serde(flatten)]
    pub bounds: RunBounds,
}

/// `research`: a new run.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResearchInput {
    /// The research question.
    pub query: String,
    #[serde(flatten)]
    pub run: RunCall,
}

/// `resume`: an unfinished (or interrupted) run, continued.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ResumeInput {
    /// The run's plan file (a `plan_file` that `research` or `list_runs` gave).
    pub plan_file: String,
    #[serde(flatten)]
    pub run: RunCall,
}

/// `thinkon`: a Thinkon goal, new or continued.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[schemars(deny_unknown_fields)]
pub struct ThinkonInput {
    /// What the tree should achieve; needed for a new tree, optional to continue one in `dir`.
    #[serde(default)]
    pub goal: Option<String>,
    /// A Thinkon folder under the roots to continue (a `dir` an earlier `thinkon` gave); a new
    /// folder under `runs/` of the first root when left out.
    #[serde(default)]
    pub dir: Option<String>,
    /// Depth at which blocks are no longer split (default 3, or the tree's; 0 executes the
    /// goal itself).
    #[serde(default)]
    pub max_depth: Option<u32>,
    /// Most blocks in the tree; reaching it ends the run `partial` (default 50).
    #[serde(default)]
    pub max_blocks: Option<Count>,
    #[serde(flatten)]
    pub limits: LimitArgs,
    /// Ask the planner with the compact prompt (about 1,000 tokens instead of 9,500), for
    /// models with a context of 8k tokens or less.
    #[serde(default)]
    pub compact_prompt: Option<bool>,
}

/// How many blocks of a Thinkon tree are in each state.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct BlocksOut {
    pub total: usize,
    pub completed: usize,
    pub failed: usize,
    /// Planned or running.
    pub open: usize,
}

/// A Thinkon run as `thinkon` gives it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ThinkonOut {
    /// `completed`, `partial` (a limit ended it), `failed` (the root block failed),
    /// `interrupted` (cancelled: call `thinkon` again with this `dir` to continue).
    pub status: String,
    /// Why it ended short of `completed`.
    pub reason: Option<String>,
    /// The run's folder (absolute): `thinkon` continues the tree it holds.
    pub dir: String,
    /// The result (Markdown), when the root returned or a limit ended the run.
    pub result_markdown: Option<String>,
    pub result_file: Option<String>,
    pub blocks: BlocksOut,
    /// This invocation's model calls and tokens.
    pub calls: u32,
    pub tokens: u64,
}

/// `get_report`, `validate_plan`: one plan file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanFileInput {
    /// The plan file, absolute or relative to the server's first root.
    pub plan_file: String,
}

/// `list_runs`: a folder of runs.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListRunsInput {
    /// The folder (default: `runs/` of the server's first root, where `research` writes).
    #[serde(default)]
    pub dir: Option<String>,
}

/// One source of a report: `[n]` in the report is this one.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct SourceOut {
    pub n: usize,
    pub url: String,
    pub title: String,
}

/// What a run spent.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TotalsOut {
    pub rounds: u32,
    pub tasks_completed: u32,
    pub tasks_failed: u32,
    pub retries: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    pub seconds: f64,
}

impl From<&Totals> for TotalsOut {
    fn from(t: &Totals) -> TotalsOut {
        TotalsOut {
            rounds: t.rounds,
            tasks_completed: t.tasks_completed,
            tasks_failed: t.tasks_failed,
            retries: t.retries,
            prompt_tokens: t.tokens.prompt_tokens,
            completion_tokens: t.tokens.completion_tokens,
            total_tokens: t.tokens.total_tokens,
            seconds: t.seconds,
        }
    }
}

/// A run as `research`, `resume` and `get_report` give it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunOut {
    /// `completed`, `degraded` (no research task completed), `partial` (a budget ended it),
    /// `final_failed`, `interrupted` (cancelled: resumable), `failed`; for a run that has not
    /// ended, `running` (in this server) or `unfinished`.
    pub status: String,
    /// Why the run ended short of `completed`.
    pub reason: Option<String>,
    /// Whether the report answers the question: `false` when it says its sources do not
    /// (whatever the status); `null` without a report.
    pub answered: Option<bool>,
    /// The report (Markdown), when the final summary ran.
    pub report_markdown: Option<String>,
    /// The report's numbered sources: `[n]` in the report is `sources[n - 1]`.
    pub sources: Vec<SourceOut>,
    /// The run's plan file (absolute): `resume`, `get_report` and `validate_plan` take it.
    pub plan_file: String,
    /// The report file beside it, when written.
    pub report_file: Option<String>,
    /// What the run spent (its last invocation), when known.
    pub totals: Option<TotalsOut>,
}

/// One run of a folder.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunEntry {
    pub plan_file: String,
    pub question: String,
    /// As in `get_report`.
    pub status: String,
    /// As in `get_report`.
    pub answered: Option<bool>,
    pub finished_at: Option<String>,
    pub report_file: Option<String>,
}

/// `list_runs`' answer.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct RunList {
    pub dir: String,
    /// Newest first.
    pub runs: Vec<RunEntry>,
}

/// One finding of `validate_plan`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FindingOut {
    pub code: String,
    pub message: String,
    /// Where, e.g. `nodes[3].p_node`.
    pub path: String,
}

/// `validate_plan`'s answer: the diagnostics of `researchflow validate plan`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Validation {
    pub plan_file: String,
    pub valid: bool,
    pub errors: Vec<FindingOut>,
    pub warnings: Vec<FindingOut>,
}

/// The tools, as `tools/list` gives them.
pub fn definitions() -> Vec<Tool> {
    let read_only = || ToolAnnotations::new().read_only(true).open_world(false);
    vec![
        tool::<ResearchInput, RunOut>(
            "research",
            "Research a question: plans rounds of web (or corpus) searches and summaries with the server's model, writes a plan file, and returns the final report in Markdown with its numbered sources. Sends progress notifications (round, tasks done of planned, tokens). Cancelling the call stops the run as Ctrl-C does: what finished is saved, the status is `interrupted`, and `resume` continues it.",
        ),
        tool::<ResumeInput, RunOut>(
            "resume",
            "Continue an unfinished or interrupted run from its plan file, to its final report. Give the same `offline` and `corpus` as the run that started it.",
        ),
        tool::<ThinkonInput, ThinkonOut>(
            "thinkon",
            "Work on a goal with the Thinkon runtime: a tree of blocks, each planned by the server's model and executed by the research sub-agents (web or corpus search, summaries; never a shell), until the root returns its result. Sends progress notifications (blocks done of planned). Cancelling the call saves the tree and ends it `interrupted`; calling `thinkon` with the `dir` it gave continues it.",
        ),
        tool::<PlanFileInput, RunOut>(
            "get_report",
            "The report, sources, status and totals of a run, from its plan file.",
        )
        .annotate(read_only()),
        tool::<ListRunsInput, RunList>(
            "list_runs",
            "The runs in a folder (default `runs/` of the server's first root): status, question, finished_at and plan_file of each, newest first.",
        )
        .annotate(read_only()),
        tool::<PlanFileInput, Validation>(
            "validate_plan",
            "Check a plan file's integrity (fields, ids, refs, batches), as `researchflow validate plan` does.",
        )
        .annotate(read_only()),
    ]
}

/// A tool whose arguments are `I` and whose structured result is `O`.
fn tool<I: JsonSchema + 'static, O: JsonSchema + 'static>(
    name: &'static str,
    description: &'static str,
) -> Tool {
    Tool::new(name, description, Arc::new(serde_json::Map::new()))
        .with_input_schema::<I>()
        .with_output_schema::<O>()
}
