//! The offline engine's planner: no model, the same answers as the LLM planner's contract,
//! written into the plan by the same write-back ([`crate::planner::apply`]).
//!
//! First round: up to three search tasks on distinct facets of the question, taken from what
//! the corpus holds (the titles of the documents that best match the question, no two alike).
//! Then: the final summary over every completed search. The same question over the same
//! corpus always gives the same plan.

use std::collections::HashSet;
use std::sync::Arc;

use crate::clock;
use crate::llm::CallObserver;
use crate::plan::{NodeStatus, NodeType, PlanFile, Ref, RefField};
use crate::planner::{
    PlanAnswer, PlanRound, PlannedTask, RoundError, RoundNotes, RoundOutcome, apply,
};
use crate::search::local::LocalIndex;
use crate::text::normalized;
use crate::usage::Usage;

use crate::text::analyzer::content_terms;

/// The most facets (search tasks) of the first round.
pub const MAX_FACETS: usize = 3;
/// How many of the question's best documents are considered for facets.
const FACET_CANDIDATES: usize = 10;
/// Two titles sharing this much of their terms are one facet.
const SAME_FACET: f64 = 0.5;

/// Plans rounds from the corpus, without a model.
pub struct OfflinePlanner {
    pub index: Arc<LocalIndex>,
}

impl PlanRound for OfflinePlanner {
    async fn plan_round(
        &self,
        plan: &mut PlanFile,
        notes: &RoundNotes,
        _observer: &dyn CallObserver,
    ) -> Result<RoundOutcome, RoundError> {
        let answer = self.answer(plan, notes).await?;
        let applied = apply(plan, &answer, &clock::now());
        Ok(RoundOutcome {
            answer,
            applied,
            usage: Usage::default(),
            calls: 0,
        })
    }
}

impl OfflinePlanner {
    async fn answer(&self, plan: &PlanFile, notes: &RoundNotes) -> Result<PlanAnswer, RoundError> {
        let searched = plan.nodes.iter().any(|n| n.kind == NodeType::Search);
        if searched || notes.must_finalise {
            return Ok(final_answer(plan));
        }
        let question = plan.question().to_string();
        let index = Arc::clone(&self.index);
        let query = question.clone();
        let hits = tokio::task::spawn_blocking(move || index.search(&query, FACET_CANDIDATES))
            .await
            .map_err(|e| RoundError::Other(e.to_string()))?
            .map_err(|e| RoundError::Other(e.to_string()))?;
        let titles: Vec<String> = hits.iter().map(|h| h.title.clone()).collect();
        let start = plan.start_node().map(|n| n.node_id);
        let p_node = start
            .map(|id| Ref::node(id, RefField::Info(crate::plan::InfoPart::All)).to_string())
            .unwrap_or_default();
        // The question itself first: its own best documents are always searched.
        let mut directions = vec![question.trim().to_string()];
        directions.extend(
            facets(&question, &titles, MAX_FACETS - 1)
                .into_iter()
                .filter(|f| normalized(f) != normalized(&question)),
        );
        let tasks: Vec<PlannedTask> = directions
            .into_iter()
            .map(|title| PlannedTask {
                title,
                kind: NodeType::Search,
                p_node: p_node.clone(),
            })
            .collect();
        let next_check_list = (1..=tasks.len())
            .map(|n| format!("NEW{n}:summary"))
            .collect();
        Ok(PlanAnswer {
            is_final: false,
            tasks,
            next_check_list,
        })
    }
}

/// The final summary over every completed search (over the question when none completed).
fn final_answer(plan: &PlanFile) -> PlanAnswer {
    let mut refs: Vec<String> = plan
        .nodes
        .iter()
        .filter(|n| n.kind == NodeType::Search && n.status == NodeStatus::Completed)
        .map(|n| Ref::node(n.node_id, RefField::Summary).to_string())
        .collect();
    if refs.is_empty()
        && let Some(start) = plan.start_node()
    {
        refs.push(Ref::node(start.node_id, RefField::Info(crate::plan::InfoPart::All)).to_string());
    }
    PlanAnswer {
        is_final: true,
        tasks: vec![PlannedTask {
            title: format!("Final report: {}", plan.question().trim()),
            kind: NodeType::Summary,
            p_node: refs.join(", "),
        }],
        next_check_list: Vec::new(),
    }
}

/// Up to `max` distinct facets: document titles in rank order, skipping one that is the
/// question itself or shares most of its terms with a facet already taken; the question
/// alone when no title qualifies.
pub fn facets(question: &str, titles: &[String], max: usize) -> Vec<String> {
    let mut chosen: Vec<(String, HashSet<String>)> = Vec::new();
    for title in titles {
        let title = readable(title);
        let title = title.as_str();
        let set: HashSet<String> = content_terms(title).into_iter().collect();
        if set.is_empty() || normalized(title) == normalized(question) {
            continue;
        }
        let alike = chosen.iter().any(|(_, other)| {
            let union = set.union(other).count().max(1) as f64;
            set.intersection(other).count() as f64 / union >= SAME_FACET
        });
        if !alike {
            chosen.push((title.to_string(), set));
        }
        if chosen.len() == max {
            break;
        }
    }
    if chosen.is_empty() {
        return vec![question.trim().to_string()];
    }
    chosen.into_iter().map(|(t, _)| t).collect()
}

/// A title that is only a file name (`sulfide-electrolyte-processing.txt`) as words
/// (`Sulfide electrolyte processing`); any other title as it is.
fn readable(title: &str) -> String {
    let title = title.trim();
    let stem = [".md", ".txt", ".html", ".htm", ".pdf"]
        .iter()
        .find_map(|ext| title.strip_suffix(ext))
        .filter(|stem| !stem.contains(' '));
    let Some(stem) = stem else {
        return title.to_string();
    };
    let words = stem.replace(['-', '_'], " ");
    let mut chars = words.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facets_are_distinct_titles_in_rank_order() {
        let titles = [
            "Solid-state vs lithium-ion: an overview",
            "Solid-state vs lithium-ion overview (notes)",
            "Energy density comparison",
            "Q?",
            "Dendrite formation",
            "Grid storage",
        ]
        .map(String::from);
        assert_eq!(
            facets("Q?", &titles, 3),
            vec![
                "Solid-state vs lithium-ion: an overview",
                "Energy density comparison",
                "Dendrite formation"
            ]
        );
        assert_eq!(facets("Why?", &[], 3), vec!["Why?"]);
        assert_eq!(
            facets("Q?", &["grid-storage_uses.txt".to_string()], 3),
            vec!["Grid storage uses"]
        );
    }
}
