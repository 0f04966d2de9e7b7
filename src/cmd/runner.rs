//! Running workflows: what every run of a process shares ([`Shared`]: the settings, the HTTP
//! pool, the search client and its index, the prompts, the structured-output negotiation, the
//! rate budget of each endpoint),
//! and one run on an opened plan file to its end, with a model or with the extractive engine.
//! Used by `workflow` (one run) and `batch` (many at once).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::research;
use crate::agents::{Agents, TaskRunner};
use crate::exit::CommandError;
use crate::http::Gates;
use crate::kernel::{Event, EventListener, EventLog, RunSummary, Shutdown};
use crate::llm::{LlmClient, Negotiator};
use crate::offline::{ExtractivePlanner, ExtractiveRunner};
use crate::plan::{Beside, PlanFile, PlanStore};
use crate::planner::{LogOptions, PlanRound, Planner, bootstrap};
use crate::prompts::Prompts;
use crate::review::{ReviewPaths, Reviewer};
use crate::search::SearchClient;
use crate::settings::{EngineKind, Role, Settings};
use crate::transcript::{Recorder, Replayer, SessionLine, Tape};
use crate::workflow::{Engine, EngineParts, ReviewStep, WorkflowOptions};

/// What every workflow run of one process shares.
pub struct Shared {
    pub settings: Settings,
    pub http: reqwest::Client,
    pub search: Option<SearchClient>,
    pub prompts: Prompts,
    /// One per process: a refusal learnt by one run serves every run.
    pub negotiator: Arc<Negotiator>,
    /// One rate budget per endpoint for every call of every run.
    pub gates: Arc<Gates>,
    pub log: LogOptions,
}

/// A run that ended, and where its files are.
pub struct Finished {
    pub summary: RunSummary,
    pub plan_path: PathBuf,
    pub report_path: PathBuf,
    pub events_path: PathBuf,
    pub transcript_path: PathBuf,
}

impl Shared {
    /// Loads the prompts, builds the HTTP pool and the search client (opening the local
    /// index): everything resolved before any run starts.
    pub async fn new(settings: Settings, log: LogOptions) -> Result<Shared, CommandError> {
        let prompts =
            Prompts::load(settings.prompts_dir.as_deref()).map_err(CommandError::usage)?;
        let http = crate::http::client().map_err(CommandError::failure)?;
        let gates = Arc::new(Gates::new());
        let search = research::search_client(http.clone(), &settings, &gates).await?;
        let negotiator = Arc::new(Negotiator::new(settings.structured_output));
        Ok(Shared {
            settings,
            http,
            search,
            prompts,
            negotiator,
            gates,
            log,
        })
    }

    /// The `file://` URL of the corpus folder (ending in `/`), whose documents a report may
    /// link to.
    fn corpus_url(&self) -> Option<String> {
        self.search
            .as_ref()
            .and_then(SearchClient::local_index)
            .map(|index| {
                let url = crate::search::local::url::file_url(&index.corpus().to_string_lossy());
                format!("{}/", url.trim_end_matches('/'))
            })
    }

