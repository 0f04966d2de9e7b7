//! The research executors: `search: <query>` and `summarize: <instruction>`, run by the
//! search and summary sub-agents' parts ([`crate::agents`]): the query goes through the
//! workflow's own search step ([`SearchStep`]: the providers, the reader, the passages, the
//! results block, the sources with their snippets and passages), and the agent's analysis
//! prompt reads them; `summarize` has the summary prompt synthesise what the block's parent has
//! done. Each asks as the workflow's tasks do ([`answered`]): a share of its input when the
//! model's context is too short for all of it, and once more when the answer echoes the prompt
//! or restates its task.
//!
//! With search provider `none` the analysis comes from the model alone, and the observation
//! says so (`"search": "none: ..."`).

use serde_json::{Value, json};

use super::context::render_done;
use super::plan_next::Spent;
use crate::agents::ask::Asked;
use crate::agents::reading::Passages;
use crate::agents::search_agent::{ANALYSIS_MAX_TOKENS, Gathered, SearchStep};
use crate::agents::summary_agent::{SUMMARY_MAX_TOKENS, answered};
use crate::agents::task::{TaskError, TaskInput, parse_written};
use crate::llm::{CallObserver, LlmClient};
use crate::plan::{NodeId, NodeType};
use crate::search::SearchClient;
use crate::transcript::{Site, Tape};

/// The longest output an observation keeps.
pub const OUTPUT_MAX_CHARS: usize = 8_000;

/// The observation's `search` when no provider is configured.
const NO_PROVIDER: &str = "none: no search provider is configured (`search.provider`), so this \
                           answer comes from the model alone";

/// The longest text of one earlier result `summarize` reads.
const DONE_ENTRY_MAX_CHARS: usize = 3_000;

/// What the search-backed executors need.
pub struct SubAgents<'a> {
    pub search_llm: &'a LlmClient,
    pub summary_llm: &'a LlmClient,
    pub search: Option<&'a SearchClient>,
    /// Where the passages of the results come from (`search.read`).
    pub passages: Passages<'a>,
    pub tape: &'a Tape,
    pub analysis_prompt: &'a str,
    pub summary_prompt: &'a str,
}

/// A research executor's observation: `output`, `sources`, and the search provider used.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub output: String,
    pub sources: Vec<Value>,
    pub search: Option<String>,
}

impl SubAgents<'_> {
    /// Runs `query` and has the results analysed.
    pub async fn search(
        &self,
        block: NodeId,
        question: &str,
        query: &str,
        spent: &mut Spent,
        observer: &dyn CallObserver,
    ) -> Result<Found, TaskError> {
        let site = Site::node(block.to_string());
        let input = task_input(block, NodeType::Search, query, question, String::new());
        let (gathered, provider) = match self.search {
            Some(search) => {
                let step = SearchStep {
                    search,
                    passages: self.passages,
                    tape: self.tape,
                    site: &site,
                };
                let queries = [query.to_string()];
                let gathered = step.gather(&queries, &input, observer).await?;
                (gathered, search.provider_name())
            }
            None => (Gathered::without_search(), NO_PROVIDER.to_string()),
        };
        let prompt = (self.analysis_prompt, ANALYSIS_MAX_TOKENS);
        let message = |share| gathered.message(&input, share);
        let (answer, _) = answered(self.search_llm, prompt, &input, message, observer).await?;
        let answer = observation(answer, spent);
        let sources = gathered.sources.iter().map(|s| json!(s)).collect();
        Ok(Found {
            output: answer,
            sources,
            search: Some(provider),
        })
    }

    /// A synthesis of `done` (the parent's results) following `instruction`.
    pub async fn summarize(
        &self,
        block: NodeId,
        question: &str,
        instruction: &str,
        done: &[Value],
        spent: &mut Spent,
        observer: &dyn CallObserver,
    ) -> Result<Found, TaskError> {
        let context = render_done(done, DONE_ENTRY_MAX_CHARS);
        let input = task_input(block, NodeType::Summary, instruction, question, context);
        let prompt = (self.summary_prompt, SUMMARY_MAX_TOKENS);
        let message = |share| input.message_within(share);
        let (answer, _) = answered(self.summary_llm, prompt, &input, message, observer).await?;
        let answer = observation(answer, spent);
        Ok(Found {
            output: answer,
            sources: Vec::new(),
            search: None,
        })
    }
}

/// What a `{summary, analysis}` answer tells the planner: `summary`, a blank line, `analysis`
/// (the one alone when the other is empty or holds it); its calls and cost added to `spent`.
fn observation(answer: Asked, spent: &mut Spent) -> String {
    spent.add_calls(answer.calls, answer.usage);
    let (summary, analysis) = parse_written(&answer.content);
    let text = match (summary.trim(), analysis.trim()) {
        (s, "") => s.to_string(),
        ("", a) => a.to_string(),
        (s, a) if a.starts_with(s) => a.to_string(),
        (s, a) => format!("{s}\n\n{a}"),
    };
    crate::text::truncate(&text, OUTPUT_MAX_CHARS)
}

fn task_input(
    block: NodeId,
    kind: NodeType,
    title: &str,
    question: &str,
    context: String,
) -> TaskInput {
    TaskInput {
        node_id: block,
        kind,
        title: title.to_string(),
        question: question.to_string(),
        context,
        final_sources: None,
        directions: Vec::new(),
    }
}
