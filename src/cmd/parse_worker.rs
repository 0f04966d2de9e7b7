//! `researchflow parse-worker` (hidden): a parser process started by [`crate::isolate::Pool`],
//! serving the document jobs of [`crate::read::jobs`] within the limits of
//! [`crate::isolate::serve`].

use crate::cli::ParseWorkerArgs;
use crate::exit::ExitStatus;

/// Serves jobs until stdin ends: exit 0, or 1 when the stream broke.
pub fn run(args: &ParseWorkerArgs) -> ExitStatus {
    let memory = args.memory_mb.saturating_mul(1024 * 1024);
    match crate::isolate::serve(memory, args.parent, crate::read::jobs::handle) {
        Ok(()) => ExitStatus::Success,
        Err(_) => ExitStatus::Failure,
    }
}
