//! [`Pool`]: the parser processes of this process, kept warm between jobs. A job goes to an
//! idle worker (or a new one), with a deadline; a worker that answers goes back to the pool,
//! one that misses its deadline or dies is killed and replaced by the next job's. Workers are
//! this same binary (`researchflow parse-worker`), each capped at the pool's memory and each
//! job at its CPU time; they end with their parent. [`Parsing`] is how a caller asks: in a
//! worker, or, for a caller whose documents are trusted (tests, benchmarks), in process.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;

use super::frame::{Header, Reply};
use super::worker::{Ended, Worker, cause};
use crate::sync::Locked;

/// The subcommand a worker runs (hidden from the help).
pub const WORKER_COMMAND: &str = "parse-worker";
/// The memory a worker may map unless the config says otherwise (`documents.memoryMb`).
pub const DEFAULT_MEMORY_MB: u64 = 512;
/// Idle workers kept for the next jobs; more are ended as they finish.
const MAX_IDLE: usize = 8;

/// Why a job has no reply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// The document's doing: the job ran out of time, memory or CPU, or crashed its parser.
    #[error("{0}")]
    Document(String),
    /// No parser could be asked, or it did not understand the job: the machine's or a bug.
    #[error("{0}")]
    Unavailable(String),
}

/// The parser processes of this process.
#[derive(Debug)]
pub struct Pool {
    program: PathBuf,
    memory_mb: u64,
    idle: Mutex<Vec<Worker>>,
}

impl Pool {
    /// Workers of this executable, each within `memory_mb` of address space.
    pub fn new(memory_mb: u64) -> Pool {
        // `/proc/self/exe` is this process's image even when its file was replaced since
        // (an upgrade while a batch runs).
        let program = if cfg!(target_os = "linux") {
            PathBuf::from("/proc/self/exe")
        } else {
            std::env::current_exe().unwrap_or_else(|_| PathBuf::from("researchflow"))
        };
        Pool::of(program, memory_mb)
    }

    /// Workers of `program`, which must serve [`WORKER_COMMAND`] as this binary does.
    pub fn of(program: PathBuf, memory_mb: u64) -> Pool {
        Pool {
            program,
            memory_mb,
            idle: Mutex::default(),
        }
    }

    /// The job `job` of kind `kind` (with `body`) done by a worker within `timeout`: its reply,
    /// or why there is none, as a user reads it. A worker that ran out of memory after other
    /// jobs (its heap may have been fragmented by them) has the job tried once more in a new one.
    pub fn run<J: Serialize, R: DeserializeOwned>(
        &self,
        kind: &str,
        job: &J,
        body: &[u8],
        timeout: Duration,
    ) -> Result<R, JobError> {
        let deadline = Instant::now() + timeout;
        let header = Header {
            kind: kind.to_string(),
            job: serde_json::to_value(job).map_err(|e| JobError::Unavailable(e.to_string()))?,
            cpu_seconds: timeout.as_secs() + 1,
        };
        let mut worker = self.worker()?;
        loop {
            match worker.call(&header, body, deadline) {
                Ok(reply) => {
                    self.give_back(worker);
                    return match reply {
                        Reply::Done(value) => serde_json::from_value(value).map_err(|e| {
                            JobError::Unavailable(format!(
                                "the parser's reply is not understood ({e})"
                            ))
                        }),
                        Reply::Refused(why) => Err(JobError::Unavailable(format!(
                            "the parser refused the job ({why})"
                        ))),
                    };
                }
                Err(ended) => {
                    let reused = worker.served > 0;
                    let (status, stderr) = worker.end();
                    let timed_out = matches!(ended, Ended::Timeout).then_some(timeout);
                    let cause = cause(timed_out, status, &stderr, self.memory_mb);
                    if !(reused && timed_out.is_none() && Instant::now() < deadline) {
                        return Err(JobError::Document(cause));
                    }
                    worker = self.start()?;
                }
            }
        }
    }

    /// An idle worker, or a new one.
    fn worker(&self) -> Result<Worker, JobError> {
        match self.idle.locked().pop() {
            Some(worker) => Ok(worker),
            None => self.start(),
        }
    }

