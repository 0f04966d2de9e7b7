//! `batch --previous OLD_DIR`: for every question that ended done here and was answered in
//! OLD_DIR too, `DIR/<name>.changes.md`, the digest of `researchflow diff`.

use std::path::Path;

use super::{Item, Manifest, Question};

/// Writes the changes file of each question answered in both folders. A pair that cannot be
/// read is a warning, not a failure.
pub fn write_changes(questions: &[Question], dir: &Path, previous: &Path, manifest: &Manifest) {
    for q in questions {
        let done = manifest.item(&q.id).is_some_and(Item::is_done);
        let old = previous.join(format!("{}.json", q.name));
        let new = dir.join(format!("{}.json", q.name));
        if !done || !old.exists() {
            continue;
        }
        let read = |p: &Path| {
            crate::files::read_bounded(p, crate::files::DEFAULT_MAX_BYTES)
                .map_err(|e| e.to_string())
                .and_then(|t| crate::plan::store::parse_plan(p, &t).map_err(|e| e.to_string()))
        };
        let (old_plan, new_plan) = match (read(&old), read(&new)) {
            (Ok(o), Ok(n)) => (o, n),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!("no changes file for `{}`: {e}", q.name);
                continue;
            }
        };
        let diff = crate::compare::diff(&old_plan, &new_plan);
        let text = crate::compare::to_markdown(
            &diff,
            &old.display().to_string(),
            &new.display().to_string(),
        );
        let path = dir.join(crate::compare::changes_file_name(&q.name));
        if let Err(e) = crate::atomic::write(&path, text.as_bytes()) {
            tracing::warn!("cannot write `{}`: {e}", path.display());
        }
    }
}
