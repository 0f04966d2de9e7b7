//! Junk a small model writes while the run would call it done, learnt from Gemma 3 270M over
//! the batteries corpus: a final report that was the prompt's own instructions echoed back
//! (`<<SYS>>`, "Do not add a list of sources at the end"), and one that cites nothing while
//! the searches found sources. Each finding is sent back once for repair ([`repaired`]); what
//! the repaired answer still has is recorded on the node (`quality`), and a final report that
//! keeps a finding makes the run `degraded` (`workflow::ending`).

use super::ask::Asked;
use super::claims::cited_numbers;
use super::task::{INPUT_LABELS, NO_SOURCES, TaskInput, written_fields};
use crate::llm::{CallObserver, LlmClient, LlmError, Message, Want};
use crate::plan::QualityFinding;
use crate::text::words;
use crate::transcript::Site;

/// The answer repeats its prompt: template markers or instruction lines.
pub const ECHOED_PROMPT: &str = "ECHOED_PROMPT";
/// The final report cites none of the sources the searches found.
pub const UNCITED_REPORT: &str = "UNCITED_REPORT";
/// The final report states nothing in prose: code, data or bare labels.
pub const NO_PROSE: &str = "NO_PROSE";
/// The answer only restates its task: every word of it is the question's or the task's.
pub const RESTATED_TASK: &str = "RESTATED_TASK";

/// What a report says when its sources do not answer the question (as [`words`] gives it):
/// such a report has nothing to cite, and is not junk for citing nothing.
pub const NO_ANSWER: &[&str] = &[
    "no sentence of the documents",
    "no document of the corpus answers",
    "no source to quote",
    "does not answer",
    "do not answer",
    "cannot answer",
    "could not find",
    "no information",
    "do not say",
    "does not say",
    "not covered",
    "no answer",
];

/// Whether `report` says that its sources do not answer the question ([`NO_ANSWER`]).
pub fn says_no_answer(report: &str) -> bool {
    let said = words(report);
    NO_ANSWER
        .iter()
        .any(|p| format!(" {said} ").contains(&format!(" {p} ")))
}

/// How a report's answer opens when no sentence of its sources states what was asked; the
/// closest passages it cites after that are no answer.
pub const NOT_STATED: &str = "No sentence of the sources states";

/// Whether a final report found no answer: it cites none of its `sources` and says that they
/// do not answer ([`says_no_answer`]), or its answer opens with [`NOT_STATED`] (whatever it
/// cites after: the closest passages). A report that cites anything else answered something.
pub fn finds_no_answer(report: &str, sources: usize) -> bool {
    let cites = cited_numbers(report)
        .into_iter()
        .any(|n| (1..=sources).contains(&n));
    (!cites && says_no_answer(report)) || opens_not_stated(report)
}

/// Whether the first line of prose of `report`'s answer section opens with [`NOT_STATED`].
fn opens_not_stated(report: &str) -> bool {
    crate::markdown::answer_section(report)
        .into_iter()
        .map(str::trim)
        .find(|line| !line.is_empty() && crate::markdown::heading(line).is_none())
        .is_some_and(|line| line.starts_with(NOT_STATED))
}

/// Chat-template markers no answer has a reason to contain.
const TEMPLATE_MARKERS: &[&str] = &[
    "<<SYS>>",
    "<</SYS>>",
    "[INST]",
    // Also bare, as Gemma 3 270M wrote it under llama.cpp's llama-2 fallback template.
    "/INST",
    "<|im_start|>",
    "<|im_end|>",
    "<start_of_turn>",
    "<end_of_turn>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|begin_of_text|>",
    "<|start_header_id|>",
    "<|eot_id|>",
];

/// A clause of the prompt this many words long or more, found in an answer, is an echo.
const ECHO_LINE_WORDS: usize = 6;

/// Whether `answer` echoes `system`, its prompt: a template marker, or a clause of the prompt
/// (up to a line end or `.`, `:`, `;`, `!`, `?`) of [`ECHO_LINE_WORDS`] words or more, word
/// for word (case and punctuation aside).
pub fn echoes(answer: &str, system: &str) -> Option<QualityFinding> {
    if let Some(marker) = TEMPLATE_MARKERS.iter().find(|m| answer.contains(**m)) {
        return Some(finding(
            ECHOED_PROMPT,
            format!("the answer holds the chat-template marker `{marker}`: it echoes its prompt"),
        ));
    }
    if let Some(label) = input_label(answer) {
        return Some(finding(
            ECHOED_PROMPT,
            format!(
                "the answer repeats the label `{label}` of its input: it echoes its prompt; write the answer, not the prompt"
            ),
        ));
    }
    let said = words(answer);
    let echoed = system
        .split(['\n', '.', ':', ';', '!', '?'])
        .map(words)
        .find(|line| line.split(' ').count() >= ECHO_LINE_WORDS && said.contains(line.as_str()))?;
    let quoted: String = echoed.chars().take(80).collect();
    Some(finding(
        ECHOED_PROMPT,
        format!(
            "the answer repeats its instructions word for word (\"{quoted}\"): write the answer, not the prompt"
        ),
    ))
}

