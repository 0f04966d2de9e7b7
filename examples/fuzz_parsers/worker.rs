//! The worker: runs one parser on its inputs in this process, under the bounds a finding is
//! measured against, and tells the supervisor ([`crate::supervise`]) what it saw.
//!
//! Each input runs on a thread with the 2 MiB stack of tokio's blocking pool (where the
//! program runs its parsers), under `catch_unwind`, with its peak memory measured by the
//! counting allocator and capped at `--max-mb`, and watched by a thread that aborts the
//! process when one input runs past `--hang-ms`. Before an input runs it is written to
//! `<findings>/current-<parser>` (its number to `current-<parser>.at`), so that an input
//! that ends the process (a stack overflow, an abort, an allocation past the cap, a hang)
//! is on disk for the supervisor to save; both files are removed when the run ends.
//!
//! What the supervisor reads is printed on stdout as `@fuzz` lines, flushed line by line, so
//! that what was printed before an abort is not lost.

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::Options;
use crate::alloc::{self, Mark};
use crate::inputs::Gen;
use crate::target::{self, Input, Target};

/// Findings written per kind (the text of a failure before its first `: `); one bug tends to
/// be found thousands of times.
pub const MAX_WRITTEN_PER_KIND: u64 = 3;
/// The stack of a tokio blocking thread, where the program parses documents.
const STACK_BYTES: usize = 2 << 20;

/// The panic message of the last panic, kept by a quiet hook (the default hook would print a
/// backtrace note for every panicking input).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

/// When the input now running started (milliseconds since [`EPOCH`], 0 when none runs), and
/// its number: what the watchdog reads.
static RUNNING_SINCE: AtomicU64 = AtomicU64::new(0);
static RUNNING: AtomicU64 = AtomicU64::new(0);
static EPOCH: std::sync::LazyLock<Instant> = std::sync::LazyLock::new(Instant::now);

pub fn install_quiet_hook() {
    panic::set_hook(Box::new(|info| {
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(info.to_string());
        }
    }));
}

/// Aborts the process when one input runs longer than `hang`: a parser stuck for minutes
/// would stop the run, and catching it is the point.
fn start_watchdog(hang: Duration) {
    let _ = std::thread::Builder::new()
        .name("watchdog".into())
        .spawn(move || {
            loop {
                std::thread::sleep(Duration::from_millis(50));
                let since = RUNNING_SINCE.load(Relaxed);
                let now = EPOCH.elapsed().as_millis() as u64 + 1;
                if since != 0 && now.saturating_sub(since) > hang.as_millis() as u64 {
                    eprintln!(
                        "hang: input {} still running after {} ms",
                        RUNNING.load(Relaxed),
                        hang.as_millis()
                    );
                    std::process::abort();
                }
            }
        });
}

/// What one input gave: `Err` describes a panic, a broken invariant, or a bound passed.
pub struct Outcome {
    pub result: Result<(), String>,
    pub took: Duration,
    pub peak: usize,
}

/// Runs the invariants on one input, timed and measured.
pub fn run_one(target: &dyn Target, input: &Input, n: u64, o: &Options) -> Outcome {
    RUNNING.store(n, Relaxed);
    RUNNING_SINCE.store(EPOCH.elapsed().as_millis() as u64 + 1, Relaxed);
    let mark = Mark::start();
    let t0 = Instant::now();
    let caught = panic::catch_unwind(AssertUnwindSafe(|| target.check(input)));
    let took = t0.elapsed();
    let (peak, refused) = mark.end();
    RUNNING_SINCE.store(0, Relaxed);
    let mut result = caught.unwrap_or_else(|_| {
        let msg = LAST_PANIC
            .lock()
            .ok()
            .and_then(|mut m| m.take())
            .unwrap_or_else(|| "a panic".into());
        Err(format!("panic: {msg}"))
    });
    if refused {
        result = Err(format!(
            "memory: an allocation past --max-mb {} was refused ({} MB held)",
            o.max_mb,
            peak >> 20
        ));
    } else if result.is_ok() && took > o.slow {
        result = Err(format!(
            "slow: {} ms for {} bytes",
            took.as_millis(),
            input.bytes.len()
        ));
    }
    Outcome { result, took, peak }
}

/// Runs `f` on a thread with the stack the program parses on, with the memory cap and the
/// watchdog set.
pub fn bounded<T: Send + 'static>(o: &Options, f: impl FnOnce() -> T + Send + 'static) -> T {
    alloc::set_limit(usize::try_from(o.max_mb << 20).unwrap_or(usize::MAX));
    start_watchdog(o.hang);
    let thread = std::thread::Builder::new()
        .name("parser".into())
        .stack_size(STACK_BYTES)
        .spawn(f);
    // Spawning and joining fail only when the system is out of threads or the thread
    // panicked outside catch_unwind: nothing to go on with either way.
    thread
        .expect("a thread for the parser")
        .join()
        .expect("the parser thread ends")
}

/// The input running now, on disk so that it outlives an abort.
struct InFlight {
    input: File,
    at: File,
    paths: [PathBuf; 2],
}

impl InFlight {
    fn open(dir: &Path, name: &str) -> std::io::Result<InFlight> {
        std::fs::create_dir_all(dir)?;
        let paths = [
            dir.join(format!("current-{name}")),
            dir.join(format!("current-{name}.at")),
        ];
        Ok(InFlight {
            input: File::create(&paths[0])?,
            at: File::create(&paths[1])?,
            paths,
        })
    }

