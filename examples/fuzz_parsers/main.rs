//! A fuzzer for the parsers that read untrusted input, on stable Rust (no libFuzzer): the four
//! text parsers (the plan loader, the ref parser, the info block parser, the planner-answer
//! extraction) and the document parsers (HTML pages and corpus HTML, PDF text, Markdown, man
//! pages, charset decoding, gzip files).
//!
//! For each parser it generates inputs (random bytes, token soup with the parser's special
//! strings weighted up, mutations of valid seeds, and structure-aware valid inputs: deep and
//! self-closed nesting, foreign content, compressed streams and bombs, with a known answer
//! where there is one), runs the parser under `catch_unwind` and checks cheap invariants. A
//! panic, a broken invariant, an input slower than `--slow-ms`, one whose peak memory passes
//! `--max-mb` (a counting global allocator measures it and refuses past it), one still
//! running after `--hang-ms`, and one that ends the process (a stack overflow, an abort) is a
//! finding: the input is written to `<findings>/<parser>-<n>.txt` (`n`: its number in the
//! parser's stream), why to `<findings>/<parser>.log`, and the exit code is 1.
//!
//! ```text
//! fuzz_parsers [--seconds S] [--count N] [--seed N] [--only PARSER] [--findings DIR]
//!              [--slow-ms MS] [--hang-ms MS] [--max-mb MB] [--replay FILE --only PARSER]
//! ```
//!
//! Each parser runs until it has tried `--count` inputs (default 1,000,000) and `--seconds`
//! (default 60) have passed, whichever comes last; an explicit `--seconds` is also a hard
//! limit, so `--seconds 5` is a short run that may stop before the count. The seed (default
//! fixed) makes every run reproducible: the same seed generates the same inputs. Inputs run
//! in worker processes ([`supervise`]) so that one that kills its process is saved and the
//! run goes on. `--replay` runs the invariants on one saved finding, in this process; a
//! finding against a generated input's known answer needs its expectation, so rerun the seed
//! instead.

mod alloc;
mod bomb;
mod charset;
mod extract;
mod gzip;
mod html;
mod info;
mod inputs;
mod man;
mod markdown;
mod pdf;
mod pdf_gen;
mod plan;
mod refs;
mod supervise;
mod target;
mod worker;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use target::{Input, Target};

#[global_allocator]
static ALLOCATOR: alloc::Counting = alloc::Counting;

const DEFAULT_SEED: u64 = 0x5eed_f022;
const PARSERS: &str = "plan|refs|info|extract_json|html|pdf|markdown|charset|gzip|man";

#[derive(Clone)]
pub struct Options {
    seconds: u64,
    seconds_given: bool,
    count: u64,
    seed: u64,
    only: Option<String>,
    findings: PathBuf,
    slow: Duration,
    hang: Duration,
    max_mb: u64,
    replay: Option<PathBuf>,
    /// A worker's share, set by the supervisor: run in this process from input `from` for
    /// `millis`.
    worker: bool,
    from: u64,
    millis: u64,
}

pub fn usage(msg: &str) -> ExitCode {
    eprintln!("fuzz_parsers: {msg}");
    eprintln!(
        "usage: fuzz_parsers [--seconds S] [--count N] [--seed N] [--only {PARSERS}] [--findings DIR] [--slow-ms MS] [--hang-ms MS] [--max-mb MB] [--replay FILE]"
    );
    ExitCode::from(2)
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        seconds: 60,
        seconds_given: false,
        count: 1_000_000,
        seed: DEFAULT_SEED,
        only: None,
        findings: PathBuf::from("target/fuzz-findings"),
        slow: Duration::from_millis(2000),
        hang: Duration::ZERO,
        max_mb: 512,
        replay: None,
        worker: false,
        from: 0,
        millis: 0,
    };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or(format!("`{flag}` needs a value"));
        let number = |v: String| {
            v.replace('_', "")
                .parse::<u64>()
                .map_err(|_| format!("`{v}` is not a number"))
        };
        match flag.as_str() {
            "--seconds" => {
                o.seconds = number(value()?)?;
                o.seconds_given = true;
            }
            "--count" => o.count = number(value()?)?,
            "--seed" => o.seed = number(value()?)?,
            "--slow-ms" => o.slow = Duration::from_millis(number(value()?)?),
            "--hang-ms" => o.hang = Duration::from_millis(number(value()?)?),
            "--max-mb" => o.max_mb = number(value()?)?,
            "--only" => o.only = Some(value()?),
            "--findings" => o.findings = PathBuf::from(value()?),
            "--replay" => o.replay = Some(PathBuf::from(value()?)),
            "--worker" => o.worker = true,
            "--from" => o.from = number(value()?)?,
            "--millis" => o.millis = number(value()?)?,
            "--hard-limit" => o.seconds_given = true,
            _ => return Err(format!("unknown argument `{flag}`")),
        }
    }
    if o.hang.is_zero() {
        // A hang is an input twice as slow as a slow one: a finding already, and its worker is
        // stopped so the run goes on.
        o.hang = o.slow * 2;
    }
    Ok(o)
}

