//! The review stage's two roles around one report: `review` (`{ok, summary, risks, gaps,
//! suggestions}`) and `second_opinion` (`{ok, verdict, notes}`), each on its own model
//! (`roles.review`, `roles.second_opinion`), asked at the same time. Each answer is checked
//! against its contract ([`crate::validate::review`], [`crate::validate::second_opinion`]) with
//! the planner's repair rounds ([`crate::llm::checked`]).
//!
//! A role that fails (its call, or its contract after the repairs) is recorded with its error;
//! the other still answers. Nothing here touches the plan or any file.

use super::input::build;
use super::schema::{REVIEW_SCHEMA, SECOND_OPINION_SCHEMA};
use crate::diagnostics::Diagnostics;
use crate::llm::CallObserver;
use crate::llm::{
    ChatAnswer, CheckedError, Contract, LlmClient, LlmError, Message, Want, ask_checked,
};
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

/// The review's answer shape, quoted in a repair message.
const REVIEW_SHAPE: &str = "{\"ok\": bool, \"summary\": string, \"risks\": [string], \"gaps\": [string], \"suggestions\": [string]}";

/// The second opinion's answer shape, quoted in a repair message.
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
        let (review, second_opinion) = tokio::join!(
            self.review(inputs.review, observer),
            self.second_opinion(inputs.second_opinion, observer)
        );
        Meeting {
            review,
            second_opinion,
        }
    }

    async fn review(&self, user: String, observer: &dyn CallObserver) -> RoleResult<ReviewAnswer> {
        let contract = Contract {
            who: "review",
            check: &check_review,
            shape: REVIEW_SHAPE,
            repair_attempts: self.repair_attempts,
            on_repair: None,
        };
        let messages = vec![
            Message::system(self.review_prompt.clone()),
            Message::user(user),
        ];
        let result = ask_checked(messages, &contract, |messages| {
            self.call_review(messages, observer)
        })
        .await;
        role_result(self.review_llm.model(), result)
    }

    /// The review role's one call to its model.
    async fn call_review(
        &self,
        messages: Vec<Message>,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let want = Want::Json(&REVIEW_SCHEMA);
        self.review_llm
            .chat(
                &Site::default(),
                &messages,
                want,
                REVIEW_MAX_TOKENS,
                observer,
            )
            .await
    }

    async fn second_opinion(
        &self,
        user: String,
        observer: &dyn CallObserver,
    ) -> RoleResult<SecondOpinion> {
        let contract = Contract {
            who: "second_opinion",
            check: &check_second_opinion,
            shape: SECOND_OPINION_SHAPE,
            repair_attempts: self.repair_attempts,
            on_repair: None,
        };
        let messages = vec![
            Message::system(self.second_opinion_prompt.clone()),
            Message::user(user),
        ];
        let result = ask_checked(messages, &contract, |messages| {
            self.call_second_opinion(messages, observer)
        })
        .await;
        role_result(self.second_opinion_llm.model(), result)
    }

    /// The second opinion's one call to its model.
    async fn call_second_opinion(
        &self,
        messages: Vec<Message>,
        observer: &dyn CallObserver,
    ) -> Result<ChatAnswer, LlmError> {
        let want = Want::Json(&SECOND_OPINION_SCHEMA);
        self.second_opinion_llm
            .chat(
                &Site::default(),
                &messages,
                want,
                SECOND_OPINION_MAX_TOKENS,
                observer,
            )
            .await
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