    /// Runs one workflow on an opened plan to its end; `listener` sees its events. Every call
    /// is recorded in the transcript beside the plan; with `replay`, answered from that
    /// transcript instead of the servers.
    pub async fn run(
        &self,
        store: PlanStore,
        mut plan: PlanFile,
        options: WorkflowOptions,
        shutdown: Shutdown,
        listener: Option<Arc<dyn EventListener>>,
        replay: Option<Arc<Replayer>>,
    ) -> Result<Finished, CommandError> {
        if bootstrap(&mut plan) {
            store.save(&plan).map_err(CommandError::failure)?;
        }
        let beside = Beside::of(store.real_path());
        let (report_path, events_path) = (beside.report.clone(), beside.events.clone());
        let events = self.event_log(&events_path, listener)?;
        let recorder = open_transcript(
            &beside.transcript,
            &plan,
            Some(options.max_rounds),
            replay.as_deref(),
            &self.settings,
        )?;
        let tape = Tape {
            recorder: Some(Arc::new(recorder)),
            replayer: replay,
        };
        tracing::info!(
            "workflow `{}`: plan `{}`, events `{}`",
            plan.workflow_id,
            store.path().display(),
            events_path.display()
        );
        let plan_path = store.path().to_path_buf();
        let prepared = Prepared {
            store,
            plan,
            events: Arc::new(events),
            options,
            report_path: report_path.clone(),
            corpus_url: self.corpus_url(),
            shutdown,
            review: self.review_step(ReviewPaths::of(&beside), &tape)?,
        };
        let summary = if self.settings.engine == EngineKind::Extractive {
            let (runner, planner) = self.extractive_engine(tape)?;
            prepared.run(runner, planner).await
        } else {
            let (runner, planner) = self.llm_engine(tape)?;
            prepared.run(runner, planner).await
        };
        Ok(Finished {
            summary,
            plan_path,
            report_path,
            events_path,
            transcript_path: beside.transcript,
        })
    }

    /// The run's event log, with the local index's report as its first event.
    fn event_log(
        &self,
        path: &Path,
        listener: Option<Arc<dyn EventListener>>,
    ) -> Result<EventLog, CommandError> {
        let mut events = EventLog::open(path).map_err(|e| {
            CommandError::usage(anyhow::anyhow!(
                "cannot open the event log `{}`: {e}",
                path.display()
            ))
        })?;
        if let Some(listener) = listener {
            events = events.with_listener(listener);
        }
        if let Some(report) = self.search.as_ref().and_then(SearchClient::index_report) {
            events.emit(Event::LocalIndex {
                documents: report.documents,
                read: report.read,
                added: report.added,
                updated: report.updated,
                removed: report.removed,
                unchanged: report.unchanged,
                warnings: report.warnings.clone(),
            });
        }
        Ok(events)
    }

    /// What follows the report: the review by its two roles, unless it is off
    /// (`review.enabled: false`, `--no-review`) or the engine has no model.
    fn review_step(&self, paths: ReviewPaths, tape: &Tape) -> Result<ReviewStep, CommandError> {
        if !self.settings.review {
            return Ok(ReviewStep::Off);
        }
        if self.settings.engine == EngineKind::Extractive {
            return Ok(ReviewStep::Skip(
                "the offline engine has no model to review the report".into(),
            ));
        }
        let reviewer = reviewer(&self.settings, &self.prompts, |role| self.llm(role, tape))?;
        Ok(ReviewStep::Run {
            reviewer: Box::new(reviewer),
            paths,
        })
    }

    /// A client of `role`'s endpoint, sharing the process's negotiation and rate budgets,
    /// its calls on the run's `tape`.
    fn llm(&self, role: Role, tape: &Tape) -> Result<LlmClient, CommandError> {
        taped_llm(
            &self.http,
            &self.settings,
            role,
            &self.negotiator,
            &self.gates,
            tape,
        )
    }

    /// The task runner and planner of the extractive engine, over the corpus.
    fn extractive_engine(
        &self,
        tape: Tape,
    ) -> Result<(ExtractiveRunner, ExtractivePlanner), CommandError> {
        let search = self.search.clone().ok_or_else(|| {
            CommandError::usage(anyhow::anyhow!("offline research needs a corpus"))
        })?;
        let index = search.local_index().ok_or_else(|| {
            CommandError::usage(anyhow::anyhow!("offline research needs a corpus"))
        })?;
        let planner = ExtractivePlanner {
            index: Arc::clone(&index),
        };
        Ok((
            ExtractiveRunner {
                search,
                index,
                tape,
            },
            planner,
        ))
    }

