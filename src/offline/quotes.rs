//! The offline engine's sub-agents: no model. A search task searches the corpus with its
//! title and the question, and quotes the sentences of the results that best answer it; a
//! summary task quotes the best sentences of its inputs; the final summary is an answer of
//! quoted sentences with the findings under each search task ([`super::answer`]). Every sentence is quoted word for word from a document (never written), so every
//! citation can be checked against its document; a sentence that leans on the one before it
//! is quoted with it ([`super::units`]). Writes the same fields as the LLM agents.

use std::collections::BTreeSet;
use std::sync::Arc;

use crate::agents::ask::report_cuts;
use crate::agents::claims::{DEFAULT_THRESHOLD, check, cited_sentences, claim_text};
use crate::agents::search_agent::{format_hits, snippet_of};
use crate::agents::searches::run_queries;
use crate::agents::{TaskError, TaskInput, TaskOutput, TaskRunner};
use crate::llm::CallObserver;
use crate::plan::{Claim, Info, NodeType, Source};
use crate::search::SearchClient;
use crate::search::local::LocalIndex;
use crate::text::{collapsed, normalized};
use crate::transcript::{Site, Tape};

use super::answer::compose;
use super::question::heads_release;
use super::select::{Candidate, select};
use super::units::{headings, record_names, units};

/// Sentences quoted by a search task, and how many of them make its summary.
const SEARCH_SENTENCES: usize = 6;
const SUMMARY_SENTENCES: usize = 3;

/// The first line of every report the engine writes.
pub const OFFLINE_NOTICE: &str = "*Made offline, by extraction, without a language model: every \
     sentence below is quoted word for word from the document it cites; nothing in it was \
     written or paraphrased by a model.*";

/// Runs tasks over the corpus, without a model.
pub struct OfflineAgents {
    pub search: SearchClient,
    pub index: Arc<LocalIndex>,
    /// The run's transcript: searches are recorded on it (or replayed from it).
    pub tape: Tape,
}

impl TaskRunner for OfflineAgents {
    async fn run(
        &self,
        input: &TaskInput,
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        match (&input.final_sources, input.kind) {
            (Some(sources), _) => Ok(self.final_report(input, sources).await),
            (None, NodeType::Search) => self.search(input, observer).await,
            (None, _) => Ok(summary_of_inputs(input)),
        }
    }
}

impl OfflineAgents {
    async fn search(
        &self,
        input: &TaskInput,
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        let query = task_query(&input.title, &input.question);
        let site = Site::node(input.node_id.to_string());
        let queries = std::slice::from_ref(&query);
        let hits = run_queries(&self.search, &self.tape, &site, queries, observer).await?;
        let sources: Vec<Source> = hits
            .iter()
            .map(|h| Source {
                url: h.url.clone(),
                title: h.title.clone(),
                snippet: Some(snippet_of(h)),
                in_corpus: h.in_corpus.clone(),
                passages: Vec::new(),
            })
            .collect();
        let candidates = self.candidates(&sources, &input.question).await;
        let picked = select(&candidates, &query, SEARCH_SENTENCES, 2);
        let quoted: Vec<String> = picked
            .iter()
            .map(|&i| format!("{} [{}]", candidates[i].text, candidates[i].source + 1))
            .collect();
        let summary = if quoted.is_empty() {
            "No document of the corpus answers this task.".to_string()
        } else {
            quoted
                .iter()
                .take(SUMMARY_SENTENCES)
                .cloned()
                .collect::<Vec<_>>()
                .join(" ")
        };
        let (block, cuts) = format_hits(&self.search.provider_name(), &[query], &hits, &[]);
        report_cuts(&cuts, observer);
        let mut info = Info::default();
        info.set("llm", numbered(&quoted, "the search results"));
        info.set("search", block);
        let quotes: Vec<(usize, String)> = picked
            .iter()
            .map(|&i| (candidates[i].source + 1, candidates[i].text.clone()))
            .collect();
        let claims = quote_claims(&summary, &quotes, &sources);
        Ok(TaskOutput {
            summary,
            info,
            sources,
            usage: Default::default(),
            truncated: false,
            claims,
            ..Default::default()
        })
    }

