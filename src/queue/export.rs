//! `batch export`: what a local batch writes, for every question of a batch in the queue that
//! has ended: its plan `<name>.json`, the files beside it (report, events, transcript,
//! reviews), and the manifest `batch.json` with each one's status, files and totals, and the
//! queue batch it came from. Pending and running questions are left out: a local batch run on
//! the folder would run them.
//!
//! A folder that already holds a `batch.json` is replaced only when it is an export of the
//! same batch (a local batch's manifest, or another batch's, is someone's work), and one whose
//! `index.html` is not a page researchflow wrote not at all.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::claim::{Files, load};
use super::db::{Db, QueueError};
use super::status;
use crate::batch::{Item, Manifest, manifest};

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// Questions written (those that ended).
    pub ended: usize,
    /// Questions not ended yet, left out.
    pub left_out: usize,
    pub manifest: PathBuf,
    /// What it holds: an item per question written.
    pub written: Manifest,
    /// Questions written, per status, as a local batch counts them.
    pub counts: BTreeMap<&'static str, usize>,
}

type Row = (
    String,
    String,
    String,
    String,
    Option<serde_json::Value>,
    Option<String>,
    Option<serde_json::Value>,
);

/// Writes batch `batch`'s ended questions into `dir` (absolute), with the manifest.
pub async fn export(db: &Db, batch: &str, dir: &Path) -> Result<Exported, QueueError> {
    let io = |what: &str, e: &dyn std::fmt::Display| {
        QueueError::Setup(format!("cannot write {what} in `{}`: {e}", dir.display()))
    };
    let _lock = manifest::lock(dir).map_err(|e| io("the manifest", &e))?;
    check_folder(dir, batch)?;
    status::read(db, batch).await?;
    let rows: Vec<Row> = db
        .retrying("reading the batch's questions", || {
            sqlx::query_as(
                "SELECT id, name, query, status, totals, reason, review
                 FROM researchflow.questions WHERE batch = $1 ORDER BY seq",
            )
            .bind(batch)
            .fetch_all(&db.pool)
        })
        .await?;
    let mut manifest = Manifest {
        queue_batch: Some(batch.to_string()),
        ..Manifest::default()
    };
    let mut left_out = 0;
    for (id, name, query, status_text, totals, reason, review) in rows {
        let status = status::parse(&status_text);
        if !status::is_ended(status) {
            left_out += 1;
            continue;
        }
        let files: Files = load(db, batch, &id).await?;
        let plan = dir.join(format!("{name}.json"));
        super::local::write_all(&plan, &files, crate::atomic::write)
            .map_err(|e| io(&format!("question `{id}`'s files"), &e))?;
        let report = super::local::beside(&plan)
            .into_iter()
            .find(|(s, path)| s == "report.md" && path.exists())
            .map(|(_, path)| path.display().to_string());
        manifest.put(Item {
            id,
            query,
            status,
            plan_file: plan.display().to_string(),
            report,
            totals: totals.and_then(|t| serde_json::from_value(t).ok()),
            reason,
            review: review.and_then(|r| serde_json::from_value(r).ok()),
            answered: crate::plan::store::read(&plan)
                .ok()
                .and_then(|p| p.outcome)
                .and_then(|o| o.answered),
        });
    }
    manifest.save(dir).map_err(|e| io("the manifest", &e))?;
    let mut counts = BTreeMap::new();
    for item in &manifest.items {
        *counts.entry(item.status.as_str()).or_default() += 1;
    }
    Ok(Exported {
        counts,
        ended: manifest.items.len(),
        left_out,
        manifest: manifest::path_in(dir),
        written: manifest,
    })
}

/// Refuses `dir` when it holds a manifest that is not an export of `batch`, or an
/// `index.html` researchflow did not write; the caller holds the folder's lock.
fn check_folder(dir: &Path, batch: &str) -> Result<(), QueueError> {
    let shown = dir.display();
    if manifest::path_in(dir).exists() {
        let found = Manifest::load(dir).map_err(|e| QueueError::Setup(e.to_string()))?;
        if found.queue_batch.as_deref() != Some(batch) {
            let what = match &found.queue_batch {
                Some(other) => format!("an export of batch `{other}`"),
                None => "a local batch's folder".to_string(),
            };
            return Err(QueueError::Setup(format!(
                "`{shown}` is {what}, and exporting batch `{batch}` there would replace its \
                 `batch.json`: choose another `--out-dir`"
            )));
        }
    }
    let index = dir.join("index.html");
    if std::fs::symlink_metadata(&index).is_ok() && !crate::view::page::is_ours_at(&index) {
        return Err(QueueError::Setup(format!(
            "`{}` is not a page researchflow wrote, and the export would replace it: choose \
             another `--out-dir`",
            index.display()
        )));
    }
    Ok(())
}