    /// The sub-agents and the planner of a run with a model.
    fn llm_engine(&self, tape: Tape) -> Result<(Agents, Planner), CommandError> {
        let llm = |role| self.llm(role, &tape);
        let planner = Planner {
            llm: llm(Role::Planning)?,
            system_prompt: self.prompts.planning.clone(),
            repair_attempts: self.settings.repair_attempts,
            log: self.log,
        };
        let agents = Agents {
            search_llm: llm(Role::Search)?,
            summary_llm: llm(Role::Summary)?,
            search: self.search.clone(),
            prompts: self.prompts.clone(),
            tape,
        };
        Ok((agents, planner))
    }
}

/// The parts of an engine that do not depend on which engine runs.
struct Prepared {
    store: PlanStore,
    plan: PlanFile,
    events: Arc<EventLog>,
    options: WorkflowOptions,
    report_path: PathBuf,
    corpus_url: Option<String>,
    shutdown: Shutdown,
    review: ReviewStep,
}

impl Prepared {
    async fn run<R: TaskRunner, P: PlanRound>(self, runner: R, planner: P) -> RunSummary {
        Engine::new(EngineParts {
            store: self.store,
            plan: self.plan,
            events: self.events,
            runner: Arc::new(runner),
            planner,
            options: self.options,
            report_path: self.report_path,
            corpus_url: self.corpus_url,
            shutdown: self.shutdown,
            review: self.review,
        })
        .run()
        .await
    }
}

/// A run's transcript at `path`, its `session` line written: a new run's, or one more of a
/// resumed run's.
pub fn open_transcript(
    path: &Path,
    plan: &PlanFile,
    max_rounds: Option<u32>,
    replay: Option<&Replayer>,
    settings: &Settings,
) -> Result<Recorder, CommandError> {
    let session = SessionLine {
        session: 0,
        at: crate::clock::now_millis(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        workflow_id: plan.workflow_id.clone(),
        query: plan.question().to_string(),
        max_rounds,
        replay_of: replay.map(|r| r.path().display().to_string()),
    };
    Recorder::open(path, session, settings.secrets()).map_err(|e| {
        CommandError::usage(anyhow::anyhow!(
            "cannot open the transcript `{}`: {e}",
            path.display()
        ))
    })
}

/// The review stage's two roles, their clients made by `llm`.
pub fn reviewer(
    settings: &Settings,
    prompts: &Prompts,
    llm: impl Fn(Role) -> Result<LlmClient, CommandError>,
) -> Result<Reviewer, CommandError> {
    Ok(Reviewer {
        review_llm: llm(Role::Review)?,
        second_opinion_llm: llm(Role::SecondOpinion)?,
        review_prompt: prompts.review.clone(),
        second_opinion_prompt: prompts.second_opinion.clone(),
        repair_attempts: settings.repair_attempts,
    })
}

/// A future that resolves on Ctrl-C or SIGTERM (never, where signals cannot be watched). The
/// handlers are installed when this is called, not when the future is first polled, so a
/// signal that comes early still stops the run cleanly instead of killing the process.
pub fn shutdown_signal() -> Shutdown {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let term = signal(SignalKind::terminate()).ok();
        let int = signal(SignalKind::interrupt()).ok();
        Box::pin(async move {
            let wait = |s: Option<tokio::signal::unix::Signal>| async move {
                match s {
                    Some(mut s) => {
                        s.recv().await;
                    }
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = wait(term) => {}
                () = wait(int) => {}
            }
        })
    }
    #[cfg(not(unix))]
    {
        Box::pin(async {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// A client of `role`'s endpoint with the process's negotiation and rate budgets, its calls
/// on `tape`; an endpoint that cannot be used as configured is a usage error.
pub(super) fn taped_llm(
    http: &reqwest::Client,
    settings: &Settings,
    role: Role,
    negotiator: &Arc<Negotiator>,
    gates: &Gates,
    tape: &Tape,
) -> Result<LlmClient, CommandError> {
    LlmClient::new(http.clone(), settings, role, Arc::clone(negotiator), gates)
        .map(|client| client.with_tape(tape.clone()))
        .map_err(CommandError::usage)
}
