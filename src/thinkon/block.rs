//! One block of the Thinkon tree, as it is stored in `DIR/blocks/<id>.json`: its goal, its
//! remaining plan, what is done, its status and how it was planned.
//!
//! The block's `id`, `parent`, `children` and `active_child` are the runtime's alone: they
//! never reach the planner (a plan-next answer holds no structural id, docs/SPEC.md, "Plan-next
//! answers (Thinkon)", and the runtime keeps them out of its input too). What the planner sees
//! of a block is [`Block::think`]: goal, plan and done. This module holds data and the rules of
//! one block; it does no I/O.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The block file format's version.
pub const BLOCK_VERSION: u32 = 1;

/// Where a block is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "snake_case")]
pub enum BlockStatus {
    /// Created, not yet worked on.
    Planned,
    /// Being worked on (or left so by a crash: a rerun starts it again).
    Running,
    /// Returned a result to its parent (or, for the root, to `result.md`).
    Completed,
    /// Returned a failure.
    Failed,
}

impl BlockStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Completed or failed: the block has returned.
    pub fn is_finished(self) -> bool {
        matches!(self, BlockStatus::Completed | BlockStatus::Failed)
    }
}

/// How a block was planned: the `plan_type` of the plan-next answer that made it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum PlanType {
    #[serde(rename = "PLAN_PROBES")]
    Probes,
    #[serde(rename = "PLAN_STEPS")]
    Steps,
    #[serde(rename = "EXECUTE")]
    Execute,
}

impl PlanType {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanType::Probes => "PLAN_PROBES",
            PlanType::Steps => "PLAN_STEPS",
            PlanType::Execute => "EXECUTE",
        }
    }

    pub fn parse(text: &str) -> Option<PlanType> {
        match text {
            "PLAN_PROBES" => Some(PlanType::Probes),
            "PLAN_STEPS" => Some(PlanType::Steps),
            "EXECUTE" => Some(PlanType::Execute),
            _ => None,
        }
    }
}

/// One block of the tree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Block {
    #[serde(default = "block_version")]
    pub version: u32,
    pub id: String,
    /// `None` for the root.
    pub parent: Option<String>,
    /// `len(path)`: 0 for the root.
    pub depth: u32,
    /// A non-empty string or a Core4 object (`intent`, `deliverable`, `metric`, `constraint`).
    pub goal: Value,
    /// The remaining plan items; the first is worked on next.
    pub plan: Vec<String>,
    /// Results of children and executions, in order.
    pub done: Vec<Value>,
    pub status: BlockStatus,
    /// `None` only for a root the planner has not answered for yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan_type: Option<PlanType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor_call: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success_signal: Option<String>,
    /// The plan as the answer gave it (what a failed attempt tried, for the no-repeat rule).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub initial_plan: Vec<String>,
    /// The parent's plan item this block works on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item: Option<String>,
    /// The `update_plan` of the answer that made this block: it replaces the parent's plan
    /// when this block completes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_plan: Option<Vec<String>>,
    /// Made by the runtime without asking the planner (the depth limit).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forced: bool,
    /// Every child, in the order they were made.
    #[serde(default)]
    pub children: Vec<String>,
    /// The child being worked on; its result has not reached `done` yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_child: Option<String>,
    /// Failed children in a row for the first plan item.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub item_failures: u32,
    /// What the block returned (Markdown): the reflection's four sections, or the failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    /// Why the block failed, on one line (also the first section of its `result`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How many times the runtime started working on the block (a rerun after a crash starts
    /// a running block again).
    #[serde(default)]
    pub attempts: u32,
    pub created_at: String,
    pub updated_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
}

