//! A workflow run wired in a [`Session`]: the engine chosen (a model's agents and planner, or
//! the offline engine over the corpus when there is no model), its event log and transcript
//! beside the plan, and the review step after its report. `Session` is what `workflow`,
//! `batch`, `eval`, `worker` and `mcp` hand a plan to ([`RunWorkflow`]).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::Session;
use crate::agents::verifier::Verifier;
use crate::agents::{Agents, TaskRunner};
use crate::events::{Event, EventListener, EventLog};
use crate::offline::{OfflineAgents, OfflinePlanner};
use crate::plan::{Beside, NodeStatus, PlanFile, beside};
use crate::planner::{PlanRound, Planner, bootstrap};
use crate::read::cache::PageCache;
use crate::review::{ReviewPaths, Reviewer};
use crate::run::Services;
use crate::run::{SetupError, session};
use crate::settings::{EngineKind, Prompt, Role};
use crate::transcript::{Salvage, Tape};
use crate::view::{Links, write_view};
use crate::workflow::{
    Checkpoints, Finished, Ledger, Mirrored, RunRequest, RunSummary, RunWorkflow,
};
use crate::workflow::{Engine, ReviewStep, RunParts};

impl RunWorkflow for Session {
    /// Runs one workflow on an opened plan to its end. Every call is recorded in the
    /// transcript beside the plan; with a replayed transcript, answered from it instead.
    async fn run(&self, request: RunRequest) -> Result<Finished, SetupError> {
        let RunRequest {
            store,
            mut plan,
            options,
            shutdown,
            listener,
            replay,
            mirror,
        } = request;
        let files = Beside::of(store.real_path());
        let plan_path = store.path().to_path_buf();
        let real_plan = store.real_path().to_path_buf();
        let (events_tee, transcript_tee) = match &mirror {
            Some(m) => (m.tee(beside::EVENTS), m.tee(beside::TRANSCRIPT)),
            None => (None, None),
        };
        let checkpoints: Box<dyn Checkpoints> = match mirror {
            Some(mirror) => Box::new(Mirrored { store, mirror }),
            None => Box::new(store),
        };
        // Not saved here: the next save holds them (the first round's, with its tasks' starts),
        // and a resume makes them again the same way.
        self.record_corpus(&mut plan);
        bootstrap(&mut plan);
        let events = Arc::new(self.event_log(&files.events, listener, events_tee)?);
        let replay = replay.or_else(|| self.services.replay.clone());
        let salvage = match replay {
            None => salvage(&files.transcript, &plan),
            Some(_) => None,
        };
        let mut tape = self.services.tape_replaying(
            &files.transcript,
            session(&plan.workflow_id, plan.question(), Some(options.max_rounds)),
            replay,
            transcript_tee,
        )?;
        tape.salvage = salvage;
        tracing::info!(
            "workflow `{}`: plan `{}`, events `{}`",
            plan.workflow_id,
            plan_path.display(),
            files.events.display()
        );
        let run = RunParts {
            ledger: Ledger::new(checkpoints, plan, events),
            options,
            shutdown,
            files: files.clone(),
            corpus_url: self.services.corpus_url(),
            review: self.review_step(ReviewPaths::of(&files), &tape, options.concurrency == 1)?,
            could_search: self.services.search.is_some(),
        };
        let summary = if self.services.settings.engine == EngineKind::Offline {
            let (runner, planner) = self.offline_engine(tape)?;
            engine(run, runner, planner).await
        } else {
            let (runner, planner) = self.llm_engine(tape, PageCache::beside(&real_plan))?;
            engine(run, runner, planner).await
        };
        let html_path = self.view(&real_plan, &files.html);
        Ok(Finished {
            summary,
            plan_path,
            report_path: files.report,
            events_path: files.events,
            transcript_path: files.transcript,
            html_path,
        })
    }
}

/// The answered calls of `plan`'s tasks that an interruption left unended (`running`, or
/// `planned` when it came before their start reached the plan), and of the planning round
/// whose outcome had not reached it, from its transcript: a resumed run does not pay for them
/// again.
fn salvage(transcript: &Path, plan: &PlanFile) -> Option<Arc<Salvage>> {
    let running: HashSet<String> = plan
        .nodes
        .iter()
        .filter(|n| matches!(n.status, NodeStatus::Running | NodeStatus::Planned))
        .map(|n| n.node_id.to_string())
        .collect();
    Salvage::load(transcript, running, plan.rounds + 1).map(Arc::new)
}

async fn engine<R: TaskRunner, P: PlanRound>(run: RunParts, runner: R, planner: P) -> RunSummary {
    Engine::new(run, runner, planner).run().await
}

