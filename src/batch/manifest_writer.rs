//! [`ManifestWriter`]: the one writer of a running batch's `batch.json` and journal, on a
//! thread of its own, so the batch's driver never waits for a disk. The driver hands it each
//! question's item as it starts and ends ([`ManifestWriter::record`], a send on a channel); the
//! writer appends it to the journal and syncs what it appended (one `fdatasync` for all the
//! lines that came in meanwhile), and rewrites `batch.json` only now and then: at most once
//! per [`Pace`], on demand ([`ManifestWriter::write_soon`], [`ManifestWriter::write_now`])
//! and when the batch ends. What it must not do: decide anything about a question; it records.
//!
//! Opening it folds a journal left by a crash into `batch.json` (written durably, then the
//! journal removed) before the first question starts. Ending it ([`ManifestWriter::finish`], or
//! dropping it) writes `batch.json` whole and removes the journal.

use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::journal::{self, Journal};
use super::manifest::Slots;
use super::{Item, Manifest, ManifestError};

/// How often `batch.json` may be rewritten while the batch runs: at most once per `min`, and
/// no faster than `bytes_per_second` on average, so that a large manifest is rewritten less
/// often and the cost of a question does not grow with the batch.
#[derive(Debug, Clone, Copy)]
pub struct Pace {
    pub min: Duration,
    pub bytes_per_second: u64,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            min: Duration::from_secs(2),
            bytes_per_second: 256 * 1024,
        }
    }
}

impl Pace {
    /// How long after writing `bytes` of `batch.json` the next write may come.
    fn after(self, bytes: usize) -> Duration {
        let rate = self.bytes_per_second.max(1) as f64;
        self.min.max(Duration::from_secs_f64(bytes as f64 / rate))
    }
}

/// What a manifest writer wrote, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Written {
    /// Lines appended to the journal.
    pub lines: usize,
    /// Times `batch.json` was written, the first (when it opened) and the last included.
    pub files: usize,
}

// Nearly every message is a `Put`: boxing its item would only add an allocation to each.
#[allow(clippy::large_enum_variant)]
enum Message {
    Put(Item),
    /// Write `batch.json` now, and say when it is done (if anyone waits).
    Write(Option<oneshot::Sender<Result<(), ManifestError>>>),
    Finish(oneshot::Sender<Result<Written, ManifestError>>),
}

/// The first error of the writer, for the driver to stop on.
type Failed = Arc<Mutex<Option<String>>>;

/// The writer of a running batch's record; see the module's documentation.
pub struct ManifestWriter {
    tell: Option<Sender<Message>>,
    thread: Option<JoinHandle<()>>,
    failed: Failed,
}

impl ManifestWriter {
    /// Opens the record of the batch in `dir` whose state is `manifest` (read with
    /// [`Manifest::load`], its journal folded in): `batch.json` written durably and the old
    /// journal removed, then a new journal opened and the writer started. Blocks for those
    /// writes, once, before any question runs.
    pub fn open(
        dir: &Path,
        manifest: Manifest,
        pace: Pace,
    ) -> Result<ManifestWriter, ManifestError> {
        manifest.save(dir)?;
        let journal = Journal::open(dir).map_err(|source| ManifestError::Write {
            path: journal::path_in(dir),
            source,
        })?;
        let failed = Failed::default();
        let writer = Writer {
            dir: dir.to_path_buf(),
            slots: Slots::of(&manifest),
            manifest,
            journal,
            pace,
            due: Instant::now() + pace.min,
            dirty: false,
            written: Written { lines: 0, files: 1 },
            failed: Arc::clone(&failed),
        };
        let (tell, told) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("batch-writer".into())
            .spawn(move || writer.run(&told))
            .map_err(|e| ManifestError::Writer(format!("cannot start its writer: {e}")))?;
        Ok(ManifestWriter {
            tell: Some(tell),
            thread: Some(thread),
            failed,
        })
    }

    /// Records `item` as its question now is. Never waits for the disk; fails once the
    /// writer has failed (the batch should stop, as it would on a manifest it cannot save).
    pub fn record(&self, item: Item) -> Result<(), ManifestError> {
        self.check()?;
        self.send(Message::Put(item))
    }

