//! `batch --previous OLD_DIR`: for every question that ended done here and was answered in
//! OLD_DIR too, `DIR/<name>.changes.md`, the digest of `researchflow diff`; and for the pages
//! read, `DIR/pages.changes.md`: the batch starts from OLD_DIR's kept pages (`pages/`), so it
//! asks each server only whether a page changed, and says which did.

use std::path::Path;

use super::{Item, Manifest, Question};
use crate::read::cache::{PageCache, PageChanges};

/// The file that lists the pages that changed since the earlier batch.
pub const PAGE_CHANGES_FILE: &str = "pages.changes.md";

/// Copies the earlier batch's kept pages into this one's; the time the batch starts reading,
/// for [`write_page_changes`].
pub fn seed_pages(dir: &Path, previous: &Path) -> String {
    let since = crate::clock::now_millis();
    let copied = pages(dir).seed_from(&pages(previous));
    if copied > 0 {
        tracing::info!(
            "{copied} page(s) kept by `{}`: each is read again only if it changed",
            previous.display()
        );
    }
    since
}

/// Writes `DIR/pages.changes.md`: the pages read since `since` whose text changed from the
/// earlier batch's, those it did not have, and how many are the same. Nothing when neither
/// batch read a page.
pub fn write_page_changes(dir: &Path, previous: &Path, since: &str) -> Option<PageChanges> {
    let (here, earlier) = (pages(dir), pages(previous));
    if !here.dir().is_dir() && !earlier.dir().is_dir() {
        return None;
    }
    let changes = here.changes_since(&earlier, since);
    tracing::info!(
        "pages read: {} changed, {} new, {} unchanged since `{}`",
        changes.changed.len(),
        changes.new.len(),
        changes.unchanged,
        previous.display()
    );
    let path = dir.join(PAGE_CHANGES_FILE);
    if let Err(e) = crate::atomic::write(&path, page_changes_text(&changes, previous).as_bytes()) {
        tracing::warn!("cannot write `{}`: {e}", path.display());
    }
    Some(changes)
}

/// The kept pages of the batch in `dir`.
fn pages(dir: &Path) -> PageCache {
    PageCache::new(dir.join("pages"))
}

/// The page changes as Markdown, each URL in code (a URL is the search's text, not ours).
fn page_changes_text(changes: &PageChanges, previous: &Path) -> String {
    let shown = previous.display().to_string().replace('`', "'");
    let mut text = format!(
        "# Pages read since `{shown}`\n\n{} changed, {} new, {} unchanged.\n",
        changes.changed.len(),
        changes.new.len(),
        changes.unchanged
    );
    for (title, urls) in [("Changed", &changes.changed), ("New", &changes.new)] {
        if urls.is_empty() {
            continue;
        }
        text.push_str(&format!("\n## {title}\n\n"));
        for url in urls {
            text.push_str(&format!("- `{}`\n", url.replace('`', "%60")));
        }
    }
    text
}

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
        let path = dir.join(crate::plan::beside::changes_file_name(&q.name));
        if let Err(e) = crate::atomic::write(&path, text.as_bytes()) {
            tracing::warn!("cannot write `{}`: {e}", path.display());
        }
    }
}
