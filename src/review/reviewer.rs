//! The review stage's two roles around one report: `review` (`{ok, summary, risks, gaps,
//! suggestions}`) and `second_opinion` (`{ok, verdict, notes}`), each on its own model
//! (`roles.review`, `roles.second_opinion`), asked at the same time (one after the other in a
//! run limited to one task at a time, `--concurrency 1`). Each answer is checked
//! against its contract ([`crate::validate::review`], [`crate::validate::second_opinion`]) with
//! the planner's repair rounds ([`crate::llm::checked`]).
//!
//! A role that fails (its call, or its contract after the repairs) is recorded with its error;
//! the other still answers. Nothing here touches the plan or any file.

use serde_json::Value;

use super::input::build;
use super::schema::{REVIEW_SCHEMA, SECOND_OPINION_SCHEMA};
use crate::diagnostics::Diagnostics;
use crate::llm::CallObserver;
use crate::llm::{CheckedError, Contract, LlmClient, Message, Want, ask_checked};
use crate::plan::PlanFile;
use crate::settings::Prompt;
use crate::text::strip_controls;
use crate::transcript::Site;
use crate::usage::Usage;
use crate::validate::{ReviewAnswer, SecondOpinion, check_review, check_second_opinion};

/// Token limit of a review answer, unless the role sets `maxTokens`.
pub const REVIEW_MAX_TOKENS: u32 = Prompt::Review.max_tokens();

/// Token limit of a second opinion, unless the role sets `maxTokens`.
pub const SECOND_OPINION_MAX_TOKENS: u32 = Prompt::SecondOpinion.max_tokens();

/// The review's answer shape.
const REVIEW_SHAPE: &str = "{\"ok\": bool, \"summary\": string, \"risks\": [string], \"gaps\": [string], \"suggestions\": [string]}";

/// The second opinion's answer shape.
const SECOND_OPINION_SHAPE: &str =
    "{\"ok\": bool, \"verdict\": \"ok\" | \"warn\" | \"block\", \"notes\": string}";

/// The two roles, ready to review.
pub struct Reviewer {
    pub review_llm: LlmClient,
    pub second_opinion_llm: LlmClient,
    pub review_prompt: String,
    pub second_opinion_prompt: String,
    /// Repair rounds after a contract violation (`planner.repairAttempts`).
    pub repair_attempts: u32,
    /// Ask the roles one after the other: a run limited to one task at a time may be on a
    /// server that answers one request at a time (llama-cpp-python ends both of two streams
    /// sent together before any text).
    pub one_at_a_time: bool,
}

/// What one role did.
#[derive(Debug, Clone)]
pub struct RoleResult<T> {
    pub model: String,
    pub answer: Result<T, RoleFailure>,
    /// Every call's usage, the repairs included (as far as the calls answered).
    pub usage: Usage,
    pub calls: u32,
}

/// Why a role has no answer.
#[derive(Debug, Clone)]
pub struct RoleFailure {
    /// One message, without control characters.
    pub error: String,
    /// The last answer's violations, when the contract failed.
    pub diagnostics: Option<Diagnostics>,
    /// The endpoint cannot be used as configured (unreachable, key refused, unknown model).
    pub unusable: bool,
}

/// Both roles' results.
#[derive(Debug, Clone)]
pub struct Meeting {
    pub review: RoleResult<ReviewAnswer>,
    pub second_opinion: RoleResult<SecondOpinion>,
}

impl Meeting {
    /// The roles that failed, by their names in `roles` (config, events, the review file).
    pub fn failures(&self) -> impl Iterator<Item = (&'static str, &RoleFailure)> {
        let review = self.review.answer.as_ref().err();
        let second_opinion = self.second_opinion.answer.as_ref().err();
        [("review", review), ("second_opinion", second_opinion)]
            .into_iter()
            .filter_map(|(role, failure)| Some((role, failure?)))
    }
}

