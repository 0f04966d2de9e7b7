//! How a workflow run ends, told honestly, as plain functions of what it knows ([`Facts`]):
//! its status (a final summary over no research is `degraded`, not `completed`, and so is a
//! junk report, one none of whose cited claims its sources support; a budget that stopped the
//! research makes it `partial`), the reason for anything short of `completed`, and the notice
//! that opens the report of a degraded or partial run.

use super::outcome::EngineError;
use crate::agents::leading::DISOWNED;
use crate::events::RunStatus;
use crate::plan::{FINAL_BATCH, NodeStatus, NodeType, PlanFile, QualityFinding};
use crate::run::BudgetStop;

/// What a run knows of itself when it ends.
#[derive(Debug, Clone, Copy)]
pub struct Facts<'a> {
    pub plan: &'a PlanFile,
    /// The limit that stopped the research.
    pub stopped: Option<BudgetStop>,
    /// Why planning rounds of this invocation failed.
    pub planning_errors: &'a [String],
    /// Whether the round limit made a round finalise.
    pub round_limit_finalised: bool,
    /// Planning rounds of this invocation.
    pub rounds: u32,
    pub max_rounds: u32,
    pub tasks_not_run: u32,
    /// Whether a search provider or a corpus was there to search.
    pub could_search: bool,
}

/// The status a run ends with, from where its loop ended.
pub fn status(ended: &Result<RunStatus, EngineError>, facts: &Facts<'_>) -> RunStatus {
    match ended {
        Ok(RunStatus::Completed) if !researched(facts.plan) => RunStatus::Degraded,
        Ok(RunStatus::Completed) if junk(facts).is_some() => RunStatus::Degraded,
        Ok(RunStatus::Completed) if facts.stopped.is_some() => RunStatus::Partial,
        Ok(status) => *status,
        Err(_) => RunStatus::Failed,
    }
}

/// Whether any research task (a search or summary before the final one) completed with an
/// answer that passes its checks: one that still echoes its prompt or only repeats its task
/// after a repair found nothing, whatever its status says.
pub fn researched(plan: &PlanFile) -> bool {
    plan.nodes.iter().any(|n| {
        matches!(n.kind, NodeType::Search | NodeType::Summary)
            && n.batch != FINAL_BATCH
            && n.status == NodeStatus::Completed
            && n.quality.is_empty()
    })
}

/// Whether the run's report answers the question: `None` until the final summary has run,
/// `Some(false)` when it cites nothing and says its sources do not answer
/// ([`crate::agents::quality::finds_no_answer`]), when it still fails its checks after a
/// repair (an echoed prompt answers nothing, however it reads; seen with Gemma 3 270M), or
/// when its sources support none of the claims it cites ([`unbacked`]). A run can be
/// `completed` and answer nothing: the views, the batch and `eval` show it as not answered,
/// and `--fail-on-unanswered` fails it.
pub fn answered(plan: &PlanFile) -> Option<bool> {
    let node = plan
        .final_node()
        .filter(|n| n.status == NodeStatus::Completed && !n.summary.trim().is_empty())?;
    Some(
        node.quality.is_empty()
            && unbacked(plan).is_none()
            && !crate::agents::quality::finds_no_answer(&node.summary, node.sources.len()),
    )
}

/// Why a run that researched must not be taken for an answer: its final report still fails
/// a check after its repair (it echoes its prompt, it cites none of its sources), its sources
/// support none of the claims it cites, or no search ran although there was something to
/// search (every task was a summary over the question).
pub fn junk(facts: &Facts<'_>) -> Option<String> {
    let plan = facts.plan;
    if let Some(found) = report_fault(plan) {
        return Some(found);
    }
    let searched = plan
        .nodes
        .iter()
        .any(|n| n.kind == NodeType::Search && n.status == NodeStatus::Completed);
    (facts.could_search && !searched).then(|| {
        "no search ran although a search provider or corpus is configured: every research \
         task was a summary over the question, so nothing was looked up"
            .to_string()
    })
}

/// What is wrong with the final report: what it still fails after its repair, else that its
/// sources support none of the claims it cites; `None` when neither.
fn report_fault(plan: &PlanFile) -> Option<String> {
    final_findings(plan).or_else(|| unbacked(plan))
}