    /// Asks for `batch.json` to be written as soon as the writer gets to it; does not wait.
    pub fn write_soon(&self) -> Result<(), ManifestError> {
        self.send(Message::Write(None))
    }

    /// Writes `batch.json` now (after what was recorded before) and waits until it is.
    pub async fn write_now(&self) -> Result<(), ManifestError> {
        let (reply, replied) = oneshot::channel();
        self.send(Message::Write(Some(reply)))?;
        replied.await.map_err(|_| stopped())?
    }

    /// Ends the record: every item recorded is in `batch.json`, written durably, and the
    /// journal is removed. Returns what was written, counted.
    pub async fn finish(mut self) -> Result<Written, ManifestError> {
        let (reply, replied) = oneshot::channel();
        self.send(Message::Finish(reply))?;
        let written = replied.await.map_err(|_| stopped());
        self.tell = None;
        if let Some(thread) = self.thread.take() {
            // It has replied: it returns at once.
            let _ = thread.join();
        }
        let written = written??;
        tracing::debug!(
            "batch record: {} journal line(s), `batch.json` written {} time(s)",
            written.lines,
            written.files
        );
        Ok(written)
    }

    fn send(&self, message: Message) -> Result<(), ManifestError> {
        self.tell
            .as_ref()
            .and_then(|tell| tell.send(message).ok())
            .ok_or_else(stopped)
    }

    fn check(&self) -> Result<(), ManifestError> {
        match self.failed.lock().map(|f| f.clone()) {
            Ok(None) => Ok(()),
            Ok(Some(message)) => Err(ManifestError::Writer(message)),
            Err(_) => Err(stopped()),
        }
    }
}

