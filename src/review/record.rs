//! `<out>.review.json`: both answers as the contracts kept them, and what a reader needs to
//! trust them: which report of which plan, when, each role's model, calls, tokens and, when a
//! role failed, its error and findings.
//!
//! ```json
//! { "version": 1, "reviewed_at": "...", "workflow_id": "...", "question": "...",
//!   "plan_file": "...", "report": "...", "verdict": "ok" | "warn" | "block" | null,
//!   "review": { "ok", "summary", "risks", "gaps", "suggestions" } | null,
//!   "second_opinion": { "ok", "verdict", "notes" } | null,
//!   "roles": { "review": { "model", "calls", "usage", "error"?, "diagnostics"? },
//!              "second_opinion": { ... } } }
//! ```
//!
//! `verdict` is the second opinion's (null when it failed); a failed role's answer is null.

use serde::Serialize;

use super::reviewer::{Meeting, RoleResult};
use crate::diagnostics::Diagnostics;
use crate::llm::Usage;
use crate::plan::PlanFile;
use crate::validate::{ReviewAnswer, SecondOpinion, Verdict};

/// The version of the file's format.
pub const FORMAT_VERSION: u32 = 1;

/// The whole file.
#[derive(Debug, Clone, Serialize)]
pub struct ReviewRecord {
    pub version: u32,
    pub reviewed_at: String,
    pub workflow_id: String,
    pub question: String,
    pub plan_file: String,
    pub report: String,
    pub verdict: Option<Verdict>,
    pub review: Option<ReviewAnswer>,
    pub second_opinion: Option<SecondOpinion>,
    pub roles: Roles,
}

#[derive(Debug, Clone, Serialize)]
pub struct Roles {
    pub review: RoleRecord,
    pub second_opinion: RoleRecord,
}

/// How one role went.
#[derive(Debug, Clone, Serialize)]
pub struct RoleRecord {
    pub model: String,
    pub calls: u32,
    pub usage: Usage,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Diagnostics>,
}

impl ReviewRecord {
    /// The record of `meeting` on the report `report` of `plan` (saved as `plan_file`).
    pub fn new(meeting: &Meeting, plan: &PlanFile, plan_file: &str, report: &str) -> ReviewRecord {
        let second_opinion = meeting.second_opinion.answer.as_ref().ok().cloned();
        ReviewRecord {
            version: FORMAT_VERSION,
            reviewed_at: crate::clock::now(),
            workflow_id: plan.workflow_id.clone(),
            question: crate::text::strip_controls(plan.question()),
            plan_file: plan_file.to_string(),
            report: report.to_string(),
            verdict: second_opinion.as_ref().map(|s| s.verdict),
            review: meeting.review.answer.as_ref().ok().cloned(),
            second_opinion,
            roles: Roles {
                review: role_record(&meeting.review),
                second_opinion: role_record(&meeting.second_opinion),
            },
        }
    }

    /// Both roles answered.
    pub fn is_complete(&self) -> bool {
        self.review.is_some() && self.second_opinion.is_some()
    }

    /// Tokens both roles spent.
    pub fn usage(&self) -> Usage {
        let mut usage = self.roles.review.usage;
        usage.add(self.roles.second_opinion.usage);
        usage
    }
}

fn role_record<T>(result: &RoleResult<T>) -> RoleRecord {
    let failure = result.answer.as_ref().err();
    RoleRecord {
        model: result.model.clone(),
        calls: result.calls,
        usage: result.usage,
        error: failure.map(|f| f.error.clone()),
        diagnostics: failure.and_then(|f| f.diagnostics.clone()),
    }
}
