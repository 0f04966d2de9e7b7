//! The plan review (rule checks only, no model call): after a planning round and before its
//! tasks run, every task of the answer is checked against the plan and the tasks before it. A
//! blocking issue drops the task; a warning keeps it. This module decides and changes nothing:
//! the write-back ([`super::apply`]) obeys its verdicts, and the callers record the round's
//! [`PlanReview`], which users know as the plan review (a `plan_review` event, the file of
//! [`super::plan_review_file`]); the review of the report is another thing, [`crate::review`].
//!
//! Rules, checked in this order; the first blocking issue ends a task's check:
//! - `EMPTY_TITLE` (block): the title has no letter or digit. The contract already refuses
//!   such an answer from a model; the review holds every planner (the offline one too) to it.
//! - `DUPLICATE_TASK` (block): the title, case, punctuation and white space aside, is that of
//!   a task node (of any status; never the start node: a search titled as the question is
//!   fine) or of an earlier kept task of the same answer. The dropped task's NEW placeholder
//!   stands for the node it repeats.
//! - `TITLE_IS_ID` (block): the title is a node id of the plan, a label like `a-1`, `b2`,
//!   `task 3`, or a ref like `a-info`, `b:summary`: not a direction (a small model's copy of
//!   the ids it was shown).
//! - `ONLY_FAILED_INPUTS` (block): every `p_node` ref to an existing node names a failed node,
//!   so the task would have nothing to work from but titles.
//! - `TITLE_TOO_LONG` (warn): over [`LONG_TITLE_CHARS`] characters: a paragraph, not a
//!   direction (the contract cuts titles at 300).
//! - `CITES_FAILED` (warn): some inputs failed; only their titles reach the task.
//! - `PENDING_INPUT` (warn): an input has not run yet. Pending tasks run side by side, so the
//!   task may read only that node's title. Only `plan` on a file with planned tasks meets it:
//!   a workflow plans only when nothing is pending.
//! - `FINAL_WITHOUT_SEARCH` (warn): the final summary reaches no completed search through its
//!   inputs (followed back through summaries). When a search did complete, the review repairs
//!   it as below (the final summary built on `a:info` alone reads no search result); when none
//!   did, a warning: the run must still finish, and the report then cites every search's
//!   sources, if any (see `agents::final_sources`).
//!
//! The final summary is never dropped: it is the only way a run finishes. Its blocking issues
//! are warnings instead and the review repairs it: a repeated or empty title gives way to one
//! named after the question, inputs that all failed or that reach no completed search to every
//! completed node's summary (what the final the orchestrator forces would cite).
//!
//! Issue ids are `R<round>-<n>`, numbered in task order; the round is `plan.rounds + 1`, the
//! one being planned (callers count it once the answer is applied).

use std::collections::HashSet;

use serde::Serialize;

use super::contract::{PlanAnswer, PlannedTask};
use crate::plan::refs::parse_list;
use crate::plan::{Node, NodeId, NodeStatus, NodeType, PlanFile};
use crate::text::{normalized, one_line};

/// The longest title that is not `TITLE_TOO_LONG`.
pub const LONG_TITLE_CHARS: usize = 200;

/// How much of a title an issue's message quotes.
const QUOTED_TITLE_CHARS: usize = 120;

/// How the review repairs a final summary's inputs (`TaskVerdict::reinput`).
const REINPUT: &str = "it cites every completed node instead";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum Severity {
    /// The task is dropped.
    Block,
    /// The task is kept.
    Warn,
}

/// One finding: `{id, type, severity, message, path}`. `path` points at the task in the
/// planner's answer the way the validators' diagnostics do (`tasks[1]`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Issue {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub severity: Severity,
    pub message: String,
    pub path: String,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The plan review of a round (its event and file): `ok` when no
/// issue blocks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanReview {
    pub round: u32,
    pub ok: bool,
    pub issues: Vec<Issue>,
}

impl PlanReview {
    /// One warning line per issue on the log.
    pub fn log(&self) {
        for issue in &self.issues {
            tracing::warn!(
                "[planning] plan review {} {} {}: {}",
                issue.id,
                issue.severity.as_str(),
                issue.kind,
                issue.message
            );
        }
    }
}

/// What a dropped duplicate repeats: a node of the plan, or an earlier task of the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Original {
    Node(NodeId),
    Task(usize),
}

