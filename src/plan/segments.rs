//! Refs rendered as labelled text segments for an LLM input: one `### <ref>` section per
//! resolved ref, with the node's id, type, status and title, then its content (with the
//! fallbacks of [`super::refs::resolve`]).
//!
//! Used by the planner input and by the sub-agents' inputs, so both read refs the same way.
//! Refs that do not parse, point at unknown nodes or are NEW placeholders are skipped with a
//! warning; they never abort anything.

use super::model::{NodeStatus, NodeType, PlanFile};
use super::refs::{Ref, RefTarget, parse_list, resolve};

/// The most characters one segment contributes to an LLM input, so that one huge search dump
/// cannot crowd out the rest.
pub const SEGMENT_MAX_CHARS: usize = 12_000;

/// The segments and what was skipped on the way.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Segments {
    pub text: String,
    pub warnings: Vec<String>,
    /// The refs that were rendered, in order, without duplicates.
    pub refs: Vec<Ref>,
}

/// Renders every ref of `raws` (each entry may itself be a comma separated list). Each
/// segment's content is cut to `max_chars` characters.
pub fn render<'a>(
    plan: &PlanFile,
    raws: impl IntoIterator<Item = &'a str>,
    max_chars: usize,
) -> Segments {
    let mut out = Segments::default();
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
            let Some(node) = plan.node(id) else {
                out.warnings
                    .push(format!("skipping ref `{r}`: there is no node `{id}`"));
                continue;
            };
            if out.refs.contains(&r) {
                continue;
            }
            out.refs.push(r);
            let content = crate::text::truncate(resolve(node, r.field).trim(), max_chars);
            out.text.push_str(&format!(
                "\n### {r}\nnode {id} ({kind}, {status}): {title}\n{content}\n",
                kind = kind_name(node.kind),
                status = status_name(node.status),
                title = node.title.trim(),
            ));
        }
    }
    out
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
