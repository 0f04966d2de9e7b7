//! The blocks of one tree in memory: lookup, ancestors, new ids, and the repair of what a
//! crash can leave between two saves.
//!
//! Ids are Excel-column ids (`a`, `b`, ... `aa`), the root is `a`, and a new id is one past the
//! highest in use, so an id is never reused. Saves happen child first, then parent; a crash
//! between the two leaves a child its parent does not list yet, which [`Tree::adopt_orphans`]
//! hands back to it, so the planner is not asked again for a block that already exists.

use std::collections::BTreeMap;

pub use crate::events::catalogue::BlockCounts;

use super::block::{Block, BlockStatus};
use crate::plan::NodeId;

/// The blocks of one tree, by id.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    blocks: BTreeMap<NodeId, Block>,
}

impl Tree {
    /// The tree of `blocks`; files whose id is not a block id are refused by the caller's
    /// error, here they are left out with a warning.
    pub fn new(blocks: Vec<Block>) -> Tree {
        let mut map = BTreeMap::new();
        for block in blocks {
            match NodeId::parse(&block.id) {
                Ok(id) => {
                    map.insert(id, block);
                }
                Err(e) => tracing::warn!("thinkon: ignoring block `{}`: {e}", block.id),
            }
        }
        Tree { blocks: map }
    }

    pub fn root_id() -> String {
        NodeId::FIRST.to_string()
    }

    pub fn root(&self) -> Option<&Block> {
        self.blocks.get(&NodeId::FIRST)
    }

    pub fn get(&self, id: &str) -> Option<&Block> {
        NodeId::parse(id).ok().and_then(|id| self.blocks.get(&id))
    }

    pub fn get_mut(&mut self, id: &str) -> Option<&mut Block> {
        NodeId::parse(id)
            .ok()
            .and_then(|id| self.blocks.get_mut(&id))
    }

    pub fn insert(&mut self, block: Block) {
        if let Ok(id) = NodeId::parse(&block.id) {
            self.blocks.insert(id, block);
        }
    }

    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// The id a new block gets.
    pub fn next_id(&self) -> String {
        self.blocks
            .keys()
            .next_back()
            .map_or(NodeId::FIRST, |last| last.next())
            .to_string()
    }

    /// The ancestors of `id`, nearest first (the Context JSON's `path`).
    pub fn ancestors(&self, id: &str) -> Vec<&Block> {
        let mut out = Vec::new();
        let mut next = self.get(id).and_then(|b| b.parent.clone());
        while let Some(parent) = next {
            let Some(block) = self.get(&parent) else {
                break;
            };
            // A cycle can only come from hand-edited files; stop rather than loop.
            if out.iter().any(|b: &&Block| b.id == block.id) || out.len() > self.blocks.len() {
                break;
            }
            next = block.parent.clone();
            out.push(block);
        }
        out
    }

    /// Gives every parent the child a crash left unlisted, as its active child. Returns the
    /// ids of the parents changed (to be saved).
    pub fn adopt_orphans(&mut self) -> Vec<String> {
        let orphans: Vec<(String, String)> = self
            .blocks
            .values()
            .filter_map(|b| b.parent.clone().map(|p| (p, b.id.clone())))
            .filter(|(parent, child)| {
                self.get(parent).is_some_and(|p| {
                    !p.children.contains(child)
                        && p.active_child.is_none()
                        && !p.status.is_finished()
                })
            })
            .collect();
        let mut changed = Vec::new();
        for (parent, child) in orphans {
            if let Some(p) = self.get_mut(&parent)
                && p.active_child.is_none()
            {
                tracing::info!("thinkon: block `{child}` was made before a crash; resuming it");
                p.children.push(child.clone());
                p.active_child = Some(child);
                changed.push(parent);
            }
        }
        changed
    }

    pub fn counts(&self) -> BlockCounts {
        let mut counts = BlockCounts {
            total: self.blocks.len(),
            ..BlockCounts::default()
        };
        for b in self.blocks.values() {
            match b.status {
                BlockStatus::Completed => counts.completed += 1,
                BlockStatus::Failed => counts.failed += 1,
                BlockStatus::Planned | BlockStatus::Running => counts.open += 1,
            }
        }
        counts
    }

    /// Every block below `id`, depth first in the order children were made, `id` included.
    pub fn subtree(&self, id: &str) -> Vec<&Block> {
        let mut out = Vec::new();
        let mut stack = vec![id.to_string()];
        while let Some(next) = stack.pop() {
            let Some(block) = self.get(&next) else {
                continue;
            };
            if out.iter().any(|b: &&Block| b.id == block.id) {
                continue;
            }
            stack.extend(block.children.iter().rev().cloned());
            out.push(block);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn block(id: &str, parent: Option<&str>) -> Block {
        Block::new(id.into(), parent.map(str::to_string), 0, json!(id))
    }

    #[test]
    fn ids_continue_after_the_highest_and_ancestors_are_nearest_first() {
        let mut a = block("a", None);
        a.children = vec!["b".into()];
        let mut b = block("b", Some("a"));
        b.children = vec!["z".into()];
        let tree = Tree::new(vec![a, b, block("z", Some("b"))]);
        assert_eq!(tree.next_id(), "aa");
        let path: Vec<&str> = tree.ancestors("z").iter().map(|b| b.id.as_str()).collect();
        assert_eq!(path, ["b", "a"]);
        let sub: Vec<&str> = tree.subtree("a").iter().map(|b| b.id.as_str()).collect();
        assert_eq!(sub, ["a", "b", "z"]);
        assert_eq!(Tree::default().next_id(), "a");
    }

    #[test]
    fn a_child_saved_before_its_parent_is_adopted() {
        let mut a = block("a", None);
        a.children = vec!["b".into()];
        let mut tree = Tree::new(vec![a, block("b", Some("a")), block("c", Some("a"))]);
        // `b` is listed; `c` was saved just before a crash and is not.
        assert_eq!(tree.adopt_orphans(), vec!["a".to_string()]);
        let root = tree.root().expect("root");
        assert_eq!(root.children, ["b", "c"]);
        assert_eq!(root.active_child.as_deref(), Some("c"));
        assert!(tree.adopt_orphans().is_empty());
    }
}
