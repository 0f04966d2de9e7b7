//! The supervisor: runs each parser's inputs in a worker process ([`crate::worker`]), so that
//! an input that ends the process (a stack overflow, an abort, an allocation past the memory
//! cap, a hang) is one more finding and not the end of the run. When a worker dies, the input
//! it left in `current-<parser>` is saved as a finding named after why it died (the last lines
//! of its stderr), and a new worker goes on from the next input.
//!
//! The counts are the workers' `@fuzz` lines added up; a worker's other output is passed on.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::Options;
use crate::worker::{self, MAX_WRITTEN_PER_KIND};

/// What one parser's run gave, over all its workers.
#[derive(Default)]
pub struct Report {
    pub inputs: u64,
    pub elapsed: Duration,
    pub failures: u64,
    pub slowest: Duration,
    pub peak: usize,
    /// Failures by kind.
    pub kinds: BTreeMap<String, u64>,
    /// Workers that died on an input.
    pub crashes: u64,
}

impl Report {
    fn read(&mut self, line: &str) -> Option<u64> {
        let rest = line.strip_prefix("@fuzz ")?;
        let (what, value) = rest.split_once(' ').unwrap_or((rest, ""));
        let number = value.parse::<u64>().unwrap_or(0);
        match what {
            "slowest" => self.slowest = self.slowest.max(Duration::from_micros(number)),
            "peak" => self.peak = self.peak.max(number as usize),
            "fail" => {
                self.failures += 1;
                *self.kinds.entry(value.to_string()).or_default() += 1;
            }
            "done" => return Some(number),
            _ => {}
        }
        None
    }
}

/// Runs parser `name` until its count and time are done, through as many workers as it takes.
pub fn run(name: &str, o: &Options) -> Result<Report, String> {
    let report = Arc::new(Mutex::new(Report::default()));
    let start = Instant::now();
    let total = Duration::from_secs(o.seconds);
    let mut from = 0u64;
    loop {
        let done_inputs = report.lock().map(|r| r.inputs).unwrap_or(0);
        let left = total.saturating_sub(start.elapsed());
        if from > 0 && left.is_zero() && (done_inputs >= o.count || o.seconds_given) {
            break;
        }
        let (status, tail, finished) = spawn(
            name,
            o,
            from,
            o.count.saturating_sub(done_inputs),
            left,
            &report,
        )?;
        if let Some(n) = finished {
            if let Ok(mut r) = report.lock() {
                r.inputs += n;
            }
            break;
        }
        let Some(signal) = status.signal() else {
            return Err(format!(
                "the `{name}` worker failed ({status}): {}",
                tail.join(" | ")
            ));
        };
        let Some((n, bytes)) = worker::in_flight(&o.findings, name) else {
            return Err(format!(
                "the `{name}` worker died by signal {signal} outside an input: {}",
                tail.join(" | ")
            ));
        };
        let why = death(signal, &tail, o);
        let kind = worker::kind_of(&why);
        if let Ok(mut r) = report.lock() {
            r.inputs += n + 1 - from;
            r.failures += 1;
            r.crashes += 1;
            let seen = r.kinds.entry(kind.clone()).or_default();
            *seen += 1;
            if *seen <= MAX_WRITTEN_PER_KIND {
                worker::record(name, &o.findings, n, &bytes, &why);
            } else {
                eprintln!("{name}: input {n}: {why}");
            }
        }
        for file in [format!("current-{name}"), format!("current-{name}.at")] {
            let _ = std::fs::remove_file(o.findings.join(file));
        }
        from = n + 1;
    }
    let mut report = Arc::try_unwrap(report)
        .ok()
        .and_then(|m| m.into_inner().ok())
        .unwrap_or_default();
    report.elapsed = start.elapsed();
    Ok(report)
}

/// Why a worker died, from the signal and the last lines it wrote on stderr.
fn death(signal: i32, tail: &[String], o: &Options) -> String {
    let line = |needle: &str| tail.iter().rev().find(|l| l.contains(needle)).cloned();
    if let Some(said) = line("has overflowed its stack") {
        format!("crash: stack overflow ({said})")
    } else if let Some(said) = line("memory allocation of") {
        format!(
            "memory: an allocation past --max-mb {} aborted the process ({said})",
            o.max_mb
        )
    } else if let Some(said) = line("hang: ") {
        said
    } else {
        let said = tail[tail.len().saturating_sub(3)..].join(" | ");
        format!("crash: signal {signal} ({said})")
    }
}

type Spawned = (std::process::ExitStatus, Vec<String>, Option<u64>);

/// Runs one worker from input `from` and waits for it: its exit status, the last lines of its
/// stderr, and the inputs it reports having run when it finished its share.
fn spawn(
    name: &str,
    o: &Options,
    from: u64,
    count: u64,
    left: Duration,
    report: &Arc<Mutex<Report>>,
) -> Result<Spawned, String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find the fuzzer: {e}"))?;
    let mut command = Command::new(exe);
    command
        .args(["--worker", "--only", name, "--findings"])
        .arg(&o.findings)
        .args(["--from", &from.to_string(), "--count", &count.to_string()])
        .args(["--millis", &left.as_millis().to_string()])
        .args(["--seed", &o.seed.to_string()])
        .args(["--slow-ms", &o.slow.as_millis().to_string()])
        .args(["--hang-ms", &o.hang.as_millis().to_string()])
        .args(["--max-mb", &o.max_mb.to_string()])
        // The alloc error handler's backtrace would push why the worker died out of the tail.
        .env("RUST_BACKTRACE", "0");
    if o.seconds_given {
        command.arg("--hard-limit");
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start a worker: {e}"))?;
    let stderr = child.stderr.take().map(BufReader::new);
    let tail = std::thread::spawn(move || {
        let mut tail = VecDeque::new();
        for line in stderr
            .into_iter()
            .flat_map(|r| r.lines())
            .map_while(Result::ok)
        {
            eprintln!("{line}");
            tail.push_back(line);
            if tail.len() > 8 {
                tail.pop_front();
            }
        }
        Vec::from(tail)
    });
    let mut finished = None;
    if let Some(stdout) = child.stdout.take() {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let done = report.lock().ok().and_then(|mut r| r.read(&line));
            if line.starts_with("@fuzz ") {
                finished = finished.or(done);
            } else {
                let _ = writeln!(std::io::stdout(), "{line}");
            }
        }
    }
    let status = child
        .wait()
        .map_err(|e| format!("cannot wait for a worker: {e}"))?;
    let tail = tail.join().unwrap_or_default();
    Ok((status, tail, finished))
}
