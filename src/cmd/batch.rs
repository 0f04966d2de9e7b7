//! `researchflow batch FILE --out-dir DIR`: one workflow per question, up to `--jobs` at once
//! in one process, sharing the process's services (one HTTP pool, one structured-output
//! negotiation, one rate budget per endpoint). The run itself is `crate::batch`'s; this file
//! resolves what it needs, then prints the counts and maps them to the exit code.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use crate::batch::changes::write_changes;
use crate::batch::index::write_index;
use crate::batch::{BatchEnd, ItemStatus, Manifest, Question, folder, manifest, questions};
use crate::cli::{BatchArgs, GlobalArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::kernel::shutdown;
use crate::output::{absolute, eprint_line, print_json};
use crate::research::Research;
use crate::settings::RunSettings;

pub async fn run(args: BatchArgs, global: &GlobalArgs) -> CommandResult {
    let (Some(file), Some(out_dir)) = (&args.file, &args.out_dir) else {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`batch` runs FILE here with `--out-dir DIR`, or submits it with `--queue URL`"
        )));
    };
    let questions = questions::read(file).map_err(CommandError::usage)?;
    let previous = args
        .previous
        .as_deref()
        .map(|p| folder::earlier("--previous", p))
        .transpose()?;
    let (dir, _lock, manifest) = folder::open(out_dir)?;
    let run = RunSettings::resolve(global.config.as_deref(), &args.run, None)
        .map_err(CommandError::usage)?;
    let (html, fail_on) = (
        run.settings.html,
        (run.fail_on_block, run.fail_on_unanswered),
    );
    let mut batch = Research::batch(dir.clone(), manifest, run, None).await?;
    let todo = batch.to_run(&questions)?;
    tracing::info!(
        "batch of {} question(s): {} to run, {} already done",
        questions.len(),
        todo.len(),
        questions.len() - todo.len()
    );
    let jobs = usize::try_from(args.jobs).unwrap_or(1);
    let end = batch.run_all(todo, jobs, shutdown::on_signal()).await?;
    if let Some(previous) = &previous {
        write_changes(&questions, &dir, previous, &batch.manifest);
    }
    if html {
        write_index(&questions, &dir, previous.as_deref(), &batch.manifest);
    }
    finish(&batch.manifest, &dir, &questions, &end, fail_on)
}

/// Prints the counts and the manifest path, and maps them to the exit code: 130 when
/// interrupted, 2 when an endpoint could not be used, 1 when a question ended degraded or
/// failed (or, with `--fail-on-block`, its review's verdict is `block`; with
/// `--fail-on-unanswered`, its report answers nothing), else 0 (completed and partial are both
/// what was asked).
fn finish(
    manifest: &Manifest,
    dir: &Path,
    questions: &[Question],
    end: &BatchEnd,
    (fail_on_block, fail_on_unanswered): (bool, bool),
) -> CommandResult {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let (mut blocked, mut unanswered) = (0, 0);
    let mut bad = false;
    for item in questions.iter().filter_map(|q| manifest.item(&q.id)) {
        *counts.entry(item.status.as_str()).or_default() += 1;
        blocked += usize::from(item.is_blocked());
        unanswered += usize::from(item.is_unanswered());
        bad |= !ItemStatus::is_done(item.status);
    }
    let path = absolute(&manifest::path_in(dir));
    print_json(&json!({
        "manifest": path,
        "questions": questions.len(),
        "counts": counts,
        "not_answered": unanswered,
        "blocked": blocked,
    }))
    .map_err(|e| e.noting(&format!("the batch's manifest is saved in `{path}`")))?;
    if end.interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = &end.unusable {
        return Err(CommandError::usage(anyhow::anyhow!(
            "the batch stopped: {why}; rerun the same command once it is fixed"
        )));
    }
    if fail_on_block && blocked > 0 {
        eprint_line(&format!(
            "error: the review's verdict on {blocked} question(s) is `block`: see their `.review.md` notes"
        ));
    }
    if unanswered > 0 {
        let (level, flag) = match fail_on_unanswered {
            true => ("error", " (`--fail-on-unanswered`)"),
            false => ("note", ""),
        };
        eprint_line(&format!(
            "{level}: {unanswered} question(s) not answered: their reports say their sources do not answer{flag}"
        ));
    }
    let failed = bad || (fail_on_block && blocked > 0) || (fail_on_unanswered && unanswered > 0);
    Ok(if failed {
        ExitStatus::Failure
    } else {
        ExitStatus::Success
    })
}
