//! The steps of the Thinkon loop (see `runtime.rs` for when each runs). Every step saves what
//! it changed before it returns, child before parent, so a crash loses at most the step in
//! flight and a rerun neither repeats a returned block nor asks again for a block that exists.

use serde_json::{Value, json};

use super::answer::PlanNext;
use super::block::{Block, BlockStatus, PlanType};
use super::context;
use super::executor::CallSite;
use super::outcome::{fail, listing};
use super::plan_next::PlanError;
use super::runtime::{MAX_ITEM_FAILURES, RunError, Runtime};
use crate::events::Event;
use crate::events::catalogue::{BlockFailed, BlockShape, PlanningFailed};
use crate::llm::LlmError;
use crate::plan::NodeId;
use crate::transcript::Site;

/// What a planner call that does not fit in the model's context adds, without
/// `--compact-prompt`.
const COMPACT_HINT: &str = "; `researchflow thinkon --compact-prompt` asks with a planner prompt of about 1,000 tokens instead of the full prompt's 9,500";

impl Runtime<'_> {
    /// The root's own plan-next answer: its plan type, plan or executor call.
    pub(super) async fn define(&mut self, id: &str) -> Result<(), RunError> {
        self.start(id)?;
        let depth = self.block(id)?.depth;
        let planned = if depth >= self.options.max_depth {
            Ok(PlanNext::forced(&self.meta.goal))
        } else {
            self.ask(id).await?
        };
        let forced = depth >= self.options.max_depth;
        let block = self.block_mut(id)?;
        match planned {
            Ok(answer) => {
                if answer.update_plan.is_some() {
                    tracing::info!(
                        "thinkon: the root has no parent plan to update; `update_plan` ignored"
                    );
                }
                shape(block, answer);
                block.forced = forced;
                block.touch();
            }
            Err(why) => {
                fail(block, &why);
            }
        }
        self.save(id)?;
        self.emit_shape(id);
        Ok(())
    }

    /// The planner's answer for the first item of block `id`: a new child.
    pub(super) async fn plan(&mut self, id: &str) -> Result<(), RunError> {
        self.start(id)?;
        let item = self.first_item(id)?;
        match self.ask(id).await? {
            Ok(answer) => self.create_child(id, &item, answer, false),
            Err(why) => self.item_failed(id, &item, why),
        }
    }

    /// At the depth limit: an EXECUTE child of the first item, without asking.
    pub(super) fn force(&mut self, id: &str) -> Result<(), RunError> {
        self.start(id)?;
        let item = self.first_item(id)?;
        self.create_child(id, &item, PlanNext::forced(&item), true)
    }

    /// Runs the executor call of block `id` once.
    pub(super) async fn execute(&mut self, id: &str) -> Result<(), RunError> {
        self.start(id)?;
        let block = self.block(id)?;
        let command = block.command().unwrap_or_default().to_string();
        let parent_done: Vec<Value> = block
            .parent
            .as_deref()
            .and_then(|p| self.tree.get(p))
            .map(|p| p.done.clone())
            .unwrap_or_default();
        let site = CallSite {
            block: NodeId::parse(id).map_err(|e| RunError::Stop(e.to_string()))?,
            question: &self.meta.goal,
            parent_done: &parent_done,
            forced: block.forced,
        };
        let observer = self.events.observer(id);
        let observation = self
            .runner
            .run(&command, &site, &mut self.spent, &observer)
            .await
            .map_err(|stop| RunError::Stop(stop.0))?;
        let ok = observation.ok;
        let output = observation.output().to_string();
        let block = self.block_mut(id)?;
        block.done = vec![observation.entry];
        if ok {
            block.touch();
        } else {
            fail(
                block,
                &format!("the executor call `{command}` failed: {output}"),
            );
        }
        self.save(id)?;
        let block = id.to_string();
        self.events.emit(if ok {
            Event::BlockExecuted { block, command }
        } else {
            Event::BlockFailed(BlockFailed::Executed { block, command })
        });
        Ok(())
    }

    /// Block `id` returns: a reflection writes its result. A PLAN_* block none of whose steps
    /// completed fails without one. A reflection that fails (a broken answer after its repairs,
    /// or a failed call) does not undo the work: the block completes with what it did listed,
    /// said to be unreviewed, and a `reflection_failed` event (Gemma 3 270M answered `...` in
    /// every section, after a search had run well).
    pub(super) async fn reflect(&mut self, id: &str) -> Result<(), RunError> {
        self.start(id)?;
        let block = self.block(id)?.clone();
        let returned = if block.plan_type != Some(PlanType::Execute) && !block.any_completed() {
            Err("no step of this block completed".to_string())
        } else {
            let observer = self.events.observer(id);
            match self
                .reflector
                .reflect(&block, &self.meta.goal, &mut self.spent, &observer)
                .await
            {
                Ok(result) => Ok(result),
                Err(e) if e.stops_the_run() => return Err(RunError::Stop(e.to_string())),
                Err(e) => {
                    let why = e.to_string();
                    let one_line = why.trim_end().replace('\n', "; ");
                    tracing::warn!(
                        "thinkon: the reflection of block `{id}` failed ({one_line}); its work is listed unreviewed"
                    );
                    self.events.emit(Event::ReflectionFailed {
                        block: id.to_string(),
                        error: one_line.to_string(),
                    });
                    Ok(listing(
                        &block,
                        &format!(
                            "Done, unreviewed: the reflection failed ({one_line}); what the block did is listed below."
                        ),
                    ))
                }
            }
        };
        let block = self.block_mut(id)?;
        match returned {
            Ok(result) => block.finish(BlockStatus::Completed, result),
            Err(why) => {
                fail(block, &why);
            }
        }
        let status = block.status.as_str();
        self.save(id)?;
        let block = id.to_string();
        self.events.emit(if status == "completed" {
            Event::BlockCompleted { block }
        } else {
            Event::BlockFailed(BlockFailed::Returned { block })
        });
        Ok(())
    }

    /// The active child of block `id` returned: its result into `done`, then the plan moves on.
    pub(super) fn receive(&mut self, id: &str) -> Result<(), RunError> {
        let child_id = self.block(id)?.active_child.clone().unwrap_or_default();
        let child_block = self.block(&child_id)?.clone();
        let parent = self.block_mut(id)?;
        parent.done.push(child_block.returned());
        parent.active_child = None;
        let (block, child) = (id.to_string(), child_id.clone());
        let mut event = Event::PlanAdvanced {
            block: block.clone(),
            child: child.clone(),
        };
        if child_block.status == BlockStatus::Completed {
            parent.item_failures = 0;
            match child_block.update_plan {
                Some(plan) => {
                    event = Event::PlanUpdated {
                        block,
                        child,
                        plan: plan.clone(),
                    };
                    parent.plan = plan;
                }
                None if !parent.plan.is_empty() => {
                    parent.plan.remove(0);
                }
                None => {}
            }
        } else {
            parent.item_failures += 1;
            if child_block.forced || parent.item_failures >= MAX_ITEM_FAILURES {
                let item = (!parent.plan.is_empty()).then(|| parent.plan.remove(0));
                event = Event::ItemAbandoned {
                    block,
                    item,
                    failures: parent.item_failures,
                };
                parent.item_failures = 0;
            }
        }
        parent.touch();
        self.save(id)?;
        self.events.emit(event);
        Ok(())
    }

    /// The active child of block `id` has no file: it is forgotten, its item tried again.
    pub(super) fn forget(&mut self, id: &str) -> Result<(), RunError> {
        let parent = self.block_mut(id)?;
        tracing::warn!(
            "thinkon: block `{}` lists the child `{}`, whose file is gone; planning that item again",
            id,
            parent.active_child.as_deref().unwrap_or_default()
        );
        parent.active_child = None;
        self.save(id)
    }

    /// Asks the planner for the next step of block `id`; `Err(why)` when it gave no valid
    /// answer.
    async fn ask(&mut self, id: &str) -> Result<Result<PlanNext, String>, RunError> {
        let ctx = context::build(
            &self.tree,
            id,
            self.options.max_depth,
            &self.runner.executors.document,
        );
        let text = serde_json::to_string_pretty(&ctx).unwrap_or_default() + "\n";
        self.store.write_text(&self.store.context_path(), &text)?;
        let observer = self.events.observer(id);
        match self
            .planner
            .plan(&Site::node(id), &ctx, &mut self.spent, &observer)
            .await
        {
            Ok(planned) => {
                for w in &planned.warnings {
                    self.events.emit(Event::PlannerWarning {
                        block: id.to_string(),
                        code: w.code.clone(),
                        path: w.path.clone(),
                        message: w.message.clone(),
                    });
                }
                Ok(Ok(planned.answer))
            }
            Err(PlanError::Llm(e)) if e.is_unusable() || e.is_diverged() => {
                Err(RunError::Stop(e.to_string()))
            }
            Err(e) => {
                let mut why = e.to_string();
                if matches!(e, PlanError::Llm(LlmError::TooLong { .. }))
                    && !self.options.compact_prompt
                {
                    why.push_str(COMPACT_HINT);
                }
                let one_line = why.trim_end().replace('\n', "; ");
                tracing::warn!("thinkon: planning block `{id}` failed: {one_line}");
                self.events
                    .emit(Event::PlanningFailed(PlanningFailed::Block {
                        block: id.to_string(),
                        error: why.clone(),
                    }));
                Ok(Err(why))
            }
        }
    }

    fn create_child(
        &mut self,
        parent_id: &str,
        item: &str,
        answer: PlanNext,
        forced: bool,
    ) -> Result<(), RunError> {
        let id = self.tree.next_id();
        let depth = self.block(parent_id)?.depth + 1;
        let mut child = Block::new(
            id.clone(),
            Some(parent_id.to_string()),
            depth,
            answer.goal.clone(),
        );
        child.item = Some(item.to_string());
        child.update_plan = answer.update_plan.clone();
        child.forced = forced;
        shape(&mut child, answer);
        self.store.save(&child)?;
        self.tree.insert(child);
        let parent = self.block_mut(parent_id)?;
        parent.children.push(id.clone());
        parent.active_child = Some(id.clone());
        parent.touch();
        self.save(parent_id)?;
        self.emit_shape(&id);
        Ok(())
    }

    /// No child could be made for `item`: the failure goes into `done`, like a failed child's.
    fn item_failed(&mut self, id: &str, item: &str, why: String) -> Result<(), RunError> {
        let parent = self.block_mut(id)?;
        parent
            .done
            .push(json!({"plan_item": item, "status": "failed", "result": why}));
        parent.item_failures += 1;
        let abandoned = parent.item_failures >= MAX_ITEM_FAILURES;
        if abandoned {
            parent.plan.remove(0);
            parent.item_failures = 0;
        }
        parent.touch();
        self.save(id)?;
        if abandoned {
            self.events.emit(Event::ItemAbandoned {
                block: id.to_string(),
                item: Some(item.to_string()),
                failures: MAX_ITEM_FAILURES,
            });
        }
        Ok(())
    }

    /// Marks block `id` running; its first start in this invocation counts an attempt.
    fn start(&mut self, id: &str) -> Result<(), RunError> {
        let first = self.touched.insert(id.to_string());
        let block = self.block_mut(id)?;
        if block.status == BlockStatus::Running && !first {
            return Ok(());
        }
        block.start(first);
        let attempts = block.attempts;
        self.save(id)?;
        self.events.emit(Event::BlockStarted {
            block: id.to_string(),
            attempts,
        });
        Ok(())
    }

    fn first_item(&self, id: &str) -> Result<String, RunError> {
        Ok(self.block(id)?.plan.first().cloned().unwrap_or_default())
    }

    fn emit_shape(&self, id: &str) {
        if let Some(b) = self.tree.get(id) {
            let shape = BlockShape {
                block: id.to_string(),
                parent: b.parent.clone(),
                depth: b.depth,
                plan_type: b.plan_type.map(PlanType::as_str),
                goal: b.goal_text(),
                plan: b.plan.clone(),
                command: b.command().map(str::to_string),
                forced: b.forced,
            };
            self.events.emit(if b.status == BlockStatus::Failed {
                Event::BlockFailed(BlockFailed::Made(shape))
            } else {
                Event::BlockPlanned(shape)
            });
        }
    }

    fn block(&self, id: &str) -> Result<&Block, RunError> {
        self.tree.get(id).ok_or_else(|| {
            RunError::Stop(format!("the tree has no block `{id}`: its file is gone"))
        })
    }

    fn block_mut(&mut self, id: &str) -> Result<&mut Block, RunError> {
        self.tree.get_mut(id).ok_or_else(|| {
            RunError::Stop(format!("the tree has no block `{id}`: its file is gone"))
        })
    }

    fn save(&self, id: &str) -> Result<(), RunError> {
        Ok(self.store.save(self.block(id)?)?)
    }
}

/// A block as the answer shapes it.
fn shape(block: &mut Block, answer: PlanNext) {
    block.goal = answer.goal;
    block.plan_type = Some(answer.plan_type);
    block.initial_plan = answer.plan.clone();
    block.plan = answer.plan;
    block.executor_call = answer.executor_call;
    block.success_signal = answer.success_signal;
}
