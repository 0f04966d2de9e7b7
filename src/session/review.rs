//! The review of an existing report in a [`Session`] (`researchflow review PLAN.json`): both
//! roles' calls on the plan's transcript as one more session, the review's events appended to
//! the plan's event log, a signal ending it `interrupted`.

use std::path::Path;

use super::Session;
use super::workflow::reviewer;
use crate::events::catalogue::ReviewFailed;
use crate::events::{Event, EventLog};
use crate::plan::{Beside, PlanFile};
use crate::review::{ReviewPaths, ReviewSummary, review_report};
use crate::run::{SetupError, Shutdown, session};

impl Session {
    /// Reviews the report beside `plan` (named `plan_path`, its files `beside`) until it ends
    /// or `stop` fires.
    pub async fn review(
        &self,
        plan: &PlanFile,
        plan_path: &Path,
        beside: &Beside,
        stop: Shutdown,
    ) -> Result<ReviewSummary, SetupError> {
        let tape = self.services.tape(
            &beside.transcript,
            session(&plan.workflow_id, plan.question(), None),
        )?;
        let reviewer = reviewer(&self.services, &tape, false)?;
        let events = EventLog::open(&beside.events).map_err(|e| {
            SetupError::config(anyhow::anyhow!(
                "cannot open the event log `{}`: {e}",
                beside.events.display()
            ))
        })?;
        let observer = events.observer("review");
        let paths = ReviewPaths::of(beside);
        let review = review_report(
            &reviewer,
            plan,
            plan_path,
            &beside.report,
            &paths,
            &observer,
        );
        Ok(tokio::select! {
            done = review => done,
            () = stop => {
                events.emit(Event::ReviewFailed(ReviewFailed::Review {
                    node: "review".into(),
                    error: "interrupted".into(),
                }));
                ReviewSummary::interrupted()
            }
        })
    }
}
