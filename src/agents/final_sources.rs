//! The sources the final summary may cite: the URLs that this plan's search tasks recorded
//! (what the search provider actually returned), numbered, deduplicated by URL.
//!
//! They are gathered from the nodes the final summary builds on, following `p_node` refs back
//! through summaries; when those lead to no source, every search node's sources are used.
//! Numbers follow plan order, not discovery order, so they are stable across runs.

use std::collections::HashSet;

use crate::plan::refs::parse_list;
use crate::plan::{Node, NodeId, NodeStatus, NodeType, PlanFile, Source};

/// The numbered sources the final node may cite (`[n]` is element `n - 1`).
pub fn final_sources(plan: &PlanFile, final_node: &Node) -> Vec<Source> {
    let mut seen_nodes: HashSet<NodeId> = HashSet::new();
    let mut queue: Vec<NodeId> = refs_of(final_node);
    let mut found: Vec<&Node> = Vec::new();
    while let Some(id) = queue.pop() {
        if !seen_nodes.insert(id) {
            continue;
        }
        if let Some(node) = plan.node(id) {
            found.push(node);
            queue.extend(refs_of(node));
        }
    }
    found.sort_by_key(|n| plan.nodes.iter().position(|m| m.node_id == n.node_id));
    let mut sources = collect(found.into_iter());
    if sources.is_empty() {
        sources = collect(plan.nodes.iter());
    }
    sources
}

fn refs_of(node: &Node) -> Vec<NodeId> {
    parse_list(&node.p_node)
        .0
        .iter()
        .filter_map(|r| r.node_id())
        .collect()
}

fn collect<'a>(nodes: impl Iterator<Item = &'a Node>) -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    for node in nodes.filter(|n| n.kind == NodeType::Search && n.status == NodeStatus::Completed) {
        for s in &node.sources {
            if !s.url.trim().is_empty() && !out.iter().any(|o| o.url == s.url) {
                out.push(s.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::FINAL_BATCH;

    fn source(n: u32) -> Source {
        Source {
            url: format!("https://example.test/{n}"),
            title: format!("T{n}"),
        }
    }

    #[test]
    fn sources_follow_refs_through_summaries() {
        let mut plan = PlanFile::new("Q?", "wf".into(), "t".into());
        let id = |s: &str| NodeId::parse(s).expect("id");
        let mut b = Node::new(id("b"), "b", NodeType::Search, 2, NodeStatus::Completed);
        b.sources = vec![source(1), source(2)];
        let mut c = Node::new(id("c"), "c", NodeType::Search, 2, NodeStatus::Completed);
        c.sources = vec![source(2), source(3)];
        let d = Node::new(id("d"), "d", NodeType::Summary, 3, NodeStatus::Completed)
            .with_p_node("c:summary");
        let e = Node::new(
            id("e"),
            "F",
            NodeType::Summary,
            FINAL_BATCH,
            NodeStatus::Planned,
        )
        .with_p_node("d:summary");
        plan.nodes.extend([b, c, d, e]);
        let fin = plan.final_node().expect("final");
        assert_eq!(final_sources(&plan, fin), vec![source(2), source(3)]);
        let mut lone = fin.clone();
        lone.p_node = String::new();
        assert_eq!(
            final_sources(&plan, &lone),
            vec![source(1), source(2), source(3)]
        );
    }
}
