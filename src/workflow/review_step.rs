//! The review after the report: the last step of a run, after its outcome is saved and before
//! `run_finished`, which carries its summary. It runs only over a report that was written by
//! a run that completed or stopped at a budget (a degraded run's report disowns itself);
//! whatever it finds or however it fails, the run's status, outcome and report stay as they
//! are (see [`crate::review`]). A signal during the review stops it (`review_failed`,
//! `interrupted`).

use std::sync::Arc;

use super::ledger::Ledger;
use crate::events::catalogue::ReviewFailed;
use crate::events::{Event, RunStatus};
use crate::review::{ReviewPaths, ReviewSummary, Reviewer, review_report};
use crate::run::Shutdown;
use crate::workflow::RunSummary;

/// What happens after the report.
pub enum ReviewStep {
    /// No review (`--no-review`, `review.enabled: false`).
    Off,
    /// No review, with the note saying why (the offline engine has no model).
    Skip(String),
    /// The review, by these roles, into these files.
    Run {
        reviewer: Box<Reviewer>,
        paths: ReviewPaths,
    },
}

impl ReviewStep {
    /// The review of the run's report (`summary`'s), unless it is off, there is no report, the
    /// run is degraded, or it was `interrupted`; `shutdown` stops it.
    pub(super) async fn run(
        self,
        ledger: &mut Ledger,
        shutdown: &mut Shutdown,
        summary: &RunSummary,
        interrupted: bool,
    ) -> Option<ReviewSummary> {
        let (reviewer, paths) = match self {
            ReviewStep::Off => return None,
            ReviewStep::Skip(note) => return Some(skip(ledger, note)),
            ReviewStep::Run { reviewer, paths } => (reviewer, paths),
        };
        let report = match &summary.report {
            Some(report) if !interrupted => report.clone(),
            _ => return Some(skip(ledger, "no report was written".into())),
        };
        if !matches!(summary.status, RunStatus::Completed | RunStatus::Partial) {
            let note = "the run is degraded: its report says at its top that it is no answer, \
                        so a review would spend calls on what no one should read";
            return Some(skip(ledger, note.into()));
        }
        let events = Arc::clone(ledger.events());
        let observer = events.observer("review");
        let review = review_report(
            &reviewer,
            ledger.plan(),
            ledger.name(),
            &report,
            &paths,
            &observer,
        );
        tokio::select! {
            done = review => Some(done),
            () = &mut *shutdown => {
                tracing::warn!("[review] interrupted; the research outcome is unchanged");
                ledger.emit(Event::ReviewFailed(ReviewFailed::Review {
                    node: "review".into(),
                    error: "interrupted".into(),
                }));
                Some(ReviewSummary::interrupted())
            }
        }
    }
}

fn skip(ledger: &Ledger, note: String) -> ReviewSummary {
    tracing::info!("[review] skipped: {note}");
    ledger.emit(Event::ReviewSkipped {
        node: "review".into(),
        reason: note.clone(),
    });
    ReviewSummary::skipped(note)
}
