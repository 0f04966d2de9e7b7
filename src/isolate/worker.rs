//! One parser process as its parent sees it: started, asked one job at a time through
//! [`super::frame`], its replies and the tail of its stderr read by two threads of its own, so a
//! call can wait for a reply with a deadline. A worker that misses its deadline or dies is
//! killed, reaped, and its end told as a cause a user can read: out of memory, out of CPU,
//! a stack overflow, a panic, a deadline.

use std::io::{BufReader, Read};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::frame::{self, Header, Reply};
use crate::sync::Locked;

/// How much of a worker's stderr is kept: enough for an abort's last words.
const STDERR_TAIL: usize = 4096;

/// A started parser process.
pub struct Worker {
    child: Child,
    stdin: ChildStdin,
    replies: Receiver<std::io::Result<Reply>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    stderr_reader: Option<JoinHandle<()>>,
    /// Jobs answered so far.
    pub served: usize,
}

/// How a call went wrong.
#[derive(Debug)]
pub enum Ended {
    /// No reply by the deadline.
    Timeout,
    /// The process ended, or its stream broke, before it replied.
    Died,
}

impl Worker {
    /// Starts `command` as a worker.
    pub fn start(mut command: Command) -> std::io::Result<Worker> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(std::io::Error::other("a worker started without its pipes"));
        };
        let (send, replies) = mpsc::channel();
        std::thread::Builder::new()
            .name("parser-replies".into())
            .spawn(move || {
                let mut stdout = BufReader::new(stdout);
                loop {
                    let reply = frame::read_reply(&mut stdout);
                    let broken = reply.is_err();
                    if send.send(reply).is_err() || broken {
                        return;
                    }
                }
            })?;
        let tail = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&tail);
        let stderr_reader = std::thread::Builder::new()
            .name("parser-stderr".into())
            .spawn(move || keep_tail(stderr, &kept))?;
        Ok(Worker {
            child,
            stdin,
            replies,
            stderr: tail,
            stderr_reader: Some(stderr_reader),
            served: 0,
        })
    }

    /// Sends one job and waits for its reply until `deadline`.
    pub fn call(
        &mut self,
        header: &Header,
        body: &[u8],
        deadline: Instant,
    ) -> Result<Reply, Ended> {
        // A worker that died since its last job fails the write (EPIPE) or the read.
        if frame::write_request(&mut self.stdin, header, body).is_err() {
            return Err(Ended::Died);
        }
        let wait = deadline.saturating_duration_since(Instant::now());
        match self.replies.recv_timeout(wait) {
            Ok(Ok(reply)) => {
                self.served += 1;
                Ok(reply)
            }
            Ok(Err(_)) | Err(RecvTimeoutError::Disconnected) => Err(Ended::Died),
            Err(RecvTimeoutError::Timeout) => Err(Ended::Timeout),
        }
    }

    /// Kills and reaps the process: how it ended and the last of what it wrote on stderr.
    pub fn end(mut self) -> (Option<ExitStatus>, String) {
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        let tail = String::from_utf8_lossy(&self.stderr.locked()).into_owned();
        (status, tail)
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker")
            .field("served", &self.served)
            .finish()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // A worker not ended by `end` (an idle one when its pool goes) is killed and reaped
        // too, so it never lingers as a zombie.
        if self.stderr_reader.is_some() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads `from` to its end, keeping its last [`STDERR_TAIL`] bytes in `tail`.
fn keep_tail(mut from: impl Read, tail: &Mutex<Vec<u8>>) {
    let mut chunk = [0u8; 1024];
    while let Ok(n) = from.read(&mut chunk) {
        if n == 0 {
            return;
        }
        let mut tail = tail.locked();
        tail.extend_from_slice(&chunk[..n]);
        let over = tail.len().saturating_sub(STDERR_TAIL);
        tail.drain(..over);
    }
}

/// Why a worker's job failed, as a user reads it: `timeout` when the deadline passed, else
/// from how the process ended and its last words.
pub fn cause(
    timeout: Option<Duration>,
    status: Option<ExitStatus>,
    stderr: &str,
    memory_mb: u64,
) -> String {
    if let Some(timeout) = timeout {
        return format!(
            "its reading took longer than {} ms and was stopped",
            timeout.as_millis()
        );
    }
    if stderr.contains("memory allocation of") {
        return format!(
            "its reading needed more than the parser's memory cap ({memory_mb} MB, `documents.memoryMb`)"
        );
    }
    if stderr.contains("has overflowed its stack") {
        return "it nests too deeply to read (the parser's stack overflowed)".to_string();
    }
    if let Some(panic) = stderr
        .lines()
        .skip_while(|l| !l.contains("panicked at"))
        .nth(1)
    {
        return format!(
            "the parser failed on it ({})",
            crate::text::one_line(panic, 200)
        );
    }
    match status.and_then(signal) {
        Some(24) => "its reading used more CPU time than it is allowed".to_string(),
        Some(signal) => format!("the parser process was killed by signal {signal}"),
        None => match status.and_then(|s| s.code()) {
            Some(code) => format!("the parser process ended with code {code}"),
            None => "the parser process ended without a reply".to_string(),
        },
    }
}

/// The signal that ended a process, where the platform has them.
fn signal(status: ExitStatus) -> Option<i32> {
    #[cfg(unix)]
    {
        std::os::unix::process::ExitStatusExt::signal(&status)
    }
    #[cfg(not(unix))]
    {
        let _ = status;
        None
    }
}