fn targets() -> Vec<Box<dyn Target + Send>> {
    vec![
        Box::new(plan::PlanTarget::new()),
        Box::new(refs::RefsTarget::new()),
        Box::new(info::InfoTarget::new()),
        Box::new(extract::ExtractTarget::new()),
        Box::new(html::HtmlTarget::new()),
        Box::new(pdf::PdfTarget::new()),
        Box::new(markdown::MarkdownTarget::new()),
        Box::new(charset::CharsetTarget::new()),
        Box::new(gzip::GzipTarget::new()),
        // Last, so that the parsers before it keep their streams of inputs.
        Box::new(man::ManTarget::new()),
    ]
}

/// Runs one saved input in this process, on the parser thread with its bounds: a crash ends
/// the process as it ended the worker.
fn replay(targets: Vec<Box<dyn Target + Send>>, o: &Options, file: &Path) -> ExitCode {
    let Some(index) = targets
        .iter()
        .position(|t| Some(t.name()) == o.only.as_deref())
    else {
        return usage("`--replay` needs `--only PARSER`");
    };
    let bytes = match std::fs::read(file) {
        Ok(bytes) => bytes,
        Err(e) => return usage(&format!("cannot read `{}`: {e}", file.display())),
    };
    let shown = file.display().to_string();
    let options = o.clone();
    worker::bounded(o, move || {
        let target = &targets[index];
        let input = if target.binary() {
            Input::noise(bytes)
        } else {
            Input::noise(String::from_utf8_lossy(&bytes).into_owned().into_bytes())
        };
        let outcome = worker::run_one(target.as_ref(), &input, 0, &options);
        let took = format!(
            "{:.1} ms, {:.1} MB at its peak",
            outcome.took.as_secs_f64() * 1000.0,
            outcome.peak as f64 / 1_048_576.0
        );
        match outcome.result {
            Ok(()) => {
                println!("{}: `{shown}` passes ({took})", target.name());
                ExitCode::SUCCESS
            }
            Err(why) => {
                println!("{}: `{shown}` fails ({took}): {why}", target.name());
                ExitCode::from(1)
            }
        }
    })
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(msg) => return usage(&msg),
    };
    let targets = targets();
    if let Some(only) = &o.only
        && !targets.iter().any(|t| t.name() == only)
    {
        return usage(&format!("unknown parser `{only}`"));
    }
    worker::install_quiet_hook();
    if o.worker {
        return worker::work(targets, o);
    }
    if let Some(file) = &o.replay {
        return replay(targets, &o, file);
    }
    println!(
        "seed {}; each parser: {} inputs and {} s, whichever comes last{}; slow over {} ms, \
         a hang at {} ms, memory over {} MB",
        o.seed,
        o.count,
        o.seconds,
        if o.seconds_given {
            " (the time is a hard limit)"
        } else {
            ""
        },
        o.slow.as_millis(),
        o.hang.as_millis(),
        o.max_mb
    );
    println!(
        "{:<13} {:>10} {:>9} {:>9} {:>11} {:>8} {:>8}",
        "parser", "inputs", "inputs/s", "failures", "slowest", "peak MB", "seconds"
    );
    let mut failed = false;
    for target in &targets {
        if o.only.as_deref().is_some_and(|only| only != target.name()) {
            continue;
        }
        let started = Instant::now();
        let r = match supervise::run(target.name(), &o) {
            Ok(r) => r,
            Err(why) => {
                eprintln!("fuzz_parsers: {why}");
                return ExitCode::from(3);
            }
        };
        failed |= r.failures > 0;
        let elapsed = started.elapsed().as_secs_f64();
        println!(
            "{:<13} {:>10} {:>9.0} {:>9} {:>8.1} ms {:>8.1} {:>8.1}",
            target.name(),
            r.inputs,
            r.inputs as f64 / elapsed.max(1e-9),
            r.failures,
            r.slowest.as_secs_f64() * 1000.0,
            r.peak as f64 / 1_048_576.0,
            elapsed
        );
        for (kind, n) in &r.kinds {
            println!("{:<13} {n:>10} x {kind}", "");
        }
        if r.crashes > 0 {
            println!("{:<13} {:>10} of them killed their worker", "", r.crashes);
        }
    }
    if failed {
        eprintln!(
            "findings in `{}` (why in its *.log); reproduce with --seed {}, or check one with --replay FILE --only PARSER",
            o.findings.display(),
            o.seed
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
