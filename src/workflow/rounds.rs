//! The engine's planning side: one planning round (the same round as `researchflow plan`) on
//! a draft of the plan, which the ledger commits; the plan gate's verdict recorded (a
//! `plan_review` event, `<plan>.plan-review.json`, a `task_dropped` event per task it dropped,
//! which the next round hears of); and the final summary the orchestrator adds itself when the planner
//! does not finalise.

use tracing::Instrument;

use super::engine::Engine;
use crate::agents::TaskRunner;
use crate::clock;
use crate::events::Event;
use crate::events::catalogue::{PlanningFailed, RoundPlanned};
use crate::planner::{PlanRound, RoundError, RoundNotes, RoundOutcome, force_final, gate_file};
use crate::workflow::EngineError;

impl<R: TaskRunner, P: PlanRound> Engine<R, P> {
    /// One planning round. Returns whether it planned any task.
    pub(super) async fn plan_round(&mut self, must_finalise: bool) -> Result<bool, EngineError> {
        // Round numbers continue across resumes; `totals.rounds` counts this invocation's.
        let round = self.run.ledger.plan().rounds + 1;
        let notes = RoundNotes {
            must_finalise,
            ..std::mem::take(&mut self.state.notes)
        };
        // The planner changes a draft; only the ledger writes the plan.
        let mut draft = self.run.ledger.plan().clone();
        let events = std::sync::Arc::clone(self.run.ledger.events());
        let observer = events.observer("planner");
        let span = tracing::info_span!("planning", round);
        let result = tokio::select! {
            biased;
            _ = &mut self.run.shutdown => {
                self.state.interrupted = true;
                return Ok(false);
            }
            r = self
                .planner
                .plan_round(&mut draft, &notes, &observer)
                .instrument(span) => r,
        };
        match result {
            Err(RoundError::Llm(e)) if e.is_unusable() => {
                self.run.ledger.count_round(Default::default());
                Err(EngineError::Unusable(e.to_string()))
            }
            Err(RoundError::Llm(e)) if e.is_diverged() => {
                self.run.ledger.count_round(Default::default());
                Err(EngineError::Diverged(e.to_string()))
            }
            Ok(outcome) if must_finalise && !outcome.answer.is_final => {
                self.run.ledger.count_round(outcome.usage);
                self.run.ledger.stage(|plan| plan.rounds = round);
                self.run
                    .ledger
                    .emit(Event::RoundPlanned(RoundPlanned::Discarded {
                        round,
                        tasks: planned_ids(&outcome),
                        is_final: false,
                        discarded: true,
                    }));
                self.add_final("the planner did not finalise in the last round")?;
                Ok(true)
            }
            Ok(outcome) => {
                self.run.ledger.count_round(outcome.usage);
                draft.rounds = round;
                self.run.ledger.stage(|plan| *plan = draft);
                self.record_round(round, &outcome)?;
                Ok(!outcome.applied.planned.is_empty())
            }
            Err(err) => {
                self.run.ledger.count_round(Default::default());
                self.planning_failed(round, &err, notes)?;
                if must_finalise {
                    self.add_final("planning failed in the last round")?;
                    return Ok(true);
                }
                Ok(false)
            }
        }
    }

    /// A round whose planning failed: logged, recorded, and its notes kept for the next one.
    fn planning_failed(
        &mut self,
        round: u32,
        err: &RoundError,
        notes: RoundNotes,
    ) -> Result<(), EngineError> {
        tracing::warn!("round {round}: planning failed: {err}");
        self.run
            .ledger
            .emit(Event::PlanningFailed(PlanningFailed::Round {
                round,
                error: err.to_string(),
            }));
        self.state.planning_errors.push(err.to_string());
        self.run
            .ledger
            .edit("planning failed", |plan| plan.rounds = round)?;
        // The failed round's notes still matter to the next one.
        self.state.notes = RoundNotes {
            must_finalise: false,
            ..notes
        };
        Ok(())
    }

    /// Logs, records and saves a round whose answer was applied.
    fn record_round(&mut self, round: u32, outcome: &RoundOutcome) -> Result<(), EngineError> {
        let ids = planned_ids(outcome);
        let final_mark = if outcome.answer.is_final {
            " (final)"
        } else {
            ""
        };
        tracing::info!("round {round}: planned {} task(s){final_mark}", ids.len());
        self.record_verdict(round, outcome);
        self.run
            .ledger
            .emit(Event::RoundPlanned(RoundPlanned::Applied {
                round,
                tasks: ids,
                is_final: outcome.answer.is_final,
                refs: outcome.applied.resolved_refs.clone(),
                calls: outcome.calls,
                tokens: outcome.usage.total_tokens,
            }));
        self.run.ledger.save("round planned")
    }

    /// The gate's verdict on the round: its event and file, and the tasks it dropped, which the next
    /// round hears of. The file is a report, not the run's state: failing to write it is a
    /// warning.
    fn record_verdict(&mut self, round: u32, outcome: &RoundOutcome) {
        let verdict = &outcome.applied.verdict;
        verdict.log();
        self.run.ledger.emit(Event::GateVerdict {
            round,
            ok: verdict.ok,
            issues: verdict.issues.clone(),
        });
        let path = &self.run.files.gate_verdict;
        if let Err(e) = gate_file::save(path, verdict) {
            tracing::warn!("cannot write the plan review `{}`: {e}", path.display());
        }
        for dropped in &outcome.applied.dropped {
            self.run.ledger.emit(Event::TaskDropped {
                round,
                title: dropped.title.clone(),
                issue: dropped.issue.id.clone(),
                reason: dropped.issue.kind.clone(),
                message: dropped.issue.message.clone(),
                repeats: dropped.repeats.map(|of| of.to_string()),
            });
            self.state.notes.dropped.push(dropped.issue.clone());
        }
    }

    /// Adds the final summary over every completed node, on the orchestrator's own authority.
    pub(super) fn add_final(&mut self, reason: &str) -> Result<(), EngineError> {
        let node = self
            .run
            .ledger
            .stage(|plan| force_final(plan, &clock::now()));
        tracing::info!(
            "adding the final summary `{}` myself: {reason}",
            node.node_id
        );
        self.run.ledger.emit(Event::FinalForced {
            node: node.node_id.to_string(),
            reason: reason.to_string(),
            p_node: node.p_node.clone(),
        });
        self.run.ledger.save("final summary added")
    }
}

fn planned_ids(outcome: &RoundOutcome) -> Vec<String> {
    outcome
        .applied
        .planned
        .iter()
        .map(|n| n.node_id.to_string())
        .collect()
}
