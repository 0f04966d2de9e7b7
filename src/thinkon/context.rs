//! The planner's Context JSON (`.thinkon/thinking-context.json`): `think` (the block
//! being planned: goal, plan, done), `path` (its ancestors, nearest first, the same three
//! fields each), `max_depth` and `executors` (the executors file's list, which the planner
//! reads). Block ids, parents and children never appear in it.
//!
//! Long texts in it are cut, the cut marked ([`THINK_TEXT_MAX_CHARS`] in `think`, [`PATH_TEXT_MAX_CHARS`] in
//! `path`), so a deep tree with long results still makes a bounded request. Also renders a
//! block's `done` as plain text for the sub-agents and the reflection.

use serde_json::{Value, json};

use super::block::{Block, goal_text};
use super::tree::Tree;
use crate::validate::PlanNextContext;

/// The longest string of `think` the planner sees.
pub const THINK_TEXT_MAX_CHARS: usize = 4_000;

/// The longest string of an ancestor in `path`.
pub const PATH_TEXT_MAX_CHARS: usize = 1_500;

/// The Context JSON for planning the next step of block `id`.
pub fn build(tree: &Tree, id: &str, max_depth: u32, executors: &Value) -> Value {
    let think = tree.get(id).map_or(Value::Null, Block::think);
    let path: Vec<Value> = tree
        .ancestors(id)
        .into_iter()
        .map(|b| capped(b.think(), PATH_TEXT_MAX_CHARS))
        .collect();
    json!({
        "think": capped(think, THINK_TEXT_MAX_CHARS),
        "path": path,
        "max_depth": max_depth,
        "executors": executors,
    })
}

/// What the validator's depth and no-repeat rules read from the Context JSON.
pub fn rules_of(context: &Value) -> PlanNextContext {
    // The context is built above: `path` a list, `max_depth` a number, `think.done` a list, so
    // reading it cannot fail; if it ever did, the rules would see no depth and no failure.
    PlanNextContext::from_value(context, "thinking-context.json").unwrap_or_default()
}

/// `value` with every string cut to `max` characters.
fn capped(value: Value, max: usize) -> Value {
    match value {
        Value::String(s) if s.chars().count() > max => {
            Value::String(crate::text::truncate(&s, max))
        }
        Value::Array(items) => Value::Array(items.into_iter().map(|v| capped(v, max)).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, capped(v, max))).collect())
        }
        other => other,
    }
}

/// A block's `done` as numbered plain text, each entry cut to `max` characters.
pub fn render_done(done: &[Value], max: usize) -> String {
    let mut text = String::new();
    for (i, entry) in done.iter().enumerate() {
        let status = entry
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("done");
        let what = entry
            .get("goal")
            .map(goal_text)
            .or_else(|| {
                entry
                    .get("command")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .or_else(|| {
                entry
                    .get("plan_item")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .unwrap_or_default();
        let body = entry
            .get("result")
            .or_else(|| entry.get("output"))
            .and_then(Value::as_str)
            .map_or_else(|| entry.to_string(), str::to_string);
        text.push_str(&format!(
            "[{}] ({status}) {what}\n{}\n\n",
            i + 1,
            crate::text::truncate(body.trim(), max)
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_context_holds_think_path_depth_and_executors_and_no_ids() {
        let mut root = Block::new("a".into(), None, 0, json!("Root goal"));
        root.plan = vec!["first".into()];
        root.children = vec!["b".into()];
        root.active_child = Some("b".into());
        let mut child = Block::new("b".into(), Some("a".into()), 1, json!("x".repeat(9_000)));
        child.done =
            vec![json!({"status": "failed", "command": "shell: make", "result": "exit 2"})];
        let tree = Tree::new(vec![root, child]);
        let ctx = build(&tree, "b", 3, &json!([{"id": "search"}]));
        let keys: Vec<&String> = ctx.as_object().expect("object").keys().collect();
        assert_eq!(keys, ["think", "path", "max_depth", "executors"]);
        assert_eq!(
            ctx["path"],
            json!([{"goal": "Root goal", "plan": ["first"], "done": []}])
        );
        assert!(
            ctx["think"]["goal"].as_str().expect("goal").chars().count()
                < THINK_TEXT_MAX_CHARS + 40
        );
        let rules = rules_of(&ctx);
        assert_eq!((rules.depth, rules.max_depth), (1, Some(3)));
        assert_eq!(rules.failed.len(), 1);
        assert!(!ctx.to_string().contains("\"b\""), "{ctx}");
    }

    #[test]
    fn done_renders_as_numbered_text() {
        let done = [
            json!({"goal": "G", "status": "completed", "result": "R"}),
            json!({"command": "search: q", "status": "failed", "output": "none"}),
        ];
        assert_eq!(
            render_done(&done, 100),
            "[1] (completed) G\nR\n\n[2] (failed) search: q\nnone\n\n"
        );
    }
}