    fn start(&self) -> Result<Worker, JobError> {
        let mut command = Command::new(&self.program);
        // A parser needs nothing of the environment, and must not hold the keys in it.
        command.env_clear().args([
            WORKER_COMMAND,
            "--memory-mb",
            &self.memory_mb.to_string(),
            "--parent",
            &std::process::id().to_string(),
        ]);
        Worker::start(command).map_err(|e| {
            JobError::Unavailable(format!(
                "the parser process `{}` could not start ({e})",
                self.program.display()
            ))
        })
    }

    fn give_back(&self, worker: Worker) {
        let mut idle = self.idle.locked();
        if idle.len() < MAX_IDLE {
            idle.push(worker);
        }
    }
}

/// Where untrusted documents are parsed.
#[derive(Debug, Clone)]
pub enum Parsing {
    /// In a worker of the pool: a document that crashes, loops or eats memory costs its job,
    /// never this process. Every command of the binary parses so.
    Isolated(Arc<Pool>),
    /// In this process, for callers whose documents are trusted (unit tests, benchmarks).
    InProcess,
}

impl Parsing {
    /// Workers of this binary, each within `memory_mb`.
    pub fn isolated(memory_mb: u64) -> Parsing {
        Parsing::Isolated(Arc::new(Pool::new(memory_mb)))
    }

    /// The job's reply: from a worker within `timeout`, or `here()` in process.
    pub fn run<J: Serialize, R: DeserializeOwned>(
        &self,
        kind: &str,
        job: &J,
        body: &[u8],
        timeout: Duration,
        here: impl FnOnce() -> R,
    ) -> Result<R, JobError> {
        match self {
            Parsing::Isolated(pool) => pool.run(kind, job, body, timeout),
            Parsing::InProcess => Ok(here()),
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// A pool whose workers are `sh -c script` (the worker's own arguments after it are `$0`,
    /// `$1`...): a stand-in that misbehaves as a hostile document makes a parser misbehave.
    fn pool_of(script: &str) -> (tempfile::TempDir, Pool) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("worker.sh");
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).expect("script");
        let mut perms = std::fs::metadata(&path).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(&path, perms).expect("chmod");
        (dir, Pool::of(path, 64))
    }

    fn run(pool: &Pool, timeout: Duration) -> Result<String, JobError> {
        pool.run("page", &"job", b"body", timeout)
    }

    #[test]
    fn a_worker_that_hangs_is_stopped_at_the_deadline() {
        let (_dir, pool) = pool_of("exec sleep 30");
        let started = Instant::now();
        let err = run(&pool, Duration::from_millis(200)).expect_err("timeout");
        assert!(started.elapsed() < Duration::from_secs(5));
        match err {
            JobError::Document(cause) => {
                assert!(cause.contains("took longer than 200 ms"), "{cause}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn how_a_worker_died_is_told_as_its_cause() {
        for (script, cause) in [
            (
                "echo 'memory allocation of 1073741824 bytes failed' >&2; kill -ABRT $$",
                "memory cap (64 MB",
            ),
            (
                "echo \"thread 'main' has overflowed its stack\" >&2; kill -ABRT $$",
                "nests too deeply",
            ),
            (
                "printf \"thread 'main' panicked at src/x.rs:1:1:\\nindex out of bounds\\n\" >&2; exit 101",
                "the parser failed on it (index out of bounds)",
            ),
            ("kill -XCPU $$", "more CPU time"),
            ("kill -SEGV $$", "killed by signal 11"),
            ("exit 3", "ended with code 3"),
        ] {
            let (_dir, pool) = pool_of(&format!("head -c 1 >/dev/null; {script}"));
            match run(&pool, Duration::from_secs(10)) {
                Err(JobError::Document(told)) => assert!(told.contains(cause), "{script}: {told}"),
                other => panic!("{script}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_worker_that_cannot_start_leaves_the_parser_unavailable() {
        let pool = Pool::of(PathBuf::from("/nonexistent/researchflow"), 64);
        match run(&pool, Duration::from_secs(1)) {
            Err(JobError::Unavailable(why)) => assert!(why.contains("could not start"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
