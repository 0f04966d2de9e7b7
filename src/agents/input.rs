//! Task input assembly: a planned node of the plan turned into the [`TaskInput`] its sub-agent
//! reads (the question, the task, its resolved `p_node`, and for the final summary the sources
//! it may cite). Reads the plan; never changes it.

use super::final_sources::final_sources;
use super::task::TaskInput;
use crate::plan::segments::{self, SEGMENT_MAX_CHARS};
use crate::plan::{FINAL_BATCH, NodeId, PlanFile};

/// The input of node `id`, and the refs of its `p_node` that were skipped (as warnings);
/// `None` when the plan has no such node.
pub fn task_input(plan: &PlanFile, id: NodeId) -> Option<(TaskInput, Vec<String>)> {
    let node = plan.node(id)?;
    let segs = segments::render(plan, [node.p_node.as_str()], SEGMENT_MAX_CHARS);
    let input = TaskInput {
        node_id: id,
        kind: node.kind,
        title: node.title.clone(),
        question: plan.question().to_string(),
        context: segs.text,
        final_sources: (node.batch == FINAL_BATCH).then(|| final_sources(plan, node)),
    };
    Some((input, segs.warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Node, NodeStatus, NodeType, Source};

    #[test]
    fn final_tasks_carry_their_sources_and_others_do_not() {
        let mut plan = PlanFile::new("Q?", "wf".into(), "t".into());
        let id = |s: &str| NodeId::parse(s).expect("id");
        let mut b = Node::new(
            id("b"),
            "Search",
            NodeType::Search,
            2,
            NodeStatus::Completed,
        )
        .with_summary("found")
        .with_p_node("a:info");
        b.sources = vec![Source {
            url: "https://x.test/1".into(),
            title: "X".into(),
        }];
        let c = Node::new(
            id("c"),
            "Final",
            NodeType::Summary,
            FINAL_BATCH,
            NodeStatus::Planned,
        )
        .with_p_node("b:summary, zz:summary");
        plan.nodes.extend([b, c]);
        let (search, warnings) = task_input(&plan, id("b")).expect("b");
        assert!(search.final_sources.is_none() && warnings.is_empty());
        let (fin, warnings) = task_input(&plan, id("c")).expect("c");
        assert_eq!(fin.final_sources.map(|s| s.len()), Some(1));
        assert!(fin.context.contains("### b:summary") && fin.context.contains("found"));
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(task_input(&plan, id("q")).is_none());
    }
}
