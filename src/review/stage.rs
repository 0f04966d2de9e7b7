//! The review stage on one report: read it, ask both roles ([`Reviewer::meet`]), write
//! `<out>.review.json` and `<out>.review.md` beside the plan (atomically, both always, so no
//! stale review outlives a new report), tell the events, and sum it up for stdout.
//!
//! Events (through the caller's observer, node `review`): `review_failed` for each role whose
//! call or contract failed (`role`, `error`, and the finding `codes`), or when the report
//! cannot be read or the files written (no `role`); then `review_finished` (`verdict`,
//! `complete`, `files`, `tokens`) once the files are written. A failed review never changes
//! the research outcome: only the caller decides what a verdict means for its exit code.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::notes;
use super::record::ReviewRecord;
use super::reviewer::{Reviewer, RoleFailure};
use crate::http::NoObserver;
use crate::llm::CallObserver;
use crate::plan::PlanFile;
use crate::validate::Verdict;

/// Where the review's two files go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewPaths {
    pub json: PathBuf,
    pub markdown: PathBuf,
}

impl ReviewPaths {
    /// The review files beside a plan.
    pub fn of(beside: &crate::plan::Beside) -> ReviewPaths {
        ReviewPaths {
            json: beside.review_json.clone(),
            markdown: beside.review_notes.clone(),
        }
    }
}

/// How the review stage went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Both roles answered within their contracts.
    Completed,
    /// A role, reading the report or writing the files failed.
    Failed,
    /// Not run (the offline engine has no model; no report was written).
    Skipped,
    /// Stopped by a signal.
    Interrupted,
}

/// A review that wrote its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewFinished {
    pub verdict: Option<Verdict>,
    /// Whether both roles answered.
    pub complete: bool,
    pub files: ReviewFiles,
    pub tokens: u64,
}

/// What the review stage reports beyond its model calls; the run records them as
/// `review_failed` and `review_finished`.
pub trait ReviewObserver: CallObserver {
    /// `role` failed (`None`: the whole review) with `error`; `codes` are the findings of its
    /// last broken answer.
    fn on_review_failed(&self, _role: Option<&str>, _error: &str, _codes: &[String]) {}

    fn on_review_finished(&self, _finished: &ReviewFinished) {}
}

impl ReviewObserver for NoObserver {}

/// The review as the command prints it (`review` in a workflow's stdout).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewSummary {
    pub status: ReviewStatus,
    /// The second opinion's verdict; null without one.
    pub verdict: Option<Verdict>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<ReviewFiles>,
    /// Why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    /// A role's endpoint cannot be used as configured (for `researchflow review`'s exit 2).
    #[serde(skip)]
    pub unusable: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewFiles {
    pub json: String,
    pub markdown: String,
}

impl ReviewSummary {
    /// A review that did not run, and why.
    pub fn skipped(reason: impl Into<String>) -> ReviewSummary {
        ReviewSummary {
            status: ReviewStatus::Skipped,
            verdict: None,
            files: None,
            reason: Some(reason.into()),
            errors: Vec::new(),
            unusable: false,
        }
    }

    /// A review stopped by a signal.
    pub fn interrupted() -> ReviewSummary {
        ReviewSummary {
            status: ReviewStatus::Interrupted,
            reason: Some("stopped by a signal".into()),
            ..ReviewSummary::skipped("")
        }
    }

    fn failed(error: String) -> ReviewSummary {
        ReviewSummary {
            status: ReviewStatus::Failed,
            reason: None,
            errors: vec![error],
            ..ReviewSummary::skipped("")
        }
    }

    pub fn is_block(&self) -> bool {
        self.verdict == Some(Verdict::Block)
    }
}

/// The largest report read for a review.
const REPORT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Reviews the report at `report_path` of `plan` (saved as `plan_file`), writes the files at
/// `paths` and reports through `observer`.
pub async fn review_report(
    reviewer: &Reviewer,
    plan: &PlanFile,
    plan_file: &Path,
    report_path: &Path,
    paths: &ReviewPaths,
    observer: &dyn ReviewObserver,
) -> ReviewSummary {
    let report = match crate::files::read_bounded(report_path, REPORT_MAX_BYTES) {
        Ok(text) => text,
        Err(e) => {
            let error = format!("cannot read the report `{}`: {e}", report_path.display());
            return failed_before_files(error, observer);
        }
    };
    tracing::info!("[review] reviewing `{}`", report_path.display());
    let meeting = reviewer.meet(plan, &report, observer).await;
    let record = ReviewRecord::new(
        &meeting,
        plan,
        &plan_file.display().to_string(),
        &report_path.display().to_string(),
    );
    let mut errors = Vec::new();
    for (role, failure) in meeting.failures() {
        tracing::warn!(
            "[review] the {role} failed: {}; the research outcome is unchanged",
            failure.error
        );
        observer.on_review_failed(Some(role), &failure.error, &codes_of(failure));
        errors.push(format!("{role}: {}", failure.error));
    }
    if let Err(e) = write_files(&record, paths) {
        return failed_before_files(e, observer);
    }
    let files = ReviewFiles {
        json: paths.json.display().to_string(),
        markdown: paths.markdown.display().to_string(),
    };
    observer.on_review_finished(&ReviewFinished {
        verdict: record.verdict,
        complete: record.is_complete(),
        files: files.clone(),
        tokens: record.usage().total_tokens,
    });
    log_verdict(record.verdict, &paths.markdown);
    let unusable = meeting.failures().any(|(_, f)| f.unusable);
    ReviewSummary {
        status: if errors.is_empty() {
            ReviewStatus::Completed
        } else {
            ReviewStatus::Failed
        },
        verdict: record.verdict,
        files: Some(files),
        reason: None,
        errors,
        unusable,
    }
}

/// The finding codes of a role's last broken answers.
fn codes_of(failure: &RoleFailure) -> Vec<String> {
    failure
        .diagnostics
        .iter()
        .flat_map(|d| d.errors.iter().map(|f| f.code.clone()))
        .collect()
}

fn failed_before_files(error: String, observer: &dyn ReviewObserver) -> ReviewSummary {
    tracing::warn!("[review] {error}; the research outcome is unchanged");
    observer.on_review_failed(None, &error, &[]);
    ReviewSummary::failed(error)
}

fn write_files(record: &ReviewRecord, paths: &ReviewPaths) -> Result<(), String> {
    let json = serde_json::to_string_pretty(record)
        .map_err(|e| format!("cannot serialise the review: {e}"))?;
    let write = |path: &Path, bytes: &[u8]| {
        crate::atomic::write(path, bytes)
            .map_err(|e| format!("cannot write `{}`: {e}", path.display()))
    };
    // Errors name endpoints without their passwords; this masks one a server may have quoted.
    let masked = crate::text::without_url_passwords;
    write(&paths.json, format!("{}\n", masked(&json)).as_bytes())?;
    write(&paths.markdown, masked(&notes::render(record)).as_bytes())
}

fn log_verdict(verdict: Option<Verdict>, notes: &Path) {
    let notes = notes.display();
    match verdict {
        Some(Verdict::Block) => {
            tracing::warn!(
                "[review] verdict `block`: the report is not to be used as it stands; see `{notes}`"
            )
        }
        Some(v) => tracing::info!("[review] verdict `{}`; meeting notes `{notes}`", v.as_str()),
        None => tracing::warn!("[review] no verdict (the second opinion failed); see `{notes}`"),
    }
}
