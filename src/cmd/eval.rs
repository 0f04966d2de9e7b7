//! `researchflow eval SET.jsonl`: every question of a set with gold answers run as a batch
//! would (`crate::batch`, each through `crate::session`), then each report scored against
//! its gold (`crate::eval`): the table printed (on a terminal with a short summary of the
//! batch below it), `eval.json` written in the out-dir. With
//! `--replay DIR` every call is answered from that earlier evaluation's transcripts; with
//! `--previous OLD_DIR` each question is compared with the same id there. A set whose evidence
//! names no document of the local corpus is warned of before anything runs.

use std::path::{Path, PathBuf};

use crate::batch::questions::{QuestionLine, questions};
use crate::batch::summary::{reports_in, summary};
use crate::batch::{Batch, BatchEnd, Item, Manifest, Question, folder, manifest};
use crate::cli::{EvalArgs, GlobalArgs};
use crate::eval::evidence::unnamed_evidence;
use crate::eval::{EvalTotals, Evaluation, FILE_NAME, Gold, Ran, Score, compare, markdown};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, eprint_line, print_json, print_text, stdout_is_terminal};
use crate::run::shutdown;
use crate::session::{self, Session};
use crate::settings::SearchProviderKind;

mod written;

/// The largest report read for scoring.
const REPORT_MAX_BYTES: u64 = 16 * 1024 * 1024;

pub async fn run(args: EvalArgs, global: &GlobalArgs) -> CommandResult {
    let set = crate::eval::set::read(&args.set).map_err(CommandError::usage)?;
    let questions = questions_of(&args.set, &set)?;
    let previous = previous_of(&args)?;
    if let Some(reports) = &args.reports {
        return written::run(&args, &set, reports, previous);
    }
    let replay = args
        .replay
        .as_deref()
        .map(|p| folder::earlier("--replay", p))
        .transpose()?;
    let out_dir = args
        .out_dir
        .clone()
        .unwrap_or_else(|| default_out_dir(&args.set));
    let (dir, _lock, manifest) = folder::open(&out_dir)?;
    if replay.as_ref() == Some(&dir) {
        return Err(CommandError::usage(anyhow::anyhow!(
            "`--replay` names the out-dir `{}` itself: a replay records new transcripts, so give it another `--out-dir`",
            dir.display()
        )));
    }
    let run = session::run_settings(global.config.as_deref(), &args.run, None)?;
    let search = &run.settings.search;
    let web = search
        .providers
        .iter()
        .any(|p| !matches!(p, SearchProviderKind::Local | SearchProviderKind::None));
    let warnings: Vec<String> = search
        .corpus
        .as_deref()
        .and_then(|corpus| unnamed_evidence(&args.set.display().to_string(), &set, corpus, web))
        .into_iter()
        .collect();
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    let session = Session::open(run.settings, None).await?;
    let mut batch = Batch::new(dir.clone(), manifest, run.options, session, replay);
    let todo = batch.to_run(&questions)?;
    let jobs = usize::try_from(args.jobs).unwrap_or(1);
    let end = batch.run_all(todo, jobs, shutdown::on_signal()).await?;

    let scores: Vec<Score> = set
        .iter()
        .zip(&questions)
        .map(|(gold, q)| scored(gold, batch.manifest.item(&q.id)))
        .collect();
    let evaluation = evaluation_of(&args, scores, previous, warnings);
    let (path, saved) = save(&evaluation, &dir)?;
    if args.json {
        print_json(&evaluation).map_err(|e| e.noting(&saved))?;
    } else if stdout_is_terminal() {
        let files = [
            ("evaluation", absolute(&path)),
            ("reports", reports_in(&dir)),
            ("manifest", absolute(&manifest::path_in(&dir))),
        ];
        let text = format!(
            "{}\n{}",
            markdown(&evaluation),
            summary(&batch.manifest, &questions, end.took, &files)
        );
        print_text(&text).map_err(|e| e.noting(&saved))?;
    } else {
        print_text(&markdown(&evaluation)).map_err(|e| e.noting(&saved))?;
        eprint_line(&format!("{saved}; the runs are in `{}`", dir.display()));
    }
    exit(&evaluation, &end, &batch.manifest)
}