/// The first label of the task's input message ([`INPUT_LABELS`]) that opens a line of
/// `answer` (past list and heading marks, case aside), or whose words are in it but for the
/// first (`More recent results this task builds on:`, as Gemma 3 270M wrote it); or the line
/// that stands for no sources ([`NO_SOURCES`]), anywhere, also with one of its clauses reworded.
fn input_label(answer: &str) -> Option<&'static str> {
    let opens = |label: &str| {
        answer.lines().any(|line| {
            let line = line.trim_start_matches(|c: char| c.is_whitespace() || "#*->_".contains(c));
            line.get(..label.len())
                .is_some_and(|start| start.eq_ignore_ascii_case(label))
        })
    };
    let said = format!(" {} ", words(answer));
    // Two of its three clauses, as SmolLM2 135M reworded it ("the search returned none").
    let clauses = NO_SOURCES.split([':', ';']).map(words);
    if clauses.filter(|c| said.contains(&format!(" {c} "))).count() >= 2 {
        return Some(NO_SOURCES);
    }
    let inside = |label: &str| {
        let rest = words(label);
        let rest = rest.split_once(' ').map_or("", |(_, r)| r);
        rest.split(' ').count() >= 4 && said.contains(&format!(" {rest} "))
    };
    INPUT_LABELS
        .into_iter()
        .find(|label| opens(label) || inside(label))
}

/// Whether a final report cites none of its `sources` although there are some.
pub fn uncited(report: &str, sources: usize) -> Option<QualityFinding> {
    let cites = cited_numbers(report)
        .into_iter()
        .any(|n| (1..=sources).contains(&n));
    (sources > 0 && !cites && !says_no_answer(report)).then(|| {
        finding(
            UNCITED_REPORT,
            format!(
                "the report cites none of its {sources} numbered sources: cite each statement's source as [n]"
            ),
        )
    })
}

/// Whether a final `report` states nothing in prose ([`crate::markdown::has_prose`]), as
/// SmolLM2 135M wrote one with no sources to cite: a label, a code block and a Python list.
pub fn without_prose(report: &str) -> Option<QualityFinding> {
    (!crate::markdown::has_prose(report)).then(|| {
        finding(
            NO_PROSE,
            "the report states nothing in sentences (code, data or labels only): answer the question in sentences".into(),
        )
    })
}

/// Whether `answer` says nothing its task did not: each of its words is a word of `task` (the
/// question, the task's title), as SmolLM2 135M summarised a question by repeating it.
pub fn restates(answer: &str, task: &[&str]) -> Option<QualityFinding> {
    let asked = words(&task.join(" "));
    let asked: std::collections::HashSet<&str> = asked.split(' ').collect();
    let said = words(answer);
    (!said.is_empty() && said.split(' ').all(|w| asked.contains(w))).then(|| {
        finding(
            RESTATED_TASK,
            "the answer only repeats its task: answer it, from the results you received".into(),
        )
    })
}

/// Whether a sub-agent's written `answer` (its summary and analysis) only restates `input`'s
/// question and title ([`restates`]).
pub fn restates_written(answer: &str, input: &TaskInput) -> Option<QualityFinding> {
    let (summary, analysis) = written_fields(answer).unwrap_or_default();
    restates(
        &format!("{summary} {analysis}"),
        &[&input.question, &input.title],
    )
}

/// What is sent back with the answer for a repair.
pub fn repair_message(findings: &[QualityFinding]) -> String {
    let mut text = String::from("Your answer cannot be used as it stands:\n");
    for f in findings {
        text.push_str(&format!("- {}: {}\n", f.code, f.message));
    }
    text.push_str("Answer again, in the form asked for, with the answer itself.");
    text
}

/// `first` (the answer to `system` and `user`) judged by `judge`; a finding is sent back once
/// and the new answer kept (its cost added), unless it has more findings than the first (an
/// echo of the repair message counts: SmolLM2 and Qwen answered a repair by restating it) or
/// the repair does not fit in the model's context; returns the answer kept and what it still
/// has.
#[allow(clippy::too_many_arguments)]
pub async fn repaired(
    llm: &LlmClient,
    site: &Site,
    (system, user): (&str, &str),
    first: Asked,
    want: Want<'_>,
    max_tokens: u32,
    observer: &dyn CallObserver,
    judge: &(dyn Fn(&str) -> Vec<QualityFinding> + Sync),
) -> Result<(Asked, Vec<QualityFinding>), LlmError> {
    let findings = judge(&first.content);
    if findings.is_empty() {
        return Ok((first, findings));
    }
    tracing::warn!(
        "{} LLM: the answer breaks {}; sending it back once",
        llm.role().as_str(),
        QualityFinding::codes(&findings)
    );
    let repair = repair_message(&findings);
    let messages = vec![
        Message::system(system),
        Message::user(user),
        Message::assistant(first.content.clone()),
        Message::user(repair.clone()),
    ];
    let second = match llm.chat(site, &messages, want, max_tokens, observer).await {
        Err(LlmError::TooLong { .. }) => {
            tracing::warn!(
                "{} LLM: the repair does not fit in the model's context; keeping the first answer",
                llm.role().as_str()
            );
            return Ok((first, findings));
        }
        second => second.inspect_err(|_| llm.unused(first.usage, observer))?,
    };
    let mut usage = first.usage;
    usage.add(second.usage);
    let calls = first.calls + 1;
    let mut left = judge(&second.content);
    if !left.iter().any(|f| f.code == ECHOED_PROMPT) {
        left.extend(echoes(&second.content, &repair));
    }
    if left.len() > findings.len() {
        tracing::warn!(
            "{} LLM: the repaired answer is worse ({}); keeping the first",
            llm.role().as_str(),
            QualityFinding::codes(&left)
        );
        let kept = Asked {
            usage,
            calls,
            ..first
        };
        return Ok((kept, findings));
    }
    let kept = Asked {
        truncated: second.truncated(),
        content: second.content,
        usage,
        calls,
    };
    Ok((kept, left))
}

