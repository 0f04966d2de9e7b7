//! What the review stage's two roles read, built from the plan and the report as written:
//!
//! - `review`: the question, the report, the numbered sources it cites (`[n]` is the final
//!   node's `sources[n - 1]`, as in the report) and, as the evidence behind them, each search
//!   task's overview with the numbers of the sources it returned;
//! - `second_opinion`: the question, the plan's tasks (id, type, status, title, summary; the
//!   start node is the question and the final node's summary is the report) and the report.
//!
//! Every piece is bounded and each cut is recorded, as the planner's and the agents' inputs
//! are, so a huge report or plan cannot overflow a model's context.

use crate::plan::footer::without_footer;
use crate::plan::{FINAL_BATCH, Node, NodeStatus, NodeType, PlanFile, Source};
use crate::text::{Cut, cap, one_line, strip_controls};

/// The most characters of the report either role reads.
pub const REPORT_MAX_CHARS: usize = 40_000;
/// The most characters of the sources and the evidence behind them.
pub const SOURCES_MAX_CHARS: usize = 20_000;
/// The most characters of the plan's tasks the second opinion reads.
pub const PLAN_MAX_CHARS: usize = 30_000;
/// The most characters of one task's summary, in either input.
pub const SUMMARY_MAX_CHARS: usize = 1_500;
/// The longest title shown.
const TITLE_MAX_CHARS: usize = 300;

/// The two roles' user messages and what was cut to build them.
#[derive(Debug, Clone)]
pub struct ReviewInputs {
    pub review: String,
    pub second_opinion: String,
    pub cuts: Vec<Cut>,
}

/// Builds both inputs from `plan` and the text of its report (without its run-specific
/// footer).
pub fn build(plan: &PlanFile, report: &str) -> ReviewInputs {
    let mut cuts = Vec::new();
    let question = format!("Question: {}\n", one_line(plan.question(), usize::MAX));
    // The footer names the plan file and the run: a replay's differ, its report's content not.
    let report = cap(
        strip_controls(without_footer(report)).trim(),
        REPORT_MAX_CHARS,
        || "the report".to_string(),
        &mut cuts,
    );
    let sources = cap(
        &sources_and_evidence(plan),
        SOURCES_MAX_CHARS,
        || "the report's sources and evidence".to_string(),
        &mut cuts,
    );
    let tasks = cap(
        &plan_tasks(plan, &mut cuts),
        PLAN_MAX_CHARS,
        || "the plan's tasks".to_string(),
        &mut cuts,
    );
    let checks = checks(plan);
    ReviewInputs {
        review: format!("{question}\n## The report\n\n{report}\n\n{checks}\n{sources}"),
        second_opinion: format!(
            "{question}\n## The research plan behind the report\n\n{tasks}\n## The report\n\n{report}\n\n{checks}"
        ),
        cuts,
    }
}

/// The most unsupported claims the checks section quotes.
const QUOTED_CLAIMS: usize = 8;

/// What researchflow's own checks found of the report, for both roles to weigh: how many of
/// its cited claims their sources support (and the first unsupported ones), and what is wrong
/// with it that a repair did not mend. A reviewer cannot call junk `ok` unawares.
fn checks(plan: &PlanFile) -> String {
    let Some(node) = plan.final_node() else {
        return String::new();
    };
    let supported = node.claims.iter().filter(|c| c.supported).count();
    let mut out = format!(
        "## What researchflow's checks found\n\n{supported} of {} cited claims pass them: quoted \
         word for word from their sources, most of their content words found in the text their \
         sources returned (a check of words, not of meaning), or judged supported by a model.\n",
        node.claims.len()
    );
    for claim in node
        .claims
        .iter()
        .filter(|c| !c.supported)
        .take(QUOTED_CLAIMS)
    {
        out.push_str(&format!(
            "- not supported: \"{}\"\n",
            one_line(&claim.sentence, TITLE_MAX_CHARS)
        ));
    }
    for finding in &node.quality {
        out.push_str(&format!(
            "- {}: {}\n",
            finding.code,
            one_line(&finding.message, TITLE_MAX_CHARS)
        ));
    }
    out
}

/// The numbered sources of the final node, then each search that returned one of them.
fn sources_and_evidence(plan: &PlanFile) -> String {
    let numbered: &[Source] = plan.final_node().map_or(&[], |n| n.sources.as_slice());
    let mut out = String::from("## The numbered sources the report cites\n\n");
    if numbered.is_empty() {
        out.push_str("(none: the report has no sources)\n");
        return out;
    }
    for (i, s) in numbered.iter().enumerate() {
        out.push_str(&format!(
            "[{}] {} — {}\n",
            i + 1,
            one_line(&s.title, TITLE_MAX_CHARS),
            one_line(&s.url, usize::MAX)
        ));
    }
    out.push_str(
        "\n## What the searches found (each search's overview, and the sources it returned)\n",
    );
    let mut cuts = Vec::new();
    for node in plan.nodes.iter().filter(|n| is_search_result(n)) {
        let numbers: Vec<String> = numbered
            .iter()
            .enumerate()
            .filter(|(_, s)| node.sources.iter().any(|f| f.url == s.url))
            .map(|(i, _)| format!("[{}]", i + 1))
            .collect();
        if numbers.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "\n### {}: {} (sources {})\n{}\n",
            node.node_id,
            one_line(&node.title, TITLE_MAX_CHARS),
            numbers.join(""),
            summary_of(node, &mut cuts)
        ));
    }
    out
}

