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
use crate::plan::PlanFile;
use crate::usage::Usage;
use crate::validate::{ReviewAnswer, SecondOpinion, Verdict};

/// The share of a report's cited claims that may go unsupported under an `ok` verdict.
pub const UNSUPPORTED_WARN_SHARE: f64 = 0.2;

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
    /// Why the verdict is not the second opinion's: an `ok` over too many unsupported claims
    /// is lowered to `warn`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict_note: Option<String>,
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
            verdict_note: None,
            review: meeting.review.answer.as_ref().ok().cloned(),
            second_opinion,
            roles: Roles {
                review: role_record(&meeting.review),
                second_opinion: role_record(&meeting.second_opinion),
            },
        }
        .lowered_for(plan)
    }

    /// An `ok` verdict over a report more than [`UNSUPPORTED_WARN_SHARE`] of whose cited claims
    /// their sources do not support is lowered to `warn`, and the note says why.
    fn lowered_for(mut self, plan: &PlanFile) -> ReviewRecord {
        let claims = plan.final_node().map_or(&[][..], |n| n.claims.as_slice());
        let unsupported = claims.iter().filter(|c| !c.supported).count();
        let share = unsupported as f64 / claims.len().max(1) as f64;
        if self.verdict == Some(Verdict::Ok) && share > UNSUPPORTED_WARN_SHARE {
            self.verdict = Some(Verdict::Warn);
            self.verdict_note = Some(format!(
                "lowered from `ok` to `warn`: {unsupported} of {} cited claims ({:.0}%) are not \
                 supported by their sources (more than {:.0}%)",
                claims.len(),
                share * 100.0,
                UNSUPPORTED_WARN_SHARE * 100.0
            ));
        }
        self
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
