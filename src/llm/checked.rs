//! A structured answer checked against its contract, with repair rounds: ask, take the JSON
//! object out of the answer, check it into [`Diagnostics`], and on a violation send the
//! findings back (`code at path: message`) with the bad answer and ask again, up to
//! `repair_attempts` times. The planner's rounds, the review's two roles and the Thinkon
//! planner go through here.
//!
//! An empty answer (`EMPTY_ANSWER`), one cut off at the token limit (`TRUNCATED`) and one
//! without a JSON object (`INVALID_JSON`) break the contract like any other violation. Only the
//! caller talks to the model (`send`), so each role keeps its one call in one place; this
//! module decides nothing about the contract itself.

use std::future::Future;

use serde_json::Value;

use super::answer::{ChatAnswer, LlmError};
use super::json::extract_json;
use super::types::Message;
use crate::diagnostics::Diagnostics;
use crate::usage::Usage;

/// What an answer must honour.
pub struct Contract<'a, T> {
    /// Who asks, for log lines: `planning`, `review`.
    pub who: &'a str,
    /// The contract: the answer as `T`, or every violation found.
    pub check: &'a (dyn Fn(&Value) -> Result<T, Diagnostics> + Sync),
    /// The shape to answer with, quoted at the end of the repair message.
    pub shape: &'a str,
    /// Repair rounds after a violation (`planner.repairAttempts`).
    pub repair_attempts: u32,
    /// Told of each violation that is sent back for repair (an event, say).
    pub on_repair: Option<&'a (dyn Fn(&Diagnostics) + Sync)>,
}

/// An answer that honours the contract.
#[derive(Debug, Clone)]
pub struct Checked<T> {
    pub answer: T,
    /// The JSON object as the model wrote it.
    pub value: Value,
    /// Every call's usage, the repairs included.
    pub usage: Usage,
    /// Calls made (1 plus repair rounds).
    pub calls: u32,
}

#[derive(Debug, thiserror::Error)]
pub enum CheckedError {
    /// A call failed; `calls` counts it, `usage` is what the calls before it cost.
    #[error("{error}")]
    Llm {
        #[source]
        error: LlmError,
        calls: u32,
        usage: Usage,
    },
    #[error("the answer broke the output contract after {attempts} attempt(s):\n{}", .diagnostics.to_text().trim_end())]
    Contract {
        diagnostics: Diagnostics,
        attempts: u32,
        /// What the calls before the last violation cost.
        usage: Usage,
    },
}

/// Sends `messages` through `send` until an answer honours `contract` or the repair rounds
/// are spent. `send` is the caller's one call to its model.
pub async fn ask_checked<T, F, Fut>(
    mut messages: Vec<Message>,
    contract: &Contract<'_, T>,
    mut send: F,
) -> Result<Checked<T>, CheckedError>
where
    F: FnMut(Vec<Message>) -> Fut,
    Fut: Future<Output = Result<ChatAnswer, LlmError>>,
{
    let mut usage = Usage::default();
    let mut calls = 0;
    loop {
        let reply = match send(messages.clone()).await {
            Ok(reply) => Some(reply),
            // Small models sometimes answer nothing at all: a broken contract, not an
            // unusable server.
            Err(LlmError::Empty { .. }) => None,
            Err(error) => {
                return Err(CheckedError::Llm {
                    error,
                    calls: calls + 1,
                    usage,
                });
            }
        };
        calls += 1;
        let diagnostics = match &reply {
            Some(reply) => {
                usage.add(reply.usage);
                match judge(reply, contract) {
                    Ok((answer, value)) => {
                        return Ok(Checked {
                            answer,
                            value,
                            usage,
                            calls,
                        });
                    }
                    Err(d) => d,
                }
            }
            None => {
                let mut d = Diagnostics::new();
                d.error("EMPTY_ANSWER", "", "the answer was empty");
                d
            }
        };
        if calls > contract.repair_attempts {
            return Err(CheckedError::Contract {
                diagnostics,
                attempts: calls,
                usage,
            });
        }
        let codes: Vec<&str> = diagnostics.errors.iter().map(|f| f.code.as_str()).collect();
        tracing::warn!(
            "[{}] answer broke the contract ({}); asking again",
            contract.who,
            codes.join(", ")
        );
        if let Some(on_repair) = contract.on_repair {
            on_repair(&diagnostics);
        }
        if let Some(reply) = reply {
            messages.push(Message::assistant(reply.content));
        }
        messages.push(Message::user(repair_message(
            &diagnostics,
            "output contract",
            contract.shape,
        )));
    }
}