fn finding(code: &str, message: String) -> QualityFinding {
    QualityFinding {
        code: code.into(),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "You write the final report.\n\
        Do not add a list of sources at the end: it is appended for you.\n\
        Cite them by number.";

    #[test]
    fn an_answer_made_of_its_task_words_restates_it() {
        let task = [
            "How do solid-state batteries compare with lithium-ion?",
            "Solid-state vs Li-ion",
        ];
        assert!(
            restates(
                "how do solid-state batteries compare with lithium-ion?",
                &task
            )
            .is_some()
        );
        assert!(restates("Solid-state batteries compare with lithium-ion.", &task).is_some());
        assert!(
            restates(
                "Solid-state batteries are safer than lithium-ion [1].",
                &task
            )
            .is_none()
        );
        assert!(restates("", &task).is_none());
        assert!(without_prose("```\nx = 1\n```").is_some_and(|f| f.code == NO_PROSE));
        assert!(without_prose("They are safer [1].").is_none());
    }

    #[test]
    fn the_labels_of_the_task_input_are_echoes() {
        // What Gemma 3 270M wrote as a final report over the batteries corpus.
        let gemma = "User question: How do solid-state batteries compare?\n\nTask: a review\n\n\
                     More recent results this task builds on: [1], [2].";
        let found = echoes(gemma, PROMPT).expect("an echo");
        assert!(
            found.message.contains("`User question:`"),
            "{}",
            found.message
        );
        let paraphrase = echoes("More recent results this task builds on: [1].", PROMPT);
        assert!(
            paraphrase.is_some_and(|f| f.message.contains("Earlier results this task builds on:"))
        );
        assert!(echoes("- **Task:** compare them [1].", PROMPT).is_some());
        // Gemma 3 270M again, with no sources to cite, under llama.cpp's llama-2 template.
        let listless = ":\n(no sources: the searches returned none; cite nothing)\n";
        assert!(echoes(listless, PROMPT).is_some_and(|f| f.message.contains("no sources")));
        // SmolLM2 135M, reworded (llama.cpp, 2026-12-06).
        let reworded = "Cells differ.\n\n(no sources: the search returned none; cite nothing)\n";
        assert!(echoes(reworded, PROMPT).is_some());
        assert!(echoes("There are no sources on cobalt prices.", PROMPT).is_none());
        assert!(echoes("Cells store energy.\n/INST\n", PROMPT).is_some());
        assert!(echoes("Numbered sources:\n[1] x", PROMPT).is_some());
        assert!(echoes("The task of a cathode is to host lithium [1].", PROMPT).is_none());
        assert!(echoes("Earlier results show a 40% gain [1].", PROMPT).is_none());
    }

    #[test]
    fn template_markers_and_instruction_lines_are_echoes() {
        let marker = echoes("<<SYS>> You write the final report.", PROMPT).expect("marker");
        assert_eq!(marker.code, ECHOED_PROMPT);
        assert!(marker.message.contains("<<SYS>>"));
        let line = echoes("Sure. do NOT add a list of sources, at the end!", PROMPT);
        assert!(line.is_some_and(|f| f.message.contains("do not add a list")));
        // A short line of the prompt may be said in passing; a real answer is no echo.
        assert!(echoes("Cite them by number.", PROMPT).is_none());
        assert!(echoes("Solid-state cells store more energy [1].", PROMPT).is_none());
    }

    #[test]
    fn a_report_without_a_citation_of_its_sources_is_uncited() {
        assert!(uncited("Cells store energy.", 3).is_some());
        assert!(
            uncited("Cells store energy [9].", 3).is_some(),
            "no such source"
        );
        assert!(uncited("Cells store energy [2].", 3).is_none());
        // Saying that the sources do not answer is the honest report, with nothing to cite.
        assert!(uncited("The search results do not answer this question.", 3).is_none());
        assert!(uncited("Cells store no answers of theirs.", 3).is_some());
        assert!(
            uncited("Nothing was found.", 0).is_none(),
            "nothing to cite"
        );
        let text = repair_message(&[uncited("x", 2).expect("finding")]);
        assert!(text.contains("UNCITED_REPORT") && text.contains("Answer again"));
    }
}