/// The review's decision for one task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskVerdict {
    /// The blocking issue (its index in the verdict's issues): the task is dropped.
    pub blocked_by: Option<usize>,
    /// What a dropped duplicate repeats; its NEW placeholder stands for it.
    pub original: Option<Original>,
    /// The final summary's title gives way to one named after the question.
    pub retitle: bool,
    /// The final summary's inputs give way to every completed node's summary.
    pub reinput: bool,
}

/// The verdict on the round and one per task of the answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub verdict: PlanReview,
    pub tasks: Vec<TaskVerdict>,
}

/// Checks the tasks of `answer` against `plan` (as it was before the answer).
pub fn check(plan: &PlanFile, answer: &PlanAnswer) -> Checked {
    let mut checker = Checker {
        plan,
        round: plan.rounds + 1,
        issues: Vec::new(),
        kept: Vec::new(),
    };
    let tasks = answer
        .tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            let verdict = checker.task(i, task, answer.is_final);
            if verdict.blocked_by.is_none() {
                checker
                    .kept
                    .push((normalized(&task.title), i, task.title.clone()));
            }
            verdict
        })
        .collect();
    let ok = !checker
        .issues
        .iter()
        .any(|issue| issue.severity == Severity::Block);
    Checked {
        verdict: PlanReview {
            round: checker.round,
            ok,
            issues: checker.issues,
        },
        tasks,
    }
}

struct Checker<'a> {
    plan: &'a PlanFile,
    round: u32,
    issues: Vec<Issue>,
    /// The tasks kept so far: normalised title, index, title.
    kept: Vec<(String, usize, String)>,
}

