//! The plan review beside the plan: `<plan>.plan-review.json`
//! holds the latest round's [`PlanReview`] (`{round, ok, issues}`), replaced atomically after
//! each round. It is a report, never read back; it never replaces a file that is not one.

use std::path::Path;

use super::plan_review::PlanReview;

/// The most a verdict file we replace may hold; anything bigger is not one of ours.
const FILE_MAX_BYTES: u64 = 4 << 20;

/// Replaces the verdict file at `path` with `verdict`, atomically. A file there that is not a
/// verdict (a plan named `x.plan-review.json`, say) is left alone: an error.
pub fn save(path: &Path, verdict: &PlanReview) -> std::io::Result<()> {
    let replaceable = match crate::files::read_bounded(path, FILE_MAX_BYTES) {
        Ok(text) => serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|v| {
            v.get("round").is_some() && v.get("issues").is_some() && v.get("nodes").is_none()
        }),
        Err(e) => e.into_io().kind() == std::io::ErrorKind::NotFound,
    };
    if !replaceable {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            "the file there is not a plan review: left as it is",
        ));
    }
    let mut text = serde_json::to_string_pretty(verdict).map_err(std::io::Error::other)?;
    text.push('\n');
    crate::atomic::write(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planner::plan_review::{Issue, Severity};

    #[test]
    fn the_verdict_file_sits_beside_the_plan_in_its_shape() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("p.plan-review.json");
        let verdict = PlanReview {
            round: 2,
            ok: false,
            issues: vec![Issue {
                id: "R2-1".into(),
                kind: "DUPLICATE_TASK".into(),
                severity: Severity::Block,
                message: "task `b` repeats node b".into(),
                path: "tasks[0]".into(),
            }],
        };
        save(&path, &verdict).expect("saved");
        save(&path, &verdict).expect("a verdict replaces a verdict");
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("read")).expect("json");
        assert_eq!(
            v,
            serde_json::json!({"round": 2, "ok": false, "issues": [{
                "id": "R2-1", "type": "DUPLICATE_TASK", "severity": "block", "path": "tasks[0]",
                "message": "task `b` repeats node b"
            }]})
        );
    }

    #[test]
    fn a_file_that_is_not_a_review_is_never_replaced() {
        let dir = tempfile::tempdir().expect("tempdir");
        let verdict = PlanReview {
            round: 1,
            ok: true,
            issues: vec![],
        };
        let plan = r#"{"version": 1, "round": 3, "issues": [], "nodes": []}"#;
        for (name, text) in [
            ("a.plan-review.json", plan),
            ("b.plan-review.json", "not json"),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).expect("write");
            assert!(save(&path, &verdict).is_err(), "{name}");
            assert_eq!(std::fs::read_to_string(&path).expect("read"), text);
        }
    }
}
