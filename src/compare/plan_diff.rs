//! [`diff`]: two plan files of one question compared, old against new.
//!
//! - Sources are compared by URL ([`super::url::url_key`]), a local document by its place in
//!   its corpus and the hash of its text when both plans record it ([`Keying`]), across every
//!   node, each listed once, with the first URL as written and the first non-empty title seen.
//! - Nodes are matched by title, case, punctuation and white space ignored
//!   ([`crate::text::normalized`]); the start node (the question) is not a finding and is left
//!   out. Two nodes with the same title in one plan pair with the other plan's in file order.
//! - The final summaries (batch -1) always pair with each other, whatever their titles: a
//!   planner may name them after anything, and they answer the same question.
//! - A pair is changed when the summaries differ once trimmed and with white space collapsed,
//!   so a model's re-wrapped lines are not news, and with each citation number read as the
//!   source it names in its node's sources ([`super::citations`]), so sources found in another
//!   order (`[3]` one day, `[5]` the next, for the same page) or in a corpus mounted elsewhere
//!   are not news either.
//! - Order is the new plan's, then the old plan's for what is gone, so the same two files
//!   always give the same digest.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use super::citations::cited_by_key;
use super::facts::{FactChange, fact_changes};
use super::url::Keying;
use crate::plan::{FINAL_BATCH, Node, NodeStatus, NodeType, PlanFile, Source};
use crate::text::{collapsed, normalized};

/// What changed from one plan file to the next.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanDiff {
    /// The old plan's question (its start node's title).
    pub question_old: String,
    pub question_new: String,
    /// Sources of the new plan that the old one did not have, in the new plan's order.
    pub sources_new: Vec<Source>,
    /// Sources of the old plan that the new one no longer has, in the old plan's order.
    pub sources_gone: Vec<Source>,
    /// Findings in both plans whose summaries differ, in the new plan's order.
    pub changed: Vec<ChangedNode>,
    /// The final report's facts that changed, are new or are gone ([`super::facts`]).
    pub facts: Vec<FactChange>,
    /// Nodes only the new plan has.
    pub nodes_new: Vec<NodeRef>,
    /// Nodes only the old plan had.
    pub nodes_gone: Vec<NodeRef>,
}

/// One finding in both plans whose summary changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangedNode {
    /// The new plan's title.
    pub title: String,
    /// The node's id in the old plan.
    pub old_node: String,
    /// The node's id in the new plan.
    pub new_node: String,
    pub old_summary: String,
    pub new_summary: String,
}

/// A node only one of the two plans has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeRef {
    pub node_id: String,
    pub title: String,
    #[serde(rename = "type")]
    pub kind: NodeType,
    pub status: NodeStatus,
}

impl PlanDiff {
    /// Nothing changed: the same question (white space aside), and every list empty.
    pub fn is_empty(&self) -> bool {
        collapsed(&self.question_old) == collapsed(&self.question_new)
            && self.sources_new.is_empty()
            && self.sources_gone.is_empty()
            && self.changed.is_empty()
            && self.facts.is_empty()
            && self.nodes_new.is_empty()
            && self.nodes_gone.is_empty()
    }
}

/// What changed from `old` to `new`; the rules are in the module documentation.
pub fn diff(old: &PlanFile, new: &PlanFile) -> PlanDiff {
    let keying = Keying::of(old, new);
    let old_sources = sources_of(old, keying);
    let new_sources = sources_of(new, keying);
    let matching = match_nodes(old, new);
    PlanDiff {
        question_old: old.question().to_string(),
        question_new: new.question().to_string(),
        sources_new: only_in(&new_sources, &old_sources),
        sources_gone: only_in(&old_sources, &new_sources),
        changed: matching
            .pairs
            .iter()
            .filter(|(o, n)| said(o, keying) != said(n, keying))
            .map(|(o, n)| ChangedNode {
                title: n.title.clone(),
                old_node: o.node_id.to_string(),
                new_node: n.node_id.to_string(),
                old_summary: o.summary.clone(),
                new_summary: n.summary.clone(),
            })
            .collect(),
        facts: fact_changes(old, new),
        nodes_new: matching.new_only.iter().map(|n| node_ref(n)).collect(),
        nodes_gone: matching.old_only.iter().map(|n| node_ref(n)).collect(),
    }
}

