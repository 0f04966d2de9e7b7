//! The search sub-agent's reading stage: the top web results of a task read at once (through
//! the run's [`Reader`], or from the transcript in a replay, and recorded on it otherwise),
//! their text cut into passages and ranked against the task's queries and question, and the
//! best ones, within `search.read.passageChars`, handed back per result. A result whose page
//! could not be read, or matched nothing, keeps its snippet; each page is told to the observer
//! (`page_read`, `page_unread`). Reading never fails a task.

use std::sync::Arc;
use std::time::Instant;

use futures_util::future::join_all;

use crate::llm::{CallObserver, PageNote, PageSeen};
use crate::read::cache::PageCache;
use crate::read::page::{PageResult, ReadPage};
use crate::read::passages::{PageForRanking, select};
use crate::read::reader::Reader;
use crate::search::SearchHit;
use crate::search::hit::is_web_url;
use crate::transcript::{Line, PageLine, Site, Tape};

/// The most passages of one page the model sees.
pub const PASSAGES_PER_PAGE: usize = 3;

/// One page read for a task, and how it was served.
struct Read {
    hit: usize,
    url: String,
    result: PageResult,
    from: &'static str,
}

/// Where a task reads its pages from: the run's reader, and the cache beside its plan.
#[derive(Clone, Copy)]
pub struct Pages<'a> {
    pub reader: &'a Reader,
    pub cache: Option<&'a PageCache>,
}

/// The passages of each of `hits` the model sees (empty for a result not read, or whose page
/// matched none of `queries`).
pub async fn read_hits(
    pages: Pages<'_>,
    tape: &Tape,
    site: &Site,
    hits: &[SearchHit],
    queries: &[&str],
    observer: &dyn CallObserver,
) -> Vec<Vec<String>> {
    let mut passages = vec![Vec::new(); hits.len()];
    let reader = pages.reader;
    let wanted: Vec<usize> = (0..hits.len())
        .filter(|&i| hits[i].in_corpus.is_none() && is_web_url(&hits[i].url))
        .take(reader.settings().pages)
        .collect();
    if wanted.is_empty() {
        return passages;
    }
    let reads = join_all(
        wanted
            .iter()
            .map(|&hit| read_one(pages, tape, site, hit, &hits[hit].url, observer)),
    )
    .await;
    let texts: Vec<PageForRanking> = reads
        .iter()
        .filter_map(|r| {
            let page = r.result.as_ref().ok()?;
            Some(PageForRanking {
                source: r.hit + 1,
                text: &page.text,
            })
        })
        .collect();
    let budget = reader.settings().passage_chars;
    for chosen in select(&texts, queries, budget, PASSAGES_PER_PAGE) {
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

/// The page of result `hit`: from the transcript in a replay, else from the reader (recorded
/// when the run records).
async fn read_one(
    pages: Pages<'_>,
    tape: &Tape,
    site: &Site,
    hit: usize,
    url: &str,
    observer: &dyn CallObserver,
) -> Read {
    let started = Instant::now();
    let (result, from) = match tape.replayer.as_deref() {
        Some(replayer) => {
            let result = match replayer.page(site, url) {
                Ok(line) => match (&line.page, &line.error) {
                    (Some(page), _) => serde_json::from_value::<ReadPage>(page.clone())
                        .map(Arc::new)
                        .map_err(|e| format!("the transcript's page is unreadable ({e})")),
                    (None, error) => Err(error.clone().unwrap_or_default()),
                },
                Err(diverged) => Err(diverged.to_string()),
            };
            (result, "transcript")
        }
        None => {
            let (result, served) = pages.reader.read(url, pages.cache, observer).await;
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
            replayed: tape.replayer.is_some(),
        }));
    }
    Read {
        hit,
        url: url.to_string(),
        result,
        from,
    }
}
