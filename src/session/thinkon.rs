//! A Thinkon goal run in a [`Session`] (`researchflow thinkon`): its three roles' clients
//! recording on the folder's `transcript.jsonl`, its events in the folder's `events.ndjson`,
//! its sub-agents searching with the session's search client, and the runtime driven until the
//! root returns, a limit is reached, or the stop fires.

use std::path::PathBuf;

use super::Session;
use crate::events::EventLog;
use crate::run::{SetupError, Shutdown, session};
use crate::settings::Role;
use crate::thinkon::{
    BlockPlanner, Executor, ExecutorSet, Reflector, RunError, Runtime, RuntimeParts, ShellOptions,
    SubAgents, ThinkonOptions, ThinkonSummary, Tree, TreeMeta, TreeStore,
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
        let events = EventLog::open(&events_path).map_err(|e| {
            SetupError::config(anyhow::anyhow!(
                "cannot open the event log `{}`: {e}",
                events_path.display()
            ))
        })?;
        let prompts = &services.prompts;
        let planner_prompt = match options.compact_prompt {
            true => &prompts.thinkon_planner_compact,
            false => &prompts.thinkon_planner,
        };
        let repair_attempts = services.settings.repair_attempts;
        let dir = store.dir().to_path_buf();
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
                    tape: &tape,
                    analysis_prompt: &prompts.search_analysis,
                    summary_prompt: &prompts.summary,
                },
                shell,
            },
            reflector: Reflector {
                llm: &summary_llm,
                system_prompt: &prompts.thinkon_reflect,
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
