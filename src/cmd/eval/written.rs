//! `researchflow eval SET --reports DIR`: no run, the reports another system wrote (a peer
//! on the same model and inputs, `scripts/bench-peers.sh`) scored by the same rules as
//! researchflow's own ([`crate::eval::score_written`]).

use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::cli::EvalArgs;
use crate::eval::{Evaluation, Gold, Score, Written, markdown};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{eprint_line, print_json, print_text};

/// What a run recorded beside its report (`<id>.meta.json`); every field may be left out.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Meta {
    /// How the run ended (`completed`, `failed`, `timeout`).
    status: Option<String>,
    seconds: Option<f64>,
    /// Prompt and completion tokens together.
    tokens: Option<u64>,
}

pub fn run(
    args: &EvalArgs,
    set: &[Gold],
    reports: &Path,
    previous: Option<(PathBuf, Evaluation)>,
) -> CommandResult {
    let dir = folder(reports)?;
    let scores = set
        .iter()
        .map(|gold| scored(&dir, gold, args.site.as_deref()))
        .collect::<Result<Vec<Score>, CommandError>>()?;
    let evaluation = super::evaluation_of(args, scores, previous, Vec::new());
    let out = args.out_dir.clone().unwrap_or_else(|| dir.clone());
    std::fs::create_dir_all(&out).map_err(|e| {
        CommandError::usage(anyhow::anyhow!("cannot create `{}`: {e}", out.display()))
    })?;
    let (_, saved) = super::save(&evaluation, &out)?;
    match args.json {
        true => print_json(&evaluation).map_err(|e| e.noting(&saved))?,
        false => print_text(&markdown(&evaluation)).map_err(|e| e.noting(&saved))?,
    }
    let unscored: Vec<&Score> = evaluation
        .questions
        .iter()
        .filter(|s| !s.reported)
        .collect();
    for s in &unscored {
        eprint_line(&format!(
            "error: question `{}` ({}): no report `{}.md` in `{}`",
            s.id,
            s.status,
            s.id,
            dir.display()
        ));
    }
    Ok(match unscored.is_empty() {
        true => ExitStatus::Success,
        false => ExitStatus::Failure,
    })
}

/// The folder of reports, or an error that says what to give.
fn folder(path: &Path) -> Result<PathBuf, CommandError> {
    let shown = path.display();
    match std::fs::canonicalize(path) {
        Ok(dir) if dir.is_dir() => Ok(dir),
        Ok(_) => Err(CommandError::usage(anyhow::anyhow!(
            "`--reports {shown}`: not a folder: give the folder holding one `<id>.md` per question"
        ))),
        Err(e) => Err(CommandError::usage(anyhow::anyhow!(
            "`--reports {shown}`: {e}: give the folder holding one `<id>.md` per question"
        ))),
    }
}

/// `gold`'s question scored from its report in `dir` and what its run recorded.
fn scored(dir: &Path, gold: &Gold, site: Option<&str>) -> Result<Score, CommandError> {
    let meta = meta(&dir.join(format!("{}.meta.json", gold.id)))?;
    let report = [".report.md", ".md"]
        .iter()
        .map(|ext| dir.join(format!("{}{ext}", gold.id)))
        .find(|p| p.is_file())
        .map(|p| {
            crate::files::read_bounded(&p, super::REPORT_MAX_BYTES).map_err(|e| {
                CommandError::usage(anyhow::anyhow!("cannot read `{}`: {e}", p.display()))
            })
        })
        .transpose()?;
    let status = meta.status.unwrap_or_else(|| {
        match report.is_some() {
            true => "completed",
            false => "no report",
        }
        .into()
    });
    Ok(crate::eval::score_written(
        gold,
        &Written {
            status: &status,
            report: report.as_deref(),
            tokens: meta.tokens.unwrap_or(0),
            seconds: meta.seconds.unwrap_or(0.0),
            site,
        },
    ))
}

/// The run's record at `path`, empty when there is none.
fn meta(path: &Path) -> Result<Meta, CommandError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Meta::default()),
        Err(e) => {
            return Err(CommandError::usage(anyhow::anyhow!(
                "cannot read `{}`: {e}",
                path.display()
            )));
        }
    };
    serde_json::from_str(&text).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "`{}`: {e}: it holds an object with `status` (text), `seconds` and `tokens` (numbers), each optional",
            path.display()
        ))
    })
}
