//! [`SearchClient`]: the configured search providers behind one `search` call. One provider
//! answers alone; several (e.g. `["local", "searxng"]`) are asked together and their results
//! merged by reciprocal rank fusion and deduplicated by URL ([`super::fusion`]). One provider
//! failing does not fail the search: its error is logged and the others' results stand;
//! only when every provider fails does the search fail (with an unusable provider's error
//! first, so that the run can stop on it).
//!
//! The local provider is the corpus index ([`super::local`]), opened (built or updated) when
//! the client is made, and searched on a blocking thread.

use std::sync::Arc;

use super::fusion::reciprocal_rank_fusion;
use super::local::extract::Reading;
use super::local::report::Steps;
use super::local::{IndexReport, LocalIndex};
#[cfg(feature = "mcp")]
use super::mcp::McpSearch;
use super::web::WebSearch;
use super::{SearchConfigError, SearchError, SearchHit};
use crate::embed::Embedder;
use crate::http::{Gates, RetryObserver};
use crate::isolate::Parsing;
use crate::settings::{SearchProviderKind, Settings};

/// One provider of the client.
#[derive(Clone)]
enum Provider {
    /// Boxed: a web provider's client is large beside an `Arc`.
    Web(Box<WebSearch>),
    Local(Arc<LocalIndex>),
    /// Shared: its server's connection serves every clone of the client.
    #[cfg(feature = "mcp")]
    Mcp(Arc<McpSearch>),
}

/// The configured search providers.
#[derive(Clone)]
pub struct SearchClient {
    providers: Vec<Provider>,
    max_results: usize,
    /// What opening the local index did, when there is one.
    index_report: Option<IndexReport>,
}

impl std::fmt::Debug for SearchClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchClient")
            .field("providers", &self.provider_name())
            .field("max_results", &self.max_results)
            .finish()
    }
}

impl SearchClient {
    /// The configured providers, in order; `None` when there is none. Opens (builds or
    /// updates) the local index, which can take a while on first use: call it off the async
    /// threads. The web provider gets a gate of its own, and the corpus is parsed in this
    /// process (for callers that trust it); [`SearchClient::with_gates`] shares the process's
    /// gates and parser processes.
    pub fn new(
        http: reqwest::Client,
        settings: &Settings,
    ) -> Result<Option<SearchClient>, SearchConfigError> {
        let steps = Steps::default();
        SearchClient::with_gates(http, settings, &Gates::new(), &Parsing::InProcess, &steps)
    }

    /// [`SearchClient::new`], the web provider's gate taken from `gates` (shared by the
    /// process), corpus files parsed as `parsing` says, `steps` told how the index's open goes.
    pub fn with_gates(
        http: reqwest::Client,
        settings: &Settings,
        gates: &Gates,
        parsing: &Parsing,
        steps: &Steps,
    ) -> Result<Option<SearchClient>, SearchConfigError> {
        let search = &settings.search;
        let mut providers = Vec::new();
        let mut index_report = None;
        for kind in &search.providers {
            match kind {
                SearchProviderKind::Local => {
                    let corpus =
                        search
                            .corpus
                            .as_deref()
                            .ok_or_else(|| SearchConfigError::NoCorpus {
                                path: settings.config_path.display().to_string(),
                            })?;
                    let embedder = match &search.embeddings_model {
                        Some(dir) => Some(Arc::new(Embedder::load(dir).map_err(|source| {
                            SearchConfigError::Embeddings {
                                path: settings.config_path.display().to_string(),
                                source,
                            }
                        })?)),
                        None => None,
                    };
                    let reading = Reading {
                        parsing: parsing.clone(),
                        timeout: settings.documents.timeout,
                        steps: steps.clone(),
                    };
                    let (index, report) = LocalIndex::open_with(
                        corpus,
                        search.index_dir.as_deref(),
                        embedder,
                        &reading,
                    )?;
                    index_report = Some(report);
                    providers.push(Provider::Local(Arc::new(index)));
                }
                SearchProviderKind::None => {}
                #[cfg(feature = "mcp")]
                SearchProviderKind::Mcp => {
                    if let Some(mcp) = McpSearch::new(http.clone(), settings) {
                        providers.push(Provider::Mcp(Arc::new(mcp)));
                    }
                }
                // Refused when the settings are resolved, before any client is made.
                #[cfg(not(feature = "mcp"))]
                SearchProviderKind::Mcp => {}
                SearchProviderKind::Web(_) => {
                    if let Some(web) = WebSearch::new(http.clone(), settings, gates)? {
                        providers.push(Provider::Web(Box::new(web)));
                    }
                }
            }
        }
        if providers.is_empty() {
            return Ok(None);
        }
        Ok(Some(SearchClient {
            providers,
            max_results: usize::try_from(search.max_results).unwrap_or(5),
            index_report,
        }))
    }

