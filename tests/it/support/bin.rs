//! A builder for running the real `researchflow` binary from a test, read like just's tests:
//! `researchflow().args(["plan", "show"]).env("OPENAI_BASE_URL", llm.base_url()).run().await`.
//! Every run is isolated from the developer's environment: the variables researchflow reads are
//! removed before the test's own are applied, `NO_COLOR=1` is set, stdin is null, and without an
//! explicit `current_dir` the run happens in a fresh temporary directory so no `.env` or
//! `agent.config.json` of the repository is picked up. [`Cmd::on_terminal`] runs it with its
//! stderr (and stdout, if asked) on a real terminal, a pseudo-terminal (`pty.rs`). The child runs under `tokio::process`, so
//! mock servers in the same runtime keep serving while the test awaits it.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::task::JoinHandle;

use super::pty::Pty;
use super::server::lock;

/// Variables removed from every run besides ours that had other names ([`isolated_vars`]).
const ISOLATED_VARS: &[&str] = &[
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "TAVILY_API_KEY",
    "BRAVE_API_KEY",
    "SEARXNG_API_KEY",
    "RUST_LOG",
    "RESEARCHFLOW_QUEUE",
    "RESEARCHFLOW_MCP_TOKEN",
];

/// Every variable removed from a run before the test's own `env` is applied: the providers'
/// keys, and ours that had other names before, by every name.
pub fn isolated_vars() -> impl Iterator<Item = &'static str> {
    let aliased = researchflow::cli::ENV_ALIASES
        .iter()
        .flat_map(|(new, olds)| std::iter::once(*new).chain(olds.iter().copied()));
    ISOLATED_VARS.iter().copied().chain(aliased)
}

/// The default time a run may take before it is killed.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A `researchflow` invocation being built.
#[must_use = "a Cmd does nothing until `.run().await`"]
#[derive(Clone, Debug)]
pub struct Cmd {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(String, OsString)>,
    removed: Vec<String>,
    current_dir: Option<PathBuf>,
    timeout: Duration,
    signal: Option<(&'static str, SignalCondition)>,
    stdout: Stdout,
    umask: Option<u32>,
    terminal: Option<Terminal>,
}

/// Which of the child's streams go to a terminal ([`Cmd::on_terminal`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terminal {
    /// stderr; stdout stays a pipe (or what [`Cmd::stdout_to`] says).
    Stderr,
    /// stdout and stderr, as in an interactive shell.
    Both,
}

/// Where the child's stdout goes.
#[derive(Clone, Debug, Default)]
pub enum Stdout {
    /// A pipe the test reads to its end: [`RunOutput::stdout`].
    #[default]
    Captured,
    /// A pipe whose read end is closed before the child starts: every write fails with
    /// `EPIPE`, as in `researchflow ... | head -0`.
    ClosedPipe,
    /// A file opened for writing (`/dev/full`: every write fails with `ENOSPC`).
    File(PathBuf),
}

/// A condition polled while the child runs; `Debug` only names it.
#[derive(Clone)]
struct SignalCondition(Arc<dyn Fn() -> bool + Send + Sync>);

impl std::fmt::Debug for SignalCondition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SignalCondition")
    }
}

/// The real binary, built by cargo for this test run.
pub fn researchflow() -> Cmd {
    Cmd {
        program: PathBuf::from(env!("CARGO_BIN_EXE_researchflow")),
        args: Vec::new(),
        env: Vec::new(),
        removed: Vec::new(),
        current_dir: None,
        timeout: DEFAULT_TIMEOUT,
        signal: None,
        stdout: Stdout::Captured,
        umask: None,
        terminal: None,
    }
}

/// Another program (a test's MCP client or server), run with the same isolation.
pub fn program(program: impl Into<PathBuf>) -> Cmd {
    Cmd {
        program: program.into(),
        ..researchflow()
    }
}

