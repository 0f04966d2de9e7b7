//! A fuzzer for the four parsers that read untrusted text, on stable Rust (no libFuzzer): the
//! plan loader, the ref parser, the info block parser and the planner-answer extraction.
//!
//! For each parser it generates inputs (random bytes as lossy UTF-8, token soup with the
//! parser's special strings weighted up, mutations of valid seeds, and valid inputs whose
//! parse is known), runs the parser under `catch_unwind` and checks cheap invariants. A panic,
//! a broken invariant or an input slower than `--slow-ms` is a finding: the input is written
//! to `<findings>/<parser>-<n>.txt` and the exit code is 1.
//!
//! ```text
//! fuzz_parsers [--seconds S] [--count N] [--seed N] [--only PARSER] [--findings DIR]
//!              [--slow-ms MS] [--replay FILE --only PARSER]
//! ```
//!
//! Each parser runs until it has tried `--count` inputs (default 1,000,000) and `--seconds`
//! (default 60) have passed, whichever comes last; an explicit `--seconds` is also a hard
//! limit, so `--seconds 5` is a short run that may stop before the count. The seed (default
//! fixed) makes every run reproducible: the same seed generates the same inputs. `--replay`
//! runs the invariants on one saved finding; a finding against a generated input's known parse
//! (a valid plan, ref list, blocks or answer) needs its expectation, so rerun the seed instead.

mod extract;
mod info;
mod inputs;
mod plan;
mod refs;
mod target;

use std::collections::BTreeMap;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use inputs::Gen;
use target::{Input, Target};

const DEFAULT_SEED: u64 = 0x5eed_f022;
/// Findings written per kind (the text of a failure before its first `: `); one bug tends to
/// be found thousands of times.
const MAX_WRITTEN_PER_KIND: u64 = 3;

struct Options {
    seconds: u64,
    seconds_given: bool,
    count: u64,
    seed: u64,
    only: Option<String>,
    findings: PathBuf,
    slow: Duration,
    replay: Option<PathBuf>,
}

fn usage(msg: &str) -> ExitCode {
    eprintln!("fuzz_parsers: {msg}");
    eprintln!(
        "usage: fuzz_parsers [--seconds S] [--count N] [--seed N] [--only plan|refs|info|extract_json] [--findings DIR] [--slow-ms MS] [--replay FILE]"
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
        replay: None,
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
            "--only" => o.only = Some(value()?),
            "--findings" => o.findings = PathBuf::from(value()?),
            "--replay" => o.replay = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument `{flag}`")),
        }
    }
    Ok(o)
}

/// The panic message of the last panic, kept by a quiet hook (the default hook would print a
/// backtrace note for every panicking input).
static LAST_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn install_quiet_hook() {
    panic::set_hook(Box::new(|info| {
        if let Ok(mut last) = LAST_PANIC.lock() {
            *last = Some(info.to_string());
        }
    }));
}

/// Runs the invariants on one input: `Err` describes a panic or a broken invariant.
fn run_one(target: &dyn Target, input: &Input) -> Result<(), String> {
    match panic::catch_unwind(AssertUnwindSafe(|| target.check(input))) {
        Ok(result) => result,
        Err(_) => {
            let msg = LAST_PANIC
                .lock()
                .ok()
                .and_then(|mut m| m.take())
                .unwrap_or_else(|| "a panic".into());
            Err(format!("panic: {msg}"))
        }
    }
}

struct Report {
    inputs: u64,
    elapsed: Duration,
    failures: u64,
    slowest: Duration,
    /// Failures by kind.
    kinds: BTreeMap<String, u64>,
}

