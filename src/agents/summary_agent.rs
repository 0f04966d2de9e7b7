//! The summary sub-agent: synthesises earlier results into `summary` and `<info type="llm">`.
//! In final mode it writes the report, citing a numbered source list, and removes citations
//! that point at no source and any sources list of its own. What it keeps of a model's answer
//! has no control characters. It does not touch the plan file.

use super::ask::{ask_json, ask_text};
use super::citations;
use super::final_sources::source_list;
use super::quality;
use super::task::{
    CITE_LAST, NO_SOURCES, SOURCES_LABEL, TaskError, TaskInput, TaskOutput, WRITTEN_SCHEMA,
    parse_written,
};
use crate::llm::CallObserver;
use crate::llm::{LlmClient, Want};
use crate::plan::{Info, QualityFinding, Source};
use crate::settings::Prompt;
use crate::transcript::Site;

/// Token limit of an intermediate summary, unless the role sets `maxTokens`.
pub const SUMMARY_MAX_TOKENS: u32 = Prompt::Summary.max_tokens();

/// Token limit of the final report, unless the role sets `maxTokens`.
pub const FINAL_MAX_TOKENS: u32 = Prompt::Final.max_tokens();

pub struct SummaryAgent<'a> {
    pub llm: &'a LlmClient,
    pub summary_prompt: &'a str,
    pub final_prompt: &'a str,
}

impl SummaryAgent<'_> {
    /// An intermediate summary task.
    pub async fn run(
        &self,
        input: &TaskInput,
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        let site = Site::node(input.node_id.to_string());
        let user = input.message();
        let first = ask_json(
            self.llm,
            &site,
            self.summary_prompt,
            user.clone(),
            &WRITTEN_SCHEMA,
            SUMMARY_MAX_TOKENS,
            observer,
        )
        .await?;
        let judge = |answer: &str| {
            quality::echoes(answer, self.summary_prompt)
                .into_iter()
                .chain(quality::restates_written(answer, input))
                .collect()
        };
        let (answer, quality) = quality::repaired(
            self.llm,
            &site,
            (self.summary_prompt, &user),
            first,
            Want::Json(&WRITTEN_SCHEMA),
            SUMMARY_MAX_TOKENS,
            observer,
            &judge,
        )
        .await?;
        let (summary, analysis) = parse_written(&answer.content);
        let mut info = Info::default();
        info.set("llm", analysis);
        Ok(TaskOutput {
            summary,
            info,
            sources: Vec::new(),
            usage: answer.usage,
            truncated: answer.truncated,
            quality,
            ..Default::default()
        })
    }

    /// The final summary: a Markdown report citing `sources` by number. The node keeps the
    /// whole numbered list as its `sources`, so `[n]` is `sources[n - 1]`.
    pub async fn run_final(
        &self,
        input: &TaskInput,
        sources: &[Source],
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        let list = match source_list(sources, &input.question) {
            list if list.is_empty() => format!("{NO_SOURCES}\n"),
            list => format!("{list}\n{CITE_LAST}\n"),
        };
        let user = format!("{}\n{SOURCES_LABEL}\n{list}", input.message());
        let site = Site::node(input.node_id.to_string());
        let first = ask_text(
            self.llm,
            &site,
            self.final_prompt,
            user.clone(),
            FINAL_MAX_TOKENS,
            observer,
        )
        .await?;
        let judge = |answer: &str| -> Vec<QualityFinding> {
            let report = as_cited(answer, sources);
            quality::echoes(answer, self.final_prompt)
                .into_iter()
                .chain(quality::uncited(&report, sources.len()))
                .chain(quality::without_prose(&report))
                .chain(quality::restates(&report, &[&input.question, &input.title]))
                .collect()
        };
        let (answer, quality) = quality::repaired(
            self.llm,
            &site,
            (self.final_prompt, &user),
            first,
            Want::Text,
            FINAL_MAX_TOKENS,
            observer,
            &judge,
        )
        .await?;
        let (report, _cited) = citations::clean(&as_cited(&answer.content, sources), sources.len());
        let mut info = Info::default();
        info.set("llm", report.clone());
        Ok(TaskOutput {
            summary: report,
            info,
            sources: sources.to_vec(),
            usage: answer.usage,
            truncated: answer.truncated,
            quality,
            ..Default::default()
        })
    }
}

/// A final report as it is kept: without control characters and without a sources list the
/// model wrote itself, a numbered source's URL where its marker belongs read as the marker.
fn as_cited(answer: &str, sources: &[Source]) -> String {
    let report = citations::strip_sources_section(crate::text::strip_controls(answer).trim());
    let urls: Vec<&str> = sources.iter().map(|s| s.url.as_str()).collect();
    citations::urls_as_markers(&report, &urls)
}
