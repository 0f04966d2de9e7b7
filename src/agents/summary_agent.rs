//! The summary sub-agent: synthesises earlier results into `summary` and `<info type="llm">`.
//! In final mode it writes the report, citing a numbered source list, and removes citations
//! that point at no source. It does not touch the plan file.

use super::citations;
use super::task::{TaskError, TaskInput, TaskOutput, parse_written, written_schema};
use crate::http::RetryObserver;
use crate::llm::{LlmClient, Want};
use crate::plan::{Info, Source};

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
        observer: &dyn RetryObserver,
    ) -> Result<TaskOutput, TaskError> {
        let schema = written_schema();
        let want = Want::Json {
            name: "summary",
            schema: &schema,
        };
        let answer = self
            .llm
            .ask(self.summary_prompt, input.message(), want, observer)
            .await?;
        let (summary, analysis) = parse_written(&answer.content);
        let mut info = Info::default();
        info.set("llm", analysis);
        Ok(TaskOutput {
            summary,
            info,
            sources: Vec::new(),
            usage: answer.usage,
        })
    }

    /// The final summary: a Markdown report citing `sources` by number. The node keeps the
    /// whole numbered list as its `sources`, so `[n]` is `sources[n - 1]`.
    pub async fn run_final(
        &self,
        input: &TaskInput,
        sources: &[Source],
        observer: &dyn RetryObserver,
    ) -> Result<TaskOutput, TaskError> {
        let mut list = String::new();
        for (i, s) in sources.iter().enumerate() {
            list.push_str(&format!("[{}] {} — {}\n", i + 1, s.title.trim(), s.url));
        }
        if list.is_empty() {
            list.push_str("(no sources: the searches returned none; cite nothing)\n");
        }
        let user = format!("{}\nNumbered sources:\n{list}", input.message());
        let answer = self
            .llm
            .ask(self.final_prompt, user, Want::Text, observer)
            .await?;
        let (report, _cited) = citations::clean(answer.content.trim(), sources.len());
        let mut info = Info::default();
        info.set("llm", report.clone());
        Ok(TaskOutput {
            summary: report,
            info,
            sources: sources.to_vec(),
            usage: answer.usage,
        })
    }
}
