//! The Thinkon loop: one step at a time, each step saved before the next,
//! until the root has returned, a limit is reached, or a signal stops it.
//!
//! The next step is read from the tree alone, so a rerun on the same folder picks up where a
//! crash left off: from the root, follow each block's active child down to the block being
//! worked on, then
//!
//! - a root the planner has not answered for is defined by one plan-next answer (its own plan
//!   type, plan or executor call);
//! - a block whose active child has returned receives the child's result into `done`, and its
//!   plan loses its first item (or is replaced by the child's `update_plan`); a failed child
//!   leaves the item in place, to be tried another way, at most [`MAX_ITEM_FAILURES`] times;
//! - a PLAN_* block with plan items asks the planner for the child of its first item, or, at
//!   `len(path) >= max_depth`, makes an EXECUTE child of it without asking;
//! - an EXECUTE block runs its executor call once, then returns;
//! - a block whose plan is empty returns: a reflection writes its result.
//!
//! The steps themselves are in `steps.rs`.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::block::{BlockStatus, PlanType};
use super::executor::Executor;
use super::outcome::{ThinkonStatus, ThinkonSummary, partial_document, result_document};
use super::plan_next::{BlockPlanner, Spent};
use super::reflect::Reflector;
use super::store::{StoreError, TreeMeta, TreeStore};
use super::tree::Tree;
use crate::events::catalogue::{RunFinished, RunStarted};
use crate::events::{Event, EventLog};
use crate::run::{BudgetStop, Shutdown, budget};
use crate::settings::Budget;

/// Failed children in a row after which a plan item is given up.
pub const MAX_ITEM_FAILURES: u32 = 2;

/// What a run may do.
#[derive(Debug, Clone, Copy)]
pub struct ThinkonOptions {
    pub max_depth: u32,
    /// Most blocks in the tree.
    pub max_blocks: u32,
    pub budget: Budget,
    /// The planner is asked with the compact prompt.
    pub compact_prompt: bool,
}

/// Why a run stopped before its end.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Store(#[from] StoreError),
    /// An endpoint cannot be used as configured, or a replay diverged.
    #[error("{0}")]
    Stop(String),
}

/// One step of the loop, on the block it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum LoopStep {
    Define(String),
    Receive(String),
    Plan(String),
    Force(String),
    Execute(String),
    Reflect(String),
    /// The active child's file is gone: forget it.
    Forget(String),
    Done,
}

/// A run over one tree.
pub struct Runtime<'a> {
    pub(super) store: TreeStore,
    pub(super) meta: TreeMeta,
    pub(super) tree: Tree,
    pub(super) events: &'a EventLog,
    pub(super) planner: BlockPlanner<'a>,
    pub(super) runner: Executor<'a>,
    pub(super) reflector: Reflector<'a>,
    pub(super) options: ThinkonOptions,
    pub(super) spent: Spent,
    started: Instant,
    /// Blocks started in this invocation.
    pub(super) touched: HashSet<String>,
}

enum End {
    Finished,
    Partial(String),
    Interrupted,
}

/// The parts of a run.
pub struct RuntimeParts<'a> {
    pub store: TreeStore,
    pub meta: TreeMeta,
    pub tree: Tree,
    pub events: &'a EventLog,
    pub planner: BlockPlanner<'a>,
    pub runner: Executor<'a>,
    pub reflector: Reflector<'a>,
    pub options: ThinkonOptions,
}

