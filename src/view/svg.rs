//! The plan graph as inline SVG, drawn here so a view needs no script and no library to show
//! it: a column per batch (labelled), a rounded box per node classed by type and status (the
//! page's stylesheet colours them), the final summary with a double border and a `final`
//! mark, and a curve per input edge with an arrow. Each box links to the node's details
//! (`#node-<id>`) and carries its whole title as a tooltip. Every vertex is a
//! `g.node[data-node]`, every edge a `path.edge[data-from][data-to]`, so tests and tools can
//! read the drawing back.

use std::fmt::Write as _;

use super::graph::{Graph, Vertex};
use super::html::esc;

const PAD: usize = 16;
const TOP: usize = 30;
const COL_W: usize = 210;
const NODE_W: usize = 172;
const NODE_H: usize = 46;
const ROW_H: usize = 62;

/// The `<svg>` element of `graph`.
pub fn svg(graph: &Graph) -> String {
    let width = PAD * 2 + graph.columns.max(1) * COL_W - (COL_W - NODE_W);
    let height = TOP + graph.rows.max(1) * ROW_H + PAD;
    let mut out = String::with_capacity(600 * graph.vertices.len() + 2_000);
    let _ = write!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="plan-graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="the plan: {} nodes, {} edges">"#,
        graph.vertices.len(),
        graph.edges.len()
    );
    out.push_str(
        r#"<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path class="arrowhead" d="M0,0L10,5L0,10z"/></marker></defs>"#,
    );
    column_labels(graph, &mut out);
    out.push_str(r#"<g class="edges">"#);
    for e in &graph.edges {
        let (Some(from), Some(to)) = (graph.vertex(&e.from), graph.vertex(&e.to)) else {
            continue;
        };
        let (x1, y1) = (left(from) + NODE_W, middle(from));
        let (x2, y2) = (left(to), middle(to));
        let bend = (x2.abs_diff(x1) / 2).max(40);
        let _ = write!(
            out,
            r#"<path class="edge" data-from="{}" data-to="{}" d="M{x1},{y1} C{},{y1} {},{y2} {x2},{y2}" marker-end="url(#arrow)"><title>{} → {} ({})</title></path>"#,
            esc(&e.from),
            esc(&e.to),
            x1 + bend,
            x2.saturating_sub(bend),
            esc(&e.from),
            esc(&e.to),
            esc(&e.fields.join(", "))
        );
    }
    out.push_str(r#"</g><g class="nodes">"#);
    for v in &graph.vertices {
        vertex(v, &mut out);
    }
    out.push_str("</g></svg>");
    out
}

/// `batch N` (or `final`) above each column.
fn column_labels(graph: &Graph, out: &mut String) {
    out.push_str(r#"<g class="columns">"#);
    let mut seen = vec![false; graph.columns];
    for v in &graph.vertices {
        if std::mem::replace(&mut seen[v.column], true) {
            continue;
        }
        let label = if v.is_final {
            "final".to_string()
        } else {
            format!("batch {}", v.batch)
        };
        let _ = write!(
            out,
            r#"<text class="batch-label" x="{}" y="{}">{}</text>"#,
            PAD + v.column * COL_W,
            TOP - 12,
            esc(&label)
        );
    }
    out.push_str("</g>");
}

fn left(v: &Vertex) -> usize {
    PAD + v.column * COL_W
}

fn top(v: &Vertex) -> usize {
    TOP + v.row * ROW_H
}

fn middle(v: &Vertex) -> usize {
    top(v) + NODE_H / 2
}

/// One node's box, linked to its details.
fn vertex(v: &Vertex, out: &mut String) {
    let (x, y) = (left(v), top(v));
    let id = esc(&v.id);
    let final_class = if v.is_final { " final" } else { "" };
    let _ = write!(
        out,
        r##"<a href="#node-{id}"><g class="node type-{} status-{}{final_class}" data-node="{id}" data-status="{}"><title>{id}: {} ({}, {})</title>"##,
        esc(v.kind),
        esc(v.status),
        esc(v.status),
        esc(&v.title),
        esc(v.kind),
        esc(v.status)
    );
    if v.is_final {
        let _ = write!(
            out,
            r#"<rect class="final-ring" x="{}" y="{}" width="{}" height="{}" rx="11"/>"#,
            x - 4,
            y - 4,
            NODE_W + 8,
            NODE_H + 8
        );
    }
    let _ = write!(
        out,
        r#"<rect class="box" x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="8"/><text class="node-id" x="{}" y="{}">{id}</text><text class="node-label" x="{}" y="{}">{}</text><text class="node-meta" x="{}" y="{}">{} · {}{}</text></g></a>"#,
        x + 8,
        y + 18,
        x + 32,
        y + 18,
        esc(&v.label()),
        x + 8,
        y + 37,
        esc(v.kind),
        esc(v.status),
        if v.is_final { " · final" } else { "" }
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::graph::tests::sample;

    #[test]
    fn one_group_per_node_and_one_path_per_edge_with_classes() {
        let mut plan = sample();
        plan.nodes[1].title = "<script>alert(1)</script>".into();
        let text = svg(&Graph::of(&plan));
        assert_eq!(text.matches(r#"<g class="node "#).count(), 5);
        assert_eq!(text.matches(r#"<path class="edge""#).count(), 5);
        assert!(text.contains(r#"class="node type-summary status-planned final" data-node="e""#));
        assert!(text.contains(r#"data-from="b" data-to="d""#));
        assert!(!text.contains("<script"), "{text}");
        assert!(text.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(text.contains(">final</text>") && text.contains(">batch 2</text>"));
    }
}