/// Why the final report's citations back nothing: it cites claims, and the claim check
/// ([`crate::agents::claims`], or the verifier after it) found none of them supported by the
/// sources they cite. One supported claim is enough for it to stand: a report partly backed
/// is marked claim by claim, not disowned.
fn unbacked(plan: &PlanFile) -> Option<String> {
    let node = plan.final_node()?;
    let (cited, supported) = crate::agents::claims::counts(&node.claims);
    if cited == 0 || supported > 0 {
        return None;
    }
    // Words cannot judge a report written in another language than its sources.
    if crate::agents::claims::in_another_language(&node.claims, &node.sources) {
        return None;
    }
    let none = match cited {
        1 => "the one claim the final report cites is not supported".to_string(),
        n => format!("none of the {n} claims the final report cites is supported"),
    };
    // The word check reads no meaning: a model may judge what it left unsupported.
    let judged = node.claims.iter().any(|c| c.by == "verifier");
    let verifier = match judged {
        true => "",
        false => ", or configure `roles.verifier` to judge claims that reword their sources",
    };
    Some(format!(
        "{none} by the sources it cites: check those sources (the final node's `sources` and \
         `claims` in the plan) and the model that wrote the report (`roles.summary`){verifier}"
    ))
}

/// What the final report still fails after its repair (an echoed prompt, no citation), as
/// the quality findings on its node say; `None` when it passes.
fn final_findings(plan: &PlanFile) -> Option<String> {
    let node = plan.final_node().filter(|n| !n.quality.is_empty())?;
    let found: Vec<String> = node
        .quality
        .iter()
        .map(|f| format!("{} ({})", f.code, f.message))
        .collect();
    Some(format!(
        "the final report still fails its checks after a repair: {}",
        found.join("; ")
    ))
}

/// Why the run ended short of `completed`, in plain words; `None` when it completed. It goes
/// to stdout, the plan and the event log: a URL's password someone quoted is masked.
pub fn reason(
    status: RunStatus,
    facts: &Facts<'_>,
    failure: Option<&EngineError>,
) -> Option<String> {
    let reason = reason_text(status, facts, failure)?;
    Some(crate::text::without_url_passwords(&reason).into_owned())
}

fn reason_text(
    status: RunStatus,
    facts: &Facts<'_>,
    failure: Option<&EngineError>,
) -> Option<String> {
    // A budget that ended the research is part of the story.
    let after_stop = |why: String| match facts.stopped {
        Some(stop) => format!("{}; {why}", stop.describe()),
        None => why,
    };
    match status {
        RunStatus::Completed => None,
        RunStatus::Degraded => Some(after_stop(match researched(facts.plan) {
            true => junk(facts).unwrap_or_else(|| degraded(facts)),
            // Over no research, what its report still fails is said too.
            false => match report_fault(facts.plan) {
                Some(found) => format!("{}; {found}", degraded(facts)),
                None => degraded(facts),
            },
        })),
        RunStatus::Partial => facts.stopped.map(|stop| {
            format!(
                "{}; {} task(s) did not run or were cut",
                stop.describe(),
                facts.tasks_not_run
            )
        }),
        RunStatus::FinalFailed => {
            let failed = match facts.plan.final_node() {
                Some(n) => format!(
                    "the final summary `{}` failed: {}",
                    n.node_id,
                    n.errors.last().map_or("no error recorded", String::as_str)
                ),
                None => "the final summary failed".into(),
            };
            // Over no research, a resume would still have nothing to summarise: say both.
            Some(after_stop(match researched(facts.plan) {
                true => failed,
                false => format!("{}; {failed}", degraded(facts)),
            }))
        }
        RunStatus::Interrupted => {
            Some("stopped by a signal; resume with `--plan` to finish".into())
        }
        RunStatus::Failed => failure.map(ToString::to_string),
    }
}

