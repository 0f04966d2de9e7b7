//! `researchflow review PLAN.json`: the review stage on an existing plan, over the report
//! beside it (`<stem>.report.md`), into `<stem>.review.json` and `<stem>.review.md`; its
//! events are appended to `<stem>.events.ndjson`. The plan is locked while the review runs
//! (a workflow on it would change the report) and never written.
//!
//! Exit: 0 reviewed (1 with `--fail-on-block` and a `block` verdict); 1 when a role failed; 2
//! without a model, for a plan that is not one or has no completed final summary, without its
//! report, or when a role's endpoint cannot be used; 130 interrupted. `review.enabled: false`
//! does not stop this command: asking for it is asking for a review.

use serde_json::json;

use crate::cli::{GlobalArgs, ReviewArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::output::{absolute, print_json};
use crate::plan::{NodeStatus, PlanFile};
use crate::review::ReviewStatus;
use crate::run::shutdown;
use crate::session::Session;
use crate::session::exit::verdict_exit;
use crate::settings::Settings;
use crate::workflow::plan_file::open_valid;

pub async fn run(args: ReviewArgs, global: &GlobalArgs) -> CommandResult {
    let settings = Settings::load(global.config.as_deref()).map_err(CommandError::usage)?;
    if settings.llm.is_none() {
        return Err(CommandError::usage(anyhow::anyhow!(
            "a review needs a model and none is configured: set `baseURL` and `model` (or `roles.review` and `roles.second_opinion`) in the config, or export OPENAI_BASE_URL and OPENAI_MODEL"
        )));
    }
    let (store, plan) = open_valid(&args.plan)?;
    let shown = args.plan.display();
    ensure_final(&plan, &shown.to_string())?;
    let beside = crate::plan::Beside::of(store.real_path());
    if !beside.report.is_file() {
        return Err(CommandError::usage(anyhow::anyhow!(
            "there is no report `{}` beside `{shown}`: a workflow writes it with the final summary; run `researchflow workflow --plan {shown}` to write it",
            beside.report.display()
        )));
    }
    // The review's models alone: no search client, so no corpus is indexed for nothing.
    let session = Session::models_only(settings)?;
    let summary = session
        .review(&plan, store.path(), &beside, shutdown::on_signal())
        .await?;
    print_json(&json!({
        "plan_file": absolute(store.path()),
        "report": absolute(&beside.report),
        "review": summary,
    }))?;
    drop(store);
    match summary.status {
        _ if summary.unusable => Err(CommandError::usage(anyhow::anyhow!(
            "the review stopped: {}",
            summary.errors.join("; ")
        ))),
        ReviewStatus::Failed => Err(CommandError::failure(anyhow::anyhow!(
            "the review failed: {}",
            summary.errors.join("; ")
        ))),
        _ => Ok(verdict_exit(
            ExitStatus::Success,
            Some(&summary),
            args.fail_on_block,
        )),
    }
}

/// The plan must have its final summary, completed, for there to be a report to review.
fn ensure_final(plan: &PlanFile, shown: &str) -> Result<(), CommandError> {
    let done = plan
        .final_node()
        .is_some_and(|n| n.status == NodeStatus::Completed && !n.summary.trim().is_empty());
    if done {
        return Ok(());
    }
    Err(CommandError::usage(anyhow::anyhow!(
        "`{shown}` has no completed final summary, so there is no report to review: finish it with `researchflow workflow --plan {shown}`"
    )))
}
