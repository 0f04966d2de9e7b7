//! [`Services`]: what a process builds once and every command that calls models or searches
//! shares: the settings, the HTTP pool, the rate budget of every endpoint (its gates), what
//! each endpoint was found to accept (the negotiator), the prompts, the search client with
//! its local index, the reader of the pages behind web results, and the transcript a replay
//! answers from. A command builds them with
//! [`Services::new`] and hands them on; nothing else wires an HTTP client or a gate.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::http::Gates;
use crate::isolate::Parsing;
use crate::llm::{LlmClient, Negotiator};
use crate::prompts::Prompts;
use crate::read::reader::Reader;
use crate::search::SearchClient;
use crate::search::local::IndexReport;
use crate::search::local::report::Steps;
use crate::settings::{Role, Settings};
use crate::transcript::{Recorder, Replayer, SessionLine, Tape};

/// Why the services (or a run's part of them) could not be built: nothing ran.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A setting, a file or an endpoint that cannot be used as configured: the user's to fix.
    #[error(transparent)]
    Config(anyhow::Error),
    /// The machine failed: an HTTP stack that cannot start, a thread that died.
    #[error(transparent)]
    Failure(anyhow::Error),
}

impl SetupError {
    /// A setting, a file or an endpoint to fix.
    pub fn config(error: impl Into<anyhow::Error>) -> SetupError {
        SetupError::Config(error.into())
    }

    /// The machine failed.
    pub fn failure(error: impl Into<anyhow::Error>) -> SetupError {
        SetupError::Failure(error.into())
    }
}

/// What every run of one process shares.
pub struct Services {
    pub settings: Settings,
    pub http: reqwest::Client,
    /// One rate budget per endpoint for every call of every run.
    pub gates: Arc<Gates>,
    /// One per process: a refusal learnt by one run serves every run.
    pub negotiator: Arc<Negotiator>,
    pub prompts: Prompts,
    /// `None` without any search provider.
    pub search: Option<SearchClient>,
    /// Reads the pages behind web results, once each for every run of the process; `None`
    /// without a web provider or with `search.read.pages` 0.
    pub reader: Option<Arc<Reader>>,
    /// The transcript that answers every call instead of the servers (`--replay`).
    pub replay: Option<Arc<Replayer>>,
    /// The parser processes of every web page and corpus file the process reads.
    pub parsing: Parsing,
}

impl Services {
    /// Loads the prompts, builds the HTTP pool and the search client (opening, building or
    /// updating the local index off the async threads): everything resolved before any run
    /// starts, so a bad setting stops the command before any work.
    pub async fn new(
        settings: Settings,
        replay: Option<Arc<Replayer>>,
        steps: Steps,
    ) -> Result<Services, SetupError> {
        Services::with_gates(settings, replay, Gates::new(), steps).await
    }

    /// [`Services::new`] with `gates` as every endpoint's rate budget (a queue worker's,
    /// shared with the other workers through the queue's database).
    pub async fn with_gates(
        settings: Settings,
        replay: Option<Arc<Replayer>>,
        gates: Gates,
        steps: Steps,
    ) -> Result<Services, SetupError> {
        let mut services = Services::bare(settings)?;
        services.gates = Arc::new(gates);
        services.search = search_client(&services, steps).await?;
        services.reader = reader(&services)?;
        services.replay = replay;
        Ok(services)
    }

    /// Everything but the search client, for a command that calls models alone (`plan` with a
    /// model, `review`, `doctor`): no corpus is indexed for nothing.
    pub fn bare(settings: Settings) -> Result<Services, SetupError> {
        let prompts = Prompts::load(settings.prompts_dir.as_deref()).map_err(SetupError::config)?;
        let http = crate::http::client().map_err(SetupError::failure)?;
        let negotiator = Arc::new(Negotiator::new(settings.structured_output));
        let parsing = Parsing::isolated(settings.documents.memory_mb);
        Ok(Services {
            settings,
            http,
            gates: Arc::new(Gates::new()),
            negotiator,
            prompts,
            search: None,
            reader: None,
            replay: None,
            parsing,
        })
    }

    /// Services for another run's settings (another corpus, offline) that share this
    /// process's HTTP pool, rate budgets and negotiation: a server whose calls each resolve
    /// their own run settings builds its runs' services here, its search client (a corpus
    /// index brought up to date, an MCP search server) its own; their documents are parsed by
    /// this process's parsers (within the first settings' `documents.memoryMb`).
    pub async fn with_settings(&self, settings: Settings) -> Result<Services, SetupError> {
        let prompts = Prompts::load(settings.prompts_dir.as_deref()).map_err(SetupError::config)?;
        let mut services = Services {
            settings,
            http: self.http.clone(),
            gates: Arc::clone(&self.gates),
            negotiator: Arc::clone(&self.negotiator),
            prompts,
            search: None,
            reader: None,
            replay: None,
            parsing: self.parsing.clone(),
        };
        services.search = search_client(&services, Steps::default()).await?;
        services.reader = reader(&services)?;
        Ok(services)
    }