/// The evaluation of `scores` on `args.set`, compared with `previous` (its folder, its
/// evaluation) when given.
fn evaluation_of(
    args: &EvalArgs,
    scores: Vec<Score>,
    previous: Option<(PathBuf, Evaluation)>,
    warnings: Vec<String>,
) -> Evaluation {
    Evaluation {
        set: absolute(&args.set),
        totals: EvalTotals::of(&scores),
        changes: previous
            .as_ref()
            .map_or_else(Vec::new, |(_, before)| compare(before, &scores)),
        previous: previous.map(|(dir, _)| dir.display().to_string()),
        questions: scores,
        warnings,
    }
}

/// Writes `evaluation` as `eval.json` in `dir`; gives its path and the note saying where it is.
fn save(evaluation: &Evaluation, dir: &Path) -> Result<(PathBuf, String), CommandError> {
    let path = dir.join(FILE_NAME);
    let json = serde_json::to_string_pretty(evaluation).map_err(CommandError::failure)?;
    crate::atomic::write(&path, format!("{json}\n").as_bytes()).map_err(|e| {
        CommandError::failure(anyhow::anyhow!("cannot write `{}`: {e}", path.display()))
    })?;
    let saved = format!("the evaluation is saved in `{}`", absolute(&path));
    Ok((path, saved))
}

/// The evaluation `--previous` names, read, with its folder.
fn previous_of(args: &EvalArgs) -> Result<Option<(PathBuf, Evaluation)>, CommandError> {
    let Some(path) = &args.previous else {
        return Ok(None);
    };
    let dir = folder::earlier("--previous", path)?;
    let before = crate::eval::read_previous(&dir)
        .map_err(|e| CommandError::usage(anyhow::anyhow!("`--previous`: {e}")))?;
    Ok(Some((dir, before)))
}

/// The set's questions as a batch's, each named after its id.
fn questions_of(path: &Path, set: &[Gold]) -> Result<Vec<Question>, CommandError> {
    let entries = set
        .iter()
        .map(|gold| QuestionLine {
            line: gold.line,
            id: Some(gold.id.clone()),
            query: gold.question.clone(),
        })
        .collect();
    questions(&path.display().to_string(), entries).map_err(CommandError::usage)
}

/// `runs/eval-<set>-<UTC time>`: a fresh folder for each evaluation, so that one is never
/// mistaken for another (a rerun with the same `--out-dir` resumes instead).
fn default_out_dir(set: &Path) -> PathBuf {
    let stem = set
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem: String = stem
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(40)
        .collect();
    let time: String = crate::clock::now()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    PathBuf::from(format!("runs/eval-{stem}-{time}"))
}

/// One question scored from its manifest item's plan and report.
fn scored(gold: &Gold, item: Option<&Item>) -> Score {
    let Some(item) = item else {
        return crate::eval::score(gold, None);
    };
    let plan = crate::plan::store::read(Path::new(&item.plan_file)).ok();
    let report = item
        .report
        .as_deref()
        .and_then(|p| crate::files::read_bounded(Path::new(p), REPORT_MAX_BYTES).ok());
    let (tokens, seconds) = item
        .totals
        .as_ref()
        .map_or((0, 0.0), |t| (t.tokens.total_tokens, t.seconds));
    crate::eval::score(
        gold,
        Some(Ran {
            status: item.status.as_str(),
            wrote: plan.as_ref().zip(report.as_deref()),
            tokens,
            seconds,
        }),
    )
}

/// 130 when interrupted, 2 when an endpoint could not be used, 1 when a question's run left
/// no report to score, else 0: the scores, good or bad, are the result.
fn exit(evaluation: &Evaluation, end: &BatchEnd, manifest: &Manifest) -> CommandResult {
    if end.interrupted {
        return Ok(ExitStatus::Interrupted);
    }
    if let Some(why) = &end.unusable {
        return Err(CommandError::usage(anyhow::anyhow!(
            "the evaluation stopped: {why}; rerun the same command with the same `--out-dir` once it is fixed"
        )));
    }
    let unscored: Vec<&Score> = evaluation
        .questions
        .iter()
        .filter(|s| !s.reported)
        .collect();
    if unscored.is_empty() {
        return Ok(ExitStatus::Success);
    }
    for s in &unscored {
        let why = manifest
            .item(&s.id)
            .and_then(|i| i.reason.clone())
            .unwrap_or_else(|| "no report was written".into());
        eprint_line(&format!("error: question `{}` ({}): {why}", s.id, s.status));
    }
    Ok(ExitStatus::Failure)
}
