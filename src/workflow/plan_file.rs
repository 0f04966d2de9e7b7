//! The file store of a run's plan: opening an existing plan file for a command that will
//! change it (`plan`, `workflow --plan`, a batch's question, `plan --on-copy` on its copy): locked, and refused with the findings of `validate
//! plan` when it is structurally invalid (duplicate ids, two start nodes, no nodes...), so that
//! nothing is added to a broken file; the bad refs it tolerates are warned about, once each.
//! And creating a new run's plan file under a name no other run takes ([`create_fresh`]).

use std::cell::RefCell;
use std::path::Path;

use serde_json::Value;

use crate::diagnostics::Finding;
use crate::exit::CommandError;
use crate::plan::store::{Check, copy_beside};
use crate::plan::{PlanFile, PlanStore, StoreError};
use crate::validate::validate_plan_file;

/// The locked store and the plan, or exit 2 with what is wrong.
///
/// Only structural findings refuse a file. Refs that do not parse or name unknown nodes are
/// skipped with a warning (SPEC section 1): it is given here, once per ref, naming the file,
/// the field and the node it stands in, so that the rounds and tasks that skip the ref later
/// need not say it again (they log it at debug level). `validate plan` reports them as errors.
pub fn open_valid(path: &Path) -> Result<(PlanStore, PlanFile), CommandError> {
    checked(path, |check| PlanStore::open_checked(path, check))
}

/// `plan --on-copy`: copies `x.json` to `x.copy.json` under the copy's lock (replacing an
/// existing copy only with `overwrite`) and opens the copy, as [`open_valid`] opens a file;
/// an invalid original is refused before anything is copied.
pub fn copy_valid(path: &Path, overwrite: bool) -> Result<(PlanStore, PlanFile), CommandError> {
    checked(path, |check| copy_beside(path, overwrite, check))
}

/// Creates a new plan file for `query` (already cleaned) in `dir`, named
/// `plan_<timestamp>-<suffix>.json`, a name no other run takes, even one started in the same
/// second: a random suffix makes a clash unlikely, and `create` refusing an existing file
/// makes it impossible (another suffix is tried).
pub fn create_fresh(dir: &Path, query: &str) -> Result<(PlanStore, PlanFile), CommandError> {
    let mut last = None;
    for _ in 0..8 {
        let id = crate::plan::workflow_id();
        let name = dir.join(format!("plan_{}.json", id.trim_start_matches("wf-")));
        let plan = PlanFile::new(query, id, crate::clock::now());
        match PlanStore::create(&name, &plan) {
            Ok(store) => return Ok((store, plan)),
            Err(e @ (StoreError::AlreadyExists { .. } | StoreError::Locked { .. })) => {
                last = Some(e)
            }
            Err(e) => return Err(CommandError::usage(e)),
        }
    }
    Err(CommandError::usage(anyhow::anyhow!(
        "cannot find a free plan file name under `{}/`: {}",
        dir.display(),
        last.map_or_else(String::new, |e| e.to_string())
    )))
}

/// Runs `open` with the check that refuses a structurally invalid file, then warns about the
/// refs it tolerated.
fn checked(
    path: &Path,
    open: impl FnOnce(Check<'_>) -> Result<(PlanStore, PlanFile), StoreError>,
) -> Result<(PlanStore, PlanFile), CommandError> {
    let tolerated = RefCell::new(Vec::new());
    let check = |value: &Value| {
        let mut diagnostics = validate_plan_file(value);
        let (kept, errors): (Vec<Finding>, Vec<Finding>) = std::mem::take(&mut diagnostics.errors)
            .into_iter()
            .partition(|f| TOLERATED.contains(&f.code.as_str()));
        diagnostics.errors = errors;
        if !diagnostics.errors.is_empty() {
            return Some(diagnostics.to_text().trim_end().to_string());
        }
        let warned = kept.iter().filter(|f| WARNED.contains(&f.code.as_str()));
        *tolerated.borrow_mut() = warned.map(|f| ref_warning(path, value, f)).collect();
        None
    };
    let opened = open(&check).map_err(CommandError::usage)?;
    for warning in tolerated.into_inner() {
        tracing::warn!("{warning}");
    }
    Ok(opened)
}

/// Findings of `validate plan` that a run tolerates: bad refs are skipped (or, a `:title` or
/// a ref to a later node, read as they are), and the latest id and batch are taken from the
/// nodes when the check list lags behind.
pub const TOLERATED: &[&str] = &[
    "INVALID_REF",
    "UNKNOWN_REF_TARGET",
    "REF_NOT_EARLIER",
    "LATEST_ID_BEHIND",
    "LATEST_BATCH_MISMATCH",
];

/// The tolerated findings that are warned about: those of refs. A check list that lags
/// behind the nodes is ordinary (the planning round infers it).
const WARNED: &[&str] = &["INVALID_REF", "UNKNOWN_REF_TARGET", "REF_NOT_EARLIER"];

/// `plan `x.json`, `nodes[2].p_node` (node `c`): ref `yy:info` names no node ...; skipped`.
fn ref_warning(path: &Path, plan: &Value, finding: &Finding) -> String {
    let node = node_of(plan, &finding.path)
        .map(|id| format!(" (node `{id}`)"))
        .unwrap_or_default();
    let skipped = if finding.code == "UNKNOWN_REF_TARGET" {
        "; the ref is skipped"
    } else {
        ""
    };
    format!(
        "plan `{}`, `{}`{node}: {}{skipped}",
        path.display(),
        finding.path,
        finding.message
    )
}

/// The id of the node a finding's path (`nodes[2].p_node`) is in.
fn node_of<'a>(plan: &'a Value, path: &str) -> Option<&'a str> {
    let index = path.strip_prefix("nodes[")?.split(']').next()?;
    let index: usize = index.parse().ok()?;
    plan.get("nodes")?.get(index)?.get("node_id")?.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ref_warning_names_the_file_the_field_and_the_node() {
        let plan = serde_json::json!({"nodes": [{"node_id": "a"}, {"node_id": "c"}]});
        let finding = |code: &str, path: &str| Finding {
            code: code.into(),
            message: "ref `yy:info` names no node of this file: fix the id or drop the ref".into(),
            path: path.into(),
        };
        assert_eq!(
            ref_warning(
                Path::new("p.json"),
                &plan,
                &finding("UNKNOWN_REF_TARGET", "nodes[1].p_node")
            ),
            "plan `p.json`, `nodes[1].p_node` (node `c`): ref `yy:info` names no node of this file: fix the id or drop the ref; the ref is skipped"
        );
        let warning = ref_warning(
            Path::new("p.json"),
            &plan,
            &finding("INVALID_REF", "check_list.refs[0]"),
        );
        assert!(
            warning.starts_with("plan `p.json`, `check_list.refs[0]`: ref"),
            "{warning}"
        );
        assert!(!warning.ends_with("skipped"), "{warning}");
    }
}
