//! A Thinkon goal run in a [`Session`] (`researchflow thinkon`): its three roles' clients
//! recording on the folder's `transcript.jsonl`, its events in the folder's `events.ndjson`,
//! its sub-agents searching with the session's search client, and the runtime driven until the
//! root returns, a limit is reached, or the stop fires. [`ThinkonQuestions`] runs a batch's
//! questions as goals.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use super::Session;
use crate::agents::reading::Passages;
use crate::batch::{Ask, Question, Ran, RunQuestion};
use crate::events::{Event, EventListener, EventLog, RunStatus, Totals};
use crate::exit::CommandError;
use crate::read::cache::PageCache;
use crate::run::{SetupError, Shutdown, session};
use crate::settings::{Prompt, Role};
use crate::thinkon::{
    BlockPlanner, Executor, ExecutorSet, Reflector, RunError, Runtime, RuntimeParts, ShellOptions,
    SubAgents, ThinkonOptions, ThinkonStatus, ThinkonSummary, Tree, TreeMeta, TreeStore,
    open_folder,
};

/// A Thinkon goal to run: its locked folder with the tree it holds, the executors, the limits.
pub struct ThinkonGoal {
    pub store: TreeStore,
    pub meta: TreeMeta,
    pub tree: Tree,
    pub executors: ExecutorSet,
    pub options: ThinkonOptions,
    /// How `shell:` executors run; `None`: they are refused.
    pub shell: Option<ShellOptions>,
    pub stop: Shutdown,
    /// Who watches the run's events as they are written (an MCP client's progress).
    pub listener: Option<Arc<dyn EventListener<Event>>>,
}

/// A Thinkon run that ended, and where its files are.
pub struct ThinkonFinished {
    /// How it ended, or why it stopped on an error of its own.
    pub summary: Result<ThinkonSummary, RunError>,
    pub dir: PathBuf,
    pub events_path: PathBuf,
}

impl Session {
    /// Runs `goal` to its end. The error is the set-up's: nothing of the run happened.
    pub async fn thinkon(&self, goal: ThinkonGoal) -> Result<ThinkonFinished, SetupError> {
        let ThinkonGoal {
            store,
            meta,
            tree,
            executors,
            options,
            shell,
            stop,
            listener,
        } = goal;
        let services = &self.services;
        let tape = services.tape(
            &store.transcript_path(),
            session(&meta.run_id, &meta.goal, None),
        )?;
        let llm = |role| services.llm(role, &tape);
        let (planning, search_llm, summary_llm) = (
            llm(Role::Planning)?,
            llm(Role::Search)?,
            llm(Role::Summary)?,
        );
        let events_path = store.events_path();
        let mut events = EventLog::open(&events_path).map_err(|e| {
            SetupError::config(anyhow::anyhow!(
                "cannot open the event log `{}`: {e}",
                events_path.display()
            ))
        })?;
        if let Some(listener) = listener {
            events = events.with_listener(listener);
        }
        let prompts = &services.prompts;
        let planner_prompt = match options.compact_prompt {
            true => &prompts[Prompt::ThinkonPlannerCompact],
            false => &prompts[Prompt::ThinkonPlanner],
        };
        let repair_attempts = services.settings.repair_attempts;
        let dir = store.dir().to_path_buf();
        let page_cache = PageCache::new(dir.join("pages"));
        let runtime = Runtime::new(RuntimeParts {
            store,
            meta,
            tree,
            events: &events,
            planner: BlockPlanner {
                llm: &planning,
                system_prompt: planner_prompt,
                executors: &executors.declared,
                repair_attempts,
            },
            runner: Executor {
                executors: &executors,
                research: SubAgents {
                    search_llm: &search_llm,
                    summary_llm: &summary_llm,
                    search: services.search.as_ref(),
                    passages: Passages {
                        reader: services.reader.as_deref(),
                        cache: Some(&page_cache),
                        budget: services.settings.search.read.passage_chars,
                    },
                    tape: &tape,
                    analysis_prompt: &prompts[Prompt::SearchAnalysis],
                    summary_prompt: &prompts[Prompt::Summary],
                },
                shell,
            },
            reflector: Reflector {
                llm: &summary_llm,
                system_prompt: &prompts[Prompt::ThinkonReflect],
                repair_attempts,
            },
            options,
        });
        Ok(ThinkonFinished {
            summary: runtime.run(stop).await,
            dir,
            events_path,
        })
    }
}

/// A batch's questions as Thinkon goals (`batch --engine thinkon`): each question the goal of
/// a tree in its own folder, `DIR/<name>.thinkon/`, continued when it exists; the built-in
/// executors, never a shell.
pub struct ThinkonQuestions(pub Session);

impl RunQuestion for ThinkonQuestions {
    fn place(&self, dir: &Path, question: &Question) -> PathBuf {
        dir.join(format!("{}.thinkon", question.name))
    }

    async fn run_question(&self, ask: Ask) -> Result<Ran, CommandError> {
        if ask.replay.is_some() {
            return Err(CommandError::usage(anyhow::anyhow!(
                "a Thinkon question is not answered from a transcript"
            )));
        }
        let clock = Instant::now();
        let (store, executors, meta, tree) =
            open_folder(&ask.place, Some(&ask.query), None).map_err(CommandError::usage)?;
        let options = ThinkonOptions {
            max_depth: meta.max_depth,
            max_blocks: crate::cli::DEFAULT_MAX_BLOCKS.count(),
            budget: ask.options.budget,
            compact_prompt: false,
        };
        let finished = self
            .0
            .thinkon(ThinkonGoal {
                store,
                meta,
                tree,
                executors,
                options,
                shell: None,
                stop: ask.shutdown,
                listener: None,
            })
            .await?;
        let seconds = clock.elapsed().as_secs_f64();
        Ok(match finished.summary {
            Ok(outcome) => ran(outcome, seconds),
            // An endpoint that cannot be used (or a diverged replay): no further question.
            Err(RunError::Stop(why)) => Ran {
                status: RunStatus::Failed,
                report: None,
                totals: Totals {
                    seconds,
                    ..Totals::default()
                },
                reason: Some(why),
                review: None,
                answered: None,
                unusable: true,
            },
            Err(RunError::Store(e)) => return Err(CommandError::failure(e)),
        })
    }
}

/// How a Thinkon run ended, as a batch's manifest records it: its blocks counted as tasks,
/// its result as the report. Whether the result answers the goal is not judged (`None`).
fn ran(outcome: ThinkonSummary, seconds: f64) -> Ran {
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Ran {
        status: match outcome.status {
            ThinkonStatus::Completed => RunStatus::Completed,
            ThinkonStatus::Partial => RunStatus::Partial,
            ThinkonStatus::Failed => RunStatus::Failed,
            ThinkonStatus::Interrupted => RunStatus::Interrupted,
        },
        report: outcome.result,
        totals: Totals {
            tasks_completed: count(outcome.blocks.completed),
            tasks_failed: count(outcome.blocks.failed),
            tokens: outcome.spent.usage,
            seconds,
            ..Totals::default()
        },
        reason: outcome.reason,
        review: None,
        answered: None,
        unusable: false,
    }
}
