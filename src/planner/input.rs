//! The planner's user input: the question line first, then one labelled segment per ref of
//! `check_list.refs`, then notes about failed tasks, tasks the plan review dropped, and
//! finalisation.
//!
//! The segments come from [`crate::plan::segments`]: refs that do not parse, point at unknown
//! nodes or are NEW placeholders are skipped with a warning and never abort a round. They are
//! capped one by one and together; the cuts are returned for the round to report.

use super::plan_review::Issue;
use crate::plan::PlanFile;
use crate::plan::segments::{self, SegmentCaps};
use crate::text::Cut;

/// A task that failed, for the next planner input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedTask {
    pub node_id: String,
    pub title: String,
    pub error: String,
}

/// What the orchestrator adds to a round's input beyond the refs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RoundNotes {
    pub failed: Vec<FailedTask>,
    /// The issues for which the plan review dropped tasks of the last round(s).
    pub dropped: Vec<Issue>,
    /// The last allowed round: the planner must finalise now.
    pub must_finalise: bool,
}

/// The assembled input and what was skipped or cut on the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannerInput {
    pub text: String,
    pub warnings: Vec<String>,
    /// Segments cut or left out to stay within their caps.
    pub cuts: Vec<Cut>,
}

pub fn build(plan: &PlanFile, notes: &RoundNotes) -> PlannerInput {
    build_within(plan, notes, 1.0)
}

/// [`build`] with `share` (0 to 1) of the segments' characters, for a model with a shorter
/// context ([`crate::llm::fit::fitted`]).
pub fn build_within(plan: &PlanFile, notes: &RoundNotes, share: f64) -> PlannerInput {
    let mut text = format!("用户问题: {}\n", plan.question().trim());
    let refs = || plan.check_list.refs.iter().map(String::as_str);
    let mut segments = segments::render(plan, refs(), SegmentCaps::default());
    if share < 1.0 {
        let total = (segments.text.chars().count() as f64 * share) as usize;
        let caps = SegmentCaps {
            total,
            ..SegmentCaps::default()
        };
        segments = segments::render(plan, refs(), caps);
    }
    text.push_str(&segments.text);
    let (warnings, cuts) = (segments.warnings, segments.cuts);
    if !notes.failed.is_empty() {
        text.push_str(
            "\n### Failed tasks\nThese tasks failed after retries; their results are missing:\n",
        );
        // In plan order, not in the order the tasks happened to fail: the same plan gives
        // the same input (a replay depends on it).
        let mut failed: Vec<&FailedTask> = notes.failed.iter().collect();
        failed.sort_by_key(|f| (f.node_id.len(), f.node_id.clone()));
        for f in failed {
            text.push_str(&format!(
                "- node {}: {} (error: {})\n",
                f.node_id, f.title, f.error
            ));
        }
    }
    if !notes.dropped.is_empty() {
        text.push_str(
            "\n### Tasks dropped by the plan review\nThese planned tasks were not run, for the \
             reason given. Plan genuinely new directions that build on completed work, or \
             finish:\n",
        );
        for issue in &notes.dropped {
            text.push_str(&format!("- {} ({})\n", issue.message, issue.kind));
        }
    }
    if notes.must_finalise {
        text.push_str(
            "\n### Instruction\nThis is the last planning round. You must finish now: set \
             \"is_final\": true and give exactly one task, of type \"summary\", whose p_node \
             cites every node the final report needs.\n",
        );
    }
    PlannerInput {
        text,
        warnings,
        cuts,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{self, search};
    use crate::planner::plan_review::Severity;

    fn plan() -> PlanFile {
        let b = search("b", "Search X")
            .with_summary("X is Y.")
            .with_info(r#"<info type="llm">analysis</info>"#);
        testing::plan("What is X?", [b, search("c", "Empty one")])
    }

    #[test]
    fn question_first_then_segments_with_fallbacks() {
        let mut p = plan();
        p.check_list.refs = vec![
            " B : SUMMARY".into(),
            "b:info[search]".into(),
            "c:info[llm]".into(),
            "zz:summary".into(),
            "b:nope".into(),
            "b:summary".into(),
        ];
        let input = build(&p, &RoundNotes::default());
        assert!(input.text.starts_with("用户问题: What is X?\n"));
        assert!(
            input
                .text
                .contains("### b:summary\nnode b (search, completed): Search X\nX is Y.\n")
        );
        // info[search] is absent: falls back to the summary.
        assert!(
            input
                .text
                .contains("### b:info[search]\nnode b (search, completed): Search X\nX is Y.\n")
        );
        // c has no summary and no info: falls back to its title.
        assert!(
            input
                .text
                .contains("### c:info[llm]\nnode c (search, completed): Empty one\nEmpty one\n")
        );
        assert_eq!(
            input.text.matches("### b:summary").count(),
            1,
            "duplicates once"
        );
        assert_eq!(input.warnings.len(), 2, "{:?}", input.warnings);
        assert!(!input.text.contains("zz"));
    }

    #[test]
    fn a_huge_segment_is_cut_and_the_cut_returned() {
        let mut p = plan();
        p.nodes[1].summary = "z".repeat(50_000);
        p.check_list.refs = vec!["b:summary".into()];
        let input = build(&p, &RoundNotes::default());
        assert!(input.text.len() < 13_000, "{}", input.text.len());
        assert_eq!(input.cuts.len(), 1);
        assert_eq!(input.cuts[0].what, "segment `b:summary`");
        assert_eq!((input.cuts[0].chars, input.cuts[0].kept), (50_000, 12_000));
    }

    #[test]
    fn notes_are_appended() {
        let notes = RoundNotes {
            failed: vec![FailedTask {
                node_id: "c".into(),
                title: "Empty one".into(),
                error: "HTTP 503".into(),
            }],
            dropped: vec![Issue {
                id: "R2-1".into(),
                kind: "DUPLICATE_TASK".into(),
                severity: Severity::Block,
                message: "task `Search X` repeats node b; the task is dropped".into(),
                path: "tasks[0]".into(),
            }],
            must_finalise: true,
        };
        let input = build(&plan(), &notes);
        assert!(input.text.contains("- node c: Empty one (error: HTTP 503)"));
        assert!(
            input
                .text
                .contains("### Tasks dropped by the plan review\n")
        );
        assert!(
            input.text.contains(
                "- task `Search X` repeats node b; the task is dropped (DUPLICATE_TASK)\n"
            )
        );
        assert!(input.text.contains("This is the last planning round"));
    }

    #[test]
    fn failed_tasks_are_listed_in_plan_order_whatever_order_they_failed_in() {
        let failed = |id: &str| FailedTask {
            node_id: id.into(),
            title: format!("Task {id}"),
            error: "HTTP 500".into(),
        };
        let notes = RoundNotes {
            failed: vec![failed("aa"), failed("d"), failed("c")],
            ..RoundNotes::default()
        };
        let text = build(&plan(), &notes).text;
        let at = |id: &str| text.find(&format!("- node {id}:")).expect(id);
        assert!(at("c") < at("d") && at("d") < at("aa"), "{text}");
    }
}
