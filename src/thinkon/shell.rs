//! The `shell:` executor: one command through `sh -c`, in the run's work folder, with a
//! timeout and a cap on the output kept. Called only when `--allow-shell` was given; without
//! it the runtime starts no process at all.
//!
//! The command runs in its own process group, and the whole group is killed when the command
//! ends or times out, so nothing it started in the background outlives it or holds its output
//! open. A process that left the group (`setsid`, `setpgid`) is found by a mark in its
//! environment, which every descendant inherits (`RESEARCHFLOW_SHELL_RUN`, unique per command;
//! the technique of Jenkins' process-tree killer), and killed too, where `/proc` lists
//! processes (Linux). Only a process that also clears its environment (`env -i`) escapes.
//! Output beyond the cap is read and dropped (the command is never blocked on a full pipe),
//! and the drop is counted.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// How one command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRun {
    /// `None` when a signal ended it (the timeout's kill included).
    pub exit_status: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
    /// Bytes of output beyond the cap, read and dropped.
    pub dropped_bytes: u64,
}

impl ShellRun {
    /// Exited 0 in time.
    pub fn succeeded(&self) -> bool {
        self.exit_status == Some(0) && !self.timed_out
    }
}

/// How long the readers may go on once the command has ended and its group was killed.
const DRAIN: Duration = Duration::from_secs(2);

/// Runs `command` with `sh -c` in `cwd`; `cap` bounds each of stdout and stderr.
pub async fn run_shell(
    command: &str,
    cwd: &Path,
    timeout: Duration,
    cap: usize,
) -> std::io::Result<ShellRun> {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    let mark = Mark::new();
    cmd.env(MARK_VAR, &mark.0);
    let mut child = cmd.spawn()?;
    // Killed however this function ends, also when its future is dropped (Ctrl-C).
    let group = Group {
        leader: child.id(),
        mark,
    };
    let stdout = tokio::spawn(read_capped(child.stdout.take(), cap));
    let stderr = tokio::spawn(read_capped(child.stderr.take(), cap));
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (Some(status?), false),
        Err(_) => {
            group.kill();
            let _ = child.kill().await;
            (child.wait().await.ok(), true)
        }
    };
    // Whatever the command left running in the background goes with it.
    drop(group);
    let collect = |task: tokio::task::JoinHandle<(String, u64)>| async move {
        match tokio::time::timeout(DRAIN, task).await {
            Ok(Ok(read)) => read,
            _ => (String::new(), 0),
        }
    };
    let (stdout, out_dropped) = collect(stdout).await;
    let (stderr, err_dropped) = collect(stderr).await;
    Ok(ShellRun {
        exit_status: status.and_then(|s| s.code()),
        timed_out,
        stdout,
        stderr,
        dropped_bytes: out_dropped + err_dropped,
    })
}

/// Reads `pipe` to its end, keeping the first `cap` bytes (as text) and counting the rest.
async fn read_capped(pipe: Option<impl AsyncRead + Unpin>, cap: usize) -> (String, u64) {
    let Some(mut pipe) = pipe else {
        return (String::new(), 0);
    };
    let mut kept = Vec::new();
    let mut dropped = 0u64;
    let mut chunk = [0u8; 8192];
    loop {
        match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = cap.saturating_sub(kept.len()).min(n);
                kept.extend_from_slice(&chunk[..room]);
                dropped += (n - room) as u64;
            }
        }
    }
    (String::from_utf8_lossy(&kept).into_owned(), dropped)
}

/// The environment variable that marks every process a command started.
const MARK_VAR: &str = "RESEARCHFLOW_SHELL_RUN";

/// The value of [`MARK_VAR`] for one command: this process and a per-process counter.
struct Mark(String);

impl Mark {
    fn new() -> Mark {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Mark(format!("{}-{n}", std::process::id()))
    }
}

/// The process group a command leads, and the mark of everything it started; dropping it
/// kills them all.
struct Group {
    leader: Option<u32>,
    mark: Mark,
}

