//! The report's footer: which plan file and which run wrote it. It is the one run-specific part
//! of a report, so what reads a report for its content (the review, whose calls a replay must
//! match) reads it without the footer.

use super::{NodeId, PlanFile};
use crate::markdown::code_text;

/// How every footer starts, after the report's body.
const START: &str = "\n---\n_Written by researchflow from `";

/// The footer of the report written from `plan_file`'s final node `final_node`.
pub fn footer(plan: &PlanFile, plan_file: &str, final_node: NodeId) -> String {
    format!(
        "{START}{}` (workflow `{}`), final node `{final_node}`._\n",
        code_text(plan_file),
        code_text(&plan.workflow_id),
    )
}

/// The report without its footer (unchanged when it has none).
pub fn without_footer(report: &str) -> &str {
    report.rfind(START).map_or(report, |at| &report[..at])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_footer_comes_off_whatever_run_wrote_it() {
        let mut plan = PlanFile::new("Q?", "wf-one".into(), "2026-11-25T00:00:00Z".into());
        let d = NodeId::parse("d").expect("id");
        let one = format!("# Q?\n\nBody.\n{}", footer(&plan, "a/plan.json", d));
        plan.workflow_id = "wf-other".into();
        let two = format!("# Q?\n\nBody.\n{}", footer(&plan, "b/replay.json", d));
        assert_ne!(one, two);
        assert_eq!(without_footer(&one), without_footer(&two));
        assert_eq!(without_footer(&one), "# Q?\n\nBody.\n");
        assert_eq!(without_footer("No footer."), "No footer.");
    }
}
