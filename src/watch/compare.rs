//! Each question of a run held against the last finished run that answered it: the digest of
//! what changed ([`super::digest`]) written beside its plan as `<name>.digest.json`, and the
//! text digest of `researchflow diff` as `<name>.changes.md`. A plan that cannot be read is a
//! warning and no comparison, never a failed run.

use std::path::Path;

use serde_json::json;

use super::digest::{Change, changes, digest_file_name};
use super::runs::Runs;
use crate::batch::{Manifest, Question};
use crate::compare::{diff, to_markdown};
use crate::plan::PlanFile;
use crate::plan::beside::changes_file_name;

/// One question of a run, compared.
#[derive(Debug, Clone)]
pub struct Compared {
    pub question: Question,
    /// Its status, or `not_answered` for a report that answers nothing; `pending` when the
    /// run did not reach it.
    pub status: String,
    /// Whether it ended done (completed or partial).
    pub done: bool,
    /// The run it was compared with.
    pub compared_with: Option<String>,
    pub changes: Vec<Change>,
}

/// Compares every question of run `run` (whose manifest is `manifest`) with the newest other
/// finished run that has it done, and writes the digests.
pub fn compare_run(
    runs: &Runs,
    run: &str,
    questions: &[Question],
    manifest: &Manifest,
) -> std::io::Result<Vec<Compared>> {
    let earlier: Vec<(String, Manifest)> = runs
        .finished_newest_first(run)?
        .into_iter()
        .filter_map(|name| Some((name.clone(), Manifest::load(&runs.path(&name)).ok()?)))
        .collect();
    let dir = runs.path(run);
    let mut out = Vec::with_capacity(questions.len());
    for q in questions {
        let item = manifest.item(&q.id);
        let done = item.is_some_and(|i| i.is_done());
        let status = item.map_or("pending".to_string(), |i| {
            crate::view::html::run_state(i.status.as_str(), i.answered).to_string()
        });
        let previous = earlier
            .iter()
            .find(|(_, m)| m.item(&q.id).is_some_and(|i| i.is_done()))
            .map(|(name, _)| name.clone())
            .filter(|_| done);
        let changes = match &previous {
            Some(old_run) => compare_one(q, &runs.path(old_run), &dir, old_run, run),
            None => Vec::new(),
        };
        out.push(Compared {
            question: q.clone(),
            status,
            done,
            compared_with: previous,
            changes,
        });
    }
    Ok(out)
}

/// The changes of question `q` from the run in `old_dir` to the one in `dir`, with its
/// digest files written in `dir`.
fn compare_one(q: &Question, old_dir: &Path, dir: &Path, old_run: &str, run: &str) -> Vec<Change> {
    let plan = |d: &Path| d.join(format!("{}.json", q.name));
    let (old, new) = match (read(&plan(old_dir)), read(&plan(dir))) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(e), _) | (_, Err(e)) => {
            tracing::warn!("`{}` not compared: {e}", q.name);
            return Vec::new();
        }
    };
    let d = diff(&old, &new);
    let found = changes(&d);
    let names = (
        format!("{old_run}/{}.json", q.name),
        format!("{run}/{}.json", q.name),
    );
    let text = to_markdown(&d, &names.0, &names.1);
    write(&dir.join(changes_file_name(&q.name)), text.as_bytes());
    let digest = json!({
        "question": q.query,
        "name": q.name,
        "run": run,
        "compared_with": old_run,
        "changes": found,
    });
    let pretty = serde_json::to_string_pretty(&digest).unwrap_or_default();
    write(&dir.join(digest_file_name(&q.name)), pretty.as_bytes());
    found
}

fn read(path: &Path) -> Result<PlanFile, String> {
    crate::view::run_files::read_plan(path).map_err(|e| e.to_string())
}

fn write(path: &Path, bytes: &[u8]) {
    if let Err(e) = crate::atomic::write(path, bytes) {
        tracing::warn!("cannot write `{}`: {e}", path.display());
    }
}
