//! The review after the report: the last step of a run, after its outcome is saved and before
//! `run_finished`, which carries its summary. It runs only over a report that was written;
//! whatever it finds or however it fails, the run's status, outcome and report stay as they
//! are (see [`crate::review`]). A signal during the review stops it (`review_failed`,
//! `interrupted`).

use std::sync::Arc;

use super::engine::{Engine, ReviewStep};
use crate::agents::TaskRunner;
use crate::events::Event;
use crate::events::catalogue::ReviewFailed;
use crate::planner::PlanRound;
use crate::review::{ReviewSummary, review_report};
use crate::workflow::RunSummary;

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// Runs the review step over the run's report; `None` when the review is off.
    pub(super) async fn review(&mut self, summary: &RunSummary) -> Option<ReviewSummary> {
        let (reviewer, paths) = match std::mem::replace(&mut self.run.review, ReviewStep::Off) {
            ReviewStep::Off => return None,
            ReviewStep::Skip(note) => return Some(self.skip(note)),
            ReviewStep::Run { reviewer, paths } => (reviewer, paths),
        };
        let report = match &summary.report {
            Some(report) if !self.state.interrupted => report.clone(),
            _ => return Some(self.skip("no report was written".into())),
        };
        let events = Arc::clone(self.run.ledger.events());
        let observer = events.observer("review");
        let review = review_report(
            &reviewer,
            self.run.ledger.plan(),
            self.run.ledger.name(),
            &report,
            &paths,
            &observer,
        );
        tokio::select! {
            done = review => Some(done),
            () = &mut self.run.shutdown => {
                tracing::warn!("[review] interrupted; the research outcome is unchanged");
                self.run.ledger.emit(Event::ReviewFailed(ReviewFailed::Review {
                    node: "review".into(),
                    error: "interrupted".into(),
                }));
                Some(ReviewSummary::interrupted())
            }
        }
    }

    fn skip(&self, note: String) -> ReviewSummary {
        tracing::info!("[review] skipped: {note}");
        self.run.ledger.emit(Event::ReviewSkipped {
            node: "review".into(),
            reason: note.clone(),
        });
        ReviewSummary::skipped(note)
    }
}