    async fn final_report(&self, input: &TaskInput, sources: &[Source]) -> TaskOutput {
        let candidates = self.candidates(sources, &input.question).await;
        let composed = compose(
            OFFLINE_NOTICE,
            &input.question,
            &candidates,
            sources,
            &input.directions,
        );
        let mut info = Info::default();
        info.set("llm", composed.report.clone());
        let claims = quote_claims(&composed.report, &composed.quotes, &composed.sources);
        TaskOutput {
            summary: composed.report,
            info,
            sources: composed.sources,
            usage: Default::default(),
            truncated: false,
            claims,
            ..Default::default()
        }
    }

    /// The quotable sentences of every source's document, tagged with the source's index;
    /// with an embedding model, each with its passage's nearness in meaning to `question`.
    async fn candidates(&self, sources: &[Source], question: &str) -> Vec<Candidate> {
        let index = Arc::clone(&self.index);
        let urls: Vec<String> = sources.iter().map(|s| s.url.clone()).collect();
        let question = question.to_string();
        let texts = tokio::task::spawn_blocking(move || {
            let asked = index.question_vector(&question);
            urls.iter()
                .map(|u| {
                    let doc = index.document(u)?;
                    let near = asked
                        .as_ref()
                        .and_then(|q| index.chunk_nearness(&doc.path, &doc.text, q))
                        .unwrap_or_default();
                    Some((doc.text, near))
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        texts
            .into_iter()
            .enumerate()
            .filter_map(|(source, found)| {
                let (text, near) = found?;
                let mut candidates = candidates_of(&text, source, &sources[source].title);
                for c in &mut candidates {
                    let head: String = c.text.chars().take(60).collect();
                    c.meaning = near
                        .iter()
                        .find(|(chunk, _)| chunk.contains(&head))
                        .map_or(0.0, |(_, sim)| *sim);
                }
                Some(candidates)
            })
            .flatten()
            .collect()
    }
}

/// The claims of `text`, a summary of quotes: each cited sentence is a quote of the source it
/// cites (`quotes`: each with its source's number), so its source supports it by
/// construction; the check says so (`by: quote`) once it finds the sentence word for word in
/// what was quoted from that source. A sentence it does not find (none should be) is checked
/// like a model's.
fn quote_claims(text: &str, quotes: &[(usize, String)], sources: &[Source]) -> Vec<Claim> {
    let quoted_from = |n: usize| -> String {
        quotes
            .iter()
            .filter(|(m, _)| *m == n)
            .map(|(_, q)| collapsed(q))
            .collect::<Vec<_>>()
            .join(" ")
    };
    cited_sentences(text)
        .into_iter()
        .map(|(sentence, cites)| {
            // An aspect's label (`**Energy density.** `) is the report's, not the quote's.
            let said = claim_text(&sentence);
            let said = match said.strip_prefix("**").and_then(|s| s.split_once(".** ")) {
                Some((_, quoted)) => quoted.to_string(),
                None => said,
            };
            let quoted = !said.is_empty() && cites.iter().any(|&n| quoted_from(n).contains(&said));
            match quoted {
                true => Claim {
                    sentence,
                    cites,
                    supported: true,
                    score: 1.0,
                    by: "quote".into(),
                },
                false => {
                    let mut checked = check(&sentence, sources, DEFAULT_THRESHOLD);
                    checked.pop().unwrap_or(Claim {
                        sentence,
                        cites,
                        supported: false,
                        score: 0.0,
                        by: "lexical".into(),
                    })
                }
            }
        })
        .collect()
}

/// The quotable units of `text` ([`units`]), tagged with `source`, white space collapsed (a
/// unit may run on over a line break).
pub(super) fn candidates_of(text: &str, source: usize, title: &str) -> Vec<Candidate> {
    let mut headings = headings(text);
    // A changelog heads its releases; a document under one release's heading (POD's
    // `version 0.2311`) is of that release throughout, and tells no entry's release.
    let mut releases: Vec<(usize, &str)> = headings
        .iter()
        .filter(|(_, heading)| heads_release(heading))
        .copied()
        .collect();
    if releases.len() < 2 {
        releases.clear();
    }
    // A line that opens the text (a title, a page's links) or repeats the title is the
    // document's, not a section's.
    headings.retain(|(at, heading)| {
        !text[..*at].trim().is_empty() && !heading.eq_ignore_ascii_case(title.trim())
    });
    // A record's first field is of its record.
    let named = record_names(text);
    let records: BTreeSet<usize> = named.iter().map(|(at, _)| *at).collect();
    headings.extend(named);
    headings.sort_by_key(|(at, _)| *at);
    units(text)
        .into_iter()
        .map(|u| Candidate {
            text: collapsed(&text[u.at.clone()]),
            source,
            section: headings
                .iter()
                .take_while(|(at, _)| {
                    *at < u.at.start || (*at == u.at.start && records.contains(at))
                })
                .last()
                .map(|(_, heading)| heading.to_string()),
            release: releases
                .iter()
                .take_while(|(at, _)| *at <= u.at.start)
                .last()
                .map(|(_, heading)| heading.to_string()),
            at: u.at,
            orphan: u.orphan,
            term: u.term.map(|t| collapsed(&text[t])),
            field: u.field,
            meaning: 0.0,
        })
        .collect()
}

/// A summary task: the sentences of its inputs that best answer its title and the question.
fn summary_of_inputs(input: &TaskInput) -> TaskOutput {
    let candidates = candidates_of(&input.context, 0, "");
    let query = task_query(&input.title, &input.question);
    let picked = select(&candidates, &query, SEARCH_SENTENCES, SEARCH_SENTENCES);
    let quoted: Vec<String> = picked.iter().map(|&i| candidates[i].text.clone()).collect();
    let mut info = Info::default();
    info.set("llm", numbered(&quoted, "the inputs"));
    TaskOutput {
        summary: quoted
            .iter()
            .take(SUMMARY_SENTENCES)
            .cloned()
            .collect::<Vec<_>>()
            .join(" "),
        info,
        sources: Vec::new(),
        usage: Default::default(),
        truncated: false,
        ..Default::default()
    }
}

/// What a task searches for: its title and the question, the question once. The first task
/// of a round is the question itself (its own best documents are always searched), and a
/// title that already holds the question is not followed by it again (`X? X?`).
fn task_query(title: &str, question: &str) -> String {
    let (title, question) = (title.trim(), question.trim());
    if normalized(title).contains(&normalized(question)) {
        title.to_string()
    } else {
        format!("{title} {question}")
    }
}

/// The quoted sentences as a numbered list, introduced as what they are.
fn numbered(quoted: &[String], from: &str) -> String {
    let mut text = format!(
        "Extracted without a language model: the sentences of {from} that best answer this task, quoted word for word.\n\n"
    );
    if quoted.is_empty() {
        text.push_str("(none)\n");
    }
    for (n, q) in quoted.iter().enumerate() {
        text.push_str(&format!("{}. {q}\n", n + 1));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_query_holds_the_question_once() {
        let q = "Is libffi thread-safe?";
        assert_eq!(task_query(q, q), q);
        assert_eq!(
            task_query(" is LIBFFI thread safe ", q),
            "is LIBFFI thread safe"
        );
        assert_eq!(
            task_query("Final report: Is libffi thread-safe?", q),
            "Final report: Is libffi thread-safe?"
        );
        assert_eq!(
            task_query("libffi manual", q),
            "libffi manual Is libffi thread-safe?"
        );
    }
}
