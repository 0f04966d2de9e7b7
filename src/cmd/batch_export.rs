//! `researchflow batch export --queue URL --batch NAME --out-dir DIR`: what a local batch
//! writes (plan files, reports, events, transcripts, `batch.json`, and unless `--no-html` each
//! run's view and the batch's `index.html`), for every question of a batch in the queue that
//! has ended.

use std::path::Path;

use serde_json::json;

use crate::batch::index::write_index;
use crate::batch::{Manifest, Question};
use crate::view::{Links, write_view};

use crate::cli::BatchExportArgs;
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, print_json};
use crate::queue::export::export;

pub async fn run(args: BatchExportArgs) -> CommandResult {
    let db = crate::queue::open(&args.queue.queue, 2)
        .await
        .map_err(|e| e.into_command())?;
    // Absolute, so that the manifest's paths hold wherever it is read from.
    let dir = std::fs::create_dir_all(&args.out_dir)
        .and_then(|()| std::fs::canonicalize(&args.out_dir))
        .map_err(|e| {
            CommandError::usage(anyhow::anyhow!(
                "cannot use the folder `{}`: {e}",
                args.out_dir.display()
            ))
        })?;
    let exported = export(&db, &args.batch, &dir)
        .await
        .map_err(|e| e.into_command())?;
    if !args.no_html {
        write_views(&dir, &exported.written);
    }
    print_json(&json!({
        "batch": args.batch,
        "manifest": absolute(&exported.manifest),
        "ended": exported.ended,
        "counts": exported.counts,
        "left_out": exported.left_out,
    }))?;
    Ok(ExitStatus::Success)
}

/// The views a local batch writes beside its reports, and its index, for the questions
/// `manifest` holds: a view that cannot be written is a warning, as in a local batch. Corpus
/// documents are not linked: where the workers' corpus lies is not known here.
fn write_views(dir: &Path, manifest: &Manifest) {
    let links = Links::with_corpus(None);
    let mut questions = Vec::new();
    for item in &manifest.items {
        let plan = Path::new(&item.plan_file);
        if item.report.is_some()
            && let Err(e) = write_view(plan, &plan.with_extension("html"), &links)
        {
            tracing::warn!("no view of `{}`: {e}", plan.display());
        }
        questions.push(Question {
            id: item.id.clone(),
            query: item.query.clone(),
            name: plan
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default(),
        });
    }
    write_index(&questions, dir, None, manifest);
}
