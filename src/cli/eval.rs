//! The flags of `researchflow eval`. Part of [`super`] (re-exported there), in a file of its own
//! only to keep files short.

use std::path::PathBuf;

use clap::Args;

use super::RunArgs;

#[derive(Debug, Args)]
pub struct EvalArgs {
    /// The question set: JSON lines `{"id", "question", "answers": [...], "evidence": [...]}`
    /// (`fixtures/eval/README.md`).
    #[arg(value_name = "SET.jsonl")]
    pub set: PathBuf,

    /// Where each question's plan, report, events and transcript go, with `batch.json` and
    /// `eval.json` [default: runs/eval-<set>-<time>].
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<PathBuf>,

    /// Most questions running at once.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,

    /// An earlier evaluation's out-dir: answer every call from its transcripts instead of
    /// the servers (no network), and score again.
    #[arg(long, value_name = "DIR")]
    pub replay: Option<PathBuf>,

    /// An earlier evaluation's out-dir: show what got better or worse, question by question.
    #[arg(long, value_name = "OLD_DIR")]
    pub previous: Option<PathBuf>,

    /// Run nothing: score the reports another system wrote in DIR, one per question
    /// (`<id>.md` or `<id>.report.md`, beside it an optional `<id>.meta.json` with its run's
    /// `status`, `seconds` and `tokens`), by the same rules; `eval.json` goes to `--out-dir`
    /// [default: DIR].
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub reports: Option<PathBuf>,

    /// With `--reports`: the address of the site that served the corpus to that system
    /// (`http://127.0.0.1:8080/`); a page under it counts as the corpus file its last path
    /// segment names, so its citations are scored against the set's evidence.
    #[arg(long, value_name = "URL", requires = "reports")]
    pub site: Option<String>,

    /// Print the evaluation as JSON (what `eval.json` holds) instead of a Markdown table.
    #[arg(long)]
    pub json: bool,

    /// How each question's workflow runs.
    #[command(flatten)]
    pub run: RunArgs,
}
