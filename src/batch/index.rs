//! A batch's `DIR/index.html` (unless `--no-html`): every question of the questions file as one
//! row, from its manifest item and its plan (the sources it found), with what changed since
//! `--previous` (the counts of `researchflow diff`) and links to its view and changes file.
//! Drawn by [`crate::view::index_page`]. A plan that cannot be read leaves its cells empty; an
//! index that cannot be written is a warning, never a failed batch.

use std::collections::HashSet;
use std::path::Path;

use super::{Manifest, Question};
use crate::agents::leading::{leading_statement, uncited_opening};
use crate::plan::beside::changes_file_name;
use crate::plan::{Beside, PlanFile};
use crate::view::{ChangeCounts, IndexRow, index_page};

/// The index's file name in the batch folder.
pub const INDEX_FILE: &str = "index.html";

/// Writes `dir/index.html` over `questions`; returns its path, or `None` (warned) when it
/// could not be written.
pub fn write_index(
    questions: &[Question],
    dir: &Path,
    previous: Option<&Path>,
    manifest: &Manifest,
) -> Option<std::path::PathBuf> {
    let rows: Vec<IndexRow> = questions
        .iter()
        .map(|q| row(q, dir, previous, manifest))
        .collect();
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let shown = previous.map(|p| p.display().to_string());
    let page = index_page(&name, &rows, shown.as_deref());
    let path = dir.join(INDEX_FILE);
    match crate::atomic::write(&path, page.as_bytes()) {
        Ok(()) => Some(path),
        Err(e) => {
            tracing::warn!("cannot write the batch index `{}`: {e}", path.display());
            None
        }
    }
}

fn row(q: &Question, dir: &Path, previous: Option<&Path>, manifest: &Manifest) -> IndexRow {
    let item = manifest.item(&q.id);
    let plan_path = dir.join(format!("{}.json", q.name));
    let plan = read(&plan_path);
    let old_path = previous.map(|p| p.join(format!("{}.json", q.name)));
    let changes = match (&old_path, &plan) {
        (Some(old), Some(new)) if item.is_some_and(|i| i.is_done()) => {
            read(old).map(|old| counts(&old, new))
        }
        _ => None,
    };
    // The report's leading statement, and whether its opening cites none of the sources.
    let answer = plan
        .as_ref()
        .and_then(PlanFile::final_node)
        .filter(|n| !n.summary.is_empty())
        .map(|n| {
            let statement = leading_statement(&n.summary);
            let uncited = uncited_opening(&statement, &q.query, &n.sources, &n.claims).is_some();
            (statement, uncited)
        });
    IndexRow {
        name: q.name.clone(),
        query: q.query.clone(),
        status: item.map_or("pending", |i| i.status.as_str()).to_string(),
        tokens: item.and_then(|i| i.totals.as_ref().map(|t| t.tokens.total_tokens)),
        seconds: item.and_then(|i| i.totals.as_ref().map(|t| t.seconds)),
        sources: plan.as_ref().map(|p| {
            p.nodes
                .iter()
                .flat_map(|n| n.sources.iter().map(|s| s.url.as_str()))
                .collect::<HashSet<_>>()
                .len()
        }),
        verdict: item
            .and_then(|i| i.review.as_ref())
            .and_then(|r| r.verdict)
            .map(|v| v.as_str().to_string()),
        reason: item.and_then(|i| i.reason.clone()),
        answered: item.and_then(|i| i.answered),
        answer_cites_nothing: answer.as_ref().is_some_and(|(_, uncited)| *uncited),
        answer: answer.map(|(statement, _)| statement),
        changes,
        in_previous: old_path.is_some_and(|p| p.is_file()),
        has_view: Beside::of(&plan_path).html.is_file(),
        has_changes_file: dir.join(changes_file_name(&q.name)).is_file(),
    }
}

/// The plan at `path`, when it can be read.
fn read(path: &Path) -> Option<PlanFile> {
    crate::view::run_files::read_plan(path).ok()
}

fn counts(old: &PlanFile, new: &PlanFile) -> ChangeCounts {
    let d = crate::compare::diff(old, new);
    ChangeCounts {
        sources_new: d.sources_new.len(),
        sources_gone: d.sources_gone.len(),
        changed: d.changed.len(),
        nodes_new: d.nodes_new.len(),
        nodes_gone: d.nodes_gone.len(),
    }
}