fn fuzz(target: &dyn Target, o: &Options, index: u64) -> Report {
    // Each parser has its own stream, so `--only` reproduces what a full run generated.
    let mut g = Gen::new(o.seed ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let start = Instant::now();
    let limit = Duration::from_secs(o.seconds);
    let (mut inputs, mut failures, mut slowest) = (0u64, 0u64, Duration::ZERO);
    let mut kinds: BTreeMap<String, u64> = BTreeMap::new();
    loop {
        let elapsed = start.elapsed();
        // Until the time is up and the count reached; an explicit `--seconds` ends it anyway.
        let done = elapsed >= limit && (inputs >= o.count || o.seconds_given);
        if done {
            break;
        }
        let input = target::generate(target, &mut g);
        let t0 = Instant::now();
        let mut result = run_one(target, &input);
        let took = t0.elapsed();
        slowest = slowest.max(took);
        if result.is_ok() && took > o.slow {
            result = Err(format!(
                "slow: {} ms for {} bytes",
                took.as_millis(),
                input.text.len()
            ));
        }
        inputs += 1;
        if let Err(why) = result {
            failures += 1;
            let kind = why.split(": ").next().unwrap_or_default().to_string();
            let seen = kinds.entry(kind).or_default();
            *seen += 1;
            if *seen <= MAX_WRITTEN_PER_KIND {
                record(target.name(), o, failures, inputs, &input.text, &why);
            }
        }
    }
    Report {
        inputs,
        elapsed: start.elapsed(),
        failures,
        slowest,
        kinds,
    }
}

/// Writes a finding to a file and says so on stderr.
fn record(name: &str, o: &Options, n: u64, at: u64, text: &str, why: &str) {
    let path = o.findings.join(format!("{name}-{n}.txt"));
    let written = std::fs::create_dir_all(&o.findings).and_then(|()| std::fs::write(&path, text));
    let shown: String = why.chars().take(600).collect();
    match written {
        Ok(()) => eprintln!("{name}: input {at}: {shown}\n  saved as {}", path.display()),
        Err(e) => eprintln!(
            "{name}: input {at}: {shown}\n  cannot save {}: {e}",
            path.display()
        ),
    }
}

fn replay(targets: &[Box<dyn Target>], o: &Options, file: &Path) -> ExitCode {
    let Some(target) = targets.iter().find(|t| Some(t.name()) == o.only.as_deref()) else {
        return usage("`--replay` needs `--only PARSER`");
    };
    let text = match std::fs::read(file) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return usage(&format!("cannot read `{}`: {e}", file.display())),
    };
    let t0 = Instant::now();
    let mut result = run_one(target.as_ref(), &Input::noise(text));
    let took = t0.elapsed();
    if result.is_ok() && took > o.slow {
        result = Err(format!("slow: {} ms", took.as_millis()));
    }
    match result {
        Ok(()) => {
            println!("{}: `{}` passes", target.name(), file.display());
            ExitCode::SUCCESS
        }
        Err(why) => {
            println!("{}: `{}` fails: {why}", target.name(), file.display());
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let o = match parse_args() {
        Ok(o) => o,
        Err(msg) => return usage(&msg),
    };
    let targets: Vec<Box<dyn Target>> = vec![
        Box::new(plan::PlanTarget::new()),
        Box::new(refs::RefsTarget::new()),
        Box::new(info::InfoTarget::new()),
        Box::new(extract::ExtractTarget::new()),
    ];
    if let Some(only) = &o.only
        && !targets.iter().any(|t| t.name() == only)
    {
        return usage(&format!("unknown parser `{only}`"));
    }
    install_quiet_hook();
    if let Some(file) = &o.replay {
        return replay(&targets, &o, file);
    }
    println!(
        "seed {}; each parser: {} inputs and {} s, whichever comes last{}",
        o.seed,
        o.count,
        o.seconds,
        if o.seconds_given {
            " (the time is a hard limit)"
        } else {
            ""
        }
    );
    println!(
        "{:<13} {:>10} {:>10} {:>9} {:>10} {:>9}",
        "parser", "inputs", "inputs/s", "failures", "slowest", "seconds"
    );
    let mut failed = false;
    for (index, target) in targets.iter().enumerate() {
        if o.only.as_deref().is_some_and(|only| only != target.name()) {
            continue;
        }
        let r = fuzz(target.as_ref(), &o, index as u64);
        failed |= r.failures > 0;
        println!(
            "{:<13} {:>10} {:>10.0} {:>9} {:>7.1} ms {:>9.1}",
            target.name(),
            r.inputs,
            r.inputs as f64 / r.elapsed.as_secs_f64().max(1e-9),
            r.failures,
            r.slowest.as_secs_f64() * 1000.0,
            r.elapsed.as_secs_f64()
        );
        for (kind, n) in &r.kinds {
            println!("{:<13} {n:>10} x {kind}", "");
        }
    }
    if failed {
        eprintln!(
            "findings in `{}`; reproduce with --seed {}, or check one with --replay FILE --only PARSER",
            o.findings.display(),
            o.seed
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