/// The answer if it honours the contract. An answer cut off by the token limit breaks it, even
/// when what arrived happens to parse.
fn judge<T>(reply: &ChatAnswer, contract: &Contract<'_, T>) -> Result<(T, Value), Diagnostics> {
    if reply.truncated() {
        let mut d = Diagnostics::new();
        d.error(
            "TRUNCATED",
            "",
            "the answer was cut off at the token limit: be brief, no text outside the JSON object",
        );
        return Err(d);
    }
    let value = extract_json(&reply.content).map_err(|why| {
        let mut d = Diagnostics::new();
        d.error("INVALID_JSON", "", why);
        d
    })?;
    let answer = (contract.check)(&value)?;
    Ok((answer, value))
}

/// The message of a repair round: the errors, quoted, and the shape to answer with. `broken`
/// names what the answer broke ("output contract", "plan-next protocol").
pub fn repair_message(diag: &Diagnostics, broken: &str, shape: &str) -> String {
    let mut text = format!("Your answer broke the {broken}. Errors, as `code at path: message`:\n");
    for f in &diag.errors {
        let path = if f.path.is_empty() {
            "(answer)"
        } else {
            &f.path
        };
        text.push_str(&format!("- {} at {path}: {}\n", f.code, f.message));
    }
    text.push_str(&format!(
        "\nAnswer again with only the corrected JSON object: {shape}."
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Mutex;

    fn reply(content: &str, finish: &str) -> ChatAnswer {
        ChatAnswer {
            content: content.into(),
            usage: Usage {
                prompt_tokens: 2,
                completion_tokens: 1,
                total_tokens: 3,
            },
            finish_reason: Some(finish.into()),
        }
    }

    fn needs_x(v: &Value) -> Result<i64, Diagnostics> {
        v.get("x").and_then(Value::as_i64).ok_or_else(|| {
            let mut d = Diagnostics::new();
            d.error("MISSING_FIELD", "x", "`x` is missing");
            d
        })
    }

    fn contract(repairs: u32) -> Contract<'static, i64> {
        Contract {
            who: "test",
            check: &needs_x,
            shape: "{\"x\": int}",
            repair_attempts: repairs,
            on_repair: None,
        }
    }

    /// Runs `ask_checked` against scripted replies; returns the result and what each call saw.
    fn run(
        replies: Vec<Result<ChatAnswer, LlmError>>,
        contract: &Contract<'_, i64>,
    ) -> (Result<Checked<i64>, CheckedError>, Vec<Vec<Message>>) {
        let script = Mutex::new(replies.into_iter());
        let seen = Mutex::new(Vec::new());
        let send = |messages: Vec<Message>| {
            seen.lock().expect("lock").push(messages);
            let next = script
                .lock()
                .expect("lock")
                .next()
                .expect("a scripted reply");
            async move { next }
        };
        let result = futures_util::FutureExt::now_or_never(ask_checked(
            vec![Message::user("q")],
            contract,
            send,
        ))
        .expect("no await pending");
        (result, seen.into_inner().expect("lock"))
    }

    #[test]
    fn a_violation_is_sent_back_with_the_answer_then_a_good_one_is_taken() {
        let told = Mutex::new(Vec::new());
        let on_repair = |d: &Diagnostics| told.lock().expect("lock").push(d.errors[0].code.clone());
        let contract = Contract {
            on_repair: Some(&on_repair),
            ..contract(1)
        };
        let (result, seen) = run(
            vec![
                Ok(reply("<think>{}</think> {\"y\": 1}", "stop")),
                Ok(reply("{\"x\": 5}", "stop")),
            ],
            &contract,
        );
        assert_eq!(*told.lock().expect("lock"), ["MISSING_FIELD"]);
        let checked = result.expect("repaired");
        assert_eq!((checked.answer, checked.calls), (5, 2));
        assert_eq!(checked.usage.total_tokens, 6);
        assert_eq!(checked.value, json!({"x": 5}));
        let second = &seen[1];
        assert_eq!(second.len(), 3, "{second:?}");
        assert!(second[1].content.contains("\"y\""));
        assert!(
            second[2].content.contains("MISSING_FIELD at x")
                && second[2].content.ends_with("{\"x\": int}."),
            "{}",
            second[2].content
        );
    }

    #[test]
    fn empty_cut_off_and_prose_answers_break_the_contract_until_the_repairs_are_spent() {
        let empty = || Err(LlmError::Empty { url: "u".into() });
        let (result, seen) = run(
            vec![empty(), Ok(reply("{\"x\": 1}", "length"))],
            &contract(1),
        );
        let Err(CheckedError::Contract {
            diagnostics,
            attempts,
            usage,
        }) = result
        else {
            panic!("a contract error")
        };
        assert_eq!((attempts, usage.total_tokens), (2, 3));
        assert!(diagnostics.has_error("TRUNCATED"));
        assert!(seen[1][1].content.contains("EMPTY_ANSWER"));
        let (result, _) = run(vec![Ok(reply("no json here", "stop"))], &contract(0));
        assert!(
            matches!(result, Err(CheckedError::Contract { diagnostics, .. }) if diagnostics.has_error("INVALID_JSON"))
        );
    }
}
