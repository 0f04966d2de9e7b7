//! Writing a valid planner answer into the plan (in memory): new nodes, the check list and the
//! NEW placeholders. Also the bootstrap of a fresh plan. Saving is the caller's job.
//!
//! Rules (SPEC section 2, step 5): each task becomes a node with the next id, batch -1 when
//! final else `latest_batch + 1`, status planned, empty summary and info, and a sanitised
//! `p_node` (`:title` becomes `:summary`; malformed refs, unknown nodes and NEW placeholders are
//! dropped with a warning, because tasks of one batch run side by side). `latest_id` becomes the
//! last new id; `latest_batch` -1 when final, +1 when tasks were created, unchanged otherwise;
//! `refs` is `next_check_list` with NEW1..NEW3 resolved, unresolvable entries dropped.
//!
//! Before any of it, the plan review ([`super::plan_review`]) judges the tasks: a task it
//! blocks (a repeat of earlier work, say) is not added, and its NEW placeholder stands for the
//! node it repeats, if any; the final summary is repaired instead (its title, its inputs).

use crate::plan::refs::{RefField, RefTarget, parse_list};
use crate::plan::{FINAL_BATCH, Node, NodeId, NodeStatus, NodeType, PlanFile, Ref};

use super::contract::PlanAnswer;
use super::plan_review::{Issue, Original, PlanReview, check};

/// What a round added.
#[derive(Debug, Clone, PartialEq)]
pub struct Applied {
    pub planned: Vec<Node>,
    pub resolved_refs: Vec<String>,
    pub warnings: Vec<String>,
    /// Tasks the review dropped.
    pub dropped: Vec<Dropped>,
    /// The plan review on the round.
    pub verdict: PlanReview,
}

/// A planned task the review dropped, with the issue that blocked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    pub title: String,
    pub issue: Issue,
    /// The node a dropped repeat stands for.
    pub repeats: Option<NodeId>,
}

/// First round of a fresh plan: with only the start node and no refs, the planner reads the
/// question's info. Also fills a missing `latest_id` / `latest_batch`. Returns whether the plan
/// changed.
pub fn bootstrap(plan: &mut PlanFile) -> bool {
    let mut changed = plan.infer_check_list();
    if plan.nodes.len() == 1 && plan.check_list.refs.is_empty() {
        let start = plan.nodes[0].node_id;
        plan.check_list.refs =
            vec![Ref::node(start, RefField::Info(crate::plan::InfoPart::All)).to_string()];
        changed = true;
    }
    changed
}

pub fn apply(plan: &mut PlanFile, answer: &PlanAnswer, now: &str) -> Applied {
    let checked = check(plan, answer);
    let mut warnings = Vec::new();
    let latest_batch = plan.latest_batch();
    let batch = if answer.is_final {
        FINAL_BATCH
    } else {
        latest_batch.max(1) + 1
    };

    // The node each task stands for: its new node, the node it repeats, or none.
    let mut new_ids: Vec<Option<NodeId>> = Vec::new();
    let mut planned: Vec<Node> = Vec::new();
    let mut dropped = Vec::new();
    let mut next = plan.next_id();
    for (task, verdict) in answer.tasks.iter().zip(&checked.tasks) {
        if let Some(at) = verdict.blocked_by {
            let repeats = match verdict.original {
                Some(Original::Node(id)) => Some(id),
                Some(Original::Task(j)) => new_ids.get(j).copied().flatten(),
                None => None,
            };
            dropped.push(Dropped {
                title: task.title.clone(),
                issue: checked.verdict.issues[at].clone(),
                repeats,
            });
            new_ids.push(repeats);
            continue;
        }
        let id = next;
        next = next.next();
        let mut p_node = if verdict.reinput {
            default_summary_inputs(plan)
        } else {
            sanitize_p_node(plan, &task.p_node, id, &mut warnings)
        };
        if p_node.is_empty() && task.kind == NodeType::Summary {
            p_node = default_summary_inputs(plan);
            warnings.push(format!(
                "task {id} (summary) cites no usable input; using `{p_node}`"
            ));
        }
        let title = if verdict.retitle {
            final_title(plan)
        } else {
            task.title.clone()
        };
        let mut node =
            Node::new(id, title, task.kind, batch, NodeStatus::Planned).with_p_node(p_node);
        node.created_at = Some(now.to_string());
        node.updated_at = Some(now.to_string());
        new_ids.push(Some(id));
        planned.push(node);
    }

    let resolved = resolve_check_list(plan, &answer.next_check_list, &new_ids, &mut warnings);

    if let Some(last) = planned.last() {
        plan.check_list.latest_id = Some(last.node_id);
    }
    if answer.is_final {
        plan.check_list.latest_batch = Some(FINAL_BATCH);
    } else if !planned.is_empty() {
        plan.check_list.latest_batch = Some(batch);
    }
    plan.check_list.refs = resolved.clone();
    plan.nodes.extend(planned.iter().cloned());

    Applied {
        planned,
        resolved_refs: resolved,
        warnings,
        dropped,
        verdict: checked.verdict,
    }
}

