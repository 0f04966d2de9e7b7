//! The plan graph as text for other tools: Graphviz DOT and Mermaid (`researchflow graph`).
//! Both list the vertices in plan order, each batch's together, then the edges; titles are one
//! line, cut to [`LABEL_MAX_CHARS`], with every character either language would read as
//! syntax escaped, so a hostile title stays a label. The output depends on the plan alone:
//! the same file always prints the same text.

use std::fmt::Write as _;

use super::graph::{Graph, LABEL_MAX_CHARS, STATUS_COLORS, Vertex, colors};

/// The graph in Graphviz DOT: left to right, a rank per batch, filled by status, the final
/// summary with a double border, edges labelled with the fields they carry.
pub fn dot(graph: &Graph) -> String {
    let mut out = String::from("digraph plan {\n  rankdir=LR;\n");
    out.push_str("  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
    for column in 0..graph.columns {
        let ids: Vec<String> = graph
            .vertices
            .iter()
            .filter(|v| v.column == column)
            .map(|v| format!("\"{}\"", dot_text(&v.id)))
            .collect();
        let _ = writeln!(out, "  {{ rank=same; {}; }}", ids.join("; "));
    }
    for v in &graph.vertices {
        let (fill, stroke) = colors(v.status);
        // The `\n` between the two lines is ours: a title cannot make one (it is one line, its
        // backslashes escaped).
        let label = format!(
            "{}\\n{}",
            dot_text(&format!("{}: {}", v.id, v.label())),
            dot_text(&format!("{} · {}", v.kind, v.status))
        );
        let _ = writeln!(
            out,
            "  \"{}\" [label=\"{label}\", fillcolor=\"{fill}\", color=\"{stroke}\"{}];",
            dot_text(&v.id),
            if v.is_final { ", peripheries=2" } else { "" }
        );
    }
    for e in &graph.edges {
        let _ = writeln!(
            out,
            "  \"{}\" -> \"{}\" [label=\"{}\"];",
            dot_text(&e.from),
            dot_text(&e.to),
            dot_text(&e.fields.join(", "))
        );
    }
    out.push_str("}\n");
    out
}

/// The graph as a Mermaid flowchart: left to right, a class per status, the final summary in
/// a double box. Ids are prefixed (`n_a`), since Mermaid reserves words such as `end`, a valid
/// node id.
pub fn mermaid(graph: &Graph) -> String {
    let mut out = String::from("flowchart LR\n");
    for v in &graph.vertices {
        let label = mermaid_text(&format!("{}: {}", v.id, v.label()));
        let (open, close) = shape(v);
        let _ = writeln!(
            out,
            "  n_{}{open}\"{label}\"{close}:::{}",
            v.id,
            mermaid_class(v.status)
        );
    }
    for e in &graph.edges {
        let label = mermaid_text(&e.fields.join(", "));
        let _ = writeln!(out, "  n_{} -->|\"{label}\"| n_{}", e.from, e.to);
    }
    for (status, fill, stroke) in STATUS_COLORS {
        let _ = writeln!(out, "  classDef {status} fill:{fill},stroke:{stroke}");
    }
    out
}

fn shape(v: &Vertex) -> (&'static str, &'static str) {
    match (v.is_final, v.kind) {
        (true, _) => ("[[", "]]"),
        (false, "start") => ("([", "])"),
        _ => ("[", "]"),
    }
}

/// The class of a status; any other word is drawn as planned.
fn mermaid_class(status: &str) -> &'static str {
    STATUS_COLORS
        .iter()
        .map(|(s, _, _)| *s)
        .find(|s| *s == status)
        .unwrap_or("planned")
}

/// Text inside a DOT double-quoted string: quotes and backslashes escaped, on one line.
fn dot_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::text::one_line(text, usize::MAX).chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Text inside a Mermaid quoted label: every character Mermaid or the HTML it renders into
/// would read as syntax written as an entity code (`#quot;`, or its number: `#60;`).
fn mermaid_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in crate::text::one_line(text, LABEL_MAX_CHARS + 16).chars() {
        match c {
            '"' => out.push_str("#quot;"),
            '#' => out.push_str("#35;"),
            '<' => out.push_str("#60;"),
            '>' => out.push_str("#62;"),
            '&' => out.push_str("#38;"),
            '`' => out.push_str("#96;"),
            '|' => out.push_str("#124;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::graph::tests::sample;

    #[test]
    fn dot_quotes_what_a_title_holds() {
        let mut plan = sample();
        plan.nodes[1].title = "Say \"hi\" \\ <x>\nnext".into();
        let text = dot(&Graph::of(&plan));
        assert!(
            text.contains(r#""b" [label="b: Say \"hi\" \\ <x> next\nsearch · completed""#),
            "{text}"
        );
        assert!(text.contains(
            r##""e" [label="e: Final\nsummary · planned", fillcolor="#eef0f3", color="#7a8499", peripheries=2];"##
        ));
        assert!(text.contains(r#""b" -> "d" [label="summary, info"];"#));
    }

    #[test]
    fn mermaid_ids_cannot_be_keywords_and_labels_cannot_break_out() {
        let mut plan = sample();
        // 16 characters: the whole title is the label.
        plan.nodes[1].title = "\"] --> x[\"<s>#|`".into();
        let text = mermaid(&Graph::of(&plan));
        assert!(
            text.contains(r#"n_b["b: #quot;] --#62; x[#quot;#60;s#62;#35;#124;#96;"]:::completed"#),
            "{text}"
        );
        // A longer one is cut to LABEL_MAX_CHARS, escaped all the same.
        plan.nodes[1].title = "a\"] --> x[\"<script>#1|`".into();
        let text = mermaid(&Graph::of(&plan));
        assert!(
            text.contains(r#"n_b["b: a#quot;] --#62; x[#quot;#60;script#62;…"]:::completed"#),
            "{text}"
        );
        assert!(text.contains(r#"n_e[["e: Final"]]:::planned"#));
        assert!(text.contains(r#"n_a(["a: What is #60;b#62;?"]):::completed"#));
        assert!(text.contains("n_c -->|\"summary\"| n_d"));
    }
}
