//! The two ways researchflow writes a file: [`write`] replaces a whole file (a temporary file
//! in the same folder, written and synced, renamed over the target, then the folder synced, so
//! a crash or a full disk leaves either the old file or the new one, never half of one, and
//! the rename itself survives a power cut), and [`append`] opens a log to add lines to (the
//! event log, a transcript).
//!
//! Neither writes through a symbolic link: a link where a file is written could lead anywhere
//! (a cloned repository's `runs/x.report.md -> ~/.bashrc`). [`write`] replaces the link itself
//! by a regular file, leaving what it pointed to as it was; [`append`] refuses it, and a file
//! with other hard links too (its other name may be anywhere; [`write`] replaces the name, so
//! the other keeps its bytes). A caller
//! that wants to follow a link the user made (the plan file they named) resolves it first.
//!
//! New files get the mode the user's umask gives (`0666` less the umask), as any program's
//! output does; an existing file keeps its mode (a plan the user made private stays private).
//! No file researchflow writes holds a secret: [`write`] masks every secret the process knows
//! ([`crate::text::secrets`]) in the text it writes, whichever way a key reached it (a question
//! that quotes one, a search result that echoes one), so none is made private by default.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::sync::Locked;

/// Replaces `path` with `bytes` atomically, every secret of the process masked in them when
/// they are text. A regular file that already exists keeps its permissions; a new one gets
/// `0666` less the umask. A symbolic link at `path` is replaced by the file (the rename
/// replaces the link, never what it leads to).
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let bytes = crate::text::secrets::mask_bytes(bytes);
    off_the_runtime(|| new_file(path, &bytes, true))
}

/// [`write`] of a file whose durability is another's, which need not survive a power cut: a
/// queue worker's copy of a question's files, every checkpoint of which is in the database
/// before the run goes on, and which a dead worker's successor removes unread. No syncs (two a
/// write), and a file that exists is rewritten in place instead of through a new file renamed
/// over it: nothing reads it while its process rewrites it, and each new file and each one
/// replaced cost the file system an inode to find among those freed lately. Never through a
/// symbolic link: a link there is replaced, as [`write`] replaces it.
pub fn write_scratch(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let bytes = crate::text::secrets::mask_bytes(bytes);
    if std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file()) {
        return rewrite(path, &bytes);
    }
    new_file(path, &bytes, false)
}

/// Runs `f`, which waits on the disk (a sync takes milliseconds, far more on a busy disk),
/// without holding up the async tasks queued on the thread it is called on: on a worker of
/// tokio's multi-threaded runtime, those tasks move to another thread while `f` waits
/// (`block_in_place`), so a batch's hundred workflows are not serialised behind one another's
/// syncs; anywhere else (a plain thread, a blocking task, a current-thread runtime) `f` just runs.
pub fn off_the_runtime<T>(f: impl FnOnce() -> T) -> T {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// Writes `bytes` into a new file renamed over `path`, synced with its folder when `durable`.
fn new_file(path: &Path, bytes: &[u8], durable: bool) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut builder = tempfile::Builder::new();
    builder.prefix(".researchflow-").suffix(".tmp");
    #[cfg(unix)]
    {
        // Created by open(2) with this mode, so the kernel applies the umask.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    // `symlink_metadata`: a link's target is not ours to copy anything from.
    if let Ok(meta) = std::fs::symlink_metadata(path)
        && meta.is_file()
    {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    if durable {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    if durable { sync_dir(dir) } else { Ok(()) }
}

/// Rewrites the regular file at `path` in place ([`write_scratch`]); a link put there meanwhile
/// is refused, not followed.
fn rewrite(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)?.write_all(bytes)
}

/// Opens the log at `path` for appending (and reading, with `read`), creating it when missing
/// with `0666` less the umask. A symbolic link there is refused, and so is anything but a
/// regular file (a FIFO would block the run): the error says what to do.
pub fn append(path: &Path, read: bool) -> std::io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.create(true).append(true).read(read);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO for writing would wait for a reader; it changes nothing
        // for a regular file.
        options.custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
    }
    let file = options.open(path).map_err(|e| refused(path, e))?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    #[cfg(unix)]
    {
        // Another name of the same file may be anywhere (`ln ~/.bashrc run.events.ndjson`):
        // appending here would append there.
        use std::os::unix::fs::MetadataExt;
        if meta.nlink() > 1 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                HARD_LINK_REFUSED,
            ));
        }
    }
    Ok(file)
}