/// `next_check_list` with NEW1..NEW3 replaced by the node each task stands for (`new_ids`);
/// entries that resolve to no node are dropped with a warning.
fn resolve_check_list(
    plan: &PlanFile,
    next_check_list: &[String],
    new_ids: &[Option<NodeId>],
    warnings: &mut Vec<String>,
) -> Vec<String> {
    let mut resolved = Vec::new();
    for raw in next_check_list {
        let (refs, errors) = parse_list(raw);
        for e in errors {
            warnings.push(format!("dropping next_check_list entry: {e}"));
        }
        for mut r in refs {
            if r.field == RefField::Title {
                r.field = RefField::Summary;
            }
            let id = match r.target {
                RefTarget::New(n) => match new_ids.get(usize::from(n) - 1) {
                    Some(Some(id)) => *id,
                    Some(None) => {
                        warnings.push(format!(
                            "dropping `{raw}`: the plan review dropped NEW{n}'s task"
                        ));
                        continue;
                    }
                    None => {
                        warnings.push(format!(
                            "dropping `{raw}`: NEW{n} has no task in this round"
                        ));
                        continue;
                    }
                },
                RefTarget::Node(id) if plan.node(id).is_some() => id,
                RefTarget::Node(id) => {
                    warnings.push(format!("dropping `{raw}`: there is no node `{id}`"));
                    continue;
                }
            };
            let text = Ref::node(id, r.field).to_string();
            if !resolved.contains(&text) {
                resolved.push(text);
            }
        }
    }

    resolved
}

/// The title of a final summary that has none of its own.
fn final_title(plan: &PlanFile) -> String {
    format!("Final report: {}", plan.question().trim())
}

/// Adds the final summary task when the planner would not: one summary node at batch -1 (`batch` in the file) over
/// every completed node's summary. The check list then points at it.
pub fn force_final(plan: &mut PlanFile, now: &str) -> Node {
    let id = plan.next_id();
    let mut node = Node::new(
        id,
        final_title(plan),
        NodeType::Summary,
        FINAL_BATCH,
        NodeStatus::Planned,
    )
    .with_p_node(default_summary_inputs(plan));
    node.created_at = Some(now.to_string());
    node.updated_at = Some(now.to_string());
    plan.check_list.latest_id = Some(id);
    plan.check_list.latest_batch = Some(FINAL_BATCH);
    plan.check_list.refs = vec![Ref::node(id, RefField::Summary).to_string()];
    plan.nodes.push(node.clone());
    node
}

/// Keeps the refs of `raw` that point at existing nodes, in canonical form.
fn sanitize_p_node(plan: &PlanFile, raw: &str, task: NodeId, warnings: &mut Vec<String>) -> String {
    let (refs, errors) = parse_list(raw);
    for e in errors {
        warnings.push(format!("task {task}: dropping p_node entry: {e}"));
    }
    let mut kept: Vec<String> = Vec::new();
    for mut r in refs {
        if r.field == RefField::Title {
            r.field = RefField::Summary;
        }
        match r.target {
            RefTarget::Node(id) if plan.node(id).is_some() => {
                let text = r.to_string();
                if !kept.contains(&text) {
                    kept.push(text);
                }
            }
            RefTarget::Node(id) => warnings.push(format!(
                "task {task}: dropping p_node ref `{r}`: there is no node `{id}`"
            )),
            RefTarget::New(_) => warnings.push(format!(
                "task {task}: dropping p_node ref `{r}`: tasks of one round cannot feed each other"
            )),
        }
    }
    kept.join(", ")
}