impl Cmd {
    pub fn arg(mut self, a: impl AsRef<OsStr>) -> Cmd {
        self.args.push(a.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Cmd
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    /// Sets `k` for the child, after the isolated variables were removed.
    pub fn env(mut self, k: &str, v: impl AsRef<OsStr>) -> Cmd {
        self.env.push((k.to_owned(), v.as_ref().to_owned()));
        self
    }

    /// Removes `k` from the child's environment, `NO_COLOR` included (set by default).
    pub fn env_remove(mut self, k: &str) -> Cmd {
        self.removed.push(k.to_owned());
        self
    }

    /// Runs in `dir` instead of a fresh temporary directory.
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Cmd {
        self.current_dir = Some(dir.as_ref().to_owned());
        self
    }

    /// How long the run may take (default 60 s); on expiry the child is killed and the test
    /// panics with its stderr so far.
    /// Sends `signal` (a `kill -s` name such as `INT` or `TERM`) to the child once `when`
    /// returns true; `when` is polled every 20 ms while the child runs.
    pub fn signal_when(
        mut self,
        signal: &'static str,
        when: impl Fn() -> bool + Send + Sync + 'static,
    ) -> Cmd {
        self.signal = Some((signal, SignalCondition(Arc::new(when))));
        self
    }

    pub fn timeout(mut self, d: Duration) -> Cmd {
        self.timeout = d;
        self
    }

    /// Runs the child with the file mode creation mask `mask` (Unix).
    pub fn umask(mut self, mask: u32) -> Cmd {
        self.umask = Some(mask);
        self
    }

    /// Runs the child with `streams` on a terminal; what reaches it is
    /// [`RunOutput::terminal`] (stderr is then empty, and stdout too with [`Terminal::Both`]).
    pub fn on_terminal(mut self, streams: Terminal) -> Cmd {
        self.terminal = Some(streams);
        self
    }

    /// Sends the child's stdout to `to` instead of capturing it.
    pub fn stdout_to(mut self, to: Stdout) -> Cmd {
        self.stdout = to;
        self
    }

    /// Runs the binary to completion and collects its output.
    pub async fn run(self) -> RunOutput {
        // Kept alive until the run ends.
        let temp_dir;
        let dir = match &self.current_dir {
            Some(dir) => dir.clone(),
            None => {
                temp_dir = tempfile::tempdir().expect("create a temporary directory");
                temp_dir.path().to_owned()
            }
        };

        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(stdout_stdio(&self.stdout))
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let terminal_bytes = Arc::new(Mutex::new(Vec::new()));
        let pty = self.terminal.map(|streams| {
            let pty = Pty::open();
            let tty = pty.terminal();
            if streams == Terminal::Both {
                command.stdout(tty.try_clone().expect("the terminal, again"));
            }
            command.stderr(tty);
            pty
        });
        for var in isolated_vars() {
            command.env_remove(var);
        }
        command.env("NO_COLOR", "1");
        for (k, v) in &self.env {
            command.env(k, v);
        }
        for k in &self.removed {
            command.env_remove(k);
        }
        #[cfg(unix)]
        if let Some(mask) = self.umask {
            // SAFETY: umask(2) is async-signal-safe, the only call between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    libc::umask(mask as libc::mode_t);
                    Ok(())
                });
            }
        }

        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", self.program.display()));
        // The command holds our copies of the terminal: closed, only the child holds it, and
        // its reader sees the end when the child (and what it started) is gone.
        drop(command);
        let terminal_task = pty.map(|pty| pty.read_into(terminal_bytes.clone()));
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let stdout_task = child
            .stdout
            .take()
            .map(|pipe| collect(pipe, stdout.clone()));
        let stderr_task = child
            .stderr
            .take()
            .map(|pipe| collect(pipe, stderr.clone()));

        let signal = self.signal.clone();
        let pid = child.id();
        let waited = async {
            let mut sent = false;
            loop {
                tokio::select! {
                    status = child.wait() => break status,
                    () = tokio::time::sleep(Duration::from_millis(20)), if !sent && signal.is_some() => {
                        if let (Some((name, when)), Some(pid)) = (&signal, pid)
                            && (when.0)()
                        {
                            let _ = std::process::Command::new("kill")
                                .args(["-s", name, &pid.to_string()])
                                .status();
                            sent = true;
                        }
                    }
                }
            }
        };
        let status = match tokio::time::timeout(self.timeout, waited).await {
            Ok(status) => status.expect("wait for researchflow"),
            Err(_) => {
                let _ = child.kill().await;
                // Give the readers a moment to drain what the child wrote before it died.
                if let Some(task) = stderr_task {
                    let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
                }
                panic!(
                    "researchflow {:?} timed out after {:?}\n--- stdout so far ---\n{}\n--- stderr so far ---\n{}\n--- terminal so far ---\n{}",
                    self.args,
                    self.timeout,
                    String::from_utf8_lossy(&lock(&stdout)),
                    String::from_utf8_lossy(&lock(&stderr)),
                    String::from_utf8_lossy(&lock(&terminal_bytes)),
                );
            }
        };
        // The pipes close when the child exits (unless it left a grandchild holding them).
        for task in [stdout_task, stderr_task, terminal_task]
            .into_iter()
            .flatten()
        {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }

