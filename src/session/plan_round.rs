//! One planning round in a [`Session`] (`researchflow plan`): with the planning model, its
//! calls on the transcript beside the plan, or with the offline planner over the corpus.

use std::path::Path;
use std::sync::Arc;

use super::Session;
use crate::http::NoObserver;
use crate::offline::OfflinePlanner;
use crate::plan::{Beside, PlanFile};
use crate::planner::{PlanRound, Planner, RoundError, RoundNotes, RoundOutcome};
use crate::run::{Services, SetupError, session};
use crate::settings::{EngineKind, Prompt, Role, Settings};
use crate::transcript::Replayer;

impl Session {
    /// A session for planning rounds: the corpus's index for the offline planner, the
    /// planning model alone otherwise (no corpus is indexed for nothing), its calls answered
    /// from `replay` when given.
    pub async fn for_planning(
        settings: Settings,
        replay: Option<Arc<Replayer>>,
    ) -> Result<Session, SetupError> {
        if settings.engine == EngineKind::Offline {
            return Session::open(settings, None).await;
        }
        let mut services = Services::bare(settings)?;
        services.replay = replay;
        Ok(Session::of(services))
    }

    /// One round on `plan` (saved at `path` by the caller). The outer error is the set-up's,
    /// the inner one the round's.
    pub async fn plan_round(
        &self,
        plan: &mut PlanFile,
        path: &Path,
    ) -> Result<Result<RoundOutcome, RoundError>, SetupError> {
        let notes = RoundNotes::default();
        let services = &self.services;
        if services.settings.engine == EngineKind::Offline {
            let index = services
                .search
                .as_ref()
                .and_then(|s| s.local_index())
                .ok_or_else(|| {
                    SetupError::config(anyhow::anyhow!("offline planning needs a corpus"))
                })?;
            let planner = OfflinePlanner { index };
            return Ok(planner.plan_round(plan, &notes, &NoObserver).await);
        }
        // The round's transcript beside the plan file.
        let tape = services.tape(
            &Beside::of(path).transcript,
            session(&plan.workflow_id, plan.question(), None),
        )?;
        let planner = Planner {
            llm: services.llm(Role::Planning, &tape)?,
            system_prompt: services.prompts[Prompt::Planning].to_string(),
            finalise_prompt: services.prompts[Prompt::PlanningFinalise].to_string(),
            repair_attempts: services.settings.repair_attempts,
            log: self.log,
        };
        Ok(planner.plan_round(plan, &notes, &NoObserver).await)
    }
}
