//! Task input assembly: a planned node of the plan turned into the [`TaskInput`] its sub-agent
//! reads (the question, the task, its resolved `p_node`, and for the final summary the sources
//! it may cite). Reads the plan; never changes it.
//!
//! The input is bounded as a whole: earlier results and the final summary's numbered sources
//! together take at most [`INPUT_MAX_CHARS`] characters (the sources' lines at most
//! [`FINAL_SOURCES_MAX_CHARS`] of them, what they say at most
//! [`EXCERPTS_MAX_CHARS`](super::final_sources::EXCERPTS_MAX_CHARS)), and
//! every cut is returned to be recorded. The final summary reads the searches through their
//! numbered sources, what each says under its number, not through a model's retelling: a ref
//! of its `p_node` to a search task every source of which is listed is left out of its earlier
//! results (the plan keeps `p_node` as written).

use std::collections::HashSet;

use super::final_sources::{directions, final_sources, source_list, within};
use super::task::TaskInput;
use crate::plan::segments::{self, SEGMENT_MAX_CHARS, SegmentCaps};
use crate::plan::{FINAL_BATCH, NodeId, NodeType, PlanFile, Ref, Source};
use crate::text::Cut;

/// The most characters of earlier results and numbered sources one task's input carries.
pub const INPUT_MAX_CHARS: usize = segments::SEGMENTS_MAX_CHARS;

/// The most characters the final summary's numbered source list takes of [`INPUT_MAX_CHARS`].
pub const FINAL_SOURCES_MAX_CHARS: usize = 20_000;

/// What assembling an input skipped or cut.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaskInputNotes {
    /// Refs of `p_node` that were skipped.
    pub warnings: Vec<String>,
    /// Segments and sources cut or left out to stay within [`INPUT_MAX_CHARS`].
    pub cuts: Vec<Cut>,
}

/// The input of node `id` and what was skipped or cut on the way; `None` when the plan has no
/// such node.
pub fn task_input(plan: &PlanFile, id: NodeId) -> Option<(TaskInput, TaskInputNotes)> {
    let node = plan.node(id)?;
    let mut cuts = Vec::new();
    let sources = (node.batch == FINAL_BATCH).then(|| {
        within(
            final_sources(plan, node),
            FINAL_SOURCES_MAX_CHARS,
            &mut cuts,
        )
    });
    let listed = sources
        .as_deref()
        .map_or(0, |s| source_list(s, plan.question()).chars().count());
    let caps = SegmentCaps {
        segment: SEGMENT_MAX_CHARS,
        total: INPUT_MAX_CHARS.saturating_sub(listed),
    };
    let p_node = match &sources {
        Some(listed) => without_listed(plan, &node.p_node, listed),
        None => node.p_node.clone(),
    };
    let segs = segments::render(plan, [p_node.as_str()], caps);
    cuts.extend(segs.cuts);
    let input = TaskInput {
        node_id: id,
        kind: node.kind,
        title: node.title.clone(),
        question: plan.question().to_string(),
        context: segs.text,
        directions: sources
            .as_deref()
            .map_or_else(Vec::new, |s| directions(plan, s)),
        final_sources: sources,
    };
    Some((
        input,
        TaskInputNotes {
            warnings: segs.warnings,
            cuts,
        },
    ))
}

