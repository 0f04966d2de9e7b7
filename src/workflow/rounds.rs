//! The engine's planning side: one planning round (the same round as `researchflow plan`) on
//! a draft of the plan, which the ledger commits; the plan review recorded (a
//! `plan_review` event, `<plan>.plan-review.json`, a `task_dropped` event per task it dropped,
//! which the next round hears of); and the final summary the orchestrator adds itself when the planner
//! does not finalise.

use std::path::PathBuf;

use tracing::Instrument;

use super::ledger::Ledger;
use crate::clock;
use crate::events::Event;
use crate::events::catalogue::{PlanningFailed, RoundPlanned};
use crate::planner::{
    FailedTask, PlanRound, RoundError, RoundNotes, RoundOutcome, force_final, plan_review_file,
};
use crate::run::Shutdown;
use crate::workflow::EngineError;

/// The planning side of a run: its planner, what the next round must hear of, and what the
/// rounds of this invocation learnt for the run's end.
pub(super) struct Rounds<P> {
    planner: P,
    /// Failed tasks and tasks the plan review dropped, for the next round.
    notes: RoundNotes,
    /// Why planning rounds of this invocation failed, for a degraded run's notice.
    errors: Vec<String>,
    /// Whether the round limit made a round finalise: with nothing researched, that is why.
    limit_finalised: bool,
    /// Rounds in a row that planned nothing (or failed).
    zero_streak: u32,
    /// `<plan>.plan-review.json`.
    verdict_file: PathBuf,
    /// The write of the latest verdict file, on a thread of its own so that the round's tasks
    /// do not wait for its fsync; awaited before the next one starts and before the run ends.
    verdict_write: Option<tokio::task::JoinHandle<()>>,
}

/// How a round went.
pub(super) enum Planned {
    /// The round ran (it may have planned nothing).
    Ran,
    /// The shutdown came while the planner was asked.
    Interrupted,
}

impl<P: PlanRound> Rounds<P> {
    pub(super) fn new(planner: P, verdict_file: PathBuf) -> Rounds<P> {
        Rounds {
            planner,
            notes: RoundNotes::default(),
            errors: Vec::new(),
            limit_finalised: false,
            zero_streak: 0,
            verdict_file,
            verdict_write: None,
        }
    }

    /// Waits for the verdict file being written, if one is: the run's files are all on disk
    /// when it ends, and two writes of the file never cross.
    pub(super) async fn settle(&mut self) {
        if let Some(write) = self.verdict_write.take() {
            let _ = write.await;
        }
    }

    /// Tasks that failed, which the next round hears of.
    pub(super) fn hear(&mut self, failed: Vec<FailedTask>) {
        self.notes.failed.extend(failed);
    }

    /// The round limit was reached before a round could finalise.
    pub(super) fn limit_reached(&mut self) {
        self.limit_finalised = true;
    }

    /// Why planning rounds of this invocation failed.
    pub(super) fn errors(&self) -> &[String] {
        &self.errors
    }

    /// Whether the round limit made a round finalise.
    pub(super) fn limit_finalised(&self) -> bool {
        self.limit_finalised
    }

    /// The next planning round; `last` when the round limit makes it the last one. The last
    /// round, and any round after two in a row that planned nothing, must finalise; when it
    /// does not, the orchestrator adds the final summary itself.
    pub(super) async fn next(
        &mut self,
        ledger: &mut Ledger,
        shutdown: &mut Shutdown,
        last: bool,
    ) -> Result<Planned, EngineError> {
        self.limit_finalised |= last;
        self.settle().await;
        let must_finalise = last || self.zero_streak >= 2;
        let Some(planned_any) = self.plan_round(ledger, shutdown, must_finalise).await? else {
            return Ok(Planned::Interrupted);
        };
        self.zero_streak = if planned_any { 0 } else { self.zero_streak + 1 };
        Ok(Planned::Ran)
    }