    /// The providers' names joined with `+`, e.g. `local+searxng`.
    pub fn provider_name(&self) -> String {
        self.providers
            .iter()
            .map(|p| match p {
                Provider::Web(w) => w.provider_name(),
                Provider::Local(_) => "local",
                #[cfg(feature = "mcp")]
                Provider::Mcp(_) => "mcp",
            })
            .collect::<Vec<_>>()
            .join("+")
    }

    /// The local corpus index, when `local` is one of the providers.
    pub fn local_index(&self) -> Option<Arc<LocalIndex>> {
        self.providers.iter().find_map(|p| match p {
            Provider::Local(index) => Some(Arc::clone(index)),
            _ => None,
        })
    }

    /// The MCP search tool, when `mcp` is one of the providers.
    #[cfg(feature = "mcp")]
    pub fn mcp(&self) -> Option<Arc<McpSearch>> {
        self.providers.iter().find_map(|p| match p {
            Provider::Mcp(mcp) => Some(Arc::clone(mcp)),
            _ => None,
        })
    }

    /// What opening the local index did (documents read, warnings).
    pub fn index_report(&self) -> Option<&IndexReport> {
        self.index_report.as_ref()
    }

    /// Runs one query on every provider and returns at most `search.maxResults` hits.
    pub async fn search(
        &self,
        query: &str,
        observer: &dyn RetryObserver,
    ) -> Result<Vec<SearchHit>, SearchError> {
        if let [only] = self.providers.as_slice() {
            return self.search_one(only, query, observer).await;
        }
        let results = futures_util::future::join_all(
            self.providers
                .iter()
                .map(|p| self.search_one(p, query, observer)),
        )
        .await;
        let mut lists = Vec::new();
        let mut errors = Vec::new();
        for result in results {
            match result {
                Ok(hits) => lists.push(hits),
                Err(e) => errors.push(e),
            }
        }
        if lists.is_empty() && !errors.is_empty() {
            errors.sort_by_key(|e| !e.is_unusable());
            return Err(errors.swap_remove(0));
        }
        for e in errors {
            tracing::warn!("one search provider failed, the others' results stand: {e}");
        }
        Ok(reciprocal_rank_fusion(&lists, self.max_results))
    }

    async fn search_one(
        &self,
        provider: &Provider,
        query: &str,
        observer: &dyn RetryObserver,
    ) -> Result<Vec<SearchHit>, SearchError> {
        match provider {
            Provider::Web(web) => web.search(query, observer).await,
            #[cfg(feature = "mcp")]
            Provider::Mcp(mcp) => mcp.search(query, observer).await,
            Provider::Local(index) => {
                let (index, query, limit) =
                    (Arc::clone(index), query.to_string(), self.max_results);
                let hits = tokio::task::spawn_blocking(move || index.search(&query, limit))
                    .await
                    .map_err(|e| SearchError::Local(e.to_string()))?
                    .map_err(|e| SearchError::Local(e.to_string()))?;
                Ok(hits.iter().map(|h| h.to_search_hit()).collect())
            }
        }
    }
}