impl Group {
    fn kill(&self) {
        kill_group(self.leader);
        kill_marked(&self.mark);
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Kills the process group `pid` leads (the command and all it started).
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pgid) = pid.and_then(|p| libc::pid_t::try_from(p).ok()) {
        // SAFETY: `killpg` only sends a signal; `pgid` is the group this module created for
        // the command (`process_group(0)` makes the child its leader), so no other process
        // group can be hit. A group that is already gone makes it fail harmlessly (ESRCH).
        unsafe {
            libc::killpg(pgid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Kills every process whose environment carries `mark`: what left the command's group. A few
/// passes, so that a process forked while the last one was read goes too.
fn kill_marked(mark: &Mark) {
    #[cfg(unix)]
    for _ in 0..5 {
        let marked = marked_processes(&format!("{MARK_VAR}={}", mark.0));
        if marked.is_empty() {
            return;
        }
        for pid in marked {
            // SAFETY: `kill` only sends a signal, to a process that carries this command's
            // mark (an unrelated process cannot: the mark is unique to this command).
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    #[cfg(not(unix))]
    let _ = mark;
}

/// The processes, other than this one, whose environment holds the entry `entry`; none where
/// `/proc` does not list processes. A process of another user cannot be read, and is skipped.
#[cfg(unix)]
fn marked_processes(entry: &str) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let own = std::process::id();
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| pid != own)
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|&b| b == 0).any(|v| v == entry.as_bytes()))
        })
        .filter_map(|pid| libc::pid_t::try_from(pid).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn output_status_and_folder() {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = run_shell(
            "pwd; echo oops >&2; exit 3",
            dir.path(),
            Duration::from_secs(5),
            1000,
        )
        .await
        .expect("runs");
        assert_eq!(run.exit_status, Some(3));
        assert!(!run.succeeded());
        let cwd = std::fs::canonicalize(dir.path()).expect("canonical");
        assert_eq!(run.stdout.trim(), cwd.display().to_string());
        assert_eq!(run.stderr, "oops\n");
    }

    #[tokio::test]
    async fn output_beyond_the_cap_is_counted_not_kept() {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = run_shell(
            "head -c 100000 /dev/zero | tr '\\0' x",
            dir.path(),
            Duration::from_secs(5),
            10,
        )
        .await
        .expect("runs");
        assert!(run.succeeded());
        assert_eq!(run.stdout, "xxxxxxxxxx");
        assert_eq!(run.dropped_bytes, 100_000 - 10);
    }

    /// Whether `pid` runs (a zombie, dead but not yet reaped, does not).
    fn running(pid: &str) -> bool {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
            !stat
                .rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
    }

    #[tokio::test]
    async fn a_process_that_left_the_group_goes_with_the_command() {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = run_shell(
            "setsid sh -c 'echo $$ > pid; exec sleep 60' & while [ ! -s pid ]; do sleep 0.05; done",
            dir.path(),
            Duration::from_secs(30),
            1000,
        )
        .await
        .expect("runs");
        assert!(run.succeeded(), "{run:?}");
        let pid = std::fs::read_to_string(dir.path().join("pid")).expect("pid written");
        let mut waited = 0;
        while running(&pid) && waited < 100 {
            std::thread::sleep(Duration::from_millis(20));
            waited += 1;
        }
        assert!(
            !running(&pid),
            "the `setsid` process {} survived",
            pid.trim()
        );
    }

    #[tokio::test]
    async fn a_command_dropped_midway_takes_what_it_started_with_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let run = run_shell(
            "sleep 30 & echo $! > pid; wait",
            dir.path(),
            Duration::from_secs(30),
            1000,
        );
        // Ctrl-C drops the future while the command runs.
        let dropped = tokio::time::timeout(Duration::from_millis(300), run).await;
        assert!(dropped.is_err(), "still running when dropped");
        let pid = std::fs::read_to_string(dir.path().join("pid")).expect("pid written");
        let alive = || {
            std::process::Command::new("kill")
                .args(["-0", pid.trim()])
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        let mut waited = 0;
        while alive() && waited < 100 {
            std::thread::sleep(Duration::from_millis(20));
            waited += 1;
        }
        assert!(!alive(), "the background `sleep {}` survived", pid.trim());
    }

    #[tokio::test]
    async fn a_command_that_outlives_its_timeout_is_killed_with_its_children() {
        let dir = tempfile::tempdir().expect("tempdir");
        let started = std::time::Instant::now();
        let run = run_shell(
            "sleep 30 & echo started; wait",
            dir.path(),
            Duration::from_millis(200),
            1000,
        )
        .await
        .expect("runs");
        assert!(run.timed_out);
        assert_eq!(run.exit_status, None);
        assert_eq!(run.stdout, "started\n");
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
    }
}