/// `p_node` without its refs to search tasks every source of which is in `listed`; other
/// entries, and those that do not parse (left for the renderer to report), as written.
fn without_listed(plan: &PlanFile, p_node: &str, listed: &[Source]) -> String {
    let urls: HashSet<&str> = listed.iter().map(|s| s.url.as_str()).collect();
    let all_listed = |id: NodeId| {
        plan.node(id).is_some_and(|n| {
            n.kind == NodeType::Search
                && !n.sources.is_empty()
                && n.sources.iter().all(|s| urls.contains(s.url.as_str()))
        })
    };
    let kept: Vec<&str> = p_node
        .split([',', '，'])
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .filter(|entry| {
            Ref::parse(entry)
                .ok()
                .and_then(|r| r.node_id())
                .is_none_or(|id| !all_listed(id))
        })
        .collect();
    kept.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::final_sources::EXCERPTS_MAX_CHARS;
    use crate::agents::task::SEARCHES_AS_SOURCES;
    use crate::plan::testing::{final_summary, id, plan, search, summary};
    use crate::plan::{Node, NodeStatus, NodeType, Source};

    #[test]
    fn final_tasks_carry_their_sources_and_others_do_not() {
        let b = search("b", "Search")
            .with_summary("found")
            .with_p_node("a:info")
            .with_sources([Source::new("https://x.test/1", "X")]);
        let c = final_summary("c", "Final")
            .with_p_node("b:summary, zz:summary")
            .with_status(NodeStatus::Planned);
        let plan = plan("Q?", [b, c]);
        let (search, notes) = task_input(&plan, id("b")).expect("b");
        assert!(search.final_sources.is_none() && notes.warnings.is_empty());
        let (fin, notes) = task_input(&plan, id("c")).expect("c");
        assert_eq!(fin.final_sources.map(|s| s.len()), Some(1));
        // b reaches the final summary as its source, not as its summary.
        assert!(!fin.context.contains("found"), "{}", fin.context);
        assert_eq!(notes.warnings.len(), 1, "{:?}", notes.warnings);
        assert!(notes.cuts.is_empty());
        assert!(task_input(&plan, id("q")).is_none());
    }

    #[test]
    fn the_final_reads_a_listed_search_through_its_sources_only() {
        let info = |n: &str| format!("<info type=\"llm\">analysis of {n}</info>");
        let b = search("b", "First")
            .with_summary("summary of b")
            .with_info(info("b"))
            .with_sources([Source::new("https://x.test/1", "X")]);
        // c's source is not a URL the list can carry, so its results are read as they are.
        let c = search("c", "Second")
            .with_info(info("c"))
            .with_sources([Source::new(" ", "No URL")]);
        let d = summary("d", "Synthesis", 3).with_summary("summary of d");
        let e = final_summary("e", "Final")
            .with_p_node("b:info, b:summary, c:info[all], d:summary, zz:sumary")
            .with_status(NodeStatus::Planned);
        let plan = plan("Q?", [b, c, d, e]);
        let (fin, notes) = task_input(&plan, id("e")).expect("e");
        let context = &fin.context;
        assert!(!context.contains("of b"), "{context}");
        assert!(context.contains("### c:info\nnode c") && context.contains("analysis of c"));
        assert!(context.contains("summary of d"), "{context}");
        assert_eq!(fin.final_sources.as_ref().map(Vec::len), Some(1));
        assert_eq!(notes.warnings.len(), 1, "{:?}", notes.warnings);

        let only_b = plan_with_final(&plan, "b:info[llm], b:summary");
        let (fin, _) = task_input(&only_b, id("e")).expect("e");
        assert!(fin.context.is_empty());
        assert!(
            fin.message().contains(SEARCHES_AS_SOURCES),
            "{}",
            fin.message()
        );
        let (b_input, _) = task_input(&plan, id("b")).expect("b");
        assert!(b_input.final_sources.is_none());
    }

    /// `plan` with its last node's `p_node` set to `p_node`.
    fn plan_with_final(plan: &PlanFile, p_node: &str) -> PlanFile {
        let mut plan = plan.clone();
        if let Some(last) = plan.nodes.last_mut() {
            last.p_node = p_node.to_string();
        }
        plan
    }

    /// A chain of `n` summaries, each over the one before, the first over a search with a few
    /// sources; the final summary cites every one of them.
    fn chain(n: usize) -> PlanFile {
        let mut plan = plan("Q?", []);
        let mut prev = NodeId::FIRST;
        let mut refs = Vec::new();
        for i in 0..n {
            let id = prev.next();
            let kind = if i % 2 == 0 {
                NodeType::Search
            } else {
                NodeType::Summary
            };
            let mut node = Node::new(id, "Step", kind, 2, NodeStatus::Completed)
                .with_summary("a finding ".repeat(50))
                .with_p_node(format!("{prev}:summary"));
            node.sources = (0..3)
                .map(|k| {
                    Source::new(
                        format!("https://x.test/{id}/{k}"),
                        format!("Source {k} of {id}"),
                    )
                })
                .collect();
            plan.nodes.push(node);
            refs.push(format!("{id}:summary"));
            prev = id;
        }
        let fin = prev.next();
        let fin = Node::new(
            fin,
            "Final",
            NodeType::Summary,
            FINAL_BATCH,
            NodeStatus::Planned,
        );
        plan.nodes.push(fin.with_p_node(refs.join(", ")));
        plan
    }

    #[test]
    fn a_long_chain_of_summaries_gives_a_final_input_under_the_cap() {
        let plan = chain(40_000);
        let fin = plan.nodes.last().expect("final").node_id;
        let (input, notes) = task_input(&plan, fin).expect("final input");
        let sources = input.final_sources.clone().expect("sources");
        let listed = source_list(&sources, plan.question()).chars().count();
        assert!(
            listed <= FINAL_SOURCES_MAX_CHARS + EXCERPTS_MAX_CHARS,
            "{listed}"
        );
        assert!(!sources.is_empty());
        assert!(
            input.context.chars().count() + listed <= INPUT_MAX_CHARS,
            "{} + {listed}",
            input.context.chars().count()
        );
        let what: Vec<&str> = notes.cuts.iter().map(|c| c.what.as_str()).collect();
        assert!(
            what.iter()
                .any(|w| w.starts_with("sources of the final summary")),
            "{what:?}"
        );
        assert!(what.iter().any(|w| w.contains("beyond the")), "{what:?}");
    }
}
