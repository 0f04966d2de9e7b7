//! Opening an existing plan file for a command that will change it (`plan`, `workflow
//! --plan`, `plan --on-copy` on its copy): locked, and refused with the findings of `validate
//! plan` when it is structurally invalid (duplicate ids, two start nodes, no nodes...), so that
//! nothing is added to a broken file.

use std::path::Path;

use crate::exit::CommandError;
use crate::plan::store::copy_beside;
use crate::plan::{PlanFile, PlanStore};
use crate::validate::validate_plan_file;

/// The locked store and the plan, or exit 2 with what is wrong.
///
/// Only structural findings refuse a file. Refs that do not parse or name unknown nodes are
/// skipped with a warning when the plan is read (SPEC section 1), so `validate plan` reports
/// them but they do not stop a run.
pub fn open_valid(path: &Path) -> Result<(PlanStore, PlanFile), CommandError> {
    PlanStore::open_checked(path, &structural_findings).map_err(CommandError::usage)
}

/// `plan --on-copy`: copies `x.json` to `x.copy.json` under the copy's lock (replacing an
/// existing copy only with `overwrite`) and opens the copy, as [`open_valid`] opens a file;
/// an invalid original is refused before anything is copied.
pub fn copy_valid(path: &Path, overwrite: bool) -> Result<(PlanStore, PlanFile), CommandError> {
    copy_beside(path, overwrite, &structural_findings).map_err(CommandError::usage)
}

/// The findings that refuse a plan file, as text, or `None`.
fn structural_findings(value: &serde_json::Value) -> Option<String> {
    let mut diagnostics = validate_plan_file(value);
    diagnostics
        .errors
        .retain(|f| !SKIPPED_WITH_A_WARNING.contains(&f.code.as_str()));
    (!diagnostics.errors.is_empty()).then(|| diagnostics.to_text().trim_end().to_string())
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
