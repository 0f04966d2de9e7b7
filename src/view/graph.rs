//! The plan as a graph: one vertex per node, in columns by batch (the start's batch 1 first,
//! the final summary's -1 last), one edge per pair of nodes that a `p_node` ref joins (from the
//! input to the task that reads it). `view`'s SVG and `graph`'s DOT and Mermaid are drawn from
//! this one model, so they always agree. It reads the plan and changes nothing.

use std::collections::{BTreeMap, HashMap};

use crate::plan::refs::parse_list;
use crate::plan::{FINAL_BATCH, PlanFile};
use crate::text::one_line;

/// The longest label shown on a vertex (the full title is in its tooltip and details).
pub const LABEL_MAX_CHARS: usize = 20;

/// Each status with its fill and stroke colours: the same in the SVG, DOT and Mermaid.
pub const STATUS_COLORS: [(&str, &str, &str); 4] = [
    ("planned", "#eef0f3", "#7a8499"),
    ("running", "#e3efff", "#2f6fde"),
    ("completed", "#e3f4e8", "#2e7d4f"),
    ("failed", "#fde8e8", "#c62828"),
];

/// The fill and stroke of `status` (an unknown one is drawn as planned).
pub fn colors(status: &str) -> (&'static str, &'static str) {
    let (_, fill, stroke) = STATUS_COLORS
        .iter()
        .find(|(s, _, _)| *s == status)
        .unwrap_or(&STATUS_COLORS[0]);
    (fill, stroke)
}

/// The plan's graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    pub vertices: Vec<Vertex>,
    pub edges: Vec<Edge>,
    /// How many columns: one per distinct batch.
    pub columns: usize,
    /// The most vertices in one column.
    pub rows: usize,
}

/// One node of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vertex {
    pub id: String,
    /// The title on one line, whole (control characters removed).
    pub title: String,
    pub kind: &'static str,
    pub status: &'static str,
    pub batch: i64,
    /// The final summary (batch -1).
    pub is_final: bool,
    pub column: usize,
    pub row: usize,
}

impl Vertex {
    /// The title cut to [`LABEL_MAX_CHARS`].
    pub fn label(&self) -> String {
        one_line(&self.title, LABEL_MAX_CHARS)
    }
}

/// An input of a task: `from` feeds `to`, through the fields named (`summary`, `info[llm]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    pub from: String,
    pub to: String,
    pub fields: Vec<String>,
}

impl Graph {
    /// The graph of `plan`. A ref that does not parse or names no node draws no edge; a ref
    /// from a node to itself neither.
    pub fn of(plan: &PlanFile) -> Graph {
        let mut batches: Vec<i64> = plan.nodes.iter().map(|n| n.batch).collect();
        batches.sort_by_key(|b| column_key(*b));
        batches.dedup();
        let column_of: HashMap<i64, usize> =
            batches.iter().enumerate().map(|(i, b)| (*b, i)).collect();
        let mut filled = vec![0usize; batches.len()];
        let mut index = HashMap::new();
        let mut vertices = Vec::with_capacity(plan.nodes.len());
        for node in &plan.nodes {
            let id = node.node_id.to_string();
            if index.contains_key(&id) {
                // A duplicate id (a file `validate plan` refuses): drawn once.
                continue;
            }
            let column = column_of.get(&node.batch).copied().unwrap_or(0);
            let row = filled[column];
            filled[column] += 1;
            index.insert(id.clone(), vertices.len());
            vertices.push(Vertex {
                id,
                title: one_line(&node.title, usize::MAX),
                kind: node.kind.as_str(),
                status: node.status.as_str(),
                batch: node.batch,
                is_final: node.batch == FINAL_BATCH,
                column,
                row,
            });
        }
        let edges = edges(plan, &index);
        Graph {
            vertices,
            edges,
            columns: batches.len(),
            rows: filled.into_iter().max().unwrap_or(0),
        }
    }

