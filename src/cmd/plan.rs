//! `researchflow plan`: one planning round on a plan file.
//!
//! Resolves the plan path (argument, `RESEARCHFLOW_PLAN_FILE`, `./plan_test.json`), locks the
//! file, bootstraps it in memory, runs the round and writes the result atomically. On any
//! failure the file is left byte-identical (the bootstrap is saved together with the round).
//! The plan review of the round goes beside the plan
//! (`<plan>.plan-review.json`), as in a workflow. `--on-copy` plans on `x.copy.json`, copied from `x.json` under the copy's lock; an existing
//! copy may hold work, so it is replaced only with `--overwrite-copy`, and never while another
//! process holds it.

use std::path::PathBuf;

use serde_json::json;

use super::planner_log;
use crate::cli::{GlobalArgs, PlanArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::logging;
use crate::output::{StdoutError, absolute, print_json};
use crate::plan::{NodeStatus, PlanFile};
use crate::planner::{RoundError, RoundOutcome, bootstrap, plan_review_file};
use crate::session::{self, Session};
use crate::settings::Settings;
use crate::workflow::plan_file::{copy_valid, open_valid};

pub async fn run(args: PlanArgs, global: &GlobalArgs) -> CommandResult {
    let path = plan_path(&args)?;
    let settings = Settings::with_corpus(global.config.as_deref(), &args.corpus)
        .map_err(CommandError::usage)?;
    let (store, mut plan) = if args.on_copy {
        copy_valid(&path, args.overwrite_copy)?
    } else {
        open_valid(&path)?
    };
    let path = store.path().to_path_buf();
    logging::line(&format!("[planning] plan file: {}", path.display()));

    if let Some(done) = plan.final_node() {
        let next = match done.status {
            NodeStatus::Completed => "the run is finished".to_string(),
            _ => format!(
                "`researchflow workflow --plan {}` runs it (again)",
                path.display()
            ),
        };
        tracing::warn!(
            "[planning] `{}` already has its final summary (node {}, {}): nothing to plan; {next}",
            path.display(),
            done.node_id,
            done.status.as_str()
        );
        print_result(&plan, None)?;
        status_line(&path, "completed", &plan, 0, None);
        return Ok(ExitStatus::Success);
    }

    bootstrap(&mut plan);
    let replay = args.replay.as_deref().map(session::replay).transpose()?;
    let session = Session::for_planning(settings, replay)
        .await?
        .logging(planner_log(args.log, true));
    let result = session.plan_round(&mut plan, &path).await?;
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(err) => {
            status_line(&path, "failed", &plan, 0, Some(&err.to_string()));
            // A diverged replay is the program's doing: exit 1, like any failed round.
            let unusable = matches!(&err, RoundError::Llm(e) if e.is_unusable());
            let err = anyhow::Error::new(err).context(format!(
                "no task was planned; `{}` is unchanged",
                path.display()
            ));
            return Err(if unusable {
                CommandError::usage(err)
            } else {
                CommandError::failure(err)
            });
        }
    };

    plan.rounds += 1;
    store.save(&plan).map_err(CommandError::failure)?;
    write_verdict(store.real_path(), &outcome);
    let count = outcome.applied.planned.len();
    logging::line(&format!(
        "[planning] wrote {} with {count} task(s).",
        path.display()
    ));
    print_result(&plan, Some(&outcome)).map_err(|e| {
        e.noting(&format!(
            "the round's {count} task(s) are saved in `{}`",
            absolute(store.real_path())
        ))
    })?;
    status_line(&path, "completed", &plan, count, None);
    Ok(ExitStatus::Success)
}

/// The plan review of the round, on the log and beside the plan. The
/// file is a report, not the plan: failing to write it is a warning.
fn write_verdict(plan_path: &std::path::Path, outcome: &RoundOutcome) {
    let verdict = &outcome.applied.verdict;
    verdict.log();
    let path = crate::plan::Beside::of(plan_path).plan_review;
    if let Err(e) = plan_review_file::save(&path, verdict) {
        tracing::warn!(
            "[planning] cannot write the plan review `{}`: {e}",
            path.display()
        );
    }
}

/// The plan file: FILE, else `RESEARCHFLOW_PLAN_FILE` (or an old name of it; both through
/// clap), else `./plan_test.json`.
fn plan_path(args: &PlanArgs) -> Result<PathBuf, CommandError> {
    let path = args
        .file
        .clone()
        .unwrap_or_else(|| PathBuf::from("plan_test.json"));
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if !is_json {
        return Err(CommandError::usage(anyhow::anyhow!(
            "plan file `{}` does not end in `.json`: pass the plan file, e.g. `researchflow plan fixtures/plan_stage1.json`",
            path.display()
        )));
    }
    Ok(path)
}

/// The result on stdout: what the round planned (nothing without an outcome), the tasks the
/// gate dropped, its verdict (`plan_review`), and the check list.
fn print_result(plan: &PlanFile, outcome: Option<&RoundOutcome>) -> Result<(), StdoutError> {
    let (planned, raw, resolved, dropped, verdict) = match outcome {
        Some(o) => (
            json!(o.applied.planned),
            json!(o.answer.next_check_list),
            json!(o.applied.resolved_refs),
            o.applied
                .dropped
                .iter()
                .map(|d| {
                    let mut entry =
                        json!({"title": d.title, "issue": d.issue.id, "type": d.issue.kind});
                    if let Some(of) = d.repeats {
                        entry["repeats"] = json!(of.to_string());
                    }
                    entry
                })
                .collect(),
            json!(o.applied.verdict),
        ),
        None => (json!([]), json!([]), json!([]), Vec::new(), json!(null)),
    };
    print_json(&json!({
        "planned": planned,
        "dropped": dropped,
        "plan_review": verdict,
        "next_check_list": { "raw": raw, "resolved": resolved },
        "latest_id": plan.check_list.latest_id.map(|i| i.to_string()),
        "latest_batch": plan.latest_batch(),
    }))
}

fn status_line(
    path: &std::path::Path,
    status: &str,
    plan: &PlanFile,
    tasks: usize,
    error: Option<&str>,
) {
    let mut obj = json!({
        "agent": "planning",
        "status": status,
        "plan_file": path.display().to_string(),
        "tasks": tasks,
        "latest_id": plan.check_list.latest_id.map(|i| i.to_string()),
        "latest_batch": plan.latest_batch(),
    });
    if let Some(e) = error {
        obj["error"] = json!(e);
    }
    logging::signal(&format!("AGENT_STATUS {obj}"));
}
