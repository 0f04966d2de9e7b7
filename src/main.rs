//! The `researchflow` binary: load `.env`, parse arguments, set up logging, run the command and
//! map its result to an exit code (see `exit.rs`). Nothing here writes with `eprintln!`, which
//! panics when stderr is closed.

use std::process::ExitCode;

use researchflow::exit::ExitStatus;
use researchflow::logging::Escape;
use researchflow::output::eprint_line;

fn main() -> ExitCode {
    // `.env` of the working folder first (not of its parents: a stray file higher up must not
    // change a cron job), so that flags reading the environment see its values, by their
    // names or their old ones.
    let dotenv = dotenvy::from_path(".env");
    let cli = researchflow::cli::parse();
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
    match runtime.block_on(researchflow::cmd::run(cli)) {
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
