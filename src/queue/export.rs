//! `batch export`: what a local batch writes, for every question of a batch in the queue that
//! has ended: its plan `<name>.json`, the files beside it (report, events, transcript,
//! reviews), and the manifest `batch.json` with each one's status, files and totals. Pending
//! and running questions are left out: a local batch run on the folder would run them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::claim::Files;
use super::db::{Db, QueueError};
use super::mirror::load;
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
    let io = |what: &str, e: &dyn std::fmt::Display| {
        QueueError::Setup(format!("cannot write {what} in `{}`: {e}", dir.display()))
    };
    let _lock = manifest::lock(dir).map_err(|e| io("the manifest", &e))?;
    let mut manifest = Manifest::default();
    let mut left_out = 0;
    for (id, name, query, status_text, totals, reason, review) in rows {
        let status = status::parse(&status_text);
        if !status::is_ended(status) {
            left_out += 1;
            continue;
        }
        let files: Files = load(db, batch, &id).await?;
        let plan = dir.join(format!("{name}.json"));
        super::local::write_all(&plan, &files)
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