impl Checker<'_> {
    /// Records an issue of task `i`; returns its index.
    fn add(&mut self, i: usize, kind: &str, severity: Severity, message: String) -> usize {
        self.issues.push(Issue {
            id: format!("R{}-{}", self.round, self.issues.len() + 1),
            kind: kind.to_string(),
            severity,
            message,
            path: format!("tasks[{i}]"),
        });
        self.issues.len() - 1
    }

    /// Records a blocking issue: the task is dropped, or, for the final summary, repaired
    /// under a warning (`repair` says how in the message).
    fn block(&mut self, i: usize, kind: &str, is_final: bool, why: String, repair: &str) -> usize {
        if is_final {
            self.add(i, kind, Severity::Warn, format!("{why}; {repair}"))
        } else {
            self.add(
                i,
                kind,
                Severity::Block,
                format!("{why}; the task is dropped"),
            )
        }
    }

    fn task(&mut self, i: usize, task: &PlannedTask, is_final: bool) -> TaskVerdict {
        let mut verdict = TaskVerdict::default();
        let title = quote(&task.title);
        let what = if is_final {
            "the final summary"
        } else {
            "task"
        };
        let renamed = "it is named after the question instead";
        if normalized(&task.title).is_empty() {
            let why = format!("{what} at tasks[{i}] has an empty title (no letter or digit)");
            let at = self.block(i, "EMPTY_TITLE", is_final, why, renamed);
            if !is_final {
                verdict.blocked_by = Some(at);
                return verdict;
            }
            verdict.retitle = true;
        } else if let Some(original) = duplicate_of(self.plan, &self.kept, &task.title) {
            let why = format!("{what} `{title}` repeats {}", self.describe(original));
            let at = self.block(i, "DUPLICATE_TASK", is_final, why, renamed);
            if !is_final {
                verdict.blocked_by = Some(at);
                verdict.original = Some(original);
                return verdict;
            }
            verdict.retitle = true;
        } else if is_label(self.plan, &task.title) {
            let why = format!(
                "{what} at tasks[{i}] is titled `{title}`, a node id or a label, not a direction: \
                 name what it researches"
            );
            let at = self.block(i, "TITLE_IS_ID", is_final, why, renamed);
            if !is_final {
                verdict.blocked_by = Some(at);
                return verdict;
            }
            verdict.retitle = true;
        }
        let inputs = Inputs::of(self.plan, &task.p_node);
        if inputs.only_failed() {
            let why = format!(
                "{what} `{title}` cites only failed nodes ({}): it would have nothing to work from",
                ids(&inputs.failed)
            );
            let at = self.block(i, "ONLY_FAILED_INPUTS", is_final, why, REINPUT);
            if !is_final {
                verdict.blocked_by = Some(at);
                return verdict;
            }
            verdict.reinput = true;
        }
        if is_final && !verdict.reinput && self.final_without_search(i, &title, &inputs) {
            verdict.reinput = true;
        }
        self.warnings(i, task, is_final, &inputs, verdict);
        verdict
    }

    /// Whether the final summary's inputs, none of which leads back to a completed search
    /// while one did complete, are to be repaired (Qwen2.5-Coder 1.5B built it on `a:info`
    /// alone, and its writer read no search result); adds the issue then. No input at all
    /// already gets every completed node's summary.
    fn final_without_search(&mut self, i: usize, title: &str, inputs: &Inputs) -> bool {
        let repair = !inputs.usable.is_empty()
            && !reaches_search(self.plan, inputs.usable.iter().copied())
            && completed_search(self.plan);
        if repair {
            let message = format!(
                "the final summary `{title}` reaches no completed search through its inputs: its report would rest on no search result of its own; {REINPUT}"
            );
            self.add(i, "FINAL_WITHOUT_SEARCH", Severity::Warn, message);
        }
        repair
    }

    /// The warnings of a kept task.
    fn warnings(
        &mut self,
        i: usize,
        task: &PlannedTask,
        is_final: bool,
        inputs: &Inputs,
        verdict: TaskVerdict,
    ) {
        let title = quote(&task.title);
        let what = if is_final {
            "the final summary"
        } else {
            "task"
        };
        let chars = task.title.chars().count();
        if chars > LONG_TITLE_CHARS && !verdict.retitle {
            let message = format!(
                "{what} `{title}` has a title of {chars} characters (more than {LONG_TITLE_CHARS}): a title names one direction"
            );
            self.add(i, "TITLE_TOO_LONG", Severity::Warn, message);
        }
        if !verdict.reinput && !inputs.failed.is_empty() {
            let message = format!(
                "{what} `{title}` cites failed nodes ({}): only their titles reach it",
                ids(&inputs.failed)
            );
            self.add(i, "CITES_FAILED", Severity::Warn, message);
        }
        if !verdict.reinput && !inputs.pending.is_empty() {
            let message = format!(
                "{what} `{title}` cites nodes that have not run yet ({}): it runs beside them and may read only their titles",
                ids(&inputs.pending)
            );
            self.add(i, "PENDING_INPUT", Severity::Warn, message);
        }
        if is_final && !completed_search(self.plan) {
            let message = format!(
                "the final summary `{title}` has no completed search to cite: no search task has completed"
            );
            self.add(i, "FINAL_WITHOUT_SEARCH", Severity::Warn, message);
        }
    }

    /// `node b (`title`, failed)` or `task `title` of this round`.
    fn describe(&self, original: Original) -> String {
        match original {
            Original::Node(id) => match self.plan.node(id) {
                Some(n) => format!("node {id} (`{}`, {})", quote(&n.title), n.status.as_str()),
                None => format!("node {id}"),
            },
            Original::Task(j) => {
                let title = self
                    .kept
                    .iter()
                    .find(|(_, k, _)| *k == j)
                    .map_or(String::new(), |(_, _, t)| quote(t));
                format!("task `{title}` of this round")
            }
        }
    }
}

/// The node or kept task whose title `title` repeats; never the start node.
fn duplicate_of(
    plan: &PlanFile,
    kept: &[(String, usize, String)],
    title: &str,
) -> Option<Original> {
    let key = normalized(title);
    plan.nodes
        .iter()
        .filter(|n| n.kind != NodeType::Start)
        .find(|n| normalized(&n.title) == key)
        .map(|n| Original::Node(n.node_id))
        .or_else(|| {
            kept.iter()
                .find(|(k, _, _)| *k == key)
                .map(|(_, j, _)| Original::Task(*j))
        })
}

/// The existing nodes a `p_node` cites, each once. Malformed refs, unknown nodes and NEW
/// placeholders are left out here: the write-back drops them with a warning.
#[derive(Debug, Default)]
struct Inputs {
    usable: Vec<NodeId>,
    failed: Vec<NodeId>,
    pending: Vec<NodeId>,
}

impl Inputs {
    fn of(plan: &PlanFile, p_node: &str) -> Inputs {
        let mut inputs = Inputs::default();
        let (refs, _malformed) = parse_list(p_node);
        for id in refs.iter().filter_map(|r| r.node_id()) {
            let Some(node) = plan.node(id) else { continue };
            if inputs.usable.contains(&id) {
                continue;
            }
            inputs.usable.push(id);
            if node.status == NodeStatus::Failed {
                inputs.failed.push(id);
            } else if node.is_pending() {
                inputs.pending.push(id);
            }
        }
        inputs
    }

