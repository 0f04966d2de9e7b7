//! What a sub-agent gets and gives: the task input (question, task, resolved `p_node`) and
//! the output that the workflow writes into the node. No I/O here.

use std::sync::LazyLock;

use serde_json::{Value, json};

use crate::llm::{JsonSchema, LlmError, extract_json};
use crate::plan::{Claim, Info, NodeId, NodeType, QualityFinding, Source};
use crate::search::hit::TITLE_MAX_CHARS;
use crate::text::{one_line, strip_controls};
use crate::usage::Usage;

/// Everything a sub-agent needs to run one task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskInput {
    pub node_id: NodeId,
    pub kind: NodeType,
    pub title: String,
    pub question: String,
    /// The task's resolved `p_node` refs, rendered as segments.
    pub context: String,
    /// For the final summary: the numbered sources it may cite. `None` for every other task.
    pub final_sources: Option<Vec<Source>>,
    /// For the final summary: the search tasks that found its sources, in plan order; empty
    /// for every other task.
    pub directions: Vec<Direction>,
}

/// A search task as the final summary sees it: its title, and which of the final sources
/// it found first (0-based indices into `final_sources`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Direction {
    pub title: String,
    pub sources: Vec<usize>,
}

/// The labels of the user message every sub-agent starts from ([`TaskInput::message`]), and of
/// the final summary's list of sources, each opening its line; an answer that repeats one
/// echoes its input ([`super::quality::echoes`]).
pub const INPUT_LABELS: [&str; 6] = [
    "User question:",
    "Task:",
    "Earlier results this task builds on:",
    "Earlier results: none.",
    SEARCHES_AS_SOURCES,
    SOURCES_LABEL,
];

/// The final summary's earlier results when every one was a search whose sources are listed.
pub const SEARCHES_AS_SOURCES: &str =
    "Earlier results: what the searches found is the numbered sources below.";

/// What opens the final summary's numbered list of sources.
pub const SOURCES_LABEL: &str = "Numbered sources:";

/// What closes the final summary's input after its numbered sources: the citation contract
/// said again where a small model reads it last (Qwen2.5-Coder 1.5B cited nothing with it
/// only in the system prompt; local-deep-research ends its prompt so, and that model cited).
pub const CITE_LAST: &str = "Now write the report. Right after each statement, cite the \
    number of the source it comes from in square brackets, as in \"According to [1], ...\" or \
    \"... [2][3].\"; cite only the numbers above.";

/// The final summary's list of sources when there is none; an answer that repeats it echoes
/// its input.
pub const NO_SOURCES: &str = "(no sources: the searches returned none; cite nothing)";

impl TaskInput {
    /// The user message every sub-agent starts from.
    pub fn message(&self) -> String {
        self.message_within(1.0)
    }

    /// The user message with `share` (0 to 1) of the earlier results, cut at their end: what a
    /// model with a shorter context is asked ([`crate::llm::fit::fitted`]).
    pub fn message_within(&self, share: f64) -> String {
        let [question, task, context, no_context, as_sources, _] = INPUT_LABELS;
        let mut text = format!(
            "{question} {}\n\n{task} {}\n",
            self.question.trim(),
            self.title.trim()
        );
        if self.context.trim().is_empty() {
            let none = match &self.final_sources {
                Some(sources) if !sources.is_empty() => as_sources,
                _ => no_context,
            };
            text.push_str(&format!("\n{none}\n"));
        } else {
            let kept = (self.context.chars().count() as f64 * share) as usize;
            text.push_str(&format!("\n{context}\n"));
            text.push_str(&crate::text::truncate(&self.context, kept));
        }
        text
    }
}

/// What a completed task writes into its node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskOutput {
    pub summary: String,
    pub info: Info,
    pub sources: Vec<Source>,
    pub usage: Usage,
    /// The kept answer was cut off by the token limit.
    pub truncated: bool,
    /// The summary's cited sentences, checked against the sources they cite.
    pub claims: Vec<Claim>,
    /// What is wrong with the answer that its repair did not mend.
    pub quality: Vec<QualityFinding>,
}

impl TaskOutput {
    /// The output as the plan keeps it, whichever runner made it (a model's agents, the
    /// offline engine): summary and info without control characters but newlines and
    /// tabs, source titles on one clean line. The engine writes nothing else into a node.
    pub fn cleaned(mut self) -> TaskOutput {
        self.summary = strip_controls(&self.summary);
        self.info.map_text(strip_controls);
        for source in &mut self.sources {
            source.title = one_line(&source.title, TITLE_MAX_CHARS);
        }
        self
    }
}

/// Why a task failed (after the HTTP layer's retries).
#[derive(Debug, Clone, thiserror::Error)]
pub enum TaskError {
    #[error(transparent)]
    Llm(#[from] LlmError),
    #[error("every search failed; last error: {0}")]
    Search(String),
    /// The search provider cannot be used as configured: the run stops.
    #[error("{0}")]
    Unusable(String),
    /// The task did not run, or was cut: the run's budget was spent.
    #[error("not run: {0}")]
    NotRun(String),
    /// The task ran past a bound of its own (the final summary's `--final-time`).
    #[error("timed out: {0}")]
    TimedOut(String),
    /// A replay asked what the transcript does not hold: the run stops.
    #[error("{0}")]
    Diverged(String),
    /// The task's code panicked: a bug, recorded as a failure so the run goes on.
    #[error("the task stopped on an internal error (a bug; please report it): {0}")]
    Panicked(String),
}

impl TaskError {
    /// Whether the failure means an endpoint cannot be used as configured, so every later
    /// task would fail the same way: the run must stop.
    pub fn is_unusable(&self) -> bool {
        match self {
            TaskError::Llm(e) => e.is_unusable(),
            TaskError::Unusable(_) => true,
            TaskError::Search(_)
            | TaskError::Panicked(_)
            | TaskError::NotRun(_)
            | TaskError::TimedOut(_)
            | TaskError::Diverged(_) => false,
        }
    }

