//! `researchflow view PLAN.json [--out FILE.html [--force]] [--corpus DIR]`: the run of
//! PLAN.json as one self-contained HTML file (`crate::view`), by default `<stem>.html` beside
//! the plan, where `workflow` and `batch` write it too. Never over the plan or a file beside
//! it, and over another existing file only when it is a page researchflow wrote or `--force`
//! says so (`crate::view::out`). Without `--corpus`, the corpus the plan records links its
//! documents. The plan is only read, without a lock, so a running workflow can be looked at;
//! stdout gets `{"html": path}`.

use crate::cli::ViewArgs;
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, print_json};
use crate::plan::Beside;
use crate::view::out::check_out;
use crate::view::run_files::real_path;
use crate::view::{Links, write_view};

pub async fn run(args: ViewArgs) -> CommandResult {
    // Beside the plan itself, where a run through a symbolic link writes its view too.
    let out = args
        .out
        .unwrap_or_else(|| Beside::of(&real_path(&args.plan)).html);
    let corpus = match &args.corpus {
        Some(dir) => Some(std::fs::canonicalize(dir).map_err(|e| {
            CommandError::usage(anyhow::anyhow!(
                "`--corpus {}`: {e}: give the folder the run searched",
                dir.display()
            ))
        })?),
        None => None,
    };
    check_out(&args.plan, &out, args.force).map_err(CommandError::usage)?;
    let written = write_view(&args.plan, &out, &Links::into_folder(corpus.as_deref())).map_err(
        |e| match e {
            crate::view::ViewError::Write { .. } => CommandError::failure(e),
            other => CommandError::usage(other),
        },
    )?;
    tracing::info!("wrote the view of `{}`", args.plan.display());
    print_json(&serde_json::json!({ "html": absolute(&written) }))?;
    Ok(ExitStatus::Success)
}
