//! The watch folder's `index.html` ([`crate::view::history`]), from the records of the runs
//! it keeps: every question of the questions file, its status and changes run by run. An
//! index that cannot be written is a warning, never a failed run; so is an `index.html` that
//! is not a page researchflow wrote (the user's own), which is left as it is.

use std::path::{Path, PathBuf};

use super::digest::digest_file_name;
use super::record::Record;
use super::runs::Runs;
use crate::batch::Question;
use crate::plan::beside::changes_file_name;
use crate::view::history::{HistoryCell, QuestionHistory, history_page};

/// The index's file name in the watch folder.
pub const INDEX_FILE: &str = "index.html";

/// Writes `DIR/index.html`; its path, or `None` (warned) when it could not be written.
pub fn write_history(runs: &Runs, questions: &[Question]) -> Option<PathBuf> {
    let mut names = runs.names().unwrap_or_default();
    names.reverse();
    let records: Vec<Option<Record>> = names.iter().map(|n| Record::read(&runs.path(n))).collect();
    let rows: Vec<QuestionHistory> = questions
        .iter()
        .map(|q| QuestionHistory {
            name: q.name.clone(),
            query: q.query.clone(),
            cells: names
                .iter()
                .zip(&records)
                .map(|(run, record)| cell(runs.dir(), run, record.as_ref()?, q))
                .collect(),
        })
        .collect();
    let dir_name = runs
        .dir()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let path = runs.dir().join(INDEX_FILE);
    if std::fs::symlink_metadata(&path).is_ok() && !crate::view::page::is_ours_at(&path) {
        tracing::warn!(
            "`{}` is not a page researchflow wrote, so it is left as it is and the history is not drawn: move it away to have the history there",
            path.display()
        );
        return None;
    }
    let page = history_page(&dir_name, &names, &rows);
    match crate::atomic::write(&path, page.as_bytes()) {
        Ok(()) => Some(path),
        Err(e) => {
            tracing::warn!("cannot write the watch index `{}`: {e}", path.display());
            None
        }
    }
}

fn cell(dir: &Path, run: &str, record: &Record, q: &Question) -> Option<HistoryCell> {
    let r = record.questions.iter().find(|r| r.id == q.id)?;
    let beside = |file: String| {
        dir.join(run)
            .join(&file)
            .is_file()
            .then(|| format!("{run}/{file}"))
    };
    Some(HistoryCell {
        status: r.status.clone(),
        changes: r.compared_with.as_ref().map(|_| r.changes.values().sum()),
        worth_telling: r.worth_telling,
        changes_file: beside(changes_file_name(&q.name))
            .or_else(|| beside(digest_file_name(&q.name))),
        report: beside(format!("{}.report.md", q.name)),
    })
}
