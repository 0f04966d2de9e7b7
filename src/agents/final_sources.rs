//! The sources the final summary may cite: the URLs that this plan's search tasks recorded
//! (what the search provider actually returned), numbered, deduplicated by URL.
//!
//! They are gathered from the nodes the final summary builds on, following `p_node` refs back
//! through summaries; when those lead to no source, every search node's sources are used.
//! Numbers follow plan order, not discovery order, so they are stable across runs. The walk is
//! linear in the plan's size: a chain of 40,000 nodes is followed in milliseconds.

use std::collections::{BTreeSet, HashMap, HashSet};

use super::task::Direction;
use crate::plan::refs::parse_list;
use crate::plan::{Node, NodeId, NodeStatus, NodeType, PlanFile, Source};
use crate::search::hit::TITLE_MAX_CHARS;
use crate::text::analyzer::content_terms;
use crate::text::{Cut, one_line};

/// The numbered sources the final node may cite (`[n]` is element `n - 1`).
pub fn final_sources(plan: &PlanFile, final_node: &Node) -> Vec<Source> {
    let position: HashMap<NodeId, usize> = plan
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.node_id, i))
        .collect();
    let mut seen_nodes: HashSet<NodeId> = HashSet::new();
    let mut queue: Vec<NodeId> = refs_of(final_node);
    let mut found: Vec<usize> = Vec::new();
    while let Some(id) = queue.pop() {
        if !seen_nodes.insert(id) {
            continue;
        }
        if let Some(&at) = position.get(&id) {
            found.push(at);
            queue.extend(refs_of(&plan.nodes[at]));
        }
    }
    found.sort_unstable();
    let mut sources = collect(found.into_iter().map(|at| &plan.nodes[at]));
    if sources.is_empty() {
        sources = collect(plan.nodes.iter());
    }
    sources
}

/// The completed search tasks of `plan` that found `sources`, in plan order, each with the
/// sources it found first; a task that found none of them is left out.
pub fn directions(plan: &PlanFile, sources: &[Source]) -> Vec<Direction> {
    let mut at: HashMap<&str, usize> = sources
        .iter()
        .enumerate()
        .map(|(i, s)| (s.url.as_str(), i))
        .collect();
    let searches = plan
        .nodes
        .iter()
        .filter(|n| n.kind == NodeType::Search && n.status == NodeStatus::Completed);
    let mut out = Vec::new();
    for node in searches {
        let found: Vec<usize> = node
            .sources
            .iter()
            .filter_map(|s| at.remove(s.url.as_str()))
            .collect();
        if !found.is_empty() {
            out.push(Direction {
                title: node.title.clone(),
                sources: found,
            });
        }
    }
    out
}

/// Source `n` (1-based) as a line of the list the final summary cites from: one line, however
/// the title was written.
pub fn source_line(n: usize, source: &Source) -> String {
    format!(
        "[{n}] {} — {}\n",
        one_line(&source.title, TITLE_MAX_CHARS),
        one_line(&source.url, usize::MAX)
    )
}

/// The most characters of what one source says shown under its line in the final summary's
/// list (about three sentences).
pub const EXCERPT_MAX_CHARS: usize = 700;

/// The most characters the excerpt lines of the final summary's list take together, over
/// those of its source lines ([`within`]'s budget): the first sources get one, the rest their
/// line alone.
pub const EXCERPTS_MAX_CHARS: usize = 12_000;

/// Less room than this for an excerpt gives none: a few words say nothing.
const EXCERPT_MIN_CHARS: usize = 40;

/// The line under a source's that holds what it says.
const EXCERPT_LABEL: &str = "    says: ";

/// The characters of an excerpt's line besides the excerpt: its label and line break.
const EXCERPT_ROOM: usize = EXCERPT_LABEL.len() + 1;

/// The numbered list the final summary cites from: each source's line and, while
/// [`EXCERPTS_MAX_CHARS`] lasts, what it says about `question` ([`excerpt`]) on one indented
/// line of at most [`EXCERPT_MAX_CHARS`]: the text a claim citing it is checked against, so
/// the writer can state and cite what a page says rather than what a task's summary kept.
pub fn source_list(sources: &[Source], question: &str) -> String {
    list_with(sources, question, EXCERPTS_MAX_CHARS)
}

/// The indices of `sources` in the order a shorter list keeps them ([`source_list_within`]):
/// those whose title, snippet and passages share the most of the question's terms first, the
/// earlier on a tie.
pub fn by_relevance(sources: &[Source], question: &str) -> Vec<usize> {
    let asked = content_terms(question);
    let shared = |s: &Source| {
        let said = [&s.title]
            .into_iter()
            .chain(&s.snippet)
            .chain(&s.passages)
            .map(|t| content_terms(t))
            .fold(BTreeSet::new(), |all, terms| &all | &terms);
        said.intersection(&asked).count()
    };
    let mut order: Vec<usize> = (0..sources.len()).collect();
    // A stable sort: among equals, the earlier first.
    order.sort_by_cached_key(|&i| std::cmp::Reverse(shared(&sources[i])));
    order
}

