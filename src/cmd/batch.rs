//! `researchflow batch FILE --out-dir DIR`: one workflow per question (with `--engine thinkon`,
//! one Thinkon goal per question), up to `--jobs` at once
//! in one process, sharing the process's services (one HTTP pool, one structured-output
//! negotiation, one rate budget per endpoint). The run itself is `crate::batch`'s; this file
//! resolves what it needs, then prints the counts (JSON, or a short summary on a terminal) and
//! maps them to the exit code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::batch::changes::{seed_pages, write_changes, write_page_changes};
use crate::batch::index::write_index;
use crate::batch::summary::{counts, reports_in, summary};
use crate::batch::{BatchEnd, Manifest, Question, folder, manifest, questions};
use crate::cli::{BatchArgs, BatchEngine, GlobalArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, eprint_line, print_json, print_text, stdout_is_terminal};
use crate::session::batch::run_batch;
use crate::session::{self, Session};

pub async fn run(args: BatchArgs, global: &GlobalArgs) -> CommandResult {
    let (Some(file), Some(out_dir)) = (&args.file, &args.out_dir) else {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`batch` runs FILE here with `--out-dir DIR`, or submits it with `--queue URL`"
        )));
    };
    if args.engine == BatchEngine::Thinkon && args.previous.is_some() {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`--previous` compares plan files, and `--engine thinkon` writes none: leave one out"
        )));
    }
    let questions = questions::read(file).map_err(CommandError::usage)?;
    let previous = args
        .previous
        .as_deref()
        .map(|p| folder::earlier("--previous", p))
        .transpose()?;
    let (dir, _lock, manifest) = folder::open(out_dir)?;
    let run = session::run_settings(global.config.as_deref(), &args.run, None)?;
    let (html, fail_on) = (
        run.settings.html,
        (run.fail_on_block, run.fail_on_unanswered),
    );
    if args.engine == BatchEngine::Thinkon {
        run.settings.require_llm().map_err(CommandError::usage)?;
    }
    let session = Session::open(run.settings, None).await?;
    let since = previous.as_deref().map(|p| seed_pages(&dir, p));
    let jobs = usize::try_from(args.jobs).unwrap_or(1);
    let options = run.options;
    let (manifest, end) = run_batch(
        args.engine,
        (&dir, manifest),
        options,
        session,
        &questions,
        jobs,
    )
    .await?;
    if let (Some(previous), Some(since)) = (&previous, &since) {
        write_changes(&questions, &dir, previous, &manifest);
        write_page_changes(&dir, previous, since);
    }
    let index = match html {
        true => write_index(&questions, &dir, previous.as_deref(), &manifest),
        false => None,
    };
    let shown = Shown {
        json: args.json || !stdout_is_terminal(),
        index,
        reports: match args.engine {
            BatchEngine::Workflow => reports_in(&dir),
            BatchEngine::Thinkon => format!("{}/<name>.thinkon/result.md", absolute(&dir)),
        },
    };
    finish(&manifest, &dir, &questions, &end, fail_on, shown)
}

/// How the end is printed.
struct Shown {
    /// JSON (for a pipe, or `--json`); else a short summary for a person.
    json: bool,
    /// The batch's `index.html`, when it was written.
    index: Option<PathBuf>,
    /// Where its reports are, `<name>` standing for each question's.
    reports: String,
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
    shown: Shown,
) -> CommandResult {
    let counted = counts(manifest, questions);
    let items = || questions.iter().filter_map(|q| manifest.item(&q.id));
    let blocked = items().filter(|item| item.is_blocked()).count();
    let unanswered = items().filter(|item| item.is_unanswered()).count();
    let bad = counted.keys().any(|status| !status.is_done());
    let path = absolute(&manifest::path_in(dir));
    let printed = if shown.json {
        let counts: BTreeMap<&str, usize> = counted.iter().map(|(s, n)| (s.as_str(), *n)).collect();
        print_json(&json!({
            "manifest": path,
            "questions": questions.len(),
            "counts": counts,
            "not_answered": unanswered,
            "blocked": blocked,
        }))
    } else {
        let mut files = vec![
            ("reports", shown.reports.clone()),
            ("manifest", path.clone()),
        ];
        if let Some(index) = &shown.index {
            files.push(("index", absolute(index)));
        }
        print_text(&summary(manifest, questions, end.took, &files))
    };
    printed.map_err(|e| e.noting(&format!("the batch's manifest is saved in `{path}`")))?;
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
