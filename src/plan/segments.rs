//! Refs rendered as labelled text segments for an LLM input: one `### <ref>` section per
//! resolved ref, with the node's id, type, status and title, then its content (with the
//! fallbacks of [`super::refs::resolve`]).
//!
//! Used by the planner input and by the sub-agents' inputs, so both read refs the same way.
//! Refs that do not parse, point at unknown nodes or are NEW placeholders are skipped with a
//! warning; they never abort anything. Each segment is capped, and so are all of them together
//! (later segments are cut, then left out); every cut is listed in [`Segments::cuts`].

use std::collections::{HashMap, HashSet};

use super::model::{Node, NodeStatus, NodeType, PlanFile};
use super::node_id::NodeId;
use super::refs::{Ref, RefTarget, parse_list, resolve};
use crate::text::{Cut, cap};

/// The most characters one segment contributes to an LLM input, so that one huge search dump
/// cannot crowd out the rest.
pub const SEGMENT_MAX_CHARS: usize = 12_000;

/// The most characters all segments of one input take together: a long chain of summaries or
/// a final summary over hundreds of nodes must not become a prompt of megabytes.
pub const SEGMENTS_MAX_CHARS: usize = 60_000;

/// Below this many characters of room left, a segment is left out rather than cut to a stub.
const MIN_SEGMENT_CHARS: usize = 200;

/// Room kept for the marker a cut leaves (`... [N more bytes]`), so cut text stays within its cap.
const CUT_MARKER_CHARS: usize = 32;

/// The caps on the segments' text: per segment and all together (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SegmentCaps {
    pub segment: usize,
    pub total: usize,
}

impl Default for SegmentCaps {
    fn default() -> Self {
        SegmentCaps {
            segment: SEGMENT_MAX_CHARS,
            total: SEGMENTS_MAX_CHARS,
        }
    }
}

/// The segments and what was skipped or cut on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segments {
    pub text: String,
    pub warnings: Vec<String>,
    /// The refs that were rendered, in order, without duplicates.
    pub refs: Vec<Ref>,
    /// Every segment that was cut or left out to stay within the caps.
    pub cuts: Vec<Cut>,
}

/// Renders every ref of `raws` (each entry may itself be a comma separated list) within
/// `caps`: each segment's content is cut to `caps.segment` characters, and once the text
/// reaches `caps.total` the next segment is cut to what is left and the later ones left out.
pub fn render<'a>(
    plan: &PlanFile,
    raws: impl IntoIterator<Item = &'a str>,
    caps: SegmentCaps,
) -> Segments {
    let mut out = Segments::default();
    // Indexes, so that thousands of refs cost no more than a pass over the plan each.
    let nodes: HashMap<NodeId, &Node> = plan.nodes.iter().map(|n| (n.node_id, n)).collect();
    let mut rendered: HashSet<Ref> = HashSet::new();
    let mut used = 0;
    let mut dropped = Dropped::default();
    for raw in raws {
        let (refs, errors) = parse_list(raw);
        for e in errors {
            out.warnings.push(format!("skipping ref: {e}"));
        }
        for r in refs {
            let RefTarget::Node(id) = r.target else {
                out.warnings.push(format!(
                    "skipping ref `{r}`: a NEW placeholder is not a node"
                ));
                continue;
            };
            let Some(&node) = nodes.get(&id) else {
                out.warnings
                    .push(format!("skipping ref `{r}`: there is no node `{id}`"));
                continue;
            };
            if !rendered.insert(r) {
                continue;
            }
            let header = format!(
                "\n### {r}\nnode {id} ({kind}, {status}): {title}\n",
                kind = kind_name(node.kind),
                status = status_name(node.status),
                title = crate::text::one_line(&node.title, 300),
            );
            let resolved = resolve(node, r.field);
            let content = resolved.trim();
            let room = caps
                .total
                .saturating_sub(used + header.chars().count() + 1 + CUT_MARKER_CHARS);
            if room < MIN_SEGMENT_CHARS.min(caps.segment) {
                dropped.add(r, content.chars().count());
                continue;
            }
            let content = cap(
                content,
                caps.segment.min(room),
                || format!("segment `{r}`"),
                &mut out.cuts,
            );
            out.refs.push(r);
            let segment = format!("{header}{content}\n");
            used += segment.chars().count();
            out.text.push_str(&segment);
        }
    }
    out.cuts.extend(dropped.into_cut(caps.total));
    out
}