impl Drop for ManifestWriter {
    /// A batch that ends without [`ManifestWriter::finish`] (an error, a panic) still leaves
    /// `batch.json` whole: the writer sees the channel close, writes it, and is waited for.
    fn drop(&mut self) {
        self.tell = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn stopped() -> ManifestError {
    ManifestError::Writer("its writer stopped on an internal error".into())
}

/// The writer's side, owned by its thread.
struct Writer {
    dir: PathBuf,
    manifest: Manifest,
    /// Where each question's item is in `manifest.items`.
    slots: Slots,
    journal: Journal,
    pace: Pace,
    /// When `batch.json` may next be written.
    due: Instant,
    /// Whether the journal holds what `batch.json` does not.
    dirty: bool,
    written: Written,
    failed: Failed,
}

impl Writer {
    fn run(mut self, told: &Receiver<Message>) {
        let mut held = None;
        loop {
            let message = match held.take().or_else(|| self.wait(told)) {
                Some(message) => message,
                // Dropped without `finish`: the record is left whole all the same.
                None => {
                    if let Err(e) = self.finish() {
                        tracing::error!("{e}");
                    }
                    return;
                }
            };
            match message {
                Message::Put(item) => self.put(item),
                Message::Write(reply) => {
                    let done = self.write();
                    match reply {
                        Some(reply) => drop(reply.send(done)),
                        None => self.fail_on(done),
                    }
                }
                Message::Finish(reply) => return drop(reply.send(self.finish())),
            }
            // Sync once nothing more is waiting: the lines that came in meanwhile share it.
            match told.try_recv() {
                Ok(next) => held = Some(next),
                Err(_) => self.settle(),
            }
        }
    }

    /// The next message; meanwhile, `batch.json` written when it is due. `None`: the channel
    /// closed.
    fn wait(&mut self, told: &Receiver<Message>) -> Option<Message> {
        loop {
            if !self.dirty {
                return told.recv().ok();
            }
            let now = Instant::now();
            if now >= self.due {
                let done = self.write();
                self.fail_on(done);
                continue;
            }
            match told.recv_timeout(self.due - now) {
                Ok(message) => return Some(message),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return None,
            }
        }
    }

    fn put(&mut self, item: Item) {
        match self.journal.append(&item) {
            Ok(()) => self.written.lines += 1,
            Err(source) => self.fail_on(Err(ManifestError::Write {
                path: self.journal.path().to_path_buf(),
                source,
            })),
        }
        self.dirty = true;
        self.slots.put(&mut self.manifest, item);
    }

    /// The journal synced; `batch.json` written if it is due.
    fn settle(&mut self) {
        let synced = self.journal.sync();
        self.fail_on(synced.map_err(|source| ManifestError::Write {
            path: self.journal.path().to_path_buf(),
            source,
        }));
        if self.dirty && Instant::now() >= self.due {
            let done = self.write();
            self.fail_on(done);
        }
    }

    /// Writes `batch.json` (the journal stays: a reader applies it over the file).
    fn write(&mut self) -> Result<(), ManifestError> {
        let bytes = self.manifest.write_file(&self.dir)?;
        self.written.files += 1;
        self.dirty = false;
        self.due = Instant::now() + self.pace.after(bytes);
        Ok(())
    }

    /// `batch.json` written whole and the journal removed.
    fn finish(mut self) -> Result<Written, ManifestError> {
        self.manifest.save(&self.dir)?;
        self.written.files += 1;
        match self.failed.lock().map(|f| f.clone()) {
            Ok(Some(message)) => Err(ManifestError::Writer(message)),
            _ => Ok(self.written),
        }
    }

    /// Keeps the first error, for the driver to stop on.
    fn fail_on(&self, result: Result<(), ManifestError>) {
        if let Err(e) = result {
            tracing::error!("{e}");
            if let Ok(mut failed) = self.failed.lock() {
                failed.get_or_insert_with(|| e.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch::ItemStatus;
    use crate::batch::manifest::path_in;

    fn item(id: &str, status: ItemStatus) -> Item {
        Item {
            id: id.into(),
            query: format!("{id}?"),
            status,
            plan_file: format!("/b/{id}.json"),
            report: None,
            totals: None,
            reason: None,
            review: None,
            answered: None,
        }
    }

    fn pending(n: usize) -> Manifest {
        Manifest {
            items: (0..n)
                .map(|i| item(&format!("q{i}"), ItemStatus::Pending))
                .collect(),
            ..Manifest::default()
        }
    }

    /// `batch.json` alone, without its journal.
    fn file(dir: &Path) -> Manifest {
        let text = std::fs::read_to_string(path_in(dir)).expect("batch.json");
        serde_json::from_str(&text).expect("json")
    }

    fn status(m: &Manifest, id: &str) -> ItemStatus {
        m.item(id).expect("item").status
    }

    #[tokio::test]
    async fn a_thousand_events_rewrite_batch_json_at_most_once_per_interval() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pace = Pace {
            min: Duration::from_millis(100),
            bytes_per_second: u64::MAX,
        };
        let clock = Instant::now();
        let writer = ManifestWriter::open(dir.path(), pending(500), pace).expect("open");
        for round in 0..10 {
            for i in (round * 50)..(round * 50 + 50) {
                let id = format!("q{i}");
                writer
                    .record(item(&id, ItemStatus::Running))
                    .expect("start");
                writer
                    .record(item(&id, ItemStatus::Completed))
                    .expect("end");
            }
            tokio::time::sleep(Duration::from_millis(30)).await;
        }
        let written = writer.finish().await.expect("finish");
        let elapsed = clock.elapsed();
        assert_eq!(written.lines, 1000);
        // The first write, the last, and at most one per interval between.
        let bound = (elapsed.as_secs_f64() / pace.min.as_secs_f64()).floor() as usize + 2;
        assert!(
            (2..=bound).contains(&written.files),
            "{} writes of batch.json in {elapsed:?} for 1,000 events (at most {bound})",
            written.files
        );
        let m = file(dir.path());
        assert_eq!(m.items.len(), 500);
        assert!(m.items.iter().all(Item::is_done));
        assert!(
            !journal::path_in(dir.path()).exists(),
            "the journal is removed"
        );
    }

    #[tokio::test]
    async fn readers_see_the_journal_at_once_and_batch_json_on_demand_and_at_the_end() {
        let dir = tempfile::tempdir().expect("tempdir");
        let never = Pace {
            min: Duration::from_secs(3600),
            ..Pace::default()
        };
        let writer = ManifestWriter::open(dir.path(), pending(2), never).expect("open");
        writer
            .record(item("q0", ItemStatus::Running))
            .expect("start");
        writer
            .record(item("q9", ItemStatus::Running))
            .expect("a new one");
        writer.write_now().await.expect("on demand");
        let m = file(dir.path());
        assert_eq!(status(&m, "q0"), ItemStatus::Running);
        assert_eq!(m.items.len(), 3);
        writer
            .record(item("q0", ItemStatus::Completed))
            .expect("end");
        // Not yet in `batch.json` (an hour between writes), but a reader folds the journal.
        let seen = wait_for(|| Manifest::load(dir.path()).ok(), |m| m.items[0].is_done());
        assert_eq!(status(&seen, "q1"), ItemStatus::Pending);
        assert_eq!(status(&file(dir.path()), "q0"), ItemStatus::Running);
        let written = writer.finish().await.expect("finish");
        assert_eq!(written, Written { lines: 3, files: 3 });
        assert_eq!(status(&file(dir.path()), "q0"), ItemStatus::Completed);
        assert!(!journal::path_in(dir.path()).exists());
    }

    #[test]
    fn batch_json_is_written_between_events_once_due_and_when_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let soon = Pace {
            min: Duration::from_millis(20),
            ..Pace::default()
        };
        let writer = ManifestWriter::open(dir.path(), pending(1), soon).expect("open");
        writer
            .record(item("q0", ItemStatus::Running))
            .expect("start");
        // No event follows: the writer writes it once due, by itself.
        wait_for(
            || Some(file(dir.path())),
            |m| status(m, "q0") == ItemStatus::Running,
        );
        writer.record(item("q0", ItemStatus::Failed)).expect("end");
        drop(writer);
        assert_eq!(status(&file(dir.path()), "q0"), ItemStatus::Failed);
        assert!(!journal::path_in(dir.path()).exists());
    }

    #[test]
    fn opening_folds_the_journal_a_crash_left_and_ignores_its_torn_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        pending(3).save(dir.path()).expect("batch.json");
        let lines = [
            item("q0", ItemStatus::Running),
            item("q0", ItemStatus::Completed),
            item("q1", ItemStatus::Running),
        ];
        let mut text: String = lines
            .iter()
            .map(|i| serde_json::to_string(i).expect("json") + "\n")
            .collect();
        text.push_str(r#"{"id": "q2", "query": "q2?", "status": "runn"#);
        std::fs::write(journal::path_in(dir.path()), text).expect("journal");
        let m = Manifest::load(dir.path()).expect("load");
        let statuses: Vec<ItemStatus> = m.items.iter().map(|i| i.status).collect();
        use ItemStatus::{Completed, Pending, Running};
        assert_eq!(statuses, [Completed, Running, Pending]);
        assert_eq!(
            status(&file(dir.path()), "q0"),
            Pending,
            "load writes nothing"
        );
        let writer = ManifestWriter::open(dir.path(), m.clone(), Pace::default()).expect("open");
        assert_eq!(file(dir.path()), m, "folded into batch.json first");
        let journal = std::fs::read_to_string(journal::path_in(dir.path())).expect("new");
        assert_eq!(journal, "", "the old journal is gone");
        drop(writer);
    }

    #[cfg(unix)]
    #[test]
    fn a_journal_that_cannot_be_written_stops_the_record_before_any_question() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir(journal::path_in(dir.path())).expect("a folder in the way");
        std::fs::write(journal::path_in(dir.path()).join("x"), "x").expect("fill it");
        let err = ManifestWriter::open(dir.path(), pending(1), Pace::default())
            .err()
            .expect("refused");
        assert!(err.to_string().contains("batch.journal.ndjson"), "{err}");
    }

    /// Polls `get` until what it gives satisfies `ok` (10 s at most).
    fn wait_for<T>(get: impl Fn() -> Option<T>, ok: impl Fn(&T) -> bool) -> T {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(value) = get().filter(|v| ok(v)) {
                return value;
            }
            assert!(Instant::now() < deadline, "not seen within 10 s");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
