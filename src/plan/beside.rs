//! The files a run writes beside its plan `runs/plan_x.json`, named after it: one place for
//! every name, so no two can collide.

use std::path::{Path, PathBuf};

/// The suffix of a run's event log, appended as the run goes.
pub const EVENTS: &str = "events.ndjson";
/// The suffix of a run's transcript, appended as the run goes.
pub const TRANSCRIPT: &str = "transcript.jsonl";

/// `<stem>.changes.md`: what changed since the question's last run (a recurring batch and
/// `watch` write it), beside the plan file `<stem>.json`.
pub fn changes_file_name(plan_file_stem: &str) -> String {
    format!("{plan_file_stem}.changes.md")
}

/// The paths beside one plan file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beside {
    /// `runs/plan_x.report.md`
    pub report: PathBuf,
    /// `runs/plan_x.events.ndjson`
    pub events: PathBuf,
    /// `runs/plan_x.transcript.jsonl`
    pub transcript: PathBuf,
    /// `runs/plan_x.plan-review.json`: the plan review on the latest round.
    pub plan_review: PathBuf,
    /// `runs/plan_x.review.json`: the review stage's two answers.
    pub review_json: PathBuf,
    /// `runs/plan_x.review.md`: its meeting notes.
    pub review_notes: PathBuf,
    /// `runs/plan_x.html`: the run's view.
    pub html: PathBuf,
}

impl Beside {
    pub fn of(plan: &Path) -> Beside {
        let stem = plan
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "plan".into());
        let named = |suffix: &str| plan.with_file_name(format!("{stem}.{suffix}"));
        Beside {
            report: named("report.md"),
            events: named(EVENTS),
            transcript: named(TRANSCRIPT),
            plan_review: named("plan-review.json"),
            review_json: named("review.json"),
            review_notes: named("review.md"),
            html: named("html"),
        }
    }

    /// Every path, the view's included.
    pub fn all(&self) -> [&Path; 7] {
        [
            &self.report,
            &self.events,
            &self.transcript,
            &self.plan_review,
            &self.review_json,
            &self.review_notes,
            &self.html,
        ]
    }

    /// The first of them that is a symbolic link: researchflow never writes through one
    /// (a link there could lead anywhere, `~/.bashrc` included).
    pub fn link(&self) -> Option<&Path> {
        self.all().into_iter().find(|p| is_link(p))
    }
}

/// Whether `path` itself is a symbolic link (whatever it leads to, or to nothing).
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_named_after_the_plan_file_stem() {
        assert_eq!(changes_file_name("q-battery"), "q-battery.changes.md");
        assert_eq!(changes_file_name("plan.v2"), "plan.v2.changes.md");
    }

    #[test]
    fn every_file_is_named_after_the_plan() {
        let b = Beside::of(Path::new("runs/plan_x.json"));
        assert_eq!(b.report, Path::new("runs/plan_x.report.md"));
        assert_eq!(b.events, Path::new("runs/plan_x.events.ndjson"));
        assert_eq!(b.transcript, Path::new("runs/plan_x.transcript.jsonl"));
        assert_eq!(b.plan_review, Path::new("runs/plan_x.plan-review.json"));
        assert_eq!(b.review_json, Path::new("runs/plan_x.review.json"));
        assert_eq!(b.review_notes, Path::new("runs/plan_x.review.md"));
        assert_eq!(b.html, Path::new("runs/plan_x.html"));
        assert_eq!(b.all().len(), 7);
    }
}
