//! A watch run's kept pages: each run starts from those of the newest earlier finished run of
//! its watch folder, as `batch --previous` does, so every server is asked only whether a page
//! changed (`If-None-Match`, `If-Modified-Since`), and `<run>/pages.changes.md` says which did.
//! A run folder holds its own copy: pruning an old run loses no page a newer one needs.

use std::path::PathBuf;

use super::record::Record;
use super::runs::Runs;
use crate::batch::changes::{seed_pages, write_page_changes};

/// Where a run's pages came from: the earlier run's folder, and when this run started reading.
#[derive(Debug, Clone)]
pub struct Seeded {
    previous: PathBuf,
    since: String,
}

/// Copies into run `name` the pages kept by the newest other finished run (those it lacks: a
/// resumed run keeps what it read); `None` when there is no such run. Pages read since the run
/// started (its record's `started`, so a resumed run counts what it read before it stopped)
/// are the run's own.
pub fn seed(runs: &Runs, name: &str, record: &Record) -> Option<Seeded> {
    let previous = runs.finished_newest_first(name).ok()?.into_iter().next()?;
    let previous = runs.path(&previous);
    let seeded_at = seed_pages(&runs.path(name), &previous);
    let since = chrono::DateTime::parse_from_rfc3339(&record.started)
        .map(|t| {
            t.with_timezone(&chrono::Utc)
                .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        })
        .unwrap_or(seeded_at);
    Some(Seeded { previous, since })
}

/// Writes `<run>/pages.changes.md` against the run the pages came from.
pub fn write_changes(runs: &Runs, name: &str, seeded: &Seeded) {
    write_page_changes(&runs.path(name), &seeded.previous, &seeded.since);
}
