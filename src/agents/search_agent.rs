//! The search sub-agent: asks the LLM for search queries, runs them on the configured
//! provider, and asks the LLM to analyse the results.
//!
//! Writes the raw results into `<info type="search">`, the analysis into `<info type="llm">`,
//! the overview into `summary` and the result URLs into `sources`. With provider `none` it works
//! from the LLM alone and writes no search block. It does not touch the plan file.

use std::sync::LazyLock;

use serde_json::{Value, json};

use super::ask::ask_json;
use super::task::{TaskError, TaskInput, TaskOutput, WRITTEN_SCHEMA, parse_written};
use crate::http::RetryObserver;
use crate::llm::{JsonSchema, LlmClient, Usage, extract_json};
use crate::plan::{Info, Source};
use crate::search::{SearchClient, SearchHit};

/// The most queries one task runs.
pub const MAX_QUERIES: usize = 3;

/// Token limit of the queries answer, unless the role sets `maxTokens`.
pub const QUERIES_MAX_TOKENS: u32 = 256;

/// Token limit of the analysis answer, unless the role sets `maxTokens`.
pub const ANALYSIS_MAX_TOKENS: u32 = 2048;

/// `{"queries": [1 to 3 strings]}`.
pub static QUERIES_SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    let schema = |item: Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["queries"],
            "properties": {"queries": {
                "type": "array", "minItems": 1, "maxItems": MAX_QUERIES, "items": item
            }}
        })
    };
    JsonSchema::new("search_queries", schema(json!({"type": "string"}))).with_grammar(schema(
        json!({"type": "string", "minLength": 2, "maxLength": 150}),
    ))
});

pub struct SearchAgent<'a> {
    pub llm: &'a LlmClient,
    pub search: Option<&'a SearchClient>,
    pub queries_prompt: &'a str,
    pub analysis_prompt: &'a str,
}

impl SearchAgent<'_> {
    pub async fn run(
        &self,
        input: &TaskInput,
        observer: &dyn RetryObserver,
    ) -> Result<TaskOutput, TaskError> {
        let mut usage = Usage::default();
        let mut sources = Vec::new();
        let mut search_block = None;

        let results_text = match self.search {
            Some(search) => {
                let queries = self.queries(input, observer, &mut usage).await?;
                let hits = run_queries(search, &queries, observer).await?;
                sources = hits
                    .iter()
                    .map(|h| Source {
                        url: h.url.clone(),
                        title: h.title.clone(),
                    })
                    .collect();
                let block = format_hits(&search.provider_name(), &queries, &hits);
                search_block = Some(block.clone());
                block
            }
            None => "No web search is available for this task: answer from your own knowledge \
                     and say clearly what is uncertain."
                .to_string(),
        };

        let user = format!(
            "{}\nSearch results of this task:\n{results_text}\n",
            input.message()
        );
        let answer = ask_json(
            self.llm,
            self.analysis_prompt,
            user,
            &WRITTEN_SCHEMA,
            ANALYSIS_MAX_TOKENS,
            observer,
        )
        .await?;
        usage.add(answer.usage);
        let (summary, analysis) = parse_written(&answer.content);
        let mut info = Info::default();
        info.set("llm", analysis);
        if let Some(block) = search_block {
            info.set("search", block);
        }
        Ok(TaskOutput {
            summary,
            info,
            sources,
            usage,
            truncated: answer.truncated,
        })
    }

    /// The queries for this task; the task title when the model gives none.
    async fn queries(
        &self,
        input: &TaskInput,
        observer: &dyn RetryObserver,
        usage: &mut Usage,
    ) -> Result<Vec<String>, TaskError> {
        let answer = ask_json(
            self.llm,
            self.queries_prompt,
            input.message(),
            &QUERIES_SCHEMA,
            QUERIES_MAX_TOKENS,
            observer,
        )
        .await?;
        usage.add(answer.usage);
        let mut queries: Vec<String> = extract_json(&answer.content)
            .ok()
            .and_then(|v| v.get("queries").cloned())
            .and_then(|v| match v {
                Value::Array(items) => Some(items),
                _ => None,
            })
            .unwrap_or_default()
            .into_iter()
            .filter_map(|q| q.as_str().map(|s| s.trim().to_string()))
            .filter(|q| !q.is_empty())
            .collect();
        queries.dedup();
        queries.truncate(MAX_QUERIES);
        if queries.is_empty() {
            tracing::warn!(
                "task {}: no usable search queries in the answer; searching the task title",
                input.node_id
            );
            queries.push(input.title.clone());
        }
        Ok(queries)
    }
}

/// Runs the queries one after another; hits are deduplicated by URL. Fails only when every
/// query failed.
pub async fn run_queries(
    search: &SearchClient,
    queries: &[String],
    observer: &dyn RetryObserver,
) -> Result<Vec<SearchHit>, TaskError> {
    let mut hits: Vec<SearchHit> = Vec::new();
    let mut last_error = None;
    let mut succeeded = 0;
    for q in queries {
        match search.search(q, observer).await {
            Ok(found) => {
                succeeded += 1;
                for h in found {
                    if !hits.iter().any(|k| k.url == h.url) {
                        hits.push(h);
                    }
                }
            }
            Err(e) if e.is_unusable() => return Err(TaskError::Unusable(e.to_string())),
            Err(e) => {
                tracing::warn!("search `{q}` failed: {e}");
                last_error = Some(e.to_string());
            }
        }
    }
    match (succeeded, last_error) {
        (0, Some(e)) => Err(TaskError::Search(e)),
        _ => Ok(hits),
    }
}

/// The raw results as text, numbered from 1 in the order the analysis sees them.
pub fn format_hits(provider: &str, queries: &[String], hits: &[SearchHit]) -> String {
    let mut text = format!("provider: {provider}\nqueries: {}\n", queries.join(" | "));
    if hits.is_empty() {
        text.push_str("\n(no results)\n");
    }
    for (i, h) in hits.iter().enumerate() {
        text.push_str(&format!(
            "\n[{}] {}\n{}\n{}\n",
            i + 1,
            h.title.trim(),
            h.url.trim(),
            h.snippet.trim()
        ));
    }
    text
}
