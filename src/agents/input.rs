//! Task input assembly: a planned node of the plan turned into the [`TaskInput`] its sub-agent
//! reads (the question, the task, its resolved `p_node`, and for the final summary the sources
//! it may cite). Reads the plan; never changes it.
//!
//! The input is bounded as a whole: earlier results and the final summary's numbered sources
//! together take at most [`INPUT_MAX_CHARS`] characters (the sources' lines at most
//! [`FINAL_SOURCES_MAX_CHARS`] of them, what they say at most
//! [`EXCERPTS_MAX_CHARS`](super::final_sources::EXCERPTS_MAX_CHARS)), and
//! every cut is returned to be recorded. What the final summary's numbered sources say is given
//! once, in their list: an earlier search's results it reads are narrowed to that task's own
//! analysis (`b:info` is read as `b:info[llm]`) when every source of the task is listed.

use std::collections::HashSet;

use super::final_sources::{directions, final_sources, source_list, within};
use super::task::TaskInput;
use crate::plan::segments::{self, SEGMENT_MAX_CHARS, SegmentCaps};
use crate::plan::{FINAL_BATCH, InfoPart, NodeId, NodeType, PlanFile, Ref, RefField, Source};
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
        Some(listed) => narrowed(plan, &node.p_node, listed),
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

/// `p_node` with each ref to a search task's results (`info`, `info[all]`, `info[search]`)
/// read as `info[llm]` when every source the task found is in `listed`; other entries, and
/// those that do not parse (left for the renderer to report), as written.
fn narrowed(plan: &PlanFile, p_node: &str, listed: &[Source]) -> String {
    let urls: HashSet<&str> = listed.iter().map(|s| s.url.as_str()).collect();
    let all_listed = |id: NodeId| {
        plan.node(id).is_some_and(|n| {
            n.kind == NodeType::Search
                && !n.sources.is_empty()
                && n.sources.iter().all(|s| urls.contains(s.url.as_str()))
        })
    };
    let entries = p_node.split([',', '，']).filter(|e| !e.trim().is_empty());
    let narrowed: Vec<String> = entries
        .map(|entry| match Ref::parse(entry) {
            Ok(
                r @ Ref {
                    field: RefField::Info(InfoPart::All | InfoPart::Search),
                    ..
                },
            ) if r.node_id().is_some_and(all_listed) => Ref {
                field: RefField::Info(InfoPart::Llm),
                ..r
            }
            .to_string(),
            _ => entry.trim().to_string(),
        })
        .collect();
    narrowed.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::final_sources::EXCERPTS_MAX_CHARS;
    use crate::plan::testing::{final_summary, id, plan, search};
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
        assert!(fin.context.contains("### b:summary") && fin.context.contains("found"));
        assert_eq!(notes.warnings.len(), 1, "{:?}", notes.warnings);
        assert!(notes.cuts.is_empty());
        assert!(task_input(&plan, id("q")).is_none());
    }

    #[test]
    fn the_final_reads_a_listed_search_through_its_analysis_only() {
        let info = |n: &str| {
            format!(
                "<info type=\"llm\">analysis of {n}</info>\n<info type=\"search\">passages of {n}</info>"
            )
        };
        let b = search("b", "First")
            .with_info(info("b"))
            .with_sources([Source::new("https://x.test/1", "X")]);
        // c's source is not a URL the list can carry, so its results are read in full.
        let c = search("c", "Second")
            .with_info(info("c"))
            .with_sources([Source::new(" ", "No URL")]);
        let d = final_summary("d", "Final")
            .with_p_node("b:info, b:info[llm], c:info[all], zz:sumary")
            .with_status(NodeStatus::Planned);
        let plan = plan("Q?", [b, c, d]);
        let (fin, notes) = task_input(&plan, id("d")).expect("d");
        let context = &fin.context;
        assert_eq!(context.matches("analysis of b").count(), 1, "{context}");
        assert!(!context.contains("passages of b"), "{context}");
        assert!(context.contains("### b:info[llm]"), "{context}");
        assert!(context.contains("passages of c") && context.contains("### c:info\n"));
        assert_eq!(notes.warnings.len(), 1, "{:?}", notes.warnings);
        let (b_input, _) = task_input(&plan, id("b")).expect("b");
        assert!(b_input.final_sources.is_none());
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