    /// Writes input `n` before it runs: its number and `r` (running), then its bytes.
    fn begin(&self, n: u64, bytes: &[u8]) -> std::io::Result<()> {
        self.at.write_all_at(format!("{n:020} r").as_bytes(), 0)?;
        self.input.write_all_at(bytes, 0)?;
        self.input.set_len(bytes.len() as u64)
    }

    /// Marks the input done: the process may now die without it being to blame.
    fn end(&self) -> std::io::Result<()> {
        self.at.write_all_at(b"d", 21)
    }

    fn remove(self) {
        for path in &self.paths {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Reads what [`InFlight`] left: the number of the input that was running, and its bytes
/// (`None` when no input was running).
pub fn in_flight(dir: &Path, name: &str) -> Option<(u64, Vec<u8>)> {
    let at = std::fs::read_to_string(dir.join(format!("current-{name}.at"))).ok()?;
    let (n, state) = at.split_once(' ')?;
    let n = n.parse().ok()?;
    let bytes = std::fs::read(dir.join(format!("current-{name}"))).ok()?;
    (state == "r").then_some((n, bytes))
}

/// Runs one parser from input `o.from` on, for `o.count` inputs and `o.millis`, and prints
/// `@fuzz` lines; the exit code is 0.
pub fn work(targets: Vec<Box<dyn Target + Send>>, o: Options) -> std::process::ExitCode {
    let Some(index) = targets
        .iter()
        .position(|t| Some(t.name()) == o.only.as_deref())
    else {
        return crate::usage("a worker needs `--only PARSER`");
    };
    let findings = o.findings.clone();
    let name = targets[index].name();
    let flight = match InFlight::open(&findings, name) {
        Ok(flight) => flight,
        Err(e) => return crate::usage(&format!("cannot write in `{}`: {e}", findings.display())),
    };
    let bound = o.clone();
    bounded(&bound, move || {
        let target = &targets[index];
        fuzz(target.as_ref(), &o, index as u64, &flight);
        flight.remove();
    });
    std::process::ExitCode::SUCCESS
}

fn fuzz(target: &dyn Target, o: &Options, index: u64, flight: &InFlight) {
    let start = Instant::now();
    let limit = Duration::from_millis(o.millis);
    let mut written = written_kinds(&o.findings, target.name());
    let (mut inputs, mut slowest, mut peak) = (0u64, Duration::ZERO, 0usize);
    loop {
        // Until the time is up and the count reached; an explicit `--seconds` ends it anyway.
        if start.elapsed() >= limit && (inputs >= o.count || o.seconds_given) {
            break;
        }
        let n = o.from + inputs;
        let input = target::generate(target, &mut Gen::for_input(o.seed, index, n));
        // Without the file an abort would lose the input: no run without it.
        if let Err(e) = flight.begin(n, &input.bytes) {
            eprintln!(
                "{}: cannot save the input before it runs: {e}",
                target.name()
            );
            break;
        }
        let outcome = run_one(target, &input, n, o);
        let _ = flight.end();
        inputs += 1;
        if outcome.took > slowest {
            slowest = outcome.took;
            println!("@fuzz slowest {}", slowest.as_micros());
        }
        if outcome.peak > peak {
            peak = outcome.peak;
            println!("@fuzz peak {peak}");
        }
        if let Err(why) = outcome.result {
            let kind = kind_of(&why);
            println!("@fuzz fail {kind}");
            let seen = written.entry(kind).or_default();
            if *seen < MAX_WRITTEN_PER_KIND {
                *seen += 1;
                record(target.name(), &o.findings, n, &input.bytes, &why);
            }
        }
    }
    println!("@fuzz done {inputs}");
}

/// The kind of a failure: its text before the first `: `, on one line.
pub fn kind_of(why: &str) -> String {
    why.split(": ")
        .next()
        .unwrap_or_default()
        .replace(['\n', '\t'], " ")
}

/// How many findings of each kind are saved already (the log of an earlier worker of this
/// run, which died).
fn written_kinds(findings: &Path, name: &str) -> BTreeMap<String, u64> {
    let log = std::fs::read_to_string(findings.join(format!("{name}.log"))).unwrap_or_default();
    let mut kinds = BTreeMap::new();
    for line in log.lines() {
        if let Some((_, why)) = line.split_once('\t') {
            *kinds.entry(kind_of(why)).or_default() += 1;
        }
    }
    kinds
}

/// Saves a finding as `<parser>-<n>.txt`, notes why in `<parser>.log`, and says so on stderr.
pub fn record(name: &str, dir: &Path, n: u64, bytes: &[u8], why: &str) {
    let file = format!("{name}-{n}.txt");
    let path = dir.join(&file);
    let shown: String = why.chars().take(600).collect();
    let line = format!("{file}\t{}\n", shown.replace(['\n', '\t'], " "));
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, bytes))
        .and_then(|()| {
            use std::io::Write;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join(format!("{name}.log")))?
                .write_all(line.as_bytes())
        });
    match written {
        Ok(()) => eprintln!("{name}: input {n}: {shown}\n  saved as {}", path.display()),
        Err(e) => eprintln!(
            "{name}: input {n}: {shown}\n  cannot save {}: {e}",
            path.display()
        ),
    }
}