impl<'a> Runtime<'a> {
    pub fn new(parts: RuntimeParts<'a>) -> Runtime<'a> {
        Runtime {
            store: parts.store,
            meta: parts.meta,
            tree: parts.tree,
            events: parts.events,
            planner: parts.planner,
            runner: parts.runner,
            reflector: parts.reflector,
            options: parts.options,
            spent: Spent::default(),
            started: Instant::now(),
            touched: HashSet::new(),
        }
    }

    /// Works on the tree until the root returns, a limit is reached, or `shutdown` fires.
    pub async fn run(mut self, mut shutdown: Shutdown) -> Result<ThinkonSummary, RunError> {
        for parent in self.tree.adopt_orphans() {
            if let Some(block) = self.tree.get(&parent) {
                self.store.save(block)?;
            }
        }
        self.meta.status = "running".into();
        self.store.save_meta(&self.meta)?;
        self.events.emit(Event::RunStarted(RunStarted::Thinkon {
            goal: self.meta.goal.clone(),
            blocks: self.tree.len(),
            max_depth: self.options.max_depth,
        }));
        // The time budget also cuts a step in flight (a model that is slow to answer), as a
        // signal does: what was saved stays, and the run returns what exists, partial.
        let deadline = self
            .options
            .budget
            .max_time()
            .map(|max| crate::clock::deadline(self.started.into(), max));
        let far = crate::clock::deadline(tokio::time::Instant::now(), crate::clock::LONGEST);
        let end = loop {
            let step = self.next_step();
            if step == LoopStep::Done {
                break Some(End::Finished);
            }
            if let Some(reason) = self.limit_reached(&step) {
                break Some(End::Partial(reason));
            }
            tokio::select! {
                taken = self.take(step) => taken?,
                () = &mut shutdown => break Some(End::Interrupted),
                // `None`: the time ran out mid-step (said once the step is dropped).
                () = tokio::time::sleep_until(deadline.unwrap_or(far)), if deadline.is_some() => {
                    break None;
                }
            }
        };
        let end = end.unwrap_or_else(|| End::Partial(self.time_ran_out()));
        self.finish(end)
    }

    /// The time budget ran out during a step: recorded, and said in words.
    fn time_ran_out(&self) -> String {
        let value = self.options.budget.max_time().unwrap_or_default().as_secs();
        let used = self.started.elapsed().as_secs();
        tracing::warn!(
            "thinkon: the time budget ({value} s) ran out during a step; what exists is returned"
        );
        self.events.emit(Event::BudgetReached {
            limit: "max_time",
            value,
            used,
        });
        format!("the time budget ({value} s) was reached after {used} s, during a step")
    }

    /// What to do next, read from the tree.
    pub(super) fn next_step(&self) -> LoopStep {
        let Some(mut current) = self.tree.root() else {
            return LoopStep::Done;
        };
        if current.status.is_finished() {
            return LoopStep::Done;
        }
        loop {
            if let Some(child) = &current.active_child {
                match self.tree.get(child) {
                    Some(c) if c.status.is_finished() => {
                        return LoopStep::Receive(current.id.clone());
                    }
                    Some(c) => {
                        current = c;
                        continue;
                    }
                    None => return LoopStep::Forget(current.id.clone()),
                }
            }
            let id = current.id.clone();
            return match current.plan_type {
                None => LoopStep::Define(id),
                Some(PlanType::Execute) if current.done.is_empty() => LoopStep::Execute(id),
                Some(PlanType::Execute) => LoopStep::Reflect(id),
                Some(_) if current.plan.is_empty() => LoopStep::Reflect(id),
                Some(_) if current.depth >= self.options.max_depth => LoopStep::Force(id),
                Some(_) => LoopStep::Plan(id),
            };
        }
    }

    /// Every token the run's calls cost: its answers', and those of streamed attempts that
    /// broke on the way, which the server bills all the same.
    fn tokens(&self) -> u64 {
        self.spent.usage.total_tokens + self.events.unanswered().total_tokens
    }

    /// The limit that keeps `step` from running, in words; `None` when it may run. Receiving
    /// a returned child costs nothing and always runs.
    fn limit_reached(&self, step: &LoopStep) -> Option<String> {
        if matches!(
            step,
            LoopStep::Receive(_) | LoopStep::Forget(_) | LoopStep::Done
        ) {
            return None;
        }
        let blocks = self.tree.len() as u64;
        let stop = if matches!(step, LoopStep::Plan(_) | LoopStep::Force(_))
            && blocks >= u64::from(self.options.max_blocks)
        {
            BudgetStop {
                limit: "max_blocks",
                value: u64::from(self.options.max_blocks),
                used: blocks,
            }
        } else {
            let tokens = self.tokens();
            budget::check(&self.options.budget, tokens, self.started.elapsed())?
        };
        let BudgetStop { limit, value, used } = stop;
        let reason = match limit {
            "max_blocks" => format!("the block budget ({value}) was reached with {used} blocks"),
            "max_tokens" => format!("the token budget ({value}) was reached after {used} tokens"),
            _ => format!("the time budget ({value} s) was reached after {used} s"),
        };
        tracing::warn!("thinkon: {reason}; planning stops and what exists is returned");
        self.events
            .emit(Event::BudgetReached { limit, value, used });
        Some(reason)
    }

    async fn take(&mut self, step: LoopStep) -> Result<(), RunError> {
        match step {
            LoopStep::Define(id) => self.define(&id).await,
            LoopStep::Receive(id) => self.receive(&id),
            LoopStep::Plan(id) => self.plan(&id).await,
            LoopStep::Force(id) => self.force(&id),
            LoopStep::Execute(id) => self.execute(&id).await,
            LoopStep::Reflect(id) => self.reflect(&id).await,
            LoopStep::Forget(id) => self.forget(&id),
            LoopStep::Done => Ok(()),
        }
    }

    fn finish(mut self, end: End) -> Result<ThinkonSummary, RunError> {
        let root_id = Tree::root_id();
        let root = self.tree.root().cloned();
        let (status, reason) = match (&end, &root) {
            (End::Interrupted, _) => (ThinkonStatus::Interrupted, Some("interrupted".to_string())),
            (End::Partial(reason), _) => (ThinkonStatus::Partial, Some(reason.clone())),
            (End::Finished, Some(r)) if r.status == BlockStatus::Completed => {
                (ThinkonStatus::Completed, None)
            }
            (End::Finished, root) => (
                ThinkonStatus::Failed,
                Some(match root.as_ref().and_then(|r| r.error.as_deref()) {
                    Some(why) => format!("the root block failed: {why}"),
                    None => "the root block failed; result.md says why".to_string(),
                }),
            ),
        };
        let document = match (&end, &root) {
            (End::Interrupted, _) => None,
            (End::Partial(reason), _) => {
                Some(partial_document(&self.meta.goal, reason, &self.tree))
            }
            (End::Finished, Some(root)) => Some(result_document(&self.meta.goal, root, &self.tree)),
            (End::Finished, None) => None,
        };
        let result = match document {
            Some(text) => {
                let path = self.store.result_path();
                self.store.write_text(&path, &text)?;
                Some(path)
            }
            None => None,
        };
        self.meta.status = status.as_str().to_string();
        self.meta.updated_at = crate::clock::now();
        self.store.save_meta(&self.meta)?;
        let blocks = self.tree.counts();
        let mut spent = self.spent;
        spent.usage.add(self.events.unanswered());
        self.events.emit(Event::RunFinished(RunFinished::Thinkon {
            status: status.as_str(),
            reason: reason.clone(),
            blocks,
            calls: spent.calls,
            tokens: spent.usage.total_tokens,
            seconds: elapsed_secs(self.started.elapsed()),
        }));
        Ok(ThinkonSummary {
            status,
            reason,
            root: root_id,
            result,
            blocks,
            spent,
        })
    }
}

fn elapsed_secs(d: Duration) -> f64 {
    (d.as_secs_f64() * 1000.0).round() / 1000.0
}