impl Reviewer {
    /// Asks both roles about `report`, the report of `plan`. Cuts of their inputs are
    /// `input_cut` notes to `observer`.
    pub async fn meet(
        &self,
        plan: &PlanFile,
        report: &str,
        observer: &dyn CallObserver,
    ) -> Meeting {
        let inputs = build(plan, report);
        for c in &inputs.cuts {
            observer.on_input_cut(c);
        }
        let review = Ask {
            llm: &self.review_llm,
            prompt: &self.review_prompt,
            who: "review",
            check: &check_review,
            shape: REVIEW_SHAPE,
            want: Want::Json(&REVIEW_SCHEMA),
            max_tokens: REVIEW_MAX_TOKENS,
        };
        let second_opinion = Ask {
            llm: &self.second_opinion_llm,
            prompt: &self.second_opinion_prompt,
            who: "second_opinion",
            check: &check_second_opinion,
            shape: SECOND_OPINION_SHAPE,
            want: Want::Json(&SECOND_OPINION_SCHEMA),
            max_tokens: SECOND_OPINION_MAX_TOKENS,
        };
        let repairs = self.repair_attempts;
        let review = review.run(inputs.review, repairs, observer);
        let second_opinion = second_opinion.run(inputs.second_opinion, repairs, observer);
        let (review, second_opinion) = if self.one_at_a_time {
            (review.await, second_opinion.await)
        } else {
            tokio::join!(review, second_opinion)
        };
        Meeting {
            review,
            second_opinion,
        }
    }
}

/// One role's question: the two roles differ only in these, and are asked the same way.
struct Ask<'a, T> {
    llm: &'a LlmClient,
    prompt: &'a str,
    who: &'a str,
    check: &'a (dyn Fn(&Value) -> Result<T, Diagnostics> + Sync),
    /// The answer's shape, quoted in a repair message.
    shape: &'a str,
    want: Want<'a>,
    max_tokens: u32,
}

impl<T> Ask<'_, T> {
    /// Asks the role about `user`, with up to `repair_attempts` repair rounds while its answer
    /// breaks the contract.
    async fn run(
        self,
        user: String,
        repair_attempts: u32,
        observer: &dyn CallObserver,
    ) -> RoleResult<T> {
        let contract = Contract {
            who: self.who,
            check: self.check,
            shape: self.shape,
            repair_attempts,
            on_repair: None,
        };
        let messages = vec![Message::system(self.prompt), Message::user(user)];
        let (llm, want, max_tokens) = (self.llm, self.want, self.max_tokens);
        let result = ask_checked(messages, &contract, |messages| async move {
            llm.chat(&Site::default(), &messages, want, max_tokens, observer)
                .await
        })
        .await;
        role_result(llm.model(), result)
    }
}

fn role_result<T>(
    model: &str,
    result: Result<crate::llm::Checked<T>, CheckedError>,
) -> RoleResult<T> {
    let model = model.to_string();
    match result {
        Ok(checked) => RoleResult {
            model,
            answer: Ok(checked.answer),
            usage: checked.usage,
            calls: checked.calls,
        },
        Err(CheckedError::Contract {
            diagnostics,
            attempts,
            usage,
        }) => RoleResult {
            model,
            answer: Err(RoleFailure {
                error: strip_controls(&format!(
                    "the answer broke the output contract after {attempts} attempt(s): {}",
                    diagnostics
                        .errors
                        .iter()
                        .map(|f| format!("{} at {}", f.code, shown_path(&f.path)))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                diagnostics: Some(diagnostics),
                unusable: false,
            }),
            usage,
            calls: attempts,
        },
        Err(CheckedError::Llm {
            error,
            calls,
            usage,
        }) => RoleResult {
            model,
            answer: Err(RoleFailure {
                error: strip_controls(&crate::text::error_chain(&error)),
                diagnostics: None,
                unusable: error.is_unusable(),
            }),
            usage,
            calls,
        },
    }
}

fn shown_path(path: &str) -> &str {
    if path.is_empty() { "(answer)" } else { path }
}
