//! Asking a sub-agent's model for an answer, with what the contract says about answers cut
//! off by the token limit: a structured answer that was cut off broke its contract, so it is
//! asked for once more with a note to be brief; if that is cut off too, or the answer is prose,
//! it is kept and marked truncated so the node records it.

use crate::llm::CallObserver;
use crate::llm::{ChatAnswer, JsonSchema, LlmClient, LlmError, Message, Want};
use crate::text::Cut;
use crate::transcript::Site;
use crate::usage::Usage;

/// An answer and what it cost.
#[derive(Debug, Clone)]
pub struct Asked {
    pub content: String,
    /// Every call's usage, the repair included.
    pub usage: Usage,
    /// The calls answered: the one asking for a shorter answer and the repair included.
    pub calls: u32,
    /// The kept answer was cut off by the token limit.
    pub truncated: bool,
}

/// The note sent with the second request after a cut-off structured answer.
pub const BE_BRIEF: &str = "Your answer was cut off at the token limit before the JSON object \
     was complete. Answer again with the same JSON object, complete and much shorter: keep \
     every field, shorten the text in them.";

/// Asks for one JSON object following `schema`; see the module docs for cut-off answers.
pub async fn ask_json(
    llm: &LlmClient,
    site: &Site,
    system: &str,
    user: String,
    schema: &JsonSchema,
    max_tokens: u32,
    observer: &dyn CallObserver,
) -> Result<Asked, LlmError> {
    let mut messages = vec![Message::system(system), Message::user(user)];
    let first = llm
        .chat(site, &messages, Want::Json(schema), max_tokens, observer)
        .await?;
    if !first.truncated() {
        return Ok(asked(first, None));
    }
    tracing::warn!(
        "{} LLM: the answer was cut off at the token limit; asking for a shorter one",
        llm.role().as_str()
    );
    messages.push(Message::assistant(first.content.clone()));
    messages.push(Message::user(BE_BRIEF));
    let second = llm
        .chat(site, &messages, Want::Json(schema), max_tokens, observer)
        .await
        .inspect_err(|_| llm.unused(first.usage, observer))?;
    Ok(asked(second, Some(first.usage)))
}

/// Asks for prose; an answer cut off by the limit is kept and marked.
pub async fn ask_text(
    llm: &LlmClient,
    site: &Site,
    system: &str,
    user: String,
    max_tokens: u32,
    observer: &dyn CallObserver,
) -> Result<Asked, LlmError> {
    let answer = llm
        .ask(site, system, user, Want::Text, max_tokens, observer)
        .await?;
    if answer.truncated() {
        tracing::warn!(
            "{} LLM: the answer was cut off at the token limit; keeping it, marked truncated",
            llm.role().as_str()
        );
    }
    Ok(asked(answer, None))
}

/// `answer`, after an earlier answer that cost `earlier` when there was one.
fn asked(answer: ChatAnswer, earlier: Option<Usage>) -> Asked {
    let mut usage = earlier.unwrap_or_default();
    usage.add(answer.usage);
    Asked {
        truncated: answer.truncated(),
        content: answer.content,
        usage,
        calls: 1 + u32::from(earlier.is_some()),
    }
}

/// Reports each cut to the observer (the run records it as an `input_cut` event).
pub fn report_cuts(cuts: &[Cut], observer: &dyn CallObserver) {
    for c in cuts {
        tracing::debug!("cut {} from {} to {} characters", c.what, c.chars, c.kept);
        observer.on_input_cut(c);
    }
}
