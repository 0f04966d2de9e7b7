//! The final report beside the plan file (`<out>.report.md`): the question, the final
//! summary, and the sources it cites under their numbers (a cited number without a source was
//! already removed by [`crate::agents::citations`]). Written through [`crate::atomic::write`].

use std::path::Path;

use crate::agents::citations;
use crate::plan::{Node, PlanFile, Source};

/// Renders the report of `final_node` and writes it to `path` atomically. A `notice` (why
/// the run is degraded) opens the report.
pub fn write(
    path: &Path,
    plan: &PlanFile,
    final_node: &Node,
    plan_file: &str,
    notice: Option<&str>,
) -> std::io::Result<()> {
    let mut text = render(plan, final_node, plan_file);
    if let Some(notice) = notice {
        let title_end = text.find("\n\n").map_or(0, |i| i + 2);
        text.insert_str(
            title_end,
            &format!(
                "> **Degraded run: {notice}.** What follows was written without research results \
                 and must not be taken as researched.\n\n"
            ),
        );
    }
    crate::atomic::write(path, text.as_bytes())
}

/// The report as Markdown: title, the final summary, and its sources.
pub fn render(plan: &PlanFile, final_node: &Node, plan_file: &str) -> String {
    let (body, cited) = citations::clean(&final_node.summary, final_node.sources.len());
    let mut out = format!("# {}\n\n{}\n", plan.question().trim(), body.trim());
    if final_node.truncated {
        out.push_str(
            "\n_This report was cut off at the model's token limit (`maxTokens`); what follows the cut is missing._\n",
        );
    }
    let listed: Vec<(usize, &Source)> = if cited.is_empty() {
        final_node
            .sources
            .iter()
            .enumerate()
            .map(|(i, s)| (i + 1, s))
            .collect()
    } else {
        let mut numbers = cited.clone();
        numbers.sort_unstable();
        numbers
            .into_iter()
            .filter_map(|n| final_node.sources.get(n - 1).map(|s| (n, s)))
            .collect()
    };
    if !listed.is_empty() {
        out.push_str(if cited.is_empty() {
            "\n## Sources consulted\n\n"
        } else {
            "\n## Sources\n\n"
        });
        for (n, s) in listed {
            let title = if s.title.trim().is_empty() {
                &s.url
            } else {
                &s.title
            };
            out.push_str(&format!("- [{n}] [{}]({})\n", title.trim(), s.url));
        }
    }
    out.push_str(&format!(
        "\n---\n_Written by researchflow from `{plan_file}` (workflow `{}`), final node `{}`._\n",
        plan.workflow_id, final_node.node_id
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{FINAL_BATCH, NodeId, NodeStatus, NodeType};

    fn source(n: u32) -> Source {
        Source {
            url: format!("https://example.test/{n}"),
            title: format!("T{n}"),
        }
    }

    fn plan() -> PlanFile {
        let mut plan = PlanFile::new("Q?", "wf".into(), "t".into());
        let id = |s: &str| NodeId::parse(s).expect("id");
        let mut b = Node::new(id("b"), "b", NodeType::Search, 2, NodeStatus::Completed);
        b.sources = vec![source(1), source(2)];
        let mut c = Node::new(id("c"), "c", NodeType::Search, 2, NodeStatus::Completed);
        c.sources = vec![source(2), source(3)];
        let d = Node::new(id("d"), "d", NodeType::Summary, 3, NodeStatus::Completed)
            .with_p_node("c:summary");
        let mut e = Node::new(
            id("e"),
            "Final",
            NodeType::Summary,
            FINAL_BATCH,
            NodeStatus::Completed,
        )
        .with_p_node("d:summary");
        e.summary = "Answer [2] and [1]. Bogus [7].".into();
        e.sources = vec![source(2), source(3)];
        plan.nodes.extend([b, c, d, e]);
        plan
    }

    #[test]
    fn report_lists_only_cited_sources_under_their_numbers() {
        let p = plan();
        let text = render(&p, p.final_node().expect("final"), "p.json");
        assert!(
            text.starts_with("# Q?\n\nAnswer [2] and [1]. Bogus.\n"),
            "{text}"
        );
        assert!(
            text.contains(
                "- [1] [T2](https://example.test/2)\n- [2] [T3](https://example.test/3)\n"
            )
        );
        assert!(!text.contains("[7]"));
    }
}
