//! Runs as the tools show them, read from their files (never locked, never written): a plan
//! file's status, question and final sources, the report beside it, and the totals of its
//! last `run_finished` event ([`run_out`]); the runs of a folder ([`list`]). A run this server
//! has in flight is `running`, whatever its file says; a plan without an outcome that this
//! server is not running is `unfinished` (running elsewhere, or stopped by a crash).
//!
//! Every file is read only through [`Roots::open_inside`]: a report, event log or plan that
//! is a symbolic link leading out of the roots (now, or swapped in while it is read), or a
//! file with other hard links, is treated as absent, neither read nor named. A plan is read
//! through [`plan_check`](super::plan_check), whose refusals quote nothing of the file.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::Value;

use super::active::RunState;
use super::plan_check;
use super::roots::Roots;
use super::tools::{RunEntry, RunOut, SourceOut, TotalsOut};
use crate::events::Totals;
use crate::files::read_opened;
use crate::output::absolute;
use crate::plan::{Beside, PlanFile};

/// How much of the end of an event log is read for the run's totals.
const EVENTS_TAIL_BYTES: u64 = 1024 * 1024;

/// The largest report read into a tool's result.
pub const REPORT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Reads the plan file at `path` (a real path within the roots).
pub fn read_plan(roots: &Roots, path: &Path) -> Result<PlanFile, String> {
    plan_check::read_plan(roots, path)
}

/// The run of the plan file at `path` (a real path within the roots), as `get_report` (and
/// `research` at its end) gives it.
pub fn run_out(roots: &Roots, path: &Path, state: Option<RunState>) -> Result<RunOut, String> {
    let plan = read_plan(roots, path)?;
    let files = Beside::of(path);
    let report = roots
        .open_inside(&files.report)
        .ok()
        .and_then(|(file, meta)| read_opened(file, &meta, &files.report, REPORT_MAX_BYTES).ok());
    let sources = plan
        .final_node()
        .map(|node| {
            node.sources
                .iter()
                .enumerate()
                .map(|(i, s)| SourceOut {
                    n: i + 1,
                    url: s.url.clone(),
                    title: s.title.clone(),
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(RunOut {
        status: status(&plan, state),
        reason: plan.outcome.as_ref().and_then(|o| o.reason.clone()),
        answered: plan.outcome.as_ref().and_then(|o| o.answered),
        report_file: report.is_some().then(|| absolute(&files.report)),
        report_markdown: report,
        sources,
        plan_file: absolute(path),
        totals: roots
            .open_inside(&files.events)
            .ok()
            .and_then(|(file, meta)| last_totals(file, meta.len()))
            .as_ref()
            .map(TotalsOut::from),
    })
}

/// `running` while this server runs it, else the outcome it recorded, else `unfinished`.
fn status(plan: &PlanFile, state: Option<RunState>) -> String {
    match (state, &plan.outcome) {
        (Some(_), _) => "running".into(),
        (None, Some(outcome)) => outcome.status.clone(),
        (None, None) => "unfinished".into(),
    }
}

/// The runs in `dir` (a real path within the roots): every `.json` file in it that lies
/// within the roots and reads as a plan file, newest first.
pub fn list(
    roots: &Roots,
    dir: &Path,
    state: impl Fn(&Path) -> Option<RunState>,
) -> Result<Vec<RunEntry>, String> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read the folder `{}`: {e}", dir.display()))?;
    let mut runs: Vec<(String, RunEntry)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        // Other JSON files sit beside plans (reviews, a batch's manifest): not runs. One
        // outside the roots is refused as they are.
        let Ok(plan) = read_plan(roots, &path) else {
            continue;
        };
        let report = Beside::of(&path).report;
        let report = roots.open_inside(&report).ok().map(|_| report);
        runs.push((
            plan.created_at.clone().unwrap_or_default(),
            RunEntry {
                plan_file: absolute(&path),
                question: plan.question().to_string(),
                status: status(&plan, state(&path)),
                answered: plan.outcome.as_ref().and_then(|o| o.answered),
                finished_at: plan.outcome.as_ref().map(|o| o.finished_at.clone()),
                report_file: report.as_deref().map(absolute),
            },
        ));
    }
    runs.sort_by(|a, b| {
        b.0.cmp(&a.0)
            .then_with(|| a.1.plan_file.cmp(&b.1.plan_file))
    });
    Ok(runs.into_iter().map(|(_, run)| run).collect())
}

/// The totals of the last `run_finished` event of an event log (`file`, `len` bytes long),
/// when it has one.
fn last_totals(mut file: std::fs::File, len: u64) -> Option<Totals> {
    file.seek(SeekFrom::Start(len.saturating_sub(EVENTS_TAIL_BYTES)))
        .ok()?;
    let mut tail = Vec::new();
    file.take(EVENTS_TAIL_BYTES).read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    tail.lines().rev().find_map(|line| {
        let event: Value = serde_json::from_str(line).ok()?;
        if event.get("event")? != "run_finished" {
            return None;
        }
        serde_json::from_value(event.get("totals")?.clone()).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_totals_are_the_last_run_finished_events() {
        let dir = tempfile::tempdir().expect("tempdir");
        let events = dir.path().join("p.events.ndjson");
        std::fs::write(
            &events,
            concat!(
                r#"{"event":"run_finished","totals":{"rounds":1,"total_tokens":5}}"#,
                "\n",
                r#"{"event":"run_started"}"#,
                "\n",
                r#"{"event":"run_finished","totals":{"rounds":3,"total_tokens":9}}"#,
                "\n",
                "{\"event\":\"task_sta"
            ),
        )
        .expect("write");
        let file = std::fs::File::open(&events).expect("open");
        let len = file.metadata().expect("meta").len();
        let totals = last_totals(file, len).expect("totals");
        assert_eq!((totals.rounds, totals.tokens.total_tokens), (3, 9));
        let empty = dir.path().join("empty.ndjson");
        std::fs::write(&empty, "").expect("write");
        let file = std::fs::File::open(&empty).expect("open");
        assert!(last_totals(file, 0).is_none());
    }
}