fn block_version() -> u32 {
    BLOCK_VERSION
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Block {
    /// A block with nothing planned yet.
    pub fn new(id: String, parent: Option<String>, depth: u32, goal: Value) -> Block {
        let now = crate::clock::now();
        Block {
            version: BLOCK_VERSION,
            id,
            parent,
            depth,
            goal,
            plan: Vec::new(),
            done: Vec::new(),
            status: BlockStatus::Planned,
            plan_type: None,
            executor_call: None,
            success_signal: None,
            initial_plan: Vec::new(),
            item: None,
            update_plan: None,
            forced: false,
            children: Vec::new(),
            active_child: None,
            item_failures: 0,
            result: None,
            error: None,
            attempts: 0,
            created_at: now.clone(),
            updated_at: now,
            finished_at: None,
        }
    }

    /// What the planner sees of the block: goal, plan and done, nothing structural.
    pub fn think(&self) -> Value {
        json!({"goal": self.goal, "plan": self.plan, "done": self.done})
    }

    /// The goal as one line of text (a Core4 goal by its intent and deliverable).
    pub fn goal_text(&self) -> String {
        goal_text(&self.goal)
    }

    /// The executor call's command, if the block has one.
    pub fn command(&self) -> Option<&str> {
        self.executor_call
            .as_ref()
            .and_then(|c| c.get("command"))
            .and_then(Value::as_str)
    }

    /// Marks the block as being worked on, once per invocation: a planned block, or a running
    /// one left by a crash (`first_touch`), counts one more attempt.
    pub fn start(&mut self, first_touch: bool) {
        if self.status == BlockStatus::Planned || first_touch {
            self.attempts += 1;
        }
        self.status = BlockStatus::Running;
        self.touch();
    }

    /// Ends the block with `status` and `result`.
    pub fn finish(&mut self, status: BlockStatus, result: String) {
        self.status = status;
        self.result = Some(result);
        self.touch();
        self.finished_at = Some(self.updated_at.clone());
    }

    pub fn touch(&mut self) {
        self.updated_at = crate::clock::now();
    }

    /// What the parent's `done` receives when this block returns. Shaped so the no-repeat rule
    /// of `validate plan-next` reads it: `status` says whether it failed, and `goal`, `plan`
    /// and `command` say what was tried.
    pub fn returned(&self) -> Value {
        let mut entry = json!({
            "goal": self.goal,
            "plan_type": self.plan_type.map(PlanType::as_str),
            "status": self.status.as_str(),
        });
        if !self.initial_plan.is_empty() {
            entry["plan"] = json!(self.initial_plan);
        }
        if let Some(command) = self.command() {
            entry["command"] = json!(command);
        }
        entry["result"] = json!(self.result.clone().unwrap_or_default());
        entry
    }

    /// Whether any entry of `done` reports success.
    pub fn any_completed(&self) -> bool {
        self.done
            .iter()
            .any(|d| d.get("status").and_then(Value::as_str) == Some("completed"))
    }
}

/// A goal as one line of text.
pub fn goal_text(goal: &Value) -> String {
    match goal {
        Value::String(s) => s.trim().to_string(),
        Value::Object(o) => {
            let field = |k: &str| o.get(k).and_then(Value::as_str).unwrap_or("").trim();
            match (field("intent"), field("deliverable")) {
                ("", d) => d.to_string(),
                (i, "") => i.to_string(),
                (i, d) => format!("{i} ({d})"),
            }
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Block files store these names: they must never change.
    #[test]
    fn every_block_status_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<BlockStatus>(),
            "planned running completed failed"
        );
    }

    #[test]
    fn a_block_round_trips_and_keeps_ids_out_of_think() {
        let mut b = Block::new("c".into(), Some("a".into()), 1, json!("Find X"));
        b.plan = vec!["one".into()];
        b.children = vec!["d".into()];
        b.active_child = Some("d".into());
        let text = serde_json::to_string(&b).expect("json");
        let back: Block = serde_json::from_str(&text).expect("parse");
        assert_eq!(back, b);
        let think = b.think();
        assert_eq!(
            think,
            json!({"goal": "Find X", "plan": ["one"], "done": []})
        );
    }

    #[test]
    fn a_failed_block_returns_what_it_tried() {
        let mut b = Block::new("c".into(), Some("a".into()), 1, json!("Run it"));
        b.plan_type = Some(PlanType::Execute);
        b.executor_call = Some(json!({"command": "shell: make", "inputs": {}}));
        b.finish(BlockStatus::Failed, "exit status 2".into());
        let entry = b.returned();
        assert_eq!(entry["status"], "failed");
        assert_eq!(entry["command"], "shell: make");
        assert_eq!(entry["plan_type"], "EXECUTE");
        assert!(entry.get("id").is_none());
        assert!(b.finished_at.is_some());
    }

    #[test]
    fn goals_read_as_one_line() {
        assert_eq!(goal_text(&json!(" x ")), "x");
        let core4 = json!({"intent": "I", "deliverable": "D", "metric": "", "constraint": ""});
        assert_eq!(goal_text(&core4), "I (D)");
    }

    #[test]
    fn attempts_count_starts_not_steps() {
        let mut b = Block::new("a".into(), None, 0, json!("g"));
        b.start(true);
        b.start(false);
        assert_eq!(b.attempts, 1);
        b.start(true);
        assert_eq!(b.attempts, 2);
    }
}
