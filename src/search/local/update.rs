//! One incremental update of the index: compares the files the walk found with the manifest,
//! reads only the files that are new or whose size or modification time changed, takes out the
//! documents of files that are gone, and commits once.
//!
//! Every file is deleted by its path term before it is added, so an update that is repeated
//! after a crash (the manifest is saved after the commit) never duplicates a document. An
//! update that took documents out merges the index into one segment: tantivy counts a deleted
//! document in BM25's statistics until its segment is merged, so scores would otherwise depend
//! on the index's history, not only on the corpus. This module does not lock, walk or save the
//! manifest: [`super::index`] does, around it.

use std::collections::HashSet;
use std::path::Path;

use tantivy::indexer::NoMergePolicy;
use tantivy::{Index, IndexWriter, TantivyDocument, Term};

use super::LocalSearchError;
use super::extract::{Extraction, Reading, type_label};
use super::manifest::{FileEntry, IndexManifest};
use super::report::{IndexReport, IndexStep};
use super::schema::Fields;
use super::walk::Found;

/// The memory budget of one indexing thread; tantivy flushes a segment when it is used up.
const BUDGET_PER_THREAD: usize = 64 * 1024 * 1024;
/// From this many files to read on, index with two threads (the target machine has two cores).
const FILES_FOR_TWO_THREADS: usize = 2_000;

/// The result of an update: the manifest to save and the counts (all but `documents`).
#[derive(Debug)]
pub struct Update {
    pub manifest: IndexManifest,
    pub report: IndexReport,
    /// Whether the manifest differs from the one loaded (it must be saved).
    pub changed: bool,
}

/// Brings `index` (whose folder is `dir`, for messages) in line with the `found` files, each
/// read as `reading` says.
pub fn run(
    index: &Index,
    fields: &Fields,
    dir: &Path,
    reading: &Reading,
    old: IndexManifest,
    found: Vec<Found>,
) -> Result<Update, LocalSearchError> {
    let Plan {
        mut manifest,
        mut report,
        to_read,
        gone,
    } = plan(&old, found);
    let changed = !to_read.is_empty() || old.files.len() != manifest.files.len();
    if to_read.is_empty() && gone.is_empty() {
        return Ok(Update {
            manifest,
            report,
            changed,
        });
    }
    let threads = if to_read.len() >= FILES_FOR_TWO_THREADS {
        2
    } else {
        1
    };
    // A file read again was indexed before: its old document goes.
    let deletes = !gone.is_empty()
        || to_read
            .iter()
            .any(|f| old.files.get(&f.path).is_some_and(|e| e.indexed));
    let failed = |e| LocalSearchError::index(dir, e);
    let mut writer: IndexWriter<TantivyDocument> = index
        .writer_with_num_threads(threads, threads * BUDGET_PER_THREAD)
        .map_err(failed)?;
    for path in gone {
        writer.delete_term(Term::from_field_text(fields.path, &path));
        report.removed += 1;
    }
    let total = to_read.len();
    for (done, file) in to_read.into_iter().enumerate() {
        reading.steps.tell(IndexStep::Read { done, total });
        let was_indexed = old.files.get(&file.path).is_some_and(|e| e.indexed);
        writer.delete_term(Term::from_field_text(fields.path, &file.path));
        report.read += 1;
        let entry = match reading.extract(Path::new(&file.path), file.kind) {
            Extraction::Indexed(doc) => {
                writer
                    .add_document(fields.document(&file.path, &doc.title, &doc.text))
                    .map_err(failed)?;
                *(if was_indexed {
                    &mut report.updated
                } else {
                    &mut report.added
                }) += 1;
                entry(&file, true, doc.warnings)
            }
            Extraction::Skipped(warning) => entry(&file, false, vec![warning]),
            Extraction::Ignored => entry(&file, false, Vec::new()),
            Extraction::Unreadable(warning) => {
                // Not remembered, so the next open tries again.
                report.removed += usize::from(was_indexed);
                report.warnings.push(warning);
                *report
                    .skipped
                    .entry(type_label(Path::new(&file.path)))
                    .or_default() += 1;
                continue;
            }
        };
        report.removed += usize::from(was_indexed && !entry.indexed);
        report.warnings.extend(entry.warnings.iter().cloned());
        manifest.files.insert(file.path, entry);
    }
    reading.steps.tell(IndexStep::Read { done: total, total });
    writer.commit().map_err(failed)?;
    writer.wait_merging_threads().map_err(failed)?;
    if deletes {
        merge_all(index).map_err(failed)?;
    }
    Ok(Update {
        manifest,
        report,
        changed,
    })
}

/// Merges every segment into one, which leaves the deleted documents out.
fn merge_all(index: &Index) -> tantivy::Result<()> {
    let segments = index.searchable_segment_ids()?;
    if segments.is_empty() {
        return Ok(());
    }
    let mut writer: IndexWriter<TantivyDocument> =
        index.writer_with_num_threads(1, BUDGET_PER_THREAD)?;
    writer.set_merge_policy(Box::new(NoMergePolicy));
    writer.merge(&segments).wait()?;
    writer.wait_merging_threads()
}

/// What an update has to do.
struct Plan {
    /// The entries of unchanged files, carried over.
    manifest: IndexManifest,
    /// `unchanged` and the warnings of unchanged files.
    report: IndexReport,
    /// New and changed files.
    to_read: Vec<Found>,
    /// Indexed files that are gone.
    gone: Vec<String>,
}

/// Sorts the `found` files against the `old` manifest by size and modification time.
fn plan(old: &IndexManifest, found: Vec<Found>) -> Plan {
    let mut manifest = IndexManifest::new(&old.corpus);
    let mut report = IndexReport::default();
    let mut to_read = Vec::new();
    for file in found {
        match old.files.get(&file.path) {
            Some(e) if e.size == file.size && e.mtime_ns == file.mtime_ns => {
                report.unchanged += usize::from(e.indexed);
                report.warnings.extend(e.warnings.iter().cloned());
                manifest.files.insert(file.path, e.clone());
            }
            _ => to_read.push(file),
        }
    }
    let present: HashSet<&String> = to_read.iter().map(|f| &f.path).collect();
    let gone = old
        .files
        .iter()
        .filter(|(p, e)| e.indexed && !present.contains(p) && !manifest.files.contains_key(*p))
        .map(|(p, _)| p.clone())
        .collect();
    Plan {
        manifest,
        report,
        to_read,
        gone,
    }
}

fn entry(file: &Found, indexed: bool, warnings: Vec<String>) -> FileEntry {
    FileEntry {
        size: file.size,
        mtime_ns: file.mtime_ns,
        indexed,
        warnings,
    }
}
