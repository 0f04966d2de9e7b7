//! Data on stdout, through one fallible writer for every command (`println!` panics when
//! stdout fails), and the few lines a command writes on stderr itself. JSON strings and text go
//! out without control characters (newlines and tabs aside), URL passwords or secrets of the
//! process, whatever servers, models or plan files put in them.
//!
//! A reader that closed the pipe (`researchflow validate plan F | head -1`) is not an error:
//! what remains is dropped and the command ends with the exit code it would have had, so a
//! finished run is never reported as failed because nobody read its summary. Any other failed
//! write (a full disk, an I/O error) is a [`StdoutError`]: exit 74 with one line on stderr,
//! after the work was saved. Paths printed here are absolute ([`absolute`]), whatever form
//! the user gave them in.

use std::io::{ErrorKind, Write};
use std::path::Path;

use serde::Serialize;

use crate::exit::CommandError;

/// stdout refused the result.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the result on stdout: {0}")]
pub struct StdoutError(std::io::Error);

impl StdoutError {
    /// The command's error, with what the caller knows is saved all the same.
    pub fn noting(self, saved: &str) -> CommandError {
        CommandError::output(anyhow::anyhow!("{self}; {saved}"))
    }
}

impl From<StdoutError> for CommandError {
    fn from(err: StdoutError) -> CommandError {
        CommandError::output(err)
    }
}

/// Prints `value` as pretty JSON on stdout.
pub fn print_json(value: &impl Serialize) -> Result<(), StdoutError> {
    // Serialising a `Value` or a plain struct cannot fail; if a type ever can, say so rather
    // than print half a document.
    let not_json =
        |e: serde_json::Error| StdoutError(std::io::Error::other(format!("not JSON: {e}")));
    let mut value = serde_json::to_value(value).map_err(not_json)?;
    crate::text::clean_json(&mut value);
    let mut text = serde_json::to_string_pretty(&value).map_err(not_json)?;
    text.push('\n');
    print_text(&text)
}

/// Whether stdout is a terminal: a person reads it, so a command that prints JSON for scripts
/// may print a few lines of text instead (unless `--json` asks for JSON).
pub fn stdout_is_terminal() -> bool {
    std::io::IsTerminal::is_terminal(&std::io::stdout())
}

/// Prints a command's result as text on stdout, cleaned as [`print_json`] cleans each string
/// ([`crate::text::clean`]: no control characters but newlines and tabs, no URL password), since
/// it quotes plan files, servers and models. A closed pipe drops it silently (see the module
/// doc).
pub fn print_text(text: &str) -> Result<(), StdoutError> {
    print_own_text(&crate::text::clean(text))
}

/// Prints text that the binary made itself and that holds nothing from outside (the man page,
/// the completion scripts, the JSON Schemas) as it is: their examples
/// (`postgres://USER:PASSWORD@HOST`) are no secrets and must stay whole.
pub fn print_own_text(text: &str) -> Result<(), StdoutError> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => {
            tracing::debug!("stdout is closed: the result is not printed");
            Ok(())
        }
        Err(e) => Err(StdoutError(e)),
    }
}

/// Writes one line on stderr, as `eprintln!` does but without panicking when stderr is
/// closed (a message that cannot be shown has nowhere else to go), the secrets of the process
/// masked.
pub fn eprint_line(text: &str) {
    let text = crate::text::secrets::mask(text);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{text}");
}

/// `path` as printed on stdout: absolute, symbolic links resolved when it exists (the name
/// the run's lock and outputs use), else joined to the working folder.
pub fn absolute(path: &Path) -> String {
    std::fs::canonicalize(path)
        .or_else(|_| std::path::absolute(path))
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}