impl Session {
    /// Records the run's corpus in the plan, so that a view made later without `--corpus`
    /// links its documents as the run's own view does. A run without a corpus keeps what an
    /// earlier one recorded: its sources are still cited.
    fn record_corpus(&self, plan: &mut crate::plan::PlanFile) {
        let corpus = self
            .services
            .corpus()
            .map(|dir| dir.to_string_lossy().into_owned());
        if corpus.is_some() {
            plan.corpus = corpus;
        }
    }

    /// Writes the run's view beside its report, unless `--no-html`; a view that cannot be
    /// written is a warning: the run itself is saved.
    fn view(&self, plan: &Path, out: &Path) -> Option<PathBuf> {
        if !self.services.settings.html {
            return None;
        }
        let links = Links::with_corpus(self.services.corpus_url());
        match write_view(plan, out, &links) {
            Ok(path) => Some(path),
            Err(e) => {
                tracing::warn!("no view of the run: {e}");
                None
            }
        }
    }

    /// The run's event log, with the local index's report as its first event.
    fn event_log(
        &self,
        path: &Path,
        listener: Option<Arc<dyn EventListener<Event>>>,
        tee: Option<crate::atomic::Tee>,
    ) -> Result<EventLog, SetupError> {
        let mut events = EventLog::open_teed(path, tee).map_err(|e| {
            SetupError::config(anyhow::anyhow!(
                "cannot open the event log `{}`: {e}",
                path.display()
            ))
        })?;
        if let Some(listener) = listener {
            events = events.with_listener(listener);
        }
        if let Some(report) = self.services.index_report() {
            events.emit(Event::local_index(report));
        }
        Ok(events)
    }

    /// What follows the report: the review by its two roles (`one_at_a_time`: one after the
    /// other), unless it is off (`review.enabled: false`, `--no-review`) or the engine has no
    /// model.
    fn review_step(
        &self,
        paths: ReviewPaths,
        tape: &Tape,
        one_at_a_time: bool,
    ) -> Result<ReviewStep, SetupError> {
        if !self.services.settings.review {
            return Ok(ReviewStep::Off);
        }
        if self.services.settings.engine == EngineKind::Offline {
            return Ok(ReviewStep::Skip(
                "the offline engine has no model to review the report".into(),
            ));
        }
        Ok(ReviewStep::Run {
            reviewer: Box::new(reviewer(&self.services, tape, one_at_a_time)?),
            paths,
        })
    }

    /// The task runner and planner of the offline engine, over the corpus.
    fn offline_engine(&self, tape: Tape) -> Result<(OfflineAgents, OfflinePlanner), SetupError> {
        let needs = || SetupError::config(anyhow::anyhow!("offline research needs a corpus"));
        let search = self.services.search.clone().ok_or_else(needs)?;
        let index = search.local_index().ok_or_else(needs)?;
        let planner = OfflinePlanner {
            index: Arc::clone(&index),
        };
        Ok((
            OfflineAgents {
                search,
                index,
                tape,
            },
            planner,
        ))
    }

    /// The sub-agents and the planner of a run with a model; the pages it reads are kept in
    /// `page_cache`.
    fn llm_engine(
        &self,
        tape: Tape,
        page_cache: PageCache,
    ) -> Result<(Agents, Planner), SetupError> {
        let services = &self.services;
        let planner = Planner {
            llm: services.llm(Role::Planning, &tape)?,
            system_prompt: services.prompts[Prompt::Planning].to_string(),
            finalise_prompt: services.prompts[Prompt::PlanningFinalise].to_string(),
            repair_attempts: services.settings.repair_attempts,
            log: self.log,
        };
        let verifier = match services.settings.verifier {
            true => Some(Verifier {
                llm: services.llm(Role::Verifier, &tape)?,
                prompt: services.prompts[Prompt::Verifier].to_string(),
                repair_attempts: services.settings.repair_attempts,
            }),
            false => None,
        };
        let agents = Agents {
            search_llm: services.llm(Role::Search, &tape)?,
            summary_llm: services.llm(Role::Summary, &tape)?,
            search: services.search.clone(),
            reader: services.reader.clone(),
            page_cache: Some(page_cache),
            passage_chars: services.settings.search.read.passage_chars,
            prompts: services.prompts.clone(),
            tape,
            claims_threshold: services.settings.claims_threshold,
            verifier,
        };
        Ok((agents, planner))
    }
}

/// The review stage's two roles, their calls on `tape`, asked together or `one_at_a_time`.
pub fn reviewer(
    services: &Services,
    tape: &Tape,
    one_at_a_time: bool,
) -> Result<Reviewer, SetupError> {
    Ok(Reviewer {
        review_llm: services.llm(Role::Review, tape)?,
        second_opinion_llm: services.llm(Role::SecondOpinion, tape)?,
        review_prompt: services.prompts[Prompt::Review].to_string(),
        second_opinion_prompt: services.prompts[Prompt::SecondOpinion].to_string(),
        repair_attempts: services.settings.repair_attempts,
        one_at_a_time,
    })
}