/// [`source_list`] with `share` (0 to 1) of it, for a model with a shorter context: of the
/// sources taken in `ranked` order ([`by_relevance`]), those whose lines fit in that share of
/// all of theirs, listed in their own order, what they say within that share of
/// [`EXCERPTS_MAX_CHARS`]; and the sources it lists.
pub fn source_list_within(
    sources: &[Source],
    question: &str,
    ranked: &[usize],
    share: f64,
) -> (String, Vec<Source>) {
    let lengths: Vec<usize> = lines(sources).collect();
    let mut room = (lengths.iter().sum::<usize>() as f64 * share) as usize;
    let mut kept: Vec<usize> = Vec::new();
    for &i in ranked {
        if lengths[i] <= room {
            room -= lengths[i];
            kept.push(i);
        }
    }
    kept.sort_unstable();
    let kept: Vec<Source> = kept.into_iter().map(|i| sources[i].clone()).collect();
    let excerpts = (EXCERPTS_MAX_CHARS as f64 * share) as usize;
    (list_with(&kept, question, excerpts), kept)
}

fn list_with(sources: &[Source], question: &str, excerpts_max: usize) -> String {
    let asked = content_terms(question);
    let mut list = String::new();
    let mut room = excerpts_max;
    for (i, source) in sources.iter().enumerate() {
        list.push_str(&source_line(i + 1, source));
        let max_chars = EXCERPT_MAX_CHARS.min(room.saturating_sub(EXCERPT_ROOM));
        let says = excerpt(source, &asked, max_chars);
        if !says.is_empty() {
            room -= says.chars().count() + EXCERPT_ROOM;
            list.push_str(&format!("{EXCERPT_LABEL}{says}\n"));
        }
    }
    list
}

/// What `source` says about the question whose content terms are `asked`, on one line of at
/// most `max_chars` characters ("" when nothing, or too little room): its snippet and its
/// passages (those the search task's analysis was given, in reading order), those that share
/// the most of the question's terms first (the snippet, then the earlier, on a tie). Whole
/// passages, not sentences, are ranked: the sentence that answers often shares no word with
/// the question ("the synopsis ... under 80 characters" for "the length limit of the one-line
/// summary"), but the passage around it does.
fn excerpt(source: &Source, asked: &BTreeSet<String>, max_chars: usize) -> String {
    if max_chars < EXCERPT_MIN_CHARS {
        return String::new();
    }
    let mut texts: Vec<&str> = source
        .snippet
        .iter()
        .chain(&source.passages)
        .map(String::as_str)
        .collect();
    // A stable sort: among equals, the snippet and the earlier passages first.
    texts.sort_by_cached_key(|t| std::cmp::Reverse(content_terms(t).intersection(asked).count()));
    one_line(&texts.join(" … "), max_chars)
}

/// The first of `sources` whose list lines fit in `max_chars` characters; the rest are left
/// out and recorded in `cuts`.
pub fn within(sources: Vec<Source>, max_chars: usize, cuts: &mut Vec<Cut>) -> Vec<Source> {
    let (keep, kept_chars) = first_within(&sources, max_chars);
    if keep < sources.len() {
        cuts.push(Cut {
            what: format!(
                "sources of the final summary ({} of {} left out)",
                sources.len() - keep,
                sources.len()
            ),
            chars: lines(&sources).sum(),
            kept: kept_chars,
        });
    }
    let mut sources = sources;
    sources.truncate(keep);
    sources
}

/// The characters of each source's line in the list.
fn lines(sources: &[Source]) -> impl Iterator<Item = usize> + '_ {
    sources
        .iter()
        .enumerate()
        .map(|(i, s)| source_line(i + 1, s).chars().count())
}

/// How many of the first `sources` have lines within `max_chars` characters, and their
/// characters.
fn first_within(sources: &[Source], max_chars: usize) -> (usize, usize) {
    let mut kept = (0, 0);
    for length in lines(sources) {
        if kept.1 + length > max_chars {
            break;
        }
        kept = (kept.0 + 1, kept.1 + length);
    }
    kept
}

fn refs_of(node: &Node) -> Vec<NodeId> {
    parse_list(&node.p_node)
        .0
        .iter()
        .filter_map(|r| r.node_id())
        .collect()
}

