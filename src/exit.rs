//! Exit codes, defined once for every command, and the error type that carries one.
//!
//! | code | meaning |
//! |------|---------|
//! | 0    | success |
//! | 1    | the run or the validation failed |
//! | 2    | usage, configuration or input that cannot be read |
//! | 3    | `watch`: something worth telling changed (`--notify-on`) |
//! | 4    | `watch`: a notification could not be sent (the run is saved) |
//! | 74   | the result could not be written on stdout (sysexits' `EX_IOERR`); the work is saved |
//! | 130  | interrupted (after a checkpoint) |
//!
//! A reader that closed stdout (`researchflow ... | head -1`) is not an error: the command
//! ends with the code it would have had (see `output.rs`).

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    Success,
    Failure,
    Usage,
    /// `watch`: something worth telling changed.
    Changed,
    /// `watch`: a notification could not be sent, after the run was saved.
    NotifyFailed,
    /// stdout refused the result (a full disk, an I/O error), after the work was saved.
    OutputFailed,
    Interrupted,
}

impl ExitStatus {
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::Usage => 2,
            ExitStatus::Changed => 3,
            ExitStatus::NotifyFailed => 4,
            ExitStatus::OutputFailed => 74,
            ExitStatus::Interrupted => 130,
        }
    }
}

impl From<ExitStatus> for std::process::ExitCode {
    fn from(status: ExitStatus) -> Self {
        std::process::ExitCode::from(status.code())
    }
}

/// An error that ends a command, with the exit status it maps to. Shown with its causes, each
/// once ([`crate::text::error_chain`]).
#[derive(Debug)]
pub struct CommandError {
    pub status: ExitStatus,
    inner: anyhow::Error,
}

impl std::fmt::Display for CommandError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let err: &(dyn std::error::Error + 'static) = self.inner.as_ref();
        f.write_str(&crate::text::error_chain(err))
    }
}

impl std::error::Error for CommandError {}

impl CommandError {
    /// Bad usage, configuration or unreadable input: exit 2.
    pub fn usage(err: impl Into<anyhow::Error>) -> CommandError {
        CommandError {
            status: ExitStatus::Usage,
            inner: err.into(),
        }
    }

    /// The run failed: exit 1.
    pub fn failure(err: impl Into<anyhow::Error>) -> CommandError {
        CommandError {
            status: ExitStatus::Failure,
            inner: err.into(),
        }
    }

    /// The result could not be written on stdout: exit 74.
    pub fn output(err: impl Into<anyhow::Error>) -> CommandError {
        CommandError {
            status: ExitStatus::OutputFailed,
            inner: err.into(),
        }
    }
}

pub type CommandResult = Result<ExitStatus, CommandError>;

/// What a build without the cargo feature `feature` says of `what` (a command, a provider):
/// that it lacks it, and how to install a build that has it.
pub fn feature_missing(what: &str, feature: &str) -> String {
    format!(
        "{what} needs the `{feature}` feature, which this build of researchflow lacks: install it with `cargo install --locked --path . --features {feature}` (or `--features full` for every feature)"
    )
}

impl CommandError {
    /// A command of a feature this build lacks: exit 2 ([`feature_missing`]).
    pub fn missing_feature(command: &str, feature: &str) -> CommandError {
        CommandError::usage(anyhow::anyhow!(feature_missing(
            &format!("`researchflow {command}`"),
            feature
        )))
    }
}