    fn only_failed(&self) -> bool {
        !self.usable.is_empty() && self.failed.len() == self.usable.len()
    }
}

fn completed_search(plan: &PlanFile) -> bool {
    plan.nodes
        .iter()
        .any(|n| n.kind == NodeType::Search && n.status == NodeStatus::Completed)
}

/// Whether following `p_node` back from `from` through completed nodes reaches a completed
/// search. Linear in the plan's size, however long the chain.
fn reaches_search(plan: &PlanFile, from: impl Iterator<Item = NodeId>) -> bool {
    let by_id: std::collections::HashMap<NodeId, &Node> =
        plan.nodes.iter().map(|n| (n.node_id, n)).collect();
    let mut seen: HashSet<NodeId> = HashSet::new();
    let mut queue: Vec<NodeId> = from.collect();
    while let Some(id) = queue.pop() {
        if !seen.insert(id) {
            continue;
        }
        // A node that did not complete passes nothing on, whatever it cites.
        let Some(node) = by_id.get(&id).filter(|n| n.status == NodeStatus::Completed) else {
            continue;
        };
        if node.kind == NodeType::Search {
            return true;
        }
        let (refs, _) = parse_list(&node.p_node);
        queue.extend(refs.iter().filter_map(|r| r.node_id()));
    }
    false
}

/// A title like `a-1`, `b2`, `task 3`, a ref such as `a-info` or `b:summary`, or the id of a
/// node of the plan: what a small model writes when it copies ids instead of naming a
/// direction (Gemma 3 270M titled two tasks `a-1` and `b-1`, and on another day `a-info` and
/// `b-info`).
fn is_label(plan: &PlanFile, title: &str) -> bool {
    static LABEL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        // A literal pattern: compiling it cannot fail.
        regex::Regex::new(concat!(
            r"^(?:[a-z]{1,3}[-_.:]?\d{1,3}|(?:task|node|step|item)[-_ ]?\d{1,3}",
            r"|(?:[a-z]{1,3}|new[1-3])[-_.:](?:info|summary|llm|search|all)(?:\[(?:llm|search|all)\])?)$"
        ))
        .expect("valid regex")
    });
    let t = title.trim().to_lowercase();
    LABEL.is_match(&t)
        || NodeId::parse(&t).is_ok_and(|id| plan.nodes.iter().any(|n| n.node_id == id))
}