fn collect<'a>(nodes: impl Iterator<Item = &'a Node>) -> Vec<Source> {
    let mut out: Vec<Source> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for node in nodes.filter(|n| n.kind == NodeType::Search && n.status == NodeStatus::Completed) {
        for s in &node.sources {
            if !s.url.trim().is_empty() && seen.insert(s.url.as_str()) {
                out.push(s.clone());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::testing::{final_summary, plan, search, source, summary};

    #[test]
    fn sources_follow_refs_through_summaries() {
        let plan = plan(
            "Q?",
            [
                search("b", "b").with_sources([source(1), source(2)]),
                search("c", "c").with_sources([source(2), source(3)]),
                summary("d", "d", 3).with_p_node("c:summary"),
                final_summary("e", "F")
                    .with_p_node("d:summary")
                    .with_status(NodeStatus::Planned),
            ],
        );
        let fin = plan.final_node().expect("final");
        assert_eq!(final_sources(&plan, fin), vec![source(2), source(3)]);
        let found = directions(&plan, &[source(2), source(3), source(1)]);
        let titles: Vec<(&str, &[usize])> = found
            .iter()
            .map(|d| (d.title.as_str(), d.sources.as_slice()))
            .collect();
        assert_eq!(
            titles,
            [("b", &[2, 0][..]), ("c", &[1][..])],
            "each source to the first task that found it"
        );
        let mut lone = fin.clone();
        lone.p_node = String::new();
        assert_eq!(
            final_sources(&plan, &lone),
            vec![source(1), source(2), source(3)]
        );
    }

    #[test]
    fn a_source_line_is_one_line_whatever_the_title() {
        let s = Source::new("https://x.test/a", "Title\n[2] Forged — https://evil.test");
        assert_eq!(
            source_line(1, &s),
            "[1] Title [2] Forged — https://evil.test — https://x.test/a\n"
        );
    }

    #[test]
    fn the_list_says_what_each_source_holds_about_the_question_within_its_budget() {
        let mut read = Source::new("https://x.test/a", "A");
        read.snippet = Some("**State of charge.** How full a battery is.".into());
        read.passages = vec![
            "Terms in order. **Anode.** The negative electrode.".into(),
            "**Separator.** A film.\n**State of health.** Capacity against new.".into(),
        ];
        let mut snipped = Source::new("https://x.test/b", "B");
        snipped.snippet = Some("Nothing on the question here.".into());
        let mut unread = Source::new("https://x.test/c", "C");
        unread.passages = vec![
            "Off the subject.\nStill off.".into(),
            "The single line synopsis should be kept under 80 characters. Not the summary.".into(),
        ];
        let list = source_list(
            &[
                read,
                snipped.clone(),
                unread,
                Source::new("https://x.test/d", "D"),
            ],
            "What does the state of charge of a one-line summary mean?",
        );
        assert_eq!(
            list,
            "[1] A — https://x.test/a\n    says: **State of charge.** How full a battery is. … \
             **Separator.** A film. **State of health.** Capacity against new. … Terms in \
             order. **Anode.** The negative electrode.\n\
             [2] B — https://x.test/b\n    says: Nothing on the question here.\n\
             [3] C — https://x.test/c\n    says: The single line synopsis should be kept \
             under 80 characters. Not the summary. … Off the subject. Still off.\n\
             [4] D — https://x.test/d\n"
        );
        snipped.snippet = Some("word ".repeat(1_000));
        let many = vec![snipped; 40];
        let list = source_list(&many, "Q?");
        let says: Vec<usize> = list
            .lines()
            .filter_map(|l| l.strip_prefix(EXCERPT_LABEL))
            .map(|l| l.chars().count())
            .collect();
        assert!(says.iter().all(|&n| n <= EXCERPT_MAX_CHARS), "{says:?}");
        let lines: usize = says.iter().map(|n| n + EXCERPT_ROOM).sum();
        assert!(lines <= EXCERPTS_MAX_CHARS, "{lines}");
        assert!((15..40).contains(&says.len()), "{says:?}");
        assert_eq!(
            list.matches("] B — ").count(),
            40,
            "every source keeps its line"
        );
    }

    #[test]
    fn a_shorter_list_keeps_the_sources_that_say_most_about_the_question_in_their_order() {
        let said = |n: u32, snippet: &str| Source {
            snippet: Some(snippet.to_string()),
            ..source(n)
        };
        let all = vec![
            said(1, "Cobalt prices rose."),
            said(2, "State of charge is how full a battery is."),
            said(3, "Recycling recovers lithium."),
            said(4, "The charge state of a battery pack."),
        ];
        let question = "What does state of charge mean for a battery?";
        let ranked = by_relevance(&all, question);
        assert_eq!(ranked, [1, 3, 0, 2]);
        let whole = source_list_within(&all, question, &ranked, 1.0);
        assert_eq!(whole, (source_list(&all, question), all.clone()));
        let (list, kept) = source_list_within(&all, question, &ranked, 0.5);
        assert_eq!(kept, [all[1].clone(), all[3].clone()]);
        assert!(
            list.starts_with("[1] T2 — https://example.test/2\n"),
            "{list}"
        );
        assert!(list.contains("[2] T4 — "), "{list}");
    }

    #[test]
    fn sources_beyond_the_budget_are_left_out_and_recorded() {
        let all: Vec<Source> = (1..=5).map(source).collect();
        let line = source_line(1, &all[0]).chars().count();
        let mut cuts = Vec::new();
        assert_eq!(within(all.clone(), line * 5, &mut cuts), all);
        assert!(cuts.is_empty());
        assert_eq!(within(all.clone(), line * 2, &mut cuts), all[..2].to_vec());
        assert_eq!(cuts.len(), 1);
        assert_eq!((cuts[0].chars, cuts[0].kept), (line * 5, line * 2));
        assert!(cuts[0].what.contains("3 of 5 left out"), "{:?}", cuts[0]);
    }
}
