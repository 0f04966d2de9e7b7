//! What a workflow run's status, and its review's verdict, do to a command's exit code (the book:
//! `docs/src/exit-codes.md`), with the line on stderr that says why for anything short of
//! `completed`.

use std::path::Path;

use crate::events::RunStatus;
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::logging::{Escape, escape_controls};
use crate::output::eprint_line;
use crate::review::{ReviewStatus, ReviewSummary};
use crate::workflow::{EngineError, RunSummary};

/// The exit code a run's status maps to.
pub fn run_exit(summary: RunSummary, plan_path: &Path) -> CommandResult {
    let shown = plan_path.display();
    let reason = summary.reason.unwrap_or_default();
    // A server's words may be in the reason: escape what could act on the terminal.
    let escaped = escape_controls(&reason, Escape::KeepLines);
    match summary.status {
        RunStatus::Completed => Ok(ExitStatus::Success),
        RunStatus::Interrupted => Ok(ExitStatus::Interrupted),
        // The user asked for the limit: a partial run is a success, said plainly.
        RunStatus::Partial => {
            eprint_line(&format!(
                "note: partial run: {escaped}; the report says so at its top"
            ));
            Ok(ExitStatus::Success)
        }
        RunStatus::Degraded => {
            eprint_line(&format!(
                "error: degraded run: {escaped}; the report says so at its top; fix the cause and run again"
            ));
            Ok(ExitStatus::Failure)
        }
        RunStatus::FinalFailed => {
            eprint_line(&format!(
                "error: {escaped}; completed results are in `{shown}`: fix the cause and resume with `--plan {shown}`"
            ));
            Ok(ExitStatus::Failure)
        }
        RunStatus::Failed => {
            let failure = summary
                .failure
                .map_or_else(|| anyhow::anyhow!(reason), anyhow::Error::new);
            let unusable = failure
                .downcast_ref::<EngineError>()
                .is_some_and(|e| matches!(e, EngineError::Unusable(_)));
            let failure = failure.context(format!(
                "the run stopped; what it completed is saved in `{shown}`"
            ));
            Err(if unusable {
                CommandError::usage(failure)
            } else {
                CommandError::failure(failure)
            })
        }
    }
}

/// A command's exit status once it is known whether the report answers: a report that says
/// its sources do not answer is noted on stderr, and with `fail_on_unanswered` fails a run
/// that would otherwise succeed.
pub fn answer_exit(
    status: ExitStatus,
    answered: Option<bool>,
    fail_on_unanswered: bool,
) -> ExitStatus {
    if status != ExitStatus::Success || answered != Some(false) {
        return status;
    }
    let said = "the report says its sources do not answer the question";
    if fail_on_unanswered {
        eprint_line(&format!(
            "error: not answered: {said} (`--fail-on-unanswered`)"
        ));
        return ExitStatus::Failure;
    }
    eprint_line(&format!("note: not answered: {said}"));
    status
}

/// A command's exit status once its review is known: a review stopped by a signal is an
/// interruption, and with `fail_on_block` a `block` verdict fails a run that succeeded. A
/// review that failed changes nothing (the research stands as it is).
pub fn verdict_exit(
    status: ExitStatus,
    review: Option<&ReviewSummary>,
    fail_on_block: bool,
) -> ExitStatus {
    let Some(review) = review.filter(|_| status == ExitStatus::Success) else {
        return status;
    };
    if review.status == ReviewStatus::Interrupted {
        return ExitStatus::Interrupted;
    }
    if fail_on_block && review.is_block() {
        let notes = review
            .files
            .as_ref()
            .map_or_else(String::new, |f| format!("; see `{}`", f.markdown));
        eprint_line(&format!(
            "error: the review's verdict is `block`: the report is not to be used as it stands{notes}"
        ));
        return ExitStatus::Failure;
    }
    status
}
