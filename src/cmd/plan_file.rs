//! Opening an existing plan file for a command that will change it (`plan`, `workflow
//! --plan`): locked, and refused with the findings of `validate plan` when it is structurally
//! invalid (duplicate ids, two start nodes, no nodes...), so that nothing is added to a broken
//! file.

use std::path::Path;

use crate::exit::CommandError;
use crate::plan::{PlanFile, PlanStore};
use crate::validate::validate_plan_file;

/// The locked store and the plan, or exit 2 with what is wrong.
///
/// Only structural findings refuse a file. Refs that do not parse or name unknown nodes are
/// skipped with a warning when the plan is read (SPEC section 1), so `validate plan` reports
/// them but they do not stop a run.
pub fn open_valid(path: &Path) -> Result<(PlanStore, PlanFile), CommandError> {
    let check = |value: &serde_json::Value| {
        let mut diagnostics = validate_plan_file(value);
        diagnostics
            .errors
            .retain(|f| !SKIPPED_WITH_A_WARNING.contains(&f.code.as_str()));
        (!diagnostics.errors.is_empty()).then(|| diagnostics.to_text().trim_end().to_string())
    };
    PlanStore::open_checked(path, &check).map_err(CommandError::usage)
}

/// Findings of `validate plan` that a run tolerates: bad refs are skipped, and the latest
/// id and batch are taken from the nodes when the check list lags behind.
const SKIPPED_WITH_A_WARNING: &[&str] = &[
    "INVALID_REF",
    "UNKNOWN_REF_TARGET",
    "REF_NOT_EARLIER",
    "LATEST_ID_BEHIND",
    "LATEST_BATCH_MISMATCH",
];