/// Where the lines appended to a [`LineFile`] go too, each whole, in the order they were
/// written: a queue worker's writer, which stores them in the database as they come.
pub type Tee = std::sync::Arc<dyn Fn(&[u8]) + Send + Sync>;

/// A log a run appends whole lines to (its event log, its transcript): each line in one write,
/// so that a reader (or a crash) never sees half of one, and one system call a line, not a
/// token. A write that fails is reported once, and the file is left alone from then on: a
/// log never fails its run. Every line goes to the [`Tee`] too, when there is one, whether or
/// not the file took it.
pub struct LineFile {
    path: PathBuf,
    /// What the file is, for the warning ("event log", "transcript").
    what: &'static str,
    file: Mutex<Option<File>>,
    tee: Option<Tee>,
}

impl std::fmt::Debug for LineFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LineFile")
            .field("path", &self.path)
            .field("teed", &self.tee.is_some())
            .finish_non_exhaustive()
    }
}

impl LineFile {
    /// The log at `path`, opened by [`append`] as `file`.
    pub fn new(path: &Path, what: &'static str, file: File, tee: Option<Tee>) -> LineFile {
        LineFile {
            path: path.to_path_buf(),
            what,
            file: Mutex::new(Some(file)),
            tee,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `line`, which ends with a newline.
    pub fn write(&self, line: &[u8]) {
        let mut guard = self.file.locked();
        if let Some(file) = guard.as_mut() {
            let written = file.write_all(line).and_then(|()| file.flush());
            if let Err(e) = written {
                tracing::warn!(
                    "cannot write the {} `{}`: {e}; no more lines will be written",
                    self.what,
                    self.path.display()
                );
                *guard = None;
            }
        }
        // Under the file's lock: the tee hears the lines in the file's order.
        if let Some(tee) = &self.tee {
            tee(line);
        }
    }

    /// Leaves the file alone from now on, as a write that failed does.
    #[cfg(test)]
    pub fn lose(&self) {
        *self.file.locked() = None;
    }
}

/// Why a log with other hard links is refused, and what to do.
pub const HARD_LINK_REFUSED: &str = "it has other hard links, and researchflow never appends to a file that has another name elsewhere: move it away (or replace it with a copy)";

/// The error of opening `path` to append, said as what it means here when the path is a
/// link (the system says `ELOOP`, "too many levels of symbolic links") or a FIFO without a
/// reader (`ENXIO`).
fn refused(path: &Path, e: std::io::Error) -> std::io::Error {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, LINK_REFUSED)
        }
        Ok(m) if !m.is_file() => not_regular(),
        _ => e,
    }
}

fn not_regular() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        "not a regular file: move it away so the log can be written",
    )
}

/// Why a symbolic link where researchflow writes is refused, and what to do.
pub const LINK_REFUSED: &str =
    "it is a symbolic link, and researchflow never writes through one: remove the link";

