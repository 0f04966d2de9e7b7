//! Which sub-agent runs a task: the [`TaskRunner`] the workflow engine calls, and [`Agents`],
//! the runner that dispatches to the search and summary sub-agents over an LLM.
//!
//! The engine knows only the trait, so another runner (a test's, or one that needs no model)
//! can stand in without the engine changing.

use std::future::Future;
use std::sync::Arc;

use super::claims;
use super::reading::Passages;
use super::search_agent::SearchAgent;
use super::summary_agent::SummaryAgent;
use super::task::{TaskError, TaskInput, TaskOutput};
use super::verifier::Verifier;
use crate::llm::CallObserver;
use crate::llm::LlmClient;
use crate::plan::NodeType;
use crate::prompts::Prompts;
use crate::read::cache::PageCache;
use crate::read::reader::Reader;
use crate::search::SearchClient;
use crate::settings::Prompt;
use crate::transcript::{Site, Tape};

/// Runs one task to its output. Called from spawned tasks, hence `Send + Sync + 'static`.
pub trait TaskRunner: Send + Sync + 'static {
    fn run(
        &self,
        input: &TaskInput,
        observer: &dyn CallObserver,
    ) -> impl Future<Output = Result<TaskOutput, TaskError>> + Send;
}

/// The LLM clients and search client the sub-agents use.
pub struct Agents {
    pub search_llm: LlmClient,
    pub summary_llm: LlmClient,
    pub search: Option<SearchClient>,
    /// Reads the pages behind web results (`search.read`), when configured.
    pub reader: Option<Arc<Reader>>,
    /// Where pages read are kept for the next run (beside the plan).
    pub page_cache: Option<PageCache>,
    /// The most characters of passages one task's analysis is shown (`search.read.passageChars`).
    pub passage_chars: usize,
    pub prompts: Prompts,
    /// The run's transcript: searches are recorded on it (or replayed from it).
    pub tape: Tape,
    /// The share of a claim's content words its sources must hold (`claims.threshold`).
    pub claims_threshold: f64,
    /// Judges the claims the content-word check leaves unsupported, when configured.
    pub verifier: Option<Verifier>,
}

impl TaskRunner for Agents {
    async fn run(
        &self,
        input: &TaskInput,
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        let summary = SummaryAgent {
            llm: &self.summary_llm,
            summary_prompt: &self.prompts[Prompt::Summary],
            final_prompt: &self.prompts[Prompt::Final],
            claims_threshold: self.claims_threshold,
        };
        let mut out = match (&input.final_sources, input.kind) {
            (Some(sources), _) => summary.run_final(input, sources, observer).await?,
            (None, NodeType::Search) => {
                SearchAgent {
                    llm: &self.search_llm,
                    search: self.search.as_ref(),
                    queries_prompt: &self.prompts[Prompt::SearchQueries],
                    analysis_prompt: &self.prompts[Prompt::SearchAnalysis],
                    tape: &self.tape,
                    passages: Passages {
                        reader: self.reader.as_deref(),
                        cache: self.page_cache.as_ref(),
                        budget: self.passage_chars,
                    },
                }
                .run(input, observer)
                .await?
            }
            // A summary task is given no numbered sources: it has nothing to cite.
            (None, _) => return summary.run(input, observer).await,
        };
        // A search task's numbers are its results, the final report's its numbered sources:
        // either way the output's `sources`.
        out.claims = claims::check(&out.summary, &out.sources, self.claims_threshold);
        if let Some(verifier) = &self.verifier {
            let site = Site::node(input.node_id.to_string());
            let cost = verifier
                .judge(&site, &mut out.claims, &out.sources, observer)
                .await;
            out.usage.add(cost);
        }
        Ok(out)
    }
}