    /// A client of `role`'s endpoint, sharing the process's negotiation and rate budgets, its
    /// calls on `tape`; an endpoint that cannot be used as configured is a usage error.
    pub fn llm(&self, role: Role, tape: &Tape) -> Result<LlmClient, SetupError> {
        LlmClient::new(
            self.http.clone(),
            &self.settings,
            role,
            Arc::clone(&self.negotiator),
            &self.gates,
        )
        .map(|client| client.with_tape(tape.clone()))
        .map_err(SetupError::config)
    }

    /// A run's tape: its calls recorded at `path` under a new `session` line, and answered
    /// from the replayed transcript when there is one.
    pub fn tape(&self, path: &Path, session: SessionLine) -> Result<Tape, SetupError> {
        self.tape_replaying(path, session, self.replay.clone(), None)
    }

    /// [`Services::tape`], answered from `replay` (one run's own transcript) instead of the
    /// process's, each line recorded handed to `tee` too (a queue worker's writer).
    pub fn tape_replaying(
        &self,
        path: &Path,
        mut session: SessionLine,
        replay: Option<Arc<Replayer>>,
        tee: Option<crate::atomic::Tee>,
    ) -> Result<Tape, SetupError> {
        session.replay_of = replay.as_ref().map(|r| r.path().display().to_string());
        let recorder =
            Recorder::open(path, session, self.settings.secrets(), tee).map_err(|e| {
                SetupError::config(anyhow::anyhow!(
                    "cannot open the transcript `{}`: {e}",
                    path.display()
                ))
            })?;
        Ok(Tape {
            recorder: Some(Arc::new(recorder)),
            replayer: replay,
            salvage: None,
        })
    }

    /// The corpus folder the local index searches, when there is one.
    pub fn corpus(&self) -> Option<PathBuf> {
        self.search
            .as_ref()
            .and_then(SearchClient::local_index)
            .map(|index| index.corpus().to_path_buf())
    }

    /// What opening the local index did; `None` without one.
    pub fn index_report(&self) -> Option<&IndexReport> {
        self.search.as_ref()?.index_report()
    }

    /// The `file://` URL of the corpus folder (ending in `/`), whose documents a report may
    /// link to.
    pub fn corpus_url(&self) -> Option<String> {
        self.corpus().map(|dir| {
            let url = crate::search::local::url::file_url(&dir.to_string_lossy());
            format!("{}/", url.trim_end_matches('/'))
        })
    }
}

/// A run's first `session` line: its version, workflow id, question and round limit.
pub fn session(workflow_id: &str, query: &str, max_rounds: Option<u32>) -> SessionLine {
    SessionLine {
        session: 0,
        at: crate::clock::now_millis(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        workflow_id: workflow_id.to_string(),
        query: query.to_string(),
        max_rounds,
        replay_of: None,
    }
}

/// The page reader of the settings: with a web provider and `search.read.pages` over 0. Its
/// hosts' gates are the services' gates.
fn reader(services: &Services) -> Result<Option<Arc<Reader>>, SetupError> {
    let search = &services.settings.search;
    if search.web_provider().is_none() || search.read.pages == 0 {
        return Ok(None);
    }
    let reader = Reader::new(
        search.read.clone(),
        services.settings.retry,
        Arc::clone(&services.gates),
        services.parsing.clone(),
    )
    .map_err(SetupError::failure)?;
    Ok(Some(Arc::new(reader)))
}

/// The search client of the settings (`None` without any provider), its web provider's gate
/// from the services' gates. A local index is opened here, on a blocking thread; what it did
/// is logged, and its warnings too.
async fn search_client(
    services: &Services,
    steps: Steps,
) -> Result<Option<SearchClient>, SetupError> {
    let (http, settings, gates, parsing) = (
        services.http.clone(),
        services.settings.clone(),
        Arc::clone(&services.gates),
        services.parsing.clone(),
    );
    let client = tokio::task::spawn_blocking(move || {
        SearchClient::with_gates(http, &settings, &gates, &parsing, &steps)
    })
    .await
    .map_err(SetupError::failure)?
    .map_err(SetupError::config)?;
    if let Some(report) = client.as_ref().and_then(SearchClient::index_report) {
        for w in &report.warnings {
            tracing::warn!("corpus: {w}");
        }
        let meaning = match &report.embedded {
            Some(e) => format!(
                "; ranked by words and meaning ({}: {} chunk(s), {} document(s) embedded now)",
                e.model, e.chunks, e.documents
            ),
            None => "; ranked by words only (`--meaning MODEL_DIR` or `search.embeddings.model` ranks by meaning too)"
                .to_string(),
        };
        tracing::info!(
            "local index: {} document(s); {} read, {} added, {} updated, {} removed, {} unchanged{}{meaning}",
            report.documents,
            report.read,
            report.added,
            report.updated,
            report.removed,
            report.unchanged,
            skipped_note(&report.skipped)
        );
    }
    Ok(client)
}

/// `; skipped: 5 .png, 2 .so` (most first), or nothing when every file was indexed.
fn skipped_note(skipped: &BTreeMap<String, usize>) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut counts: Vec<(&String, &usize)> = skipped.iter().collect();
    counts.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let named: Vec<String> = counts.iter().map(|(t, n)| format!("{n} {t}")).collect();
    format!("; skipped: {}", named.join(", "))
}