/// Why nothing was researched: the rounds that failed, the tasks that failed, or why none was
/// planned.
fn degraded(facts: &Facts<'_>) -> String {
    let failed: Vec<String> = facts
        .plan
        .nodes
        .iter()
        .filter(|n| n.batch != FINAL_BATCH && n.kind != NodeType::Start)
        .filter_map(|n| {
            let (id, title) = (&n.node_id, n.title.trim());
            match n.status {
                NodeStatus::Failed => {
                    let error = n.errors.last().map_or("no error recorded", String::as_str);
                    Some(format!("task {id} ({title}) failed: {error}"))
                }
                NodeStatus::Completed if !n.quality.is_empty() => Some(format!(
                    "task {id} ({title}) answered junk after a repair: {}",
                    QualityFinding::codes(&n.quality)
                )),
                _ => None,
            }
        })
        .collect();
    let mut why = String::from("no research task completed");
    if let Some(last) = facts.planning_errors.last() {
        why.push_str(&format!(
            "; {} planning round(s) failed, the last with: {last}",
            facts.planning_errors.len(),
        ));
    }
    if failed.is_empty()
        && facts.planning_errors.is_empty()
        && let Some(nothing) = nothing_planned(facts)
    {
        why.push_str("; ");
        why.push_str(&nothing);
    }
    for f in failed {
        why.push_str("; ");
        why.push_str(&f);
    }
    why
}

/// Why no research task was planned, when none was (and no round or task failed): the round
/// limit, when it made a round finalise before any research, else the planner.
fn nothing_planned(facts: &Facts<'_>) -> Option<String> {
    let planned =
        facts.plan.nodes.iter().any(|n| {
            matches!(n.kind, NodeType::Search | NodeType::Summary) && n.batch != FINAL_BATCH
        });
    if planned {
        return None;
    }
    let max = facts.max_rounds;
    let raise = "raise `--max-rounds` (or `RESEARCHFLOW_MAX_ROUNDS`) to 2 or more to research";
    Some(match (facts.round_limit_finalised, facts.rounds) {
        (true, 0 | 1) => format!(
            "the round limit (`--max-rounds {max}`) left no round for research: its only \
             planning round had to plan the final summary, so no search ran; {raise}"
        ),
        (true, rounds) => format!(
            "the planner planned no research task in {} round(s), then the round limit \
             (`--max-rounds {max}`) left no round for research and required the final \
             summary, so no search ran; raise `--max-rounds` to give it more rounds",
            rounds - 1
        ),
        (false, _) => "the planner planned no research task, so no search ran".to_string(),
    })
}