    /// One planning round. Returns whether it planned any task; `None` when interrupted.
    async fn plan_round(
        &mut self,
        ledger: &mut Ledger,
        shutdown: &mut Shutdown,
        must_finalise: bool,
    ) -> Result<Option<bool>, EngineError> {
        // Round numbers continue across resumes; `totals.rounds` counts this invocation's.
        let round = ledger.plan().rounds + 1;
        let notes = RoundNotes {
            must_finalise,
            ..std::mem::take(&mut self.notes)
        };
        // The planner changes a draft; only the ledger writes the plan.
        let mut draft = ledger.plan().clone();
        let events = std::sync::Arc::clone(ledger.events());
        let observer = events.observer("planner");
        let span = tracing::info_span!("planning", round);
        let result = tokio::select! {
            biased;
            _ = &mut *shutdown => return Ok(None),
            r = self
                .planner
                .plan_round(&mut draft, &notes, &observer)
                .instrument(span) => r,
        };
        match result {
            Err(RoundError::Llm(e)) if e.is_unusable() => {
                ledger.count_round(Default::default());
                Err(EngineError::Unusable(e.to_string()))
            }
            Err(RoundError::Llm(e)) if e.is_diverged() => {
                ledger.count_round(Default::default());
                Err(EngineError::Diverged(e.to_string()))
            }
            Ok(outcome) if must_finalise && !outcome.answer.is_final => {
                ledger.count_round(outcome.usage);
                ledger.stage(|plan| plan.rounds = round);
                ledger.emit(Event::RoundPlanned(RoundPlanned::Discarded {
                    round,
                    tasks: planned_ids(&outcome),
                    is_final: false,
                    discarded: true,
                }));
                add_final(ledger, "the planner did not finalise in the last round");
                Ok(Some(true))
            }
            Ok(outcome) => {
                ledger.count_round(outcome.usage);
                draft.rounds = round;
                ledger.stage(|plan| *plan = draft);
                self.record_round(ledger, round, &outcome);
                Ok(Some(!outcome.applied.planned.is_empty()))
            }
            Err(err) => {
                ledger.count_round(Default::default());
                self.planning_failed(ledger, round, &err, notes)?;
                if must_finalise {
                    add_final(ledger, "planning failed in the last round");
                    return Ok(Some(true));
                }
                Ok(Some(false))
            }
        }
    }

    /// A round whose planning failed: logged, recorded, and its notes kept for the next one.
    fn planning_failed(
        &mut self,
        ledger: &mut Ledger,
        round: u32,
        err: &RoundError,
        notes: RoundNotes,
    ) -> Result<(), EngineError> {
        tracing::warn!("round {round}: planning failed: {err}");
        ledger.emit(Event::PlanningFailed(PlanningFailed::Round {
            round,
            error: err.to_string(),
        }));
        self.errors.push(err.to_string());
        ledger.edit("planning failed", |plan| plan.rounds = round)?;
        // The failed round's notes still matter to the next one.
        self.notes = RoundNotes {
            must_finalise: false,
            ..notes
        };
        Ok(())
    }

    /// Logs and records a round whose answer was applied; its save is left to the starts of
    /// its tasks.
    fn record_round(&mut self, ledger: &mut Ledger, round: u32, outcome: &RoundOutcome) {
        let ids = planned_ids(outcome);
        let final_mark = if outcome.answer.is_final {
            " (final)"
        } else {
            ""
        };
        tracing::info!("round {round}: planned {} task(s){final_mark}", ids.len());
        self.record_verdict(ledger, round, outcome);
        ledger.emit(Event::RoundPlanned(RoundPlanned::Applied {
            round,
            tasks: ids,
            is_final: outcome.answer.is_final,
            refs: outcome.applied.resolved_refs.clone(),
            calls: outcome.calls,
            tokens: outcome.usage.total_tokens,
        }));
        // Saved with the starts of its tasks, once they are under way (`tasks.rs`).
        ledger.save_later("round planned");
    }

    /// The plan review on the round: its event and file, and the tasks it dropped, which the next
    /// round hears of. The file is a report, not the run's state: it is written beside the
    /// round's tasks ([`Rounds::settle`]), and failing to write it is a warning.
    fn record_verdict(&mut self, ledger: &Ledger, round: u32, outcome: &RoundOutcome) {
        let verdict = &outcome.applied.verdict;
        verdict.log();
        ledger.emit(Event::PlanReview {
            round,
            ok: verdict.ok,
            issues: verdict.issues.clone(),
        });
        let (path, written) = (self.verdict_file.clone(), verdict.clone());
        self.verdict_write = Some(tokio::task::spawn_blocking(move || {
            if let Err(e) = plan_review_file::save(&path, &written) {
                tracing::warn!("cannot write the plan review `{}`: {e}", path.display());
            }
        }));
        for dropped in &outcome.applied.dropped {
            ledger.emit(Event::TaskDropped {
                round,
                title: dropped.title.clone(),
                issue: dropped.issue.id.clone(),
                reason: dropped.issue.kind.clone(),
                message: dropped.issue.message.clone(),
                repeats: dropped.repeats.map(|of| of.to_string()),
            });
            self.notes.dropped.push(dropped.issue.clone());
        }
    }
}

/// Adds the final summary over every completed node, on the orchestrator's own authority.
pub(super) fn add_final(ledger: &mut Ledger, reason: &str) {
    let node = ledger.stage(|plan| force_final(plan, &clock::now()));
    tracing::info!(
        "adding the final summary `{}` myself: {reason}",
        node.node_id
    );
    ledger.emit(Event::FinalForced {
        node: node.node_id.to_string(),
        reason: reason.to_string(),
        p_node: node.p_node.clone(),
    });
    ledger.save_later("final summary added");
}

fn planned_ids(outcome: &RoundOutcome) -> Vec<String> {
    outcome
        .applied
        .planned
        .iter()
        .map(|n| n.node_id.to_string())
        .collect()
}
