//! A task's searches: its queries one after another, each recorded on the run's tape (or, in
//! a replay, served from it), the hits deduplicated by URL.

use std::time::Instant;

use serde_json::Value;

use super::task::TaskError;
use crate::llm::CallObserver;
use crate::search::{SearchClient, SearchError, SearchHit};
use crate::transcript::{Line, SearchLine, Site, Tape};

/// Runs the queries one after another; hits are deduplicated by URL. Fails only when every
/// query failed, or at once when the provider cannot be used or a replay diverged.
pub async fn run_queries(
    search: &SearchClient,
    tape: &Tape,
    site: &Site,
    queries: &[String],
    observer: &dyn CallObserver,
) -> Result<Vec<SearchHit>, TaskError> {
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut last_error = None;
    let mut succeeded = 0;
    for q in queries {
        match one_search(search, tape, site, q, observer).await? {
            Ok(found) => {
                succeeded += 1;
                for h in found {
                    if !hits.iter().any(|k| k.url == h.url) {
                        hits.push(h);
                    }
                }
            }
            Err(e) => {
                tracing::warn!("search `{q}` failed: {e}");
                last_error = Some(e);
            }
        }
    }
    match (succeeded, last_error) {
        (0, Some(e)) => Err(TaskError::Search(e)),
        _ => Ok(hits),
    }
}

/// One query: from the transcript when replaying (or, resuming, when the interrupted run had
/// its results: [`crate::transcript::Salvage`]), else from the providers, written to the
/// transcript when recording. The outer error stops the task at once; the inner one is this
/// query's failure.
async fn one_search(
    search: &SearchClient,
    tape: &Tape,
    site: &Site,
    query: &str,
    observer: &dyn CallObserver,
) -> Result<Result<Vec<SearchHit>, String>, TaskError> {
    let provider = search.provider_name();
    let salvaged = match (&tape.replayer, &tape.salvage) {
        (None, Some(salvage)) => salvage
            .search(site, tape.peek_search(site), query, &provider)
            .and_then(|line| line.results.clone()),
        _ => None,
    };
    let call = tape.next_search(site);
    let replayed = tape.replayer.is_some() || salvaged.is_some();
    let started = Instant::now();
    let result: Result<Vec<SearchHit>, String> = match (tape.replayer.as_deref(), salvaged) {
        (Some(replayer), _) => {
            let line = replayer
                .search(site, call, query)
                .map_err(|d| TaskError::Diverged(d.to_string()))?;
            match (&line.results, &line.error) {
                (Some(results), _) => Ok(hits_of(results)),
                (None, error) => Err(format!(
                    "{} (as recorded)",
                    error.as_deref().unwrap_or("no results")
                )),
            }
        }
        (None, Some(results)) => {
            tracing::info!(
                "{}: answered by the interrupted run's transcript, not searched again",
                site.describe("search", call)
            );
            Ok(hits_of(&results))
        }
        (None, None) => match search.search(query, observer).await {
            Err(e) if e.is_unusable() => return Err(TaskError::Unusable(e.to_string())),
            other => other.map_err(|e: SearchError| e.to_string()),
        },
    };
    if let Some(recorder) = tape.recorder.as_deref() {
        let line = SearchLine {
            session: recorder.session(),
            at: crate::clock::now_millis(),
            node: site.node.clone(),
            round: site.round,
            call,
            provider,
            query: query.to_string(),
            results: result.as_ref().ok().map(|hits| {
                hits.iter()
                    .map(|h| serde_json::to_value(h).unwrap_or(Value::Null))
                    .collect()
            }),
            error: result.as_ref().err().cloned(),
            latency_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            replayed,
        };
        recorder.write(&Line::Search(line));
    }
    Ok(result)
}

/// The hits of a recorded search.
fn hits_of(results: &[Value]) -> Vec<SearchHit> {
    results
        .iter()
        .filter_map(|h| serde_json::from_value(h.clone()).ok())
        .collect()
}