/// The notice that opens the report of a run short of `completed`; `researched` says whether
/// research results were there to write from.
pub fn notice(status: RunStatus, why: &str, researched: bool) -> String {
    match (status, researched) {
        (RunStatus::Partial, _) => format!(
            "> **Partial run: {why}.** The report is written from what was researched by then."
        ),
        (_, true) => {
            format!("> **Degraded run: {why}.** What follows {DISOWNED} an answer to the question.")
        }
        (_, false) => format!(
            "> **Degraded run: {why}.** What follows was written without research results and \
             {DISOWNED} researched."
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(plan: &PlanFile) -> Facts<'_> {
        Facts {
            plan,
            stopped: None,
            planning_errors: &[],
            round_limit_finalised: false,
            rounds: 1,
            max_rounds: 8,
            tasks_not_run: 0,
            could_search: false,
        }
    }

    /// A completed node `b` of `kind` in `batch`, added to `plan`.
    fn completed_node(plan: &mut PlanFile, kind: NodeType, batch: i64) -> &mut crate::plan::Node {
        let mut node = plan.nodes[0].clone();
        node.node_id = crate::plan::NodeId::parse("b").expect("id");
        node.kind = kind;
        node.batch = batch;
        node.status = NodeStatus::Completed;
        plan.nodes.push(node);
        plan.nodes.last_mut().expect("just pushed")
    }

    #[test]
    fn a_final_summary_over_no_research_is_degraded_and_says_why() {
        let plan = PlanFile::new("Q?", "wf".into(), "2026-11-25T00:00:00Z".into());
        let facts = facts(&plan);
        let status = status(&Ok(RunStatus::Completed), &facts);
        assert_eq!(status, RunStatus::Degraded);
        let why = reason(status, &facts, None).expect("a reason");
        assert!(
            why.contains("the planner planned no research task, so no search ran"),
            "{why}"
        );
        let limited = Facts {
            round_limit_finalised: true,
            max_rounds: 1,
            ..facts
        };
        let why = reason(status, &limited, None).expect("a reason");
        assert!(why.contains("`--max-rounds 1`) left no round"), "{why}");
        assert!(!why.contains("fails its checks"), "{why}");
    }

    #[test]
    fn a_final_summary_that_failed_over_no_research_says_both() {
        let mut plan = PlanFile::new("Q?", "wf".into(), "2026-11-25T00:00:00Z".into());
        let node = completed_node(&mut plan, NodeType::Summary, FINAL_BATCH);
        node.status = NodeStatus::Failed;
        node.errors = vec!["timed out after 300 s".into()];
        let why = reason(RunStatus::FinalFailed, &facts(&plan), None).expect("a reason");
        assert!(why.starts_with("no research task completed; "), "{why}");
        assert!(
            why.ends_with("; the final summary `b` failed: timed out after 300 s"),
            "{why}"
        );
        let mut researched = plan.clone();
        let search = completed_node(&mut researched, NodeType::Search, 2);
        search.node_id = crate::plan::NodeId::parse("c").expect("id");
        let why = reason(RunStatus::FinalFailed, &facts(&researched), None).expect("a reason");
        assert!(why.starts_with("the final summary `b` failed"), "{why}");
    }

    #[test]
    fn a_report_answers_unless_it_says_its_sources_do_not_or_is_junk() {
        let mut plan = PlanFile::new("Q?", "wf".into(), "2026-11-25T00:00:00Z".into());
        assert_eq!(answered(&plan), None, "no final summary yet");
        let node = completed_node(&mut plan, NodeType::Summary, FINAL_BATCH);
        node.summary = "Cells hold 270 Wh/kg [1].".into();
        node.sources = vec![crate::plan::Source::new("https://example.org/a", "A")];
        assert_eq!(answered(&plan), Some(true));
        let mut node = plan.nodes.last().cloned().expect("final");
        node.summary = "The sources do not answer the question.".into();
        *plan.nodes.last_mut().expect("final") = node.clone();
        assert_eq!(answered(&plan), Some(false), "says so, cites nothing");
        node.summary = "(no sources: the searches returned none) Cells are dense.".into();
        node.quality = vec![crate::plan::QualityFinding {
            code: "ECHOED_PROMPT".into(),
            message: "the answer repeats a label of its input".into(),
        }];
        *plan.nodes.last_mut().expect("final") = node;
        assert_eq!(answered(&plan), Some(false), "junk answers nothing");
    }

    #[test]
    fn a_report_over_no_research_that_still_echoes_its_prompt_says_both() {
        let mut plan = PlanFile::new("Q?", "wf".into(), "2026-11-25T00:00:00Z".into());
        let node = completed_node(&mut plan, NodeType::Summary, FINAL_BATCH);
        node.quality = vec![crate::plan::QualityFinding {
            code: "ECHOED_PROMPT".into(),
            message: "the answer holds the chat-template marker `<<SYS>>`".into(),
        }];
        let facts = facts(&plan);
        let status = status(&Ok(RunStatus::Completed), &facts);
        assert_eq!(status, RunStatus::Degraded);
        let why = reason(status, &facts, None).expect("a reason");
        assert!(
            why.starts_with("no research task completed; the planner planned no research task"),
            "{why}"
        );
        assert!(
            why.ends_with(
                "; the final report still fails its checks after a repair: ECHOED_PROMPT \
                 (the answer holds the chat-template marker `<<SYS>>`)"
            ),
            "{why}"
        );
    }

    /// A claim of the final report citing source 1, checked by words.
    fn claim(sentence: &str, supported: bool) -> crate::plan::Claim {
        crate::plan::Claim {
            sentence: sentence.into(),
            cites: vec![1],
            supported,
            score: if supported { 1.0 } else { 0.2 },
            by: "lexical".into(),
        }
    }

    /// A plan that researched (a completed search `b`), with a final report `c` citing its
    /// one source in each of `claims`.
    fn researched_with_claims(claims: Vec<crate::plan::Claim>) -> PlanFile {
        let mut plan = PlanFile::new("Q?", "wf".into(), "2026-11-25T00:00:00Z".into());
        completed_node(&mut plan, NodeType::Search, 2);
        let fin = completed_node(&mut plan, NodeType::Summary, FINAL_BATCH);
        fin.node_id = crate::plan::NodeId::parse("c").expect("id");
        fin.summary = claims
            .iter()
            .map(|c| c.sentence.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        if fin.summary.is_empty() {
            fin.summary = "Cells are dense.".into();
        }
        fin.sources = vec![crate::plan::Source::new(
            "https://example.org/a",
            "Sodium-ion cells",
        )];
        fin.claims = claims;
        plan
    }

    #[test]
    fn a_report_none_of_whose_cited_claims_is_supported_is_degraded_naming_how_many() {
        let plan = researched_with_claims(vec![
            claim("Cells hold 270 Wh/kg [1].", false),
            claim("Packs cost 90 dollars [1].", false),
        ]);
        let ended = facts(&plan);
        let status = status(&Ok(RunStatus::Completed), &ended);
        assert_eq!(status, RunStatus::Degraded);
        let why = reason(status, &ended, None).expect("a reason");
        assert!(
            why.starts_with(
                "none of the 2 claims the final report cites is supported by the sources it \
                 cites: check those sources"
            ),
            "{why}"
        );
        assert!(why.contains("`roles.verifier`"), "{why}");
        assert_eq!(answered(&plan), Some(false));
        assert!(
            notice(status, &why, true).starts_with("> **Degraded run: none of the 2 claims"),
            "{why}"
        );
        // A verifier that judged them leaves nothing more to configure.
        let mut judged = plan.clone();
        if let Some(fin) = judged.nodes.last_mut() {
            fin.claims.iter_mut().for_each(|c| c.by = "verifier".into());
        }
        let why = reason(status, &facts(&judged), None).expect("a reason");
        assert!(!why.contains("`roles.verifier`"), "{why}");
        // One claim alone says so in the singular.
        let one = researched_with_claims(vec![claim("Cells hold 270 Wh/kg [1].", false)]);
        let why = reason(status, &facts(&one), None).expect("a reason");
        assert!(
            why.starts_with("the one claim the final report cites is not supported"),
            "{why}"
        );
    }

    #[test]
    fn a_report_in_another_language_than_its_sources_is_not_judged_by_their_words() {
        let mut plan = researched_with_claims(vec![claim(
            "固态电池的能量密度可达每公斤400瓦时，远高于现有的锂离子电池，而且不会燃烧 [1]。",
            false,
        )]);
        let last = plan.nodes.last_mut().expect("the final node");
        last.sources[0].snippet = Some(
            "Solid-state cells reach an energy density of 400 Wh/kg, well above the lithium-ion \
             cells sold today, and they do not burn."
                .into(),
        );
        let ended = facts(&plan);
        assert_eq!(
            status(&Ok(RunStatus::Completed), &ended),
            RunStatus::Completed
        );
        assert_eq!(answered(&plan), Some(true));
    }

    #[test]
    fn one_supported_claim_or_none_cited_keeps_a_report_completed() {
        let partly = researched_with_claims(vec![
            claim("Cells hold 270 Wh/kg [1].", true),
            claim("Packs cost 90 dollars [1].", false),
        ]);
        let none_cited = researched_with_claims(Vec::new());
        for plan in [&partly, &none_cited] {
            let ended = facts(plan);
            assert_eq!(
                status(&Ok(RunStatus::Completed), &ended),
                RunStatus::Completed
            );
            assert_eq!(junk(&ended), None);
            assert_eq!(reason(RunStatus::Completed, &ended, None), None);
            assert_eq!(answered(plan), Some(true));
        }
    }

    #[test]
    fn a_stop_makes_a_researched_run_partial_and_leads_its_reason() {
        let mut plan = PlanFile::new("Q?", "wf".into(), "2026-11-25T00:00:00Z".into());
        completed_node(&mut plan, NodeType::Search, 2);
        let stopped = Facts {
            stopped: Some(BudgetStop {
                limit: "max_time",
                value: 8,
                used: 9,
            }),
            tasks_not_run: 2,
            ..facts(&plan)
        };
        let status = status(&Ok(RunStatus::Completed), &stopped);
        assert_eq!(status, RunStatus::Partial);
        assert_eq!(
            reason(status, &stopped, None).as_deref(),
            Some("the time budget (8 s) was reached after 9 s; 2 task(s) did not run or were cut")
        );
        assert!(notice(status, "why", true).starts_with("> **Partial run: why.**"));
        assert_eq!(reason(RunStatus::Completed, &stopped, None), None);
    }
}