    /// The vertex of `id`.
    pub fn vertex(&self, id: &str) -> Option<&Vertex> {
        self.vertices.iter().find(|v| v.id == id)
    }
}

/// Columns in batch order, the final summary's batch (-1) after every other.
fn column_key(batch: i64) -> (bool, i64) {
    (batch == FINAL_BATCH, batch)
}

/// Every input edge, in plan order, one per pair with the fields it carries.
fn edges(plan: &PlanFile, index: &HashMap<String, usize>) -> Vec<Edge> {
    let mut out: Vec<Edge> = Vec::new();
    for node in &plan.nodes {
        let to = node.node_id.to_string();
        let mut fields: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut order = Vec::new();
        let (refs, _) = parse_list(&node.p_node);
        for r in refs {
            let Some(id) = r.node_id() else { continue };
            let from = id.to_string();
            if from == to || !index.contains_key(&from) {
                continue;
            }
            let field = r.to_string();
            let field = field.split_once(':').map_or("", |(_, f)| f).to_string();
            let entry = fields.entry(from.clone()).or_default();
            if entry.is_empty() {
                order.push(from);
            }
            if !entry.contains(&field) {
                entry.push(field);
            }
        }
        for from in order {
            let fields = fields.remove(&from).unwrap_or_default();
            if let Some(edge) = out.iter_mut().find(|e| e.from == from && e.to == to) {
                // The same id twice in one file: its refs join one edge.
                edge.fields.extend(fields);
                continue;
            }
            out.push(Edge {
                from,
                to: to.clone(),
                fields,
            });
        }
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::plan::{Node, NodeId, NodeStatus, NodeType};

    pub(crate) fn sample() -> PlanFile {
        let mut plan = PlanFile::new("What is <b>?", "wf-1".into(), "t".into());
        let id = |s: &str| NodeId::parse(s).expect("id");
        let node = |i: &str, t: &str, k, b, s, p: &str| Node::new(id(i), t, k, b, s).with_p_node(p);
        plan.nodes.extend([
            node(
                "b",
                "First",
                NodeType::Search,
                2,
                NodeStatus::Completed,
                "a:info",
            ),
            node(
                "c",
                "Second",
                NodeType::Search,
                2,
                NodeStatus::Failed,
                "A : Info[LLM], zz:summary",
            ),
            node(
                "d",
                "Merge",
                NodeType::Summary,
                3,
                NodeStatus::Running,
                "b:summary,c:summary,b:info",
            ),
            node(
                "e",
                "Final",
                NodeType::Summary,
                -1,
                NodeStatus::Planned,
                "d:summary, e:summary, bad",
            ),
        ]);
        plan
    }

    #[test]
    fn columns_follow_batches_with_the_final_last() {
        let g = Graph::of(&sample());
        let place: Vec<(&str, usize, usize)> = g
            .vertices
            .iter()
            .map(|v| (v.id.as_str(), v.column, v.row))
            .collect();
        assert_eq!(
            place,
            [
                ("a", 0, 0),
                ("b", 1, 0),
                ("c", 1, 1),
                ("d", 2, 0),
                ("e", 3, 0)
            ]
        );
        assert_eq!((g.columns, g.rows), (4, 2));
        assert!(
            g.vertex("e")
                .is_some_and(|v| v.is_final && v.status == "planned")
        );
    }

    #[test]
    fn refs_become_one_edge_per_pair_and_unknown_refs_none() {
        let g = Graph::of(&sample());
        let edges: Vec<(&str, &str, String)> = g
            .edges
            .iter()
            .map(|e| (e.from.as_str(), e.to.as_str(), e.fields.join(",")))
            .collect();
        assert_eq!(
            edges,
            [
                ("a", "b", "info".to_string()),
                ("a", "c", "info[llm]".to_string()),
                ("b", "d", "summary,info".to_string()),
                ("c", "d", "summary".to_string()),
                ("d", "e", "summary".to_string()),
            ]
        );
    }
}