        let stdout = String::from_utf8_lossy(&lock(&stdout)).into_owned();
        let stderr = String::from_utf8_lossy(&lock(&stderr)).into_owned();
        let terminal = String::from_utf8_lossy(&lock(&terminal_bytes)).into_owned();
        RunOutput {
            status: status.code().unwrap_or(-1),
            stdout,
            stderr,
            terminal,
        }
    }
}

/// The child's stdout for `to`.
fn stdout_stdio(to: &Stdout) -> Stdio {
    match to {
        Stdout::Captured => Stdio::piped(),
        Stdout::ClosedPipe => {
            let (reader, writer) = std::io::pipe().expect("create a pipe");
            drop(reader);
            Stdio::from(writer)
        }
        Stdout::File(path) => Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .unwrap_or_else(|e| panic!("cannot open `{}`: {e}", path.display())),
        ),
    }
}

/// Reads `pipe` to its end into `buf`, chunk by chunk, so a timeout can show what came so far.
fn collect(
    mut pipe: impl AsyncRead + Unpin + Send + 'static,
    buf: Arc<Mutex<Vec<u8>>>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut chunk = [0u8; 8192];
        loop {
            match pipe.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => lock(&buf).extend_from_slice(&chunk[..n]),
            }
        }
    })
}

/// What a finished run produced.
#[derive(Clone, Debug)]
pub struct RunOutput {
    /// Exit code, -1 if killed by a signal.
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    /// What reached the terminal of [`Cmd::on_terminal`], as the terminal received it
    /// (cursor movements included, each newline as `\r\n`); empty without one.
    pub terminal: String,
}

impl RunOutput {
    /// Panics (printing stdout and stderr) unless the exit code is 0.
    #[track_caller]
    pub fn success(&self) -> &Self {
        self.code(0)
    }

    /// Panics (printing stdout and stderr) unless the exit code is `expected`.
    #[track_caller]
    pub fn code(&self, expected: i32) -> &Self {
        if self.status != expected {
            panic!(
                "expected exit code {expected}, got {}\n{}",
                self.status,
                self.dump()
            );
        }
        self
    }

    /// Parses stdout as one JSON value; panics with stdout on failure.
    #[track_caller]
    pub fn stdout_json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not one JSON value: {e}\n{}", self.dump()))
    }

    /// The `status` of the JSON on stdout: a run's outcome.
    #[track_caller]
    pub fn run_status(&self) -> serde_json::Value {
        self.stdout_json()["status"].clone()
    }

    /// The `reason` of the JSON on stdout, empty without one.
    #[track_caller]
    pub fn reason(&self) -> String {
        self.stdout_json()["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The lines of stderr that start with `error:`.
    pub fn error_lines(&self) -> Vec<&str> {
        self.stderr
            .lines()
            .filter(|l| l.starts_with("error:"))
            .collect()
    }

    /// Panics (printing both streams) unless stdout contains `needle`.
    #[track_caller]
    pub fn stdout_contains(&self, needle: &str) -> &Self {
        if !self.stdout.contains(needle) {
            panic!("stdout does not contain {needle:?}\n{}", self.dump());
        }
        self
    }

    /// Panics (printing both streams) unless stderr contains `needle`.
    #[track_caller]
    pub fn stderr_contains(&self, needle: &str) -> &Self {
        if !self.stderr.contains(needle) {
            panic!("stderr does not contain {needle:?}\n{}", self.dump());
        }
        self
    }

    fn dump(&self) -> String {
        format!(
            "--- stdout ---\n{}\n--- stderr ---\n{}\n--- terminal ---\n{}",
            self.stdout, self.stderr, self.terminal
        )
    }
}