/// Makes a rename in `dir` durable. Folders cannot be opened for syncing everywhere; where
/// they cannot, the rename is as durable as the platform makes it.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::fs::File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(unix)]
    fn a_scratch_file_is_rewritten_in_place_and_any_other_replaced_by_a_new_one() {
        let dir = tempfile::tempdir().unwrap();
        let (scratch, kept) = (dir.path().join("q1.json"), dir.path().join("p.json"));
        write_scratch(&scratch, b"three").unwrap();
        let first = inode(&scratch);
        write_scratch(&scratch, b"two").unwrap();
        assert_eq!(std::fs::read(&scratch).unwrap(), b"two", "rewritten whole");
        assert_eq!(inode(&scratch), first, "in place: no new file");
        write(&kept, b"one").unwrap();
        let first = inode(&kept);
        write(&kept, b"two").unwrap();
        assert_ne!(inode(&kept), first, "a new file replaces it");
        let link = dir.path().join("l.json");
        std::os::unix::fs::symlink(&kept, &link).unwrap();
        write_scratch(&link, b"x").unwrap();
        assert_eq!(
            std::fs::read(&kept).unwrap(),
            b"two",
            "never through a link"
        );
    }

    #[cfg(unix)]
    fn inode(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().ino()
    }

    /// Whether a task spawned beside `f` ran while `f` waited for it, on a runtime of one
    /// worker thread: it can only if `f` gave the worker up. `f` waits `patience` ms at most.
    fn a_queued_task_runs_while_waiting(runtime: tokio::runtime::Runtime, patience: u64) -> bool {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicBool, Ordering};
        let ran = Arc::new(AtomicBool::new(false));
        let seen = ran.clone();
        runtime.block_on(async move {
            let waiter = tokio::spawn(async move {
                off_the_runtime(|| {
                    let until =
                        std::time::Instant::now() + std::time::Duration::from_millis(patience);
                    while !seen.load(Ordering::SeqCst) && std::time::Instant::now() < until {
                        std::thread::sleep(std::time::Duration::from_millis(5));
                    }
                    seen.load(Ordering::SeqCst)
                })
            });
            tokio::task::yield_now().await;
            tokio::spawn(async move { ran.store(true, Ordering::SeqCst) });
            waiter.await.expect("waiter")
        })
    }

    #[test]
    fn a_write_on_a_runtime_worker_lets_the_other_tasks_run_meanwhile() {
        let one_worker = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("runtime");
        assert!(a_queued_task_runs_while_waiting(one_worker, 5_000));
    }

    #[test]
    fn off_a_multi_threaded_runtime_the_wait_just_runs() {
        let current = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        // No other thread to hand the tasks to: the wait runs in place (no panic) and the
        // other task runs after it.
        assert!(!a_queued_task_runs_while_waiting(current, 100));
        assert_eq!(
            std::thread::spawn(|| off_the_runtime(|| 7))
                .join()
                .expect("thread"),
            7
        );
    }

    #[test]
    fn replaces_the_file_and_leaves_no_temporary() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("x.md");
        write(&path, b"one").expect("first write");
        write(&path, b"two").expect("second write");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "two");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec!["x.md".to_string()]);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_the_mode_of_an_existing_file() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.json");
        std::fs::write(&path, "{}").expect("seed");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
        write(&path, b"{\"a\":1}").expect("write");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    /// The process's umask, from `/proc` (reading it with umask(2) would change it).
    #[cfg(target_os = "linux")]
    fn umask() -> u32 {
        let status = std::fs::read_to_string("/proc/self/status").expect("status");
        let line = status
            .lines()
            .find(|l| l.starts_with("Umask:"))
            .expect("umask");
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).expect("octal")
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_new_file_gets_the_mode_the_umask_gives() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("r.md");
        write(&path, b"x").expect("write");
        let mode = std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
        let log = dir.path().join("e.ndjson");
        drop(append(&log, false).expect("log"));
        let mode = std::fs::metadata(&log).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_replaced_and_what_it_leads_to_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("real.json");
        std::fs::write(&target, "old").expect("seed");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        write(&link, b"new").expect("write");
        assert!(std::fs::symlink_metadata(&link).expect("meta").is_file());
        assert_eq!(std::fs::read_to_string(&link).expect("read"), "new");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "old");
    }

    #[cfg(unix)]
    #[test]
    fn a_log_behind_a_symlink_or_a_fifo_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("outside");
        std::fs::write(&target, "old").expect("seed");
        let link = dir.path().join("e.ndjson");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let err = append(&link, true).expect_err("a link");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        // A link to nothing would otherwise create its target.
        let dangling = dir.path().join("t.jsonl");
        std::os::unix::fs::symlink(dir.path().join("made"), &dangling).expect("symlink");
        assert!(append(&dangling, false).is_err());
        assert!(!dir.path().join("made").exists());
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "old");
        let fifo = dir.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.is_ok_and(|s| s.success()), "mkfifo");
        let err = append(&fifo, false).expect_err("a fifo");
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let named = dir.path().join("t2.jsonl");
        std::fs::hard_link(&target, &named).expect("hard link");
        let err = append(&named, false).expect_err("another name");
        assert!(err.to_string().contains("other hard links"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "old");
    }

    #[test]
    fn a_folder_in_the_way_is_an_error_and_no_temporary_stays() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("taken");
        std::fs::create_dir(&path).expect("mkdir");
        std::fs::write(path.join("inside"), "x").expect("fill");
        assert!(write(&path, b"data").is_err());
        let tmps = std::fs::read_dir(dir.path())
            .expect("list")
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .count();
        assert_eq!(tmps, 0);
    }
}
