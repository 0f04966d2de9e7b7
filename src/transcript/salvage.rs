//! [`Salvage`]: the answers an interrupted run already paid for, served again when it resumes.
//!
//! A run stopped by a crash, a kill or a signal leaves its tasks in flight unended in the
//! plan (`running`, or still `planned` when no checkpoint came after their start), and their
//! calls answered so far in its transcript (each answer is written there as it arrives,
//! before the task acts on it). When the run resumes, such a task runs again from
//! its start; each of its model calls that asks exactly what the interrupted session asked
//! (same role, same call number, same messages) and was answered then is answered from the
//! transcript instead of the server, and so is each of its searches that sends the same
//! query to the same providers as then and found results (a search API bills per query too),
//! and each page it reads that was read then (on a queue worker the page cache of the dead
//! worker is gone, and elsewhere a kept page still costs a request to revalidate).
//! The planner's call of the round in flight is served the same way: the plan's `rounds`
//! counts the rounds whose outcome reached it, so a round one past them was planned, perhaps
//! answered and acted on, but not saved, and a resume plans it again under the same number
//! with the same input (the plan as it was). A call asked differently goes to the server, as
//! does every call of a task that was not in flight and of a round that reached the plan: an
//! answer that a task completed or failed with, or that a saved round applied, is never
//! reused. The served answer is written to the new session's transcript too (marked
//! `replayed`), so a second interruption salvages it again.

use std::collections::HashSet;
use std::path::Path;

use serde_json::Value;

use super::line::{LlmLine, PageLine, SearchLine};
use super::{Replayer, Site};

/// The answered calls of an interrupted run's tasks in flight.
#[derive(Debug)]
pub struct Salvage {
    transcript: Replayer,
    /// The nodes that had not ended when the run stopped.
    nodes: HashSet<String>,
    /// The planning round in flight: one past the plan's `rounds`.
    round: u32,
}

impl Salvage {
    /// The salvage of the transcript at `path` for the unended tasks `running` and the
    /// planning round `round` (the plan's `rounds` plus one). A transcript that cannot be read
    /// salvages nothing: the calls go to the servers, as they would have.
    pub fn load(path: &Path, running: HashSet<String>, round: u32) -> Option<Salvage> {
        if !path.is_file() {
            return None;
        }
        match Replayer::load(path) {
            Ok(transcript) => Some(Salvage {
                transcript,
                nodes: running,
                round,
            }),
            Err(e) => {
                tracing::warn!("{e}: what the interrupted run was answered is asked for again");
                None
            }
        }
    }

    /// The answer recorded for call `call` of `role` at `site`, if the site is a task or the
    /// planning round that was in flight, the recorded call asked the same `messages`, and it
    /// was answered.
    pub fn llm(&self, role: &str, site: &Site, call: u32, messages: &[Value]) -> Option<&LlmLine> {
        if !self.in_flight(site) {
            return None;
        }
        let line = self.transcript.llm(role, site, call, messages).ok()?;
        line.content.as_ref()?;
        Some(line)
    }

    /// The results recorded for search `call` at `site`, if the site is a task that was in
    /// flight and the recorded search sent the same `query` to the same `provider` and found
    /// results (a failed search is tried again).
    pub fn search(
        &self,
        site: &Site,
        call: u32,
        query: &str,
        provider: &str,
    ) -> Option<&SearchLine> {
        if !self.in_flight(site) {
            return None;
        }
        let line = self.transcript.search(site, call, query).ok()?;
        (line.provider == provider && line.results.is_some()).then_some(line)
    }

    /// The page recorded as read from `url` at `site`, if the site is a task that was in
    /// flight and the page was read then (a page that could not be read is tried again).
    pub fn page(&self, site: &Site, url: &str) -> Option<&PageLine> {
        if !self.in_flight(site) {
            return None;
        }
        let line = self.transcript.page(site, url).ok()?;
        line.page.as_ref().map(|_| line)
    }