/// The segments left out once the total cap was reached, recorded as one cut.
#[derive(Default)]
struct Dropped {
    first: Option<Ref>,
    count: usize,
    chars: usize,
}

impl Dropped {
    fn add(&mut self, r: Ref, chars: usize) {
        self.first.get_or_insert(r);
        self.count += 1;
        self.chars += chars;
    }

    fn into_cut(self, total: usize) -> Option<Cut> {
        let first = self.first?;
        Some(Cut {
            what: format!(
                "{} segment(s) from `{first}` on, beyond the {total}-character input budget",
                self.count
            ),
            chars: self.chars,
            kept: 0,
        })
    }
}

fn kind_name(kind: NodeType) -> &'static str {
    match kind {
        NodeType::Start => "question",
        NodeType::Search => "search",
        NodeType::Summary => "summary",
        NodeType::End => "end",
    }
}

fn status_name(status: NodeStatus) -> &'static str {
    match status {
        NodeStatus::Planned => "planned",
        NodeStatus::Running => "running",
        NodeStatus::Completed => "completed",
        NodeStatus::Failed => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Node;

    fn plan(nodes: usize, summary_chars: usize) -> PlanFile {
        let mut plan = PlanFile::new("Q?", "wf".into(), "t".into());
        let mut id = NodeId::FIRST;
        for _ in 0..nodes {
            id = id.next();
            plan.nodes.push(
                Node::new(id, "T", NodeType::Summary, 2, NodeStatus::Completed)
                    .with_summary("s".repeat(summary_chars)),
            );
        }
        plan
    }

    fn refs(plan: &PlanFile) -> String {
        plan.nodes
            .iter()
            .skip(1)
            .map(|n| format!("{}:summary", n.node_id))
            .collect::<Vec<_>>()
            .join(",")
    }

    #[test]
    fn a_long_segment_is_cut_and_the_cut_recorded() {
        let p = plan(1, 20_000);
        let segs = render(&p, ["b:summary"], SegmentCaps::default());
        assert!(segs.text.contains("... [8000 more bytes]"));
        assert_eq!(
            segs.cuts,
            vec![Cut {
                what: "segment `b:summary`".into(),
                chars: 20_000,
                kept: SEGMENT_MAX_CHARS
            }]
        );
    }

    #[test]
    fn many_segments_stay_within_the_total_and_the_rest_is_recorded() {
        let p = plan(2_000, 1_000);
        let all = refs(&p);
        let segs = render(&p, [all.as_str()], SegmentCaps::default());
        assert!(
            segs.text.chars().count() <= SEGMENTS_MAX_CHARS,
            "{}",
            segs.text.len()
        );
        assert!(
            segs.refs.len() > 50 && segs.refs.len() < 60,
            "{}",
            segs.refs.len()
        );
        let last = segs.cuts.last().expect("a cut");
        assert_eq!(last.kept, 0);
        assert!(
            last.what
                .contains("beyond the 60000-character input budget"),
            "{last:?}"
        );
        let left_out = 2_000 - segs.refs.len();
        assert_eq!(last.chars, left_out * 1_000);
        assert!(
            last.what
                .starts_with(&format!("{left_out} segment(s) from `"))
        );
    }

    #[test]
    fn within_the_caps_nothing_is_cut() {
        let p = plan(3, 100);
        let segs = render(
            &p,
            ["b:summary, c:summary, d:summary"],
            SegmentCaps::default(),
        );
        assert_eq!(segs.refs.len(), 3);
        assert!(segs.cuts.is_empty());
    }
}