    /// Whether a replay diverged from its transcript: the run must stop.
    pub fn is_diverged(&self) -> bool {
        match self {
            TaskError::Llm(e) => e.is_diverged(),
            TaskError::Diverged(_) => true,
            _ => false,
        }
    }
}

/// The JSON schema of the `{summary, analysis}` answers.
pub static WRITTEN_SCHEMA: LazyLock<JsonSchema> = LazyLock::new(|| {
    let schema = |summary: Value| {
        json!({
            "type": "object",
            "additionalProperties": false,
            "required": ["summary", "analysis"],
            "properties": {"summary": summary, "analysis": {"type": "string"}}
        })
    };
    JsonSchema::new("written", schema(json!({"type": "string"})))
        .with_grammar(schema(json!({"type": "string", "minLength": 1})))
});

/// Reads a `{summary, analysis}` answer. A model that ignored the format still produced
/// useful text: then the whole answer is the analysis and its first paragraph the summary.
/// Both come without control characters (a terminal escape in an answer stays out of the plan
/// and the report).
pub fn parse_written(content: &str) -> (String, String) {
    let (summary, analysis) = parse_written_raw(content);
    (strip_controls(&summary), strip_controls(&analysis))
}

fn parse_written_raw(content: &str) -> (String, String) {
    if let Some(written) = written_fields(content) {
        return written;
    }
    tracing::warn!("a sub-agent answer was not the expected JSON; keeping it as text");
    let text = content.trim().to_string();
    (first_paragraph(&text), text)
}

/// The summary and analysis of a written answer in the expected JSON (a missing summary is
/// the analysis's first paragraph); `None` when it is not that JSON or both are empty.
pub fn written_fields(content: &str) -> Option<(String, String)> {
    if let Ok(value) = extract_json(content) {
        let field = |k: &str| {
            value
                .get(k)
                .and_then(Value::as_str)
                .map(str::trim)
                .unwrap_or_default()
                .to_string()
        };
        let (summary, analysis) = (field("summary"), field("analysis"));
        if !summary.is_empty() || !analysis.is_empty() {
            let summary = if summary.is_empty() {
                first_paragraph(&analysis)
            } else {
                summary
            };
            return Some((summary, analysis));
        }
    }
    None
}

fn first_paragraph(text: &str) -> String {
    let para = text
        .split("\n\n")
        .map(str::trim)
        .find(|p| !p.is_empty())
        .unwrap_or_default();
    crate::text::truncate(para, 800)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_answers_parse_or_fall_back() {
        let (s, a) = parse_written(r#"{"summary": " S ", "analysis": "A"}"#);
        assert_eq!((s.as_str(), a.as_str()), ("S", "A"));
        let (s, a) = parse_written("First para.\n\nSecond para.");
        assert_eq!(s, "First para.");
        assert_eq!(a, "First para.\n\nSecond para.");
        let (s, _) = parse_written(r#"{"analysis": "Only analysis.\n\nMore."}"#);
        assert_eq!(s, "Only analysis.");
    }

    #[test]
    fn control_characters_of_an_answer_are_not_kept() {
        let (s, a) =
            parse_written(r#"{"summary": "S\u001b]0;pwned\u0007!", "analysis": "A\u0000\nB"}"#);
        assert_eq!((s.as_str(), a.as_str()), ("S!", "A\nB"));
        let (s, a) = parse_written("Plain \u{1b}[31mred\u{1b}[0m.\n\nMore.");
        assert_eq!(
            (s.as_str(), a.as_str()),
            ("Plain red.", "Plain red.\n\nMore.")
        );
    }

    #[test]
    fn an_output_enters_the_plan_without_control_characters() {
        let mut info = Info::default();
        info.set("llm", "one\u{1b}]0;t\u{7}\n\ttwo\u{9b}2J");
        let out = TaskOutput {
            summary: "S\u{1b}[2J\nummary".into(),
            info,
            sources: vec![Source::new("file:///c/a.md", "Ti\u{9b}31mtle\nforged")],
            ..TaskOutput::default()
        }
        .cleaned();
        assert_eq!(out.summary, "S\nummary");
        assert_eq!(out.info.get("llm"), Some("one\n\ttwo"));
        assert_eq!(out.sources[0].title, "Title forged");
    }

    #[test]
    fn message_names_question_task_and_inputs() {
        let input = TaskInput {
            node_id: NodeId::FIRST,
            kind: NodeType::Search,
            title: "T".into(),
            question: "Q?".into(),
            context: String::new(),
            final_sources: None,
            directions: Vec::new(),
        };
        assert!(
            input
                .message()
                .starts_with("User question: Q?\n\nTask: T\n")
        );
        assert!(input.message().contains("Earlier results: none."));
    }

    #[test]
    fn sub_agent_schemas_keep_the_rules_of_their_variant() {
        use crate::llm::schema::rule_violations;
        for schema in [
            &*WRITTEN_SCHEMA,
            &*super::super::search_agent::QUERIES_SCHEMA,
        ] {
            assert_eq!(rule_violations(&schema.strict, true), Vec::<String>::new());
            assert_eq!(
                rule_violations(&schema.grammar, false),
                Vec::<String>::new()
            );
        }
    }
}