fn ids(list: &[NodeId]) -> String {
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn quote(title: &str) -> String {
    one_line(title, QUOTED_TITLE_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{self, id, search, summary};

    /// Plan reviews store these names: they must never change.
    #[test]
    fn every_severity_keeps_its_stored_name() {
        assert_eq!(crate::text::stored_names::<Severity>(), "block warn");
    }

    fn task(title: &str, kind: NodeType, p_node: &str) -> PlannedTask {
        PlannedTask {
            title: title.into(),
            kind,
            p_node: p_node.into(),
        }
    }

    fn answer(is_final: bool, tasks: Vec<PlannedTask>) -> PlanAnswer {
        PlanAnswer {
            is_final,
            tasks,
            next_check_list: Vec::new(),
        }
    }

    /// The question `a`; searches `b` (completed), `c` (failed); summary `d` over `b`
    /// (completed); search `e` (planned). One round done.
    fn plan() -> PlanFile {
        let search = |node, title| search(node, title).with_p_node("a:info");
        let mut plan = testing::plan(
            "What is X?",
            [
                search("b", "Search X"),
                search("c", "Search Y").with_status(NodeStatus::Failed),
                summary("d", "Sum up X", 2).with_p_node("b:summary"),
                search("e", "Search Z").with_status(NodeStatus::Planned),
            ],
        );
        plan.rounds = 1;
        plan
    }

    /// `(type, severity)` of every issue.
    fn found(checked: &Checked) -> Vec<(&str, Severity)> {
        checked
            .verdict
            .issues
            .iter()
            .map(|i| (i.kind.as_str(), i.severity))
            .collect()
    }

    #[test]
    fn a_clean_round_is_ok_and_keeps_everything() {
        let checked = check(
            &plan(),
            &answer(
                false,
                vec![task("Costs of X", NodeType::Search, "a:info, b:summary")],
            ),
        );
        assert_eq!(
            checked.verdict,
            PlanReview {
                round: 2,
                ok: true,
                issues: vec![]
            }
        );
        assert_eq!(checked.tasks, vec![TaskVerdict::default()]);
    }

    #[test]
    fn labels_and_node_ids_as_titles_block() {
        let plan = plan();
        for label in [
            "a-1",
            "B-2",
            "c3",
            "task 4",
            "Step-2",
            "a-info",
            "b-info",
            "c:summary",
            "NEW1:info[llm]",
        ] {
            let checked = check(
                &plan,
                &answer(false, vec![task(label, NodeType::Search, "a:info")]),
            );
            assert_eq!(
                found(&checked),
                [("TITLE_IS_ID", Severity::Block)],
                "{label}"
            );
        }
        // A node id of the plan that no node is titled with is a label too; a word is not.
        assert!(is_label(&plan, "c"));
        assert!(!is_label(&plan, "Cost of cells"));
        assert!(!is_label(&plan, "AI"));
        assert!(!is_label(&plan, "AI summary"));
        assert!(!is_label(&plan, "Battery info"));
        let checked = check(
            &plan,
            &answer(true, vec![task("z-9", NodeType::Summary, "b:summary")]),
        );
        assert_eq!(found(&checked), [("TITLE_IS_ID", Severity::Warn)]);
        assert!(checked.tasks[0].retitle);
    }

    #[test]
    fn empty_titles_block() {
        let checked = check(
            &plan(),
            &answer(false, vec![task(" -- ", NodeType::Search, "a:info")]),
        );
        assert_eq!(found(&checked), vec![("EMPTY_TITLE", Severity::Block)]);
        assert_eq!(checked.tasks[0].blocked_by, Some(0));
        assert!(!checked.verdict.ok);
        assert!(checked.verdict.issues[0].message.contains("tasks[0]"));
    }

    #[test]
    fn repeats_of_nodes_and_of_earlier_tasks_block_but_the_question_does_not() {
        let checked = check(
            &plan(),
            &answer(
                false,
                vec![
                    task("search y!", NodeType::Search, "a:info"),
                    task("What is X", NodeType::Search, "a:info"),
                    task("WHAT IS X?", NodeType::Summary, "b:summary"),
                ],
            ),
        );
        assert_eq!(
            found(&checked),
            vec![("DUPLICATE_TASK", Severity::Block); 2]
        );
        assert_eq!(checked.tasks[0].original, Some(Original::Node(id("c"))));
        assert_eq!(
            checked.tasks[1],
            TaskVerdict::default(),
            "the question is no task"
        );
        assert_eq!(checked.tasks[2].original, Some(Original::Task(1)));
        let issues = &checked.verdict.issues;
        assert_eq!(
            (issues[0].id.as_str(), issues[1].id.as_str()),
            ("R2-1", "R2-2")
        );
        assert_eq!(
            issues[0].message,
            "task `search y!` repeats node c (`Search Y`, failed); the task is dropped"
        );
        assert_eq!(issues[1].path, "tasks[2]");
        assert!(issues[1].message.contains("task `What is X` of this round"));
    }

    #[test]
    fn a_blocked_task_is_no_original_for_a_later_one() {
        let checked = check(
            &plan(),
            &answer(
                false,
                vec![
                    task("New", NodeType::Summary, "c:summary"),
                    task("new", NodeType::Summary, "b:summary"),
                ],
            ),
        );
        assert_eq!(
            found(&checked),
            vec![("ONLY_FAILED_INPUTS", Severity::Block)]
        );
        assert_eq!(checked.tasks[1], TaskVerdict::default());
    }

    #[test]
    fn inputs_that_all_failed_block_and_some_failed_warn() {
        let checked = check(
            &plan(),
            &answer(
                false,
                vec![
                    task(
                        "Why Y failed",
                        NodeType::Summary,
                        "c:summary, C:info, zz:summary",
                    ),
                    task("X and Y", NodeType::Summary, "b:summary, c:summary"),
                ],
            ),
        );
        assert_eq!(
            found(&checked),
            vec![
                ("ONLY_FAILED_INPUTS", Severity::Block),
                ("CITES_FAILED", Severity::Warn)
            ]
        );
        assert_eq!(
            checked.verdict.issues[0].message,
            "task `Why Y failed` cites only failed nodes (c): it would have nothing to work from; the task is dropped"
        );
        assert_eq!(checked.tasks[0].blocked_by, Some(0));
        assert_eq!(checked.tasks[1].blocked_by, None);
        // Only unknown refs: nothing failed, the write-back falls back as before.
        let checked = check(
            &plan(),
            &answer(false, vec![task("T", NodeType::Search, "zz:summary")]),
        );
        assert!(checked.verdict.issues.is_empty());
    }

    #[test]
    fn long_titles_and_pending_inputs_warn() {
        let long = "x".repeat(LONG_TITLE_CHARS + 1);
        let checked = check(
            &plan(),
            &answer(
                false,
                vec![
                    task(&long, NodeType::Search, "a:info"),
                    task(&"y".repeat(LONG_TITLE_CHARS), NodeType::Search, "a:info"),
                    task("After Z", NodeType::Summary, "e:summary, b:summary"),
                ],
            ),
        );
        assert_eq!(
            found(&checked),
            vec![
                ("TITLE_TOO_LONG", Severity::Warn),
                ("PENDING_INPUT", Severity::Warn)
            ]
        );
        assert!(checked.verdict.ok);
        assert!(checked.verdict.issues[0].message.contains("201 characters"));
        assert!(checked.verdict.issues[1].message.contains("(e)"));
        assert!(checked.tasks.iter().all(|v| v.blocked_by.is_none()));
    }

    #[test]
    fn the_final_summary_is_repaired_never_dropped() {
        let p = plan();
        let checked = check(
            &p,
            &answer(true, vec![task("Search X", NodeType::Summary, "c:summary")]),
        );
        assert_eq!(
            found(&checked),
            vec![
                ("DUPLICATE_TASK", Severity::Warn),
                ("ONLY_FAILED_INPUTS", Severity::Warn)
            ]
        );
        assert!(checked.verdict.ok);
        let v = checked.tasks[0];
        assert!(v.blocked_by.is_none() && v.original.is_none() && v.retitle && v.reinput);
        assert!(
            checked.verdict.issues[1]
                .message
                .ends_with("it cites every completed node instead")
        );

        let checked = check(
            &p,
            &answer(true, vec![task("...", NodeType::Summary, "b:summary")]),
        );
        assert_eq!(found(&checked), vec![("EMPTY_TITLE", Severity::Warn)]);
        assert!(checked.tasks[0].retitle);
    }

    #[test]
    fn a_final_summary_without_a_completed_search_is_repaired_or_warns() {
        let p = plan();
        let fin = |p_node: &str| answer(true, vec![task("Report", NodeType::Summary, p_node)]);
        // Through the summary d to the search b; by default every completed node.
        for good in ["d:summary", "", "zz:summary"] {
            let checked = check(&p, &fin(good));
            assert!(checked.verdict.issues.is_empty(), "{good}");
            assert!(!checked.tasks[0].reinput, "{good}");
        }
        // A search completed, but these inputs do not lead to it: every completed node's
        // summary instead (so the pending input no longer matters).
        let checked = check(&p, &fin("a:info, e:summary"));
        assert_eq!(
            found(&checked),
            vec![("FINAL_WITHOUT_SEARCH", Severity::Warn)]
        );
        let message = &checked.verdict.issues[0].message;
        assert!(
            message.contains("reaches no completed search")
                && message.ends_with("it cites every completed node instead"),
            "{message}"
        );
        assert!(checked.tasks[0].reinput);
        // A summary that failed passes nothing on, even when it cites a search.
        let mut failed_d = plan();
        failed_d.nodes[3].status = NodeStatus::Failed;
        let checked = check(&failed_d, &fin("a:info, d:summary"));
        assert_eq!(
            found(&checked),
            vec![("FINAL_WITHOUT_SEARCH", Severity::Warn)]
        );
        assert!(checked.tasks[0].reinput);
        // No search completed: nothing to repair with, a warning.
        let none = testing::plan("Q", [search("b", "S").with_status(NodeStatus::Failed)]);
        let checked = check(&none, &fin(""));
        assert_eq!(
            found(&checked),
            vec![("FINAL_WITHOUT_SEARCH", Severity::Warn)]
        );
        assert!(!checked.tasks[0].reinput);
        assert!(
            checked.verdict.issues[0]
                .message
                .contains("no search task has completed")
        );
    }
}