    /// Whether `site` is a task that had not ended when the run stopped, or the planning
    /// round whose outcome had not reached the plan.
    fn in_flight(&self, site: &Site) -> bool {
        match (&site.node, site.round) {
            (Some(node), _) => self.nodes.contains(node),
            (None, Some(round)) => round == self.round,
            (None, None) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The salvage of a transcript of one session holding `lines`, for task `c` and round 2
    /// in flight (and its folder, which must outlive it).
    fn salvage_of(lines: &[String]) -> (tempfile::TempDir, Salvage) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.transcript.jsonl");
        let session = r#"{"kind":"session","session":1,"at":"2026-12-02T00:00:00Z","version":"0","workflow_id":"w","query":"Q?"}"#;
        let text: Vec<&str> = std::iter::once(session)
            .chain(lines.iter().map(String::as_str))
            .collect();
        std::fs::write(&path, text.join("\n") + "\n").unwrap();
        let salvage = Salvage::load(&path, HashSet::from(["c".to_string()]), 2).unwrap();
        (dir, salvage)
    }

    fn site(node: &str) -> Site {
        Site {
            node: Some(node.into()),
            round: Some(1),
        }
    }

    fn search_line(node: &str, call: u32, provider: &str, found: bool) -> String {
        let mut line = serde_json::json!({
            "kind": "search", "session": 1, "at": "2026-12-02T00:00:00Z", "node": node,
            "round": 1, "call": call, "provider": provider, "query": "about c",
            "latency_ms": 5,
        });
        match found {
            true => line["results"] = serde_json::json!([{"title": "T", "url": "https://e.x/"}]),
            false => line["error"] = "HTTP 503".into(),
        }
        line.to_string()
    }

    #[test]
    fn only_a_search_of_a_task_in_flight_that_found_results_is_served_again() {
        let (_dir, salvage) = salvage_of(&[
            search_line("c", 0, "searxng", true),
            search_line("c", 1, "searxng", false),
            search_line("b", 0, "searxng", true),
        ]);
        let served = salvage.search(&site("c"), 0, "about c", "searxng");
        assert!(served.is_some_and(|l| l.results.is_some()));
        assert!(
            salvage
                .search(&site("c"), 0, "about d", "searxng")
                .is_none(),
            "another query"
        );
        assert!(
            salvage.search(&site("c"), 0, "about c", "tavily").is_none(),
            "another provider"
        );
        assert!(
            salvage
                .search(&site("c"), 1, "about c", "searxng")
                .is_none(),
            "a search that failed is tried again"
        );
        assert!(
            salvage
                .search(&site("b"), 0, "about c", "searxng")
                .is_none(),
            "a task that was not in flight"
        );
    }

    #[test]
    fn only_the_planner_call_of_the_round_in_flight_that_was_answered_is_served_again() {
        let planner = |round: u32, call: u32, content: Option<&str>| {
            let mut line = serde_json::json!({
                "kind": "llm", "session": 1, "at": "2026-12-02T00:00:00Z", "role": "planning",
                "round": round, "call": call, "attempt": 1, "model": "m", "url": "u",
                "messages": [{"role": "user", "content": format!("Plan round {round}")}],
                "latency_ms": 5,
            });
            match content {
                Some(text) => line["content"] = text.into(),
                None => line["error"] = "HTTP 503".into(),
            }
            line.to_string()
        };
        let (_dir, salvage) = salvage_of(&[
            planner(1, 0, Some("round 1's tasks")),
            planner(2, 0, Some("round 2's tasks")),
            planner(2, 1, None),
        ]);
        let asked = |round: u32| {
            [serde_json::json!({"role": "user", "content": format!("Plan round {round}")})]
        };
        let served = salvage.llm("planning", &Site::round(2), 0, &asked(2));
        assert_eq!(
            served.and_then(|l| l.content.as_deref()),
            Some("round 2's tasks")
        );
        assert!(
            salvage
                .llm("planning", &Site::round(1), 0, &asked(1))
                .is_none(),
            "a round whose outcome reached the plan"
        );
        assert!(
            salvage
                .llm("planning", &Site::round(2), 0, &asked(1))
                .is_none(),
            "asked differently"
        );
        assert!(
            salvage
                .llm("planning", &Site::round(2), 1, &asked(2))
                .is_none(),
            "a call that was not answered is asked again"
        );
        assert!(
            salvage
                .llm("planning", &Site::default(), 0, &asked(2))
                .is_none(),
            "a call of neither a task nor a round (the review's)"
        );
    }

    #[test]
    fn only_a_page_of_a_task_in_flight_that_was_read_is_served_again() {
        let page = |node: &str, url: &str, read: bool| {
            let mut line = serde_json::json!({
                "kind": "page", "session": 1, "at": "2026-12-02T00:00:00Z", "node": node,
                "round": 1, "url": url, "latency_ms": 5,
            });
            match read {
                true => line["page"] = serde_json::json!({"url": url, "text": "Page."}),
                false => line["error"] = "HTTP 503".into(),
            }
            line.to_string()
        };
        let (_dir, salvage) = salvage_of(&[
            page("c", "https://e.x/read", true),
            page("c", "https://e.x/failed", false),
            page("b", "https://e.x/done", true),
        ]);
        let served = salvage.page(&site("c"), "https://e.x/read");
        assert!(served.is_some_and(|l| l.page.is_some()));
        assert!(salvage.page(&site("c"), "https://e.x/other").is_none());
        assert!(
            salvage.page(&site("c"), "https://e.x/failed").is_none(),
            "a page that could not be read is tried again"
        );
        assert!(
            salvage.page(&site("b"), "https://e.x/done").is_none(),
            "a task that was not in flight"
        );
    }
}
