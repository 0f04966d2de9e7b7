//! What `plan` and `workflow` share before any work: the settings with the corpus flags
//! applied, the choice of engine (a model, or extraction over a local corpus without one),
//! and the search client, whose local index is opened (built or updated) off the async
//! threads.

use std::sync::Arc;

use crate::cli::{CorpusArgs, GlobalArgs};
use crate::exit::CommandError;
use crate::http::Gates;
use crate::search::SearchClient;
use crate::settings::{EngineKind, SearchProviderKind, Settings};

/// The settings for a research command: the config file and environment, then the flags.
/// Offline (`--offline` or `"engine": "extractive"`) means no model and no network: the local
/// corpus is the only provider, and it must be given.
pub fn settings(global: &GlobalArgs, corpus: &CorpusArgs) -> Result<Settings, CommandError> {
    let mut settings = Settings::load(global.config.as_deref()).map_err(CommandError::usage)?;
    if let Some(dir) = &corpus.corpus {
        settings.search.use_corpus(dir.clone());
    }
    if let Some(dir) = &corpus.index_dir {
        settings.search.index_dir = Some(dir.clone());
    }
    if corpus.offline {
        settings.engine = EngineKind::Extractive;
    }
    if settings.engine == EngineKind::Extractive {
        if settings.search.corpus.is_none() {
            return Err(CommandError::usage(anyhow::anyhow!(
                "offline research needs a folder of documents: pass `--corpus DIR` or set `search.corpus`"
            )));
        }
        let dropped: Vec<_> = settings
            .search
            .providers
            .iter()
            .filter(|p| **p != SearchProviderKind::Local)
            .collect();
        if !dropped.is_empty() {
            tracing::info!("offline: the web search providers are not used, only the corpus");
        }
        settings.search.providers = vec![SearchProviderKind::Local];
    } else {
        settings.require_llm().map_err(CommandError::usage)?;
    }
    Ok(settings)
}

/// The search client of the settings (`None` without any provider), its web provider's gate
/// from `gates`. A local index is opened here, on a blocking thread; what it did is logged,
/// and its warnings too.
pub async fn search_client(
    http: reqwest::Client,
    settings: &Settings,
    gates: &Arc<Gates>,
) -> Result<Option<SearchClient>, CommandError> {
    let (owned, gates) = (settings.clone(), Arc::clone(gates));
    let client =
        tokio::task::spawn_blocking(move || SearchClient::with_gates(http, &owned, &gates))
            .await
            .map_err(CommandError::failure)?
            .map_err(CommandError::usage)?;
    if let Some(report) = client.as_ref().and_then(SearchClient::index_report) {
        for w in &report.warnings {
            tracing::warn!("corpus: {w}");
        }
        tracing::info!(
            "local index: {} document(s); {} read, {} added, {} updated, {} removed, {} unchanged",
            report.documents,
            report.read,
            report.added,
            report.updated,
            report.removed,
            report.unchanged
        );
    }
    Ok(client)
}
