//! The search sub-agent's passage stage: what the model is shown of each result. Every
//! source goes the same way: its text is cut into passages, all of a task's passages are
//! ranked together against its queries and question, and the best ones, within
//! `search.read.passageChars`, are handed back per result. The texts are
//!
//! - a web result's page, when reading is on: the top results read at once (through the
//!   run's [`Reader`], or from the transcript in a replay, and recorded on it otherwise), each
//!   told to the observer (`page_read`, `page_unread`);
//! - a local result's document, as the corpus index holds it;
//! - a result that brings a text of its own longer than a snippet (an MCP tool's page content).
//!
//! A result with no text, or whose text matched nothing, keeps its snippet. Reading never
//! fails a task.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;

use crate::llm::{CallObserver, PageNote, PageSeen};
use crate::read::cache::PageCache;
use crate::read::page::{PageResult, ReadPage};
use crate::read::passages::{PageForRanking, select};
use crate::read::reader::Reader;
use crate::search::hit::is_web_url;
use crate::search::{SearchClient, SearchHit};
use crate::transcript::{Diverged, Line, PageLine, Site, Tape};

/// The most passages of one page the model sees.
pub const PASSAGES_PER_PAGE: usize = 3;

/// One page read for a task, and how it was served.
struct Read {
    hit: usize,
    url: String,
    result: PageResult,
    from: &'static str,
}

/// A result's own text longer than this is a text to cut into passages, not a snippet (web
/// providers' snippets are a few hundred characters; an MCP tool may send the page).
pub const OWN_TEXT_MIN_CHARS: usize = 1_000;

/// Where a task's passages come from: the run's reader and the cache beside its plan (when
/// web pages are read), and the budget of all its passages (`search.read.passageChars`).
#[derive(Clone, Copy)]
pub struct Passages<'a> {
    pub reader: Option<&'a Reader>,
    pub cache: Option<&'a PageCache>,
    pub budget: usize,
}

/// The passages of each of `hits` the model sees (empty for a result with no text of its own
/// or read, or whose text matched none of `queries`).
pub async fn passages_of(
    from: Passages<'_>,
    search: &SearchClient,
    tape: &Tape,
    site: &Site,
    hits: &[SearchHit],
    queries: &[&str],
    observer: &dyn CallObserver,
) -> Vec<Vec<String>> {
    let reads = match from.reader {
        Some(reader) => read_pages(reader, from.cache, tape, site, hits, observer).await,
        None => Vec::new(),
    };
    let documents = local_documents(search, hits).await;
    let mut texts: Vec<PageForRanking> = Vec::new();
    for (i, hit) in hits.iter().enumerate() {
        let read = reads
            .iter()
            .find(|r| r.hit == i)
            .and_then(|r| r.result.as_ref().ok());
        let text = match (read, &documents[i]) {
            (Some(page), _) => page.text.as_str(),
            (None, Some(document)) => document.as_str(),
            (None, None) if hit.snippet.chars().count() > OWN_TEXT_MIN_CHARS => &hit.snippet,
            (None, None) => continue,
        };
        texts.push(PageForRanking {
            source: i + 1,
            text,
        });
    }
    let mut passages = vec![Vec::new(); hits.len()];
    for chosen in select(&texts, queries, from.budget, PASSAGES_PER_PAGE) {
        passages[chosen.source - 1].push(chosen.text);
    }
    for read in &reads {
        observer.on_page(&PageNote {
            url: read.url.clone(),
            outcome: match &read.result {
                Ok(page) => Ok(PageSeen {
                    kind: page.kind.into(),
                    chars: page.text.chars().count(),
                    cut: page.cut.clone(),
                    passages: passages[read.hit].len(),
                    from: read.from,
                }),
                Err(cause) => Err(cause.clone()),
            },
        });
    }
    passages
}

/// The text of each local result's document, as the corpus index holds it (`None` for any
/// other result, or a document the index no longer has).
async fn local_documents(search: &SearchClient, hits: &[SearchHit]) -> Vec<Option<String>> {
    let urls: Vec<Option<String>> = hits
        .iter()
        .map(|h| h.in_corpus.as_ref().map(|_| h.url.clone()))
        .collect();
    let Some(index) = search
        .local_index()
        .filter(|_| urls.iter().any(Option::is_some))
    else {
        return vec![None; hits.len()];
    };
    let looked_up: Result<Vec<Option<String>>, _> = tokio::task::spawn_blocking(move || {
        urls.iter()
            .map(|url| Some(index.document(url.as_deref()?)?.text))
            .collect()
    })
    .await;
    looked_up.unwrap_or_else(|_| vec![None; hits.len()])
}

/// The top web results' pages, read at once (at most `search.read.pages`).
async fn read_pages(
    reader: &Reader,
    cache: Option<&PageCache>,
    tape: &Tape,
    site: &Site,
    hits: &[SearchHit],
    observer: &dyn CallObserver,
) -> Vec<Read> {
    let wanted = (0..hits.len())
        .filter(|&i| hits[i].in_corpus.is_none() && is_web_url(&hits[i].url))
        .take(reader.settings().pages);
    join_all(wanted.map(|hit| read_one(reader, cache, tape, site, hit, &hits[hit].url, observer)))
        .await
}

/// The page of result `hit`: from the transcript in a replay (or, resuming, when the
/// interrupted run had read it: [`crate::transcript::Salvage`]), else from the reader
/// (recorded when the run records).
async fn read_one(
    reader: &Reader,
    cache: Option<&PageCache>,
    tape: &Tape,
    site: &Site,
    hit: usize,
    url: &str,
    observer: &dyn CallObserver,
) -> Read {
    let started = Instant::now();
    let salvaged = match (&tape.replayer, &tape.salvage) {
        (None, Some(salvage)) => salvage.page(site, url),
        _ => None,
    };
    let (result, from) = match (tape.replayer.as_deref(), salvaged) {
        (Some(replayer), _) => (recorded(replayer.page(site, url)), "transcript"),
        (None, Some(line)) => {
            tracing::info!(
                "{}: answered by the interrupted run's transcript, not read again",
                site.describe(&format!("read of `{url}`"), 0)
            );
            let page = recorded(Ok(line));
            reader.remember(url, page.clone());
            (page, "transcript")
        }
        (None, None) => {
            let (result, served) = reader.read(url, cache, observer).await;
            (result, served.as_str())
        }
    };
    if let Some(recorder) = tape.recorder.as_deref() {
        recorder.write(&Line::Page(PageLine {
            session: recorder.session(),
            at: crate::clock::now_millis(),
            node: site.node.clone(),
            round: site.round,
            url: url.to_string(),
            page: result
                .as_ref()
                .ok()
                .and_then(|p| serde_json::to_value(p.as_ref()).ok()),
            error: result.as_ref().err().cloned(),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            replayed: tape.replayer.is_some() || salvaged.is_some(),
        }));
    }
    Read {
        hit,
        url: url.to_string(),
        result,
        from,
    }
}

/// The page a transcript's line holds, or why there is none.
fn recorded(line: Result<&PageLine, Diverged>) -> PageResult {
    match line {
        Ok(line) => match (&line.page, &line.error) {
            (Some(page), _) => serde_json::from_value::<ReadPage>(page.clone())
                .map(Arc::new)
                .map_err(|e| format!("the transcript's page is unreadable ({e})")),
            (None, error) => Err(error.clone().unwrap_or_default()),
        },
        Err(diverged) => Err(diverged.to_string()),
    }
}