/// Every source of `plan` once, in plan order, keyed by `keying`. A source without a URL
/// names nothing to compare and is left out.
fn sources_of(plan: &PlanFile, keying: Keying) -> Vec<(String, Source)> {
    let mut out: Vec<(String, Source)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for source in plan.nodes.iter().flat_map(|n| &n.sources) {
        let key = keying.source_key(source);
        if key.is_empty() || source.url.trim().is_empty() {
            continue;
        }
        match at.get(&key) {
            // Keep the first title seen; an empty one is no title, so a later one fills it.
            Some(&i) => {
                if let Some((_, kept)) = out.get_mut(i)
                    && kept.title.trim().is_empty()
                {
                    kept.title.clone_from(&source.title);
                }
            }
            None => {
                at.insert(key.clone(), out.len());
                out.push((
                    key,
                    Source {
                        url: source.url.trim().to_string(),
                        title: source.title.clone(),
                        snippet: None,
                        in_corpus: source.in_corpus.clone(),
                        passages: Vec::new(),
                    },
                ));
            }
        }
    }
    out
}

/// The sources of `these` whose key `others` lacks, in order.
fn only_in(these: &[(String, Source)], others: &[(String, Source)]) -> Vec<Source> {
    let known: HashSet<&String> = others.iter().map(|(k, _)| k).collect();
    these
        .iter()
        .filter(|(k, _)| !known.contains(k))
        .map(|(_, s)| s.clone())
        .collect()
}

/// Nodes of both plans paired (old, new) in the new plan's order, and those left over.
struct Matching<'a> {
    pairs: Vec<(&'a Node, &'a Node)>,
    new_only: Vec<&'a Node>,
    old_only: Vec<&'a Node>,
}

fn match_nodes<'a>(old: &'a PlanFile, new: &'a PlanFile) -> Matching<'a> {
    let old_final = final_index(old);
    let new_final = final_index(new);
    // Old nodes by title, each title's nodes in file order, so duplicates pair in order.
    let mut by_title: HashMap<String, VecDeque<usize>> = HashMap::new();
    for (i, node) in old.nodes.iter().enumerate() {
        if is_finding(node) && Some(i) != old_final {
            by_title
                .entry(normalized(&node.title))
                .or_default()
                .push_back(i);
        }
    }
    let mut paired = vec![false; old.nodes.len()];
    let mut matching = Matching {
        pairs: Vec::new(),
        new_only: Vec::new(),
        old_only: Vec::new(),
    };
    for (i, node) in new.nodes.iter().enumerate() {
        if !is_finding(node) {
            continue;
        }
        let partner = if Some(i) == new_final {
            old_final
        } else {
            by_title
                .get_mut(&normalized(&node.title))
                .and_then(VecDeque::pop_front)
        };
        match partner.and_then(|j| Some((j, old.nodes.get(j)?))) {
            Some((j, old_node)) => {
                if let Some(p) = paired.get_mut(j) {
                    *p = true;
                }
                matching.pairs.push((old_node, node));
            }
            None => matching.new_only.push(node),
        }
    }
    matching.old_only = old
        .nodes
        .iter()
        .zip(&paired)
        .filter(|(node, paired)| is_finding(node) && !**paired)
        .map(|(node, _)| node)
        .collect();
    matching
}

/// Every node but the start node (the question itself) holds a finding or a direction.
fn is_finding(node: &Node) -> bool {
    node.kind != NodeType::Start
}

/// Where the final summary is: the first finding in batch -1.
fn final_index(plan: &PlanFile) -> Option<usize> {
    plan.nodes
        .iter()
        .position(|n| n.batch == FINAL_BATCH && is_finding(n))
}

fn node_ref(node: &Node) -> NodeRef {
    NodeRef {
        node_id: node.node_id.to_string(),
        title: node.title.clone(),
        kind: node.kind,
        status: node.status,
    }
}

