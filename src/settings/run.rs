//! The settings of a run: the config file and the environment ([`Settings::load`]), then the
//! run's flags ([`RunArgs`]), merged in one place. Every command that runs workflows
//! (`workflow`, `batch`, and those still to come) resolves its settings here, so a flag has
//! one default, one environment variable and one meaning everywhere.

use std::path::Path;

use super::{EngineKind, RunOptions, SearchProviderKind, Settings, SettingsError};
use crate::cli::{CorpusArgs, Count, RunArgs};

/// Planning rounds of one invocation when neither the flag, its variable, nor a replayed run
/// says.
pub const DEFAULT_MAX_ROUNDS: u32 = 8;
/// Tasks running at once within a workflow, by default.
pub const DEFAULT_CONCURRENCY: u32 = 3;

/// A run's settings: the process's [`Settings`] with the run's flags applied, how the run is
/// bounded, and what a `block` verdict does to the exit code.
#[derive(Debug, Clone)]
pub struct RunSettings {
    pub settings: Settings,
    pub options: RunOptions,
    /// `--fail-on-block`.
    pub fail_on_block: bool,
    /// `--fail-on-unanswered`.
    pub fail_on_unanswered: bool,
}

impl RunSettings {
    /// Merges the config at `config` (else `RESEARCHFLOW_CONFIG`, else `./agent.config.json`), the
    /// environment and `args`; `recorded_rounds` is a replayed run's round limit, used when
    /// neither the flag nor its variable gives one.
    pub fn resolve(
        config: Option<&Path>,
        args: &RunArgs,
        recorded_rounds: Option<u32>,
    ) -> Result<RunSettings, SettingsError> {
        let mut settings = Settings::with_corpus(config, &args.corpus)?;
        if args.review.no_review {
            settings.review = false;
        }
        if args.no_html {
            settings.html = false;
        }
        let bounds = args.bounds;
        let options = RunOptions {
            max_rounds: (bounds.max_rounds.map(Count::count))
                .or(recorded_rounds)
                .unwrap_or(DEFAULT_MAX_ROUNDS),
            concurrency: usize::try_from(args.concurrency.unwrap_or(DEFAULT_CONCURRENCY))
                .unwrap_or(1),
            budget: bounds.budget.or(settings.budget),
        };
        Ok(RunSettings {
            settings,
            options,
            fail_on_block: args.review.fail_on_block,
            fail_on_unanswered: args.fail_on_unanswered,
        })
    }
}

impl Settings {
    /// The settings for a research command: the config file and environment, then the corpus
    /// flags. Offline (`--offline` or `"engine": "offline"`) means no model and no
    /// network: the local corpus is the only provider, and it must be given.
    pub fn with_corpus(
        config: Option<&Path>,
        corpus: &CorpusArgs,
    ) -> Result<Settings, SettingsError> {
        let mut settings = Settings::load(config)?;
        if let Some(dir) = &corpus.corpus {
            settings.search.use_corpus(dir.clone());
        }
        if let Some(dir) = &corpus.index_dir {
            settings.search.index_dir = Some(dir.clone());
        }
        if let Some(dir) = &corpus.meaning {
            settings.search.embeddings_model = Some(dir.clone());
        }
        if corpus.offline {
            settings.engine = EngineKind::Offline;
        }
        if settings.engine != EngineKind::Offline {
            settings.require_llm()?;
            return Ok(settings);
        }
        if settings.search.corpus.is_none() {
            return Err(SettingsError::OfflineWithoutCorpus);
        }
        if settings
            .search
            .providers
            .iter()
            .any(|p| *p != SearchProviderKind::Local)
        {
            tracing::info!("offline: the web search providers are not used, only the corpus");
        }
        settings.search.providers = vec![SearchProviderKind::Local];
        Ok(settings)
    }
}