fn is_search_result(node: &Node) -> bool {
    node.kind == NodeType::Search && node.status == NodeStatus::Completed
}

/// Every task but the start node and the final summary: what the research did and found.
fn plan_tasks(plan: &PlanFile, cuts: &mut Vec<Cut>) -> String {
    let mut out = String::new();
    for node in plan
        .nodes
        .iter()
        .filter(|n| n.kind != NodeType::Start && n.batch != FINAL_BATCH)
    {
        out.push_str(&format!(
            "### {} ({}, {}): {}\n",
            node.node_id,
            kind_name(node.kind),
            node.status.as_str(),
            one_line(&node.title, TITLE_MAX_CHARS)
        ));
        match node.status {
            NodeStatus::Completed => out.push_str(&summary_of(node, cuts)),
            NodeStatus::Failed => out.push_str(&format!(
                "(failed: {})",
                one_line(
                    node.errors
                        .last()
                        .map_or("no error recorded", String::as_str),
                    TITLE_MAX_CHARS
                )
            )),
            NodeStatus::Planned | NodeStatus::Running => out.push_str("(did not run)"),
        }
        out.push_str("\n\n");
    }
    if out.is_empty() {
        out.push_str("(no research task: the report was written from the question alone)\n");
    }
    out
}

fn kind_name(kind: NodeType) -> &'static str {
    match kind {
        NodeType::Start => "start",
        NodeType::Search => "search",
        NodeType::Summary => "summary",
        NodeType::End => "end",
    }
}

/// A task's summary, bounded; "(no summary)" when it has none.
fn summary_of(node: &Node, cuts: &mut Vec<Cut>) -> String {
    let text = strip_controls(&node.summary);
    let text = text.trim();
    if text.is_empty() {
        return "(no summary)".to_string();
    }
    cap(
        text,
        SUMMARY_MAX_CHARS,
        || format!("the summary of {}", node.node_id),
        cuts,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{final_summary, plan, search};

    fn src(n: u32) -> Source {
        Source::new(format!("https://s.test/{n}"), format!("Source {n}"))
    }

    fn a_plan() -> PlanFile {
        let mut c = search("c", "Costs").with_status(NodeStatus::Failed);
        c.errors = vec!["HTTP 500".into()];
        let b = search("b", "Cycle life").with_summary("LFP lasts longest.");
        plan(
            "Which cells last?",
            [
                b.with_sources([src(1), src(2)]),
                c,
                final_summary("e", "Final")
                    .with_summary("The report.")
                    .with_sources([src(2), src(3)]),
            ],
        )
    }

    #[test]
    fn the_review_reads_the_report_its_numbered_sources_and_the_searches_behind_them() {
        let inputs = build(&a_plan(), "# Report\n\nLFP [1].");
        let r = &inputs.review;
        assert!(r.starts_with("Question: Which cells last?\n"), "{r}");
        assert!(r.contains("LFP [1]."), "{r}");
        assert!(
            r.contains("[1] Source 2 — https://s.test/2\n[2] Source 3 — https://s.test/3\n"),
            "{r}"
        );
        assert!(
            r.contains("### b: Cycle life (sources [1])\nLFP lasts longest."),
            "{r}"
        );
        assert!(
            !r.contains("Costs"),
            "a failed search returned nothing: {r}"
        );
        assert!(inputs.cuts.is_empty());
    }

    #[test]
    fn the_second_opinion_reads_the_plan_tasks_and_the_report() {
        let inputs = build(&a_plan(), "The report.");
        let s = &inputs.second_opinion;
        assert!(
            s.contains("### b (search, completed): Cycle life\nLFP lasts longest."),
            "{s}"
        );
        assert!(
            s.contains("### c (search, failed): Costs\n(failed: HTTP 500)"),
            "{s}"
        );
        assert!(!s.contains("### e"), "the final summary is the report: {s}");
        assert!(
            s.contains("## The report\n\nThe report.\n\n## What researchflow's checks found\n\n0 of 0 cited claims"),
            "{s}"
        );
    }

    #[test]
    fn a_huge_report_is_cut_and_the_cut_recorded() {
        let inputs = build(&a_plan(), &"word ".repeat(20_000));
        assert!(
            inputs
                .cuts
                .iter()
                .any(|c| c.what == "the report" && c.kept == REPORT_MAX_CHARS)
        );
        assert!(inputs.review.chars().count() < REPORT_MAX_CHARS + 2_000);
    }
}