/// Inputs for a summary task that cites nothing usable: every completed search or summary
/// node's summary, else the question.
fn default_summary_inputs(plan: &PlanFile) -> String {
    let refs: Vec<String> = plan
        .nodes
        .iter()
        .filter(|n| {
            matches!(n.kind, NodeType::Search | NodeType::Summary)
                && n.status == NodeStatus::Completed
        })
        .map(|n| Ref::node(n.node_id, RefField::Summary).to_string())
        .collect();
    if refs.is_empty() {
        plan.start_node()
            .map(|n| Ref::node(n.node_id, RefField::Info(crate::plan::InfoPart::All)).to_string())
            .unwrap_or_default()
    } else {
        refs.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{self, search};
    use crate::planner::contract::PlannedTask;

    fn task(title: &str, kind: NodeType, p_node: &str) -> PlannedTask {
        PlannedTask {
            title: title.into(),
            kind,
            p_node: p_node.into(),
        }
    }

    fn plan_answer(is_final: bool, tasks: Vec<PlannedTask>, checks: &[&str]) -> PlanAnswer {
        PlanAnswer {
            is_final,
            tasks,
            next_check_list: checks.iter().map(|c| (*c).to_string()).collect(),
        }
    }

    fn planned_ids(applied: &Applied) -> Vec<String> {
        applied
            .planned
            .iter()
            .map(|n| n.node_id.to_string())
            .collect()
    }

    fn stage2() -> PlanFile {
        let mut plan = testing::plan("Q", ["b", "c"].map(|id| search(id, id).with_summary("s")));
        plan.check_list.latest_id = NodeId::parse("c").ok();
        plan.check_list.latest_batch = Some(2);
        plan.check_list.refs = vec!["b:summary".into(), "c:summary".into()];
        plan
    }

    #[test]
    fn bootstrap_points_at_the_question_once() {
        let mut plan = PlanFile::new("Q", "wf".into(), "t".into());
        plan.check_list.latest_id = None;
        plan.check_list.latest_batch = None;
        assert!(bootstrap(&mut plan));
        assert_eq!(plan.check_list.refs, vec!["a:info"]);
        assert_eq!(plan.check_list.latest_id, NodeId::parse("a").ok());
        assert_eq!(plan.check_list.latest_batch, Some(1));
        assert!(!bootstrap(&mut plan), "nothing left to do");
        let mut p2 = stage2();
        p2.check_list.refs.clear();
        assert!(
            !bootstrap(&mut p2),
            "only a lone start node is bootstrapped"
        );
    }

    #[test]
    fn tasks_get_ids_batches_and_sanitised_inputs() {
        let mut plan = stage2();
        let answer = plan_answer(
            false,
            vec![
                task(
                    "Cell chemistry",
                    NodeType::Search,
                    "B:Title, zz:summary, NEW2:summary, b:oops",
                ),
                task("Cost outlook", NodeType::Summary, "b:summary, c:info[llm]"),
            ],
            &["b:summary", "NEW1:summary", "NEW3:summary", "q:summary"],
        );
        let applied = apply(&mut plan, &answer, "now");
        let ids = planned_ids(&applied);
        assert_eq!(ids, vec!["d", "e"]);
        assert!(
            applied
                .planned
                .iter()
                .all(|n| n.batch == 3 && n.status == NodeStatus::Planned)
        );
        assert_eq!(applied.planned[0].p_node, "b:summary");
        assert_eq!(applied.planned[1].p_node, "b:summary, c:info[llm]");
        assert_eq!(plan.check_list.refs, vec!["b:summary", "d:summary"]);
        assert_eq!(plan.check_list.latest_id, NodeId::parse("e").ok());
        assert_eq!(plan.check_list.latest_batch, Some(3));
        assert_eq!(plan.nodes.len(), 5);
        assert!(applied.warnings.len() >= 5, "{:?}", applied.warnings);
    }

    #[test]
    fn final_answer_gets_batch_minus_one() {
        let mut plan = stage2();
        let answer = plan_answer(
            true,
            vec![task("Report", NodeType::Summary, "")],
            &["NEW1:summary"],
        );
        let applied = apply(&mut plan, &answer, "now");
        assert_eq!(applied.planned[0].batch, FINAL_BATCH);
        assert_eq!(
            applied.planned[0].p_node, "b:summary, c:summary",
            "empty inputs default to every summary"
        );
        assert_eq!(plan.check_list.latest_batch, Some(FINAL_BATCH));
        assert_eq!(plan.check_list.refs, vec!["d:summary"]);
    }

    #[test]
    fn forced_final_covers_every_completed_node() {
        let mut plan = stage2();
        let node = force_final(&mut plan, "now");
        assert_eq!(node.node_id.to_string(), "d");
        assert_eq!(node.batch, FINAL_BATCH);
        assert_eq!(node.kind, NodeType::Summary);
        assert_eq!(node.p_node, "b:summary, c:summary");
        assert_eq!(plan.check_list.latest_batch, Some(FINAL_BATCH));
        assert_eq!(plan.check_list.refs, vec!["d:summary"]);
        assert_eq!(plan.final_node().map(|n| n.node_id), Some(node.node_id));
    }

    #[test]
    fn zero_tasks_leave_latest_fields_unchanged() {
        let mut plan = stage2();
        let answer = plan_answer(false, vec![], &["NEW1:summary", "c:summary"]);
        let applied = apply(&mut plan, &answer, "now");
        assert!(applied.planned.is_empty());
        assert_eq!(plan.check_list.latest_id, NodeId::parse("c").ok());
        assert_eq!(plan.check_list.latest_batch, Some(2));
        assert_eq!(plan.check_list.refs, vec!["c:summary"]);
    }

    #[test]
    fn repeated_titles_are_dropped_and_their_placeholder_points_at_the_original() {
        let mut plan = stage2();
        let answer = plan_answer(
            false,
            vec![
                task("  B! ", NodeType::Search, "a:info"),
                task("New direction", NodeType::Search, "a:info"),
                task("new-direction", NodeType::Summary, "b:summary"),
            ],
            &["NEW1:summary", "NEW2:summary", "NEW3:info"],
        );
        let applied = apply(&mut plan, &answer, "now");
        let ids = planned_ids(&applied);
        assert_eq!(
            ids,
            vec!["d"],
            "only the new direction is added, under the next id"
        );
        let dropped: Vec<(&str, &str, Option<String>)> = applied
            .dropped
            .iter()
            .map(|d| {
                (
                    d.title.as_str(),
                    d.issue.kind.as_str(),
                    d.repeats.map(|id| id.to_string()),
                )
            })
            .collect();
        assert_eq!(
            dropped,
            vec![
                ("  B! ", "DUPLICATE_TASK", Some("b".into())),
                ("new-direction", "DUPLICATE_TASK", Some("d".into())),
            ]
        );
        assert!(!applied.verdict.ok);
        assert_eq!(
            plan.check_list.refs,
            vec!["b:summary", "d:summary", "d:info"]
        );
        assert_eq!(plan.check_list.latest_id, NodeId::parse("d").ok());
        assert_eq!(plan.check_list.latest_batch, Some(3));
    }

    #[test]
    fn a_round_of_only_repeats_adds_nothing_and_keeps_the_batch() {
        let mut plan = stage2();
        let answer = plan_answer(
            false,
            vec![task("c", NodeType::Search, "a:info")],
            &["NEW1:summary"],
        );
        let applied = apply(&mut plan, &answer, "now");
        assert!(applied.planned.is_empty());
        assert_eq!(applied.dropped.len(), 1);
        assert_eq!(plan.check_list.latest_batch, Some(2));
        assert_eq!(plan.check_list.refs, vec!["c:summary"]);
    }

    #[test]
    fn a_final_summary_repeating_a_title_is_renamed_not_dropped() {
        let mut plan = stage2();
        let answer = plan_answer(true, vec![task("b", NodeType::Summary, "b:summary")], &[]);
        let applied = apply(&mut plan, &answer, "now");
        assert!(applied.dropped.is_empty());
        assert_eq!(applied.planned.len(), 1);
        assert_eq!(applied.planned[0].title, "Final report: Q");
        assert_eq!(applied.planned[0].batch, FINAL_BATCH);
        assert!(applied.verdict.ok, "a warning: {:?}", applied.verdict);
        assert_eq!(applied.verdict.issues[0].kind, "DUPLICATE_TASK");
    }

    #[test]
    fn a_blocked_task_frees_its_placeholder_and_a_blocked_final_cites_what_completed() {
        let mut plan = stage2();
        plan.nodes[2].status = NodeStatus::Failed;
        let answer = plan_answer(
            false,
            vec![
                task("Dig into c", NodeType::Summary, "c:summary"),
                task("Other", NodeType::Search, "a:info"),
            ],
            &["NEW1:summary", "NEW2:summary"],
        );
        let applied = apply(&mut plan, &answer, "now");
        assert_eq!(applied.planned.len(), 1);
        assert_eq!(applied.planned[0].node_id.to_string(), "d");
        assert_eq!(applied.dropped[0].issue.kind, "ONLY_FAILED_INPUTS");
        assert_eq!(applied.dropped[0].repeats, None);
        assert_eq!(plan.check_list.refs, vec!["d:summary"]);
        assert!(
            applied
                .warnings
                .iter()
                .any(|w| w.contains("dropped NEW1's task")),
            "{:?}",
            applied.warnings
        );

        let mut plan = stage2();
        plan.nodes[2].status = NodeStatus::Failed;
        let answer = plan_answer(
            true,
            vec![task("Report", NodeType::Summary, "c:summary")],
            &[],
        );
        let applied = apply(&mut plan, &answer, "now");
        assert!(applied.dropped.is_empty());
        assert_eq!(applied.planned[0].title, "Report");
        assert_eq!(
            applied.planned[0].p_node, "b:summary",
            "every completed node"
        );
    }
}
