//! The summary sub-agent: synthesises earlier results into `summary` and `<info type="llm">`.
//! In final mode it writes the report, citing a numbered source list, and removes citations
//! that point at no source and any sources list of its own. What it keeps of a model's answer
//! has no control characters. It does not touch the plan file.

use super::ask::{Asked, ask_json, ask_text};
use super::citations;
use super::claims;
use super::final_sources::{by_relevance, source_list_within};
use super::quality;
use super::task::{
    CITE_LAST, NO_SOURCES, SOURCES_LABEL, TaskError, TaskInput, TaskOutput, WRITTEN_SCHEMA,
    parse_written,
};
use crate::llm::CallObserver;
use crate::llm::fit::fitted;
use crate::llm::{LlmClient, LlmError, Want};
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
    /// The share of a sentence's content words a source must hold for researchflow to cite
    /// it where the report cites nothing (`claims.threshold`).
    pub claims_threshold: f64,
}

impl SummaryAgent<'_> {
    /// An intermediate summary task.
    pub async fn run(
        &self,
        input: &TaskInput,
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        let prompt = (self.summary_prompt, SUMMARY_MAX_TOKENS);
        let message = |share| input.message_within(share);
        Ok(written(self.llm, prompt, input, message, observer).await?)
    }

    /// The final summary: a Markdown report citing `sources` by number. The node keeps the
    /// whole numbered list as its `sources`, so `[n]` is `sources[n - 1]`.
    pub async fn run_final(
        &self,
        input: &TaskInput,
        sources: &[Source],
        observer: &dyn CallObserver,
    ) -> Result<TaskOutput, TaskError> {
        let site = Site::node(input.node_id.to_string());
        let ranked = by_relevance(sources, &input.question);
        let (first, user, listed) = fitted(
            (self.final_prompt, FINAL_MAX_TOKENS),
            |share| final_message(input, sources, &ranked, share),
            |user| {
                ask_text(
                    self.llm,
                    &site,
                    self.final_prompt,
                    user,
                    FINAL_MAX_TOKENS,
                    observer,
                )
            },
            observer,
        )
        .await?;
        // A model with a shorter context was given the sources that say most about the
        // question: they are the list.
        let sources = &listed[..];
        let judge = |answer: &str| -> Vec<QualityFinding> {
            let (report, _) = as_cited(answer, &input.question, sources, self.claims_threshold);
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
        let (cited, added) = as_cited(
            &answer.content,
            &input.question,
            sources,
            self.claims_threshold,
        );
        let (report, _cited) = citations::clean(&cited, sources.len());
        let report = match added {
            0 => report,
            n => format!("{}\n\n{report}", added_note(n)),
        };
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

/// A `{summary, analysis}` answer (an intermediate summary, a search's analysis) to `prompt`
/// ([`answered`]): the output with the summary, the analysis as `info[llm]`, what it cost and
/// what is still wrong.
pub(super) async fn written(
    llm: &LlmClient,
    prompt: (&str, u32),
    input: &TaskInput,
    message: impl Fn(f64) -> String,
    observer: &dyn CallObserver,
) -> Result<TaskOutput, LlmError> {
    let (answer, quality) = answered(llm, prompt, input, message, observer).await?;
    let (summary, analysis) = parse_written(&answer.content);
    let mut info = Info::default();
    info.set("llm", analysis);
    Ok(TaskOutput {
        summary,
        info,
        usage: answer.usage,
        truncated: answer.truncated,
        quality,
        ..Default::default()
    })
}

/// A `{summary, analysis}` answer to `prompt`, its user message made by `message` of a share of
/// `input` ([`fitted`]), sent back once when it echoes the prompt or restates its task: the
/// answer kept and what is still wrong with it. Thinkon's executors ask through it too.
pub(crate) async fn answered(
    llm: &LlmClient,
    (prompt, max_tokens): (&str, u32),
    input: &TaskInput,
    message: impl Fn(f64) -> String,
    observer: &dyn CallObserver,
) -> Result<(Asked, Vec<QualityFinding>), LlmError> {
    let site = Site::node(input.node_id.to_string());
    let ask = |user| {
        ask_json(
            llm,
            &site,
            prompt,
            user,
            &WRITTEN_SCHEMA,
            max_tokens,
            observer,
        )
    };
    let build = |share| (message(share), ());
    let (first, user, ()) = fitted((prompt, max_tokens), build, ask, observer).await?;
    let judge = |answer: &str| {
        quality::echoes(answer, prompt)
            .into_iter()
            .chain(quality::restates_written(answer, input))
            .collect()
    };
    let want = Want::Json(&WRITTEN_SCHEMA);
    quality::repaired(
        llm,
        &site,
        (prompt, &user),
        first,
        want,
        max_tokens,
        observer,
        &judge,
    )
    .await
}

/// The final summary's user message with `share` of its earlier results and sources
/// ([`source_list_within`], taking them in `ranked` order), and the sources it lists.
fn final_message(
    input: &TaskInput,
    sources: &[Source],
    ranked: &[usize],
    share: f64,
) -> (String, Vec<Source>) {
    let (list, listed) = source_list_within(sources, &input.question, ranked, share);
    let list = match list {
        list if list.is_empty() => format!("{NO_SOURCES}\n"),
        list => format!("{list}\n{CITE_LAST}\n"),
    };
    let user = format!("{}\n{SOURCES_LABEL}\n{list}", input.message_within(share));
    (user, listed)
}

/// A final report as it is kept: without control characters and without a sources list the
/// model wrote itself, a numbered source's URL where its marker belongs read as the marker, and
/// a citation added where a sentence cites nothing and one source holds most of its words
/// beyond what `question` asks ([`claims::cite_supported`] at `threshold`); with how many were
/// added.
fn as_cited(answer: &str, question: &str, sources: &[Source], threshold: f64) -> (String, usize) {
    let report = citations::strip_sources_section(crate::text::strip_controls(answer).trim());
    let urls: Vec<&str> = sources.iter().map(|s| s.url.as_str()).collect();
    let report = citations::urls_as_markers(&report, &urls);
    claims::cite_supported(&report, question, sources, threshold)
}

/// What the report says of the `n` citations researchflow added: not the model's.
fn added_note(n: usize) -> String {
    let (which, each) = match n {
        1 => ("one sentence".to_string(), "to"),
        n => (format!("{n} sentences"), "each to"),
    };
    format!(
        "_researchflow cited {which} the model left uncited, {each} the source that holds most \
         of the words it adds to the question._"
    )
}
