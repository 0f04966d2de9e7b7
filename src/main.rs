//! The `researchflow` binary: load `.env`, parse arguments, set up logging, run the command and
//! map its result to an exit code (see `exit.rs`). Nothing here writes with `eprintln!`, which
//! panics when stderr is closed.

use std::process::ExitCode;
use std::time::Duration;

use researchflow::exit::ExitStatus;
use researchflow::logging::Escape;
use researchflow::output::eprint_line;

/// How long the end of a command waits for work it left running on blocking threads.
const SHUTDOWN_GRACE: Duration = Duration::from_millis(500);

fn main() -> ExitCode {
    // `.env` of the working folder first (not of its parents: a stray file higher up must not
    // change a cron job), so that flags reading the environment see its values, by their
    // names or their old ones.
    let dotenv = dotenvy::from_path(".env");
    let cli = researchflow::cli::parse();
    // A parser process serves its parent on stdin and stdout, on one thread, without a
    // runtime: its memory cap is for the documents it reads.
    if let researchflow::cli::Command::ParseWorker(args) = &cli.command {
        return researchflow::cmd::parse_worker::run(args).into();
    }
    researchflow::logging::init(researchflow::cmd::log_config(&cli));
    if let Err(err) = dotenv
        && !err.not_found()
    {
        tracing::warn!("ignoring `.env`: {err}");
    }

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(err) => {
            eprint_line(&format!("error: cannot start the async runtime: {err}"));
            return ExitStatus::Failure.into();
        }
    };
    let result = runtime.block_on(researchflow::cmd::run(cli));
    // The command is done and its files saved: a blocking thread still waiting on a parser
    // process (a page whose run was interrupted) must not hold the exit. Such a parser ends
    // with this process.
    runtime.shutdown_timeout(SHUTDOWN_GRACE);
    match result {
        Ok(status) => status.into(),
        Err(err) => {
            // A server's words may be in the message: escape what could act on the terminal,
            // and mask a URL's password should one be quoted.
            let text = err.to_string();
            let text = researchflow::text::without_url_passwords(&text);
            let shown = researchflow::logging::escape_controls(&text, Escape::KeepLines);
            eprint_line(&format!("error: {shown}"));
            err.status.into()
        }
    }
}
