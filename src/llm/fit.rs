//! Asking with an input the model's context takes: a model served with a short context
//! (llama.cpp, llama-cpp-python and Ollama are often started with 2,048 to 8,192 tokens)
//! refuses what a hosted one takes, and says how long its context is and how long the prompt
//! was ([`crate::http::error::stated_context`]); [`fitted`] asks again with the share of the
//! input that fits.

use std::future::Future;

use super::{CallObserver, CheckedError, LlmError};
use crate::http::error::StatedContext;
use crate::text::Cut;

/// An error that may be the model's refusal of an input too long for its context (the name
/// `Refusal` is the negotiator's, for a part of a request a server does not take).
pub trait ContextOverflow {
    /// What the server stated of its context, when this is such a refusal.
    fn too_long(&self) -> Option<StatedContext>;
}

impl ContextOverflow for LlmError {
    fn too_long(&self) -> Option<StatedContext> {
        match self {
            LlmError::TooLong { stated, .. } => Some(*stated),
            _ => None,
        }
    }
}

impl ContextOverflow for CheckedError {
    fn too_long(&self) -> Option<StatedContext> {
        match self {
            CheckedError::Llm { error, .. } => error.too_long(),
            CheckedError::Contract { .. } => None,
        }
    }
}

/// The most times a task's input is made smaller to fit the model's context.
const FIT_TRIES: usize = 3;

/// The share of the room the server's figures leave that a smaller input is made to take:
/// tokenizers count texts of one length differently.
const FIT_MARGIN: f64 = 0.9;

/// Characters a token when the server states its context but not the prompt it counted: fewer
/// than English's four, so that code and other languages fit too.
const CHARS_PER_TOKEN: f64 = 3.0;

/// Asks (`ask`) with the user message `build` makes of a share of the input (`1.0`: all of it),
/// and what `build` kept with it. When the model says the request does not fit its
/// context, asks again with the largest share whose message fits what the server stated (its
/// context and the prompt it counted, leaving room for an answer of `limit` tokens, at most half
/// the context; half the message when it states no context), at most [`FIT_TRIES`] times.
/// Returns the answer, the message it answered, and what `build` kept.
pub async fn fitted<T, E: ContextOverflow, K, Fut>(
    (system, limit): (&str, u32),
    build: impl Fn(f64) -> (String, K),
    ask: impl Fn(String) -> Fut,
    observer: &dyn CallObserver,
) -> Result<(T, String, K), E>
where
    Fut: Future<Output = Result<T, E>>,
{
    let mut share = 1.0;
    let mut tries = 0;
    loop {
        let (user, kept) = build(share);
        let err = match ask(user.clone()).await {
            Ok(asked) => {
                if share < 1.0 {
                    let cut = Cut {
                        what: "input, to fit the model's context".into(),
                        chars: build(1.0).0.chars().count(),
                        kept: user.chars().count(),
                    };
                    observer.on_input_cut(&cut);
                }
                return Ok((asked, user, kept));
            }
            Err(err) => err,
        };
        let Some(stated) = err.too_long() else {
            return Err(err);
        };
        let smaller = (tries < FIT_TRIES)
            .then(|| room(stated, system, &user, limit))
            .flatten()
            .and_then(|room| largest_share(share, room, &build));
        // Even the input's fixed parts do not fit, or it was made smaller enough times: the
        // error says what to change.
        let Some(smaller) = smaller else {
            return Err(err);
        };
        // Smaller each time, whatever the server's figures say.
        share = smaller.min(share * FIT_MARGIN);
        tries += 1;
        tracing::warn!(
            "the input does not fit in the model's context; asking again with {:.0}% of its earlier results",
            share * 100.0
        );
    }
}

/// The most characters of a user message that fit beside `system` in the context the server
/// stated (see [`fitted`]); `None` when not even the system prompt does.
fn room(stated: StatedContext, system: &str, user: &str, limit: u32) -> Option<usize> {
    let (system, user) = (system.chars().count(), user.chars().count());
    let Some(context) = stated.context else {
        return Some(user / 2);
    };
    let prompt_room = context - u64::from(limit).min(context / 2);
    let per_token = match stated.prompt {
        Some(prompt) if prompt > 0 => (system + user) as f64 / prompt as f64,
        _ => CHARS_PER_TOKEN,
    };
    let fits = (prompt_room as f64 * per_token * FIT_MARGIN) as usize;
    fits.checked_sub(system).filter(|&n| n > 0)
}

/// The largest share below `share` whose message `build` makes in at most `room` characters,
/// found by halving the interval; `None` when none does.
fn largest_share<K>(share: f64, room: usize, build: &impl Fn(f64) -> (String, K)) -> Option<f64> {
    let fits = |s: f64| build(s).0.chars().count() <= room;
    if !fits(0.0) {
        return None;
    }
    let (mut low, mut high) = (0.0, share);
    for _ in 0..16 {
        let mid = (low + high) / 2.0;
        if fits(mid) { low = mid } else { high = mid }
    }
    Some(low)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stated(context: Option<u64>, prompt: Option<u64>) -> StatedContext {
        StatedContext { context, prompt }
    }

    #[test]
    fn the_room_leaves_the_answer_its_limit_or_half_the_context() {
        let (system, user) = ("s".repeat(1_000), "u".repeat(9_000));
        // 10,000 characters counted as 2,500 tokens: 4 a token. An answer of 256 tokens
        // leaves 1,792 of 2,048; half the context at most is kept for a longer one.
        let short = room(stated(Some(2_048), Some(2_500)), &system, &user, 256);
        assert_eq!(short, Some((1_792.0 * 4.0 * FIT_MARGIN) as usize - 1_000));
        let long = room(stated(Some(2_048), Some(2_500)), &system, &user, 4_096);
        assert_eq!(long, Some((1_024.0 * 4.0 * FIT_MARGIN) as usize - 1_000));
        // No prompt counted: three characters a token; no context stated: half the message.
        let guessed = room(stated(Some(2_048), None), &system, &user, 4_096);
        assert_eq!(guessed, Some((1_024.0 * 3.0 * FIT_MARGIN) as usize - 1_000));
        assert_eq!(room(stated(None, None), &system, &user, 256), Some(4_500));
        // The system prompt alone is over: nothing fits.
        assert_eq!(
            room(stated(Some(200), Some(2_500)), &system, &user, 100),
            None
        );
    }

    #[test]
    fn the_share_is_the_largest_whose_message_fits() {
        let build = |share: f64| ("x".repeat(100 + (1_000.0 * share) as usize), ());
        let share = largest_share(1.0, 600, &build).expect("fits");
        assert!(build(share).0.len() <= 600, "{share}");
        assert!(build(share + 0.01).0.len() > 600, "{share}");
        assert_eq!(
            largest_share(1.0, 99, &build),
            None,
            "the fixed part alone is over"
        );
    }
}