/// What a node's summary says, for comparison: white space collapsed, citations by the
/// sources they name.
fn said(node: &Node, keying: Keying) -> String {
    collapsed(&cited_by_key(&node.summary, &node.sources, keying))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{self, id};

    /// A plan with the question `Q?` and one node per `(id, title, batch, summary, urls)`.
    fn plan(nodes: &[(&str, &str, i64, &str, &[&str])]) -> PlanFile {
        let nodes = nodes.iter().map(|(node, title, batch, summary, urls)| {
            let kind = if *batch == FINAL_BATCH {
                NodeType::Summary
            } else {
                NodeType::Search
            };
            let sources = urls
                .iter()
                .map(|u| Source::new(*u, format!("title of {u}")));
            Node::new(id(node), *title, kind, *batch, NodeStatus::Completed)
                .with_summary(*summary)
                .with_sources(sources)
        });
        testing::plan("Q?", nodes)
    }

    fn urls(sources: &[Source]) -> Vec<&str> {
        sources.iter().map(|s| s.url.as_str()).collect()
    }

    fn titles(nodes: &[NodeRef]) -> Vec<&str> {
        nodes.iter().map(|n| n.title.as_str()).collect()
    }

    #[test]
    fn sources_are_compared_by_normalised_url_across_nodes() {
        let old = plan(&[
            (
                "b",
                "One",
                2,
                "s",
                &["https://x.example/a/", "https://x.example/gone"],
            ),
            ("c", "Two", 2, "s", &["https://x.example/b#intro"]),
        ]);
        let new = plan(&[
            (
                "b",
                "One",
                2,
                "s",
                &[" https://x.example/a#top", "https://x.example/new"],
            ),
            (
                "c",
                "Two",
                2,
                "s",
                &["https://x.example/b", "https://x.example/new/"],
            ),
        ]);
        let d = diff(&old, &new);
        assert_eq!(urls(&d.sources_new), ["https://x.example/new"]);
        assert_eq!(urls(&d.sources_gone), ["https://x.example/gone"]);
        assert!(d.changed.is_empty() && d.nodes_new.is_empty() && d.nodes_gone.is_empty());
    }

    #[test]
    fn a_source_keeps_its_first_title_and_an_empty_url_is_no_source() {
        let mut new = plan(&[("b", "One", 2, "s", &["https://x.example/a"])]);
        new.nodes[1].sources[0].title = String::new();
        new.nodes[1].sources.extend([
            Source::new("https://x.example/a/", "Second title"),
            Source::new("https://x.example/a", "Third title"),
            Source::new("  ", "No URL"),
        ]);
        let d = diff(&plan(&[]), &new);
        assert_eq!(d.sources_new.len(), 1, "{:?}", d.sources_new);
        assert_eq!(d.sources_new[0].url, "https://x.example/a");
        assert_eq!(d.sources_new[0].title, "Second title");
    }

    #[test]
    fn titles_match_with_case_punctuation_and_white_space_ignored() {
        let old = plan(&[("b", "Energy density of cells", 2, "old", &[])]);
        let new = plan(&[("c", "  energy-density OF cells? ", 3, "new", &[])]);
        let d = diff(&old, &new);
        assert!(d.nodes_new.is_empty() && d.nodes_gone.is_empty(), "{d:?}");
        assert_eq!(d.changed.len(), 1);
        let c = &d.changed[0];
        assert_eq!(
            (c.title.as_str(), c.old_node.as_str(), c.new_node.as_str()),
            ("  energy-density OF cells? ", "b", "c")
        );
        assert_eq!(
            (c.old_summary.as_str(), c.new_summary.as_str()),
            ("old", "new")
        );
    }

    #[test]
    fn final_summaries_always_pair_whatever_their_titles() {
        let old = plan(&[
            ("b", "Research", 2, "r", &[]),
            ("c", "Final report on Q", FINAL_BATCH, "old answer", &[]),
        ]);
        let new = plan(&[
            ("b", "Research", 2, "r", &[]),
            ("c", "Summary: what we know", FINAL_BATCH, "new answer", &[]),
        ]);
        let d = diff(&old, &new);
        assert!(d.nodes_new.is_empty() && d.nodes_gone.is_empty(), "{d:?}");
        assert_eq!(d.changed.len(), 1);
        assert_eq!(d.changed[0].title, "Summary: what we know");
        assert_eq!(d.changed[0].old_summary, "old answer");

        let same = plan(&[("c", "Another title", FINAL_BATCH, "old answer", &[])]);
        assert!(diff(&old, &same).changed.is_empty());
    }

    #[test]
    fn a_final_summary_does_not_pair_with_an_ordinary_node_of_its_title() {
        let old = plan(&[("b", "Answer", 2, "a", &[])]);
        let new = plan(&[("b", "Answer", FINAL_BATCH, "a", &[])]);
        let d = diff(&old, &new);
        assert_eq!(titles(&d.nodes_new), ["Answer"]);
        assert_eq!(titles(&d.nodes_gone), ["Answer"]);
    }

    #[test]
    fn a_summary_differing_only_in_white_space_is_no_change() {
        let old = plan(&[("b", "T", 2, "Line one.\nLine  two.", &[])]);
        let new = plan(&[("b", "T", 2, "  Line one. Line\ttwo.\n\n", &[])]);
        let d = diff(&old, &new);
        assert!(d.is_empty(), "{d:?}");
        let reworded = plan(&[("b", "T", 2, "Line one. Line three.", &[])]);
        assert_eq!(diff(&old, &reworded).changed.len(), 1);
    }

    #[test]
    fn citations_renumbered_to_the_same_sources_are_no_change() {
        let old = plan(&[(
            "b",
            "T",
            2,
            "A holds [1]. B holds [2, 3].",
            &["https://x/a", "https://x/b", "https://x/c"],
        )]);
        let renumbered = plan(&[(
            "b",
            "T",
            2,
            "A holds [3]. B holds [1, 2].",
            &["https://x/b", "https://x/c", "https://x/a/"],
        )]);
        assert!(diff(&old, &renumbered).is_empty());
        let other_source = plan(&[(
            "b",
            "T",
            2,
            "A holds [2]. B holds [1, 2].",
            &["https://x/b", "https://x/c", "https://x/a/"],
        )]);
        assert_eq!(diff(&old, &other_source).changed.len(), 1);
    }

    /// Local documents as two runs found them, the second in a copy of the corpus elsewhere:
    /// each `(path, text hash)` under its corpus folder `root`.
    fn local_plan(root: &str, docs: &[(&str, &str)], summary: &str) -> PlanFile {
        let mut plan = plan(&[("b", "T", 2, summary, &[])]);
        plan.nodes[1].sources = docs
            .iter()
            .map(|(path, sha256)| Source {
                url: format!("file://{root}/{path}"),
                title: format!("title of {path}"),
                snippet: None,
                in_corpus: Some(crate::in_corpus::InCorpus {
                    path: (*path).into(),
                    sha256: (*sha256).into(),
                }),
                passages: Vec::new(),
            })
            .collect();
        plan
    }

    #[test]
    fn a_corpus_moved_elsewhere_is_no_change_and_a_revised_document_is_new() {
        let docs = [("a.md", "f00d"), ("sub/b.md", "cafe")];
        let old = local_plan("/mnt/a/corpus", &docs, "A holds [1]. B holds [2].");
        let moved = local_plan("/home/x/copy", &docs, "A holds [1]. B holds [2].");
        assert!(diff(&old, &moved).is_empty(), "{:?}", diff(&old, &moved));
        let revised = local_plan(
            "/home/x/copy",
            &[("a.md", "beef"), ("sub/b.md", "cafe")],
            "A holds [1]. B holds [2].",
        );
        let d = diff(&old, &revised);
        assert_eq!(urls(&d.sources_new), ["file:///home/x/copy/a.md"]);
        assert_eq!(urls(&d.sources_gone), ["file:///mnt/a/corpus/a.md"]);
        assert!(
            d.changed.is_empty(),
            "the same words citing the same document"
        );
        let other = local_plan("/home/x/copy", &docs, "A holds [2]. B holds [1].");
        assert_eq!(diff(&old, &other).changed.len(), 1);
    }

    #[test]
    fn the_start_node_is_the_question_not_a_finding() {
        let old = plan(&[]);
        let mut new = PlanFile::new("Another question?", "wf".into(), "t".into());
        new.nodes[0].summary = "something".into();
        let d = diff(&old, &new);
        assert!(d.changed.is_empty() && d.nodes_new.is_empty() && d.nodes_gone.is_empty());
        assert_eq!(
            (d.question_old.as_str(), d.question_new.as_str()),
            ("Q?", "Another question?")
        );
        assert!(!d.is_empty(), "a new question is a change");
    }

    #[test]
    fn order_is_the_new_plans_then_the_old_plans_and_duplicates_pair_in_order() {
        let old = plan(&[
            ("b", "Gone two", 2, "s", &["https://x.example/g2"]),
            ("c", "Same", 2, "old 1", &["https://x.example/g1"]),
            ("d", "Gone one", 2, "s", &[]),
            ("e", "Same", 3, "old 2", &[]),
        ]);
        let new = plan(&[
            ("b", "New two", 2, "s", &["https://x.example/n2"]),
            ("c", "Same", 2, "new 1", &[]),
            ("d", "New one", 2, "s", &["https://x.example/n1"]),
            ("e", "Same", 3, "new 2", &[]),
            ("f", "Same", 4, "new 3", &[]),
        ]);
        let d = diff(&old, &new);
        assert_eq!(titles(&d.nodes_new), ["New two", "New one", "Same"]);
        assert_eq!(titles(&d.nodes_gone), ["Gone two", "Gone one"]);
        let pairs: Vec<(&str, &str)> = d
            .changed
            .iter()
            .map(|c| (c.old_summary.as_str(), c.new_summary.as_str()))
            .collect();
        assert_eq!(pairs, [("old 1", "new 1"), ("old 2", "new 2")]);
        assert_eq!(
            urls(&d.sources_new),
            ["https://x.example/n2", "https://x.example/n1"]
        );
        assert_eq!(
            urls(&d.sources_gone),
            ["https://x.example/g2", "https://x.example/g1"]
        );
        assert_eq!(d, diff(&old, &new), "the same files give the same diff");
    }
}
