//! One question's digest in one run: what [`crate::compare::diff`] found since the run it
//! was compared with, each change with its kind and its level (how much it is worth telling:
//! [`NotifyOn`]). It is written beside the plan (`<name>.digest.json`), counted in the run's
//! record, and sent to `--notify` targets.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::cli::NotifyOn;
use crate::compare::{FactChange, PlanDiff};

/// How much of a reworded finding's summary a digest quotes (the changes file has more).
const EXCERPT_CHARS: usize = 600;

/// A digest's file name beside the plan `<name>.json`.
pub fn digest_file_name(name: &str) -> String {
    format!("{name}.digest.json")
}

/// One change.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    /// `fact_changed`, `fact_new`, `fact_gone`, `source_new`, `source_gone`,
    /// `direction_new`, `direction_dropped` or `finding_reworded`.
    pub kind: &'static str,
    /// The least `--notify-on` that tells it.
    pub level: NotifyOn,
    /// What it was (a sentence, a source's URL, a direction's title), when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// What it is now.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// A changed fact's figures and names only the old claim states, and only the new one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values_before: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values_after: Vec<String>,
}

impl Change {
    fn new(kind: &'static str, level: NotifyOn, before: Option<&str>, after: Option<&str>) -> Self {
        Change {
            kind,
            level,
            before: before.map(str::to_string),
            after: after.map(str::to_string),
            values_before: Vec::new(),
            values_after: Vec::new(),
        }
    }
}

/// Every change of `d`, the facts first.
pub fn changes(d: &PlanDiff) -> Vec<Change> {
    let mut out: Vec<Change> = d.facts.iter().map(fact).collect();
    let url = |s: &crate::plan::Source| s.url.clone();
    for s in &d.sources_new {
        out.push(Change::new(
            "source_new",
            NotifyOn::Sources,
            None,
            Some(&url(s)),
        ));
    }
    for s in &d.sources_gone {
        out.push(Change::new(
            "source_gone",
            NotifyOn::Sources,
            Some(&url(s)),
            None,
        ));
    }
    for n in &d.nodes_new {
        out.push(Change::new(
            "direction_new",
            NotifyOn::Any,
            None,
            Some(&n.title),
        ));
    }
    for n in &d.nodes_gone {
        let title = Some(n.title.as_str());
        out.push(Change::new("direction_dropped", NotifyOn::Any, title, None));
    }
    for c in &d.changed {
        let excerpt = |summary: &str| crate::text::truncate(summary, EXCERPT_CHARS);
        let (before, after) = (excerpt(&c.old_summary), excerpt(&c.new_summary));
        out.push(Change::new(
            "finding_reworded",
            NotifyOn::Any,
            Some(&before),
            Some(&after),
        ));
    }
    out
}

fn fact(f: &FactChange) -> Change {
    match f {
        FactChange::Changed {
            before,
            after,
            values_before,
            values_after,
        } => Change {
            values_before: values_before.clone(),
            values_after: values_after.clone(),
            ..Change::new("fact_changed", NotifyOn::Facts, Some(before), Some(after))
        },
        FactChange::New { after } => Change::new("fact_new", NotifyOn::Facts, None, Some(after)),
        FactChange::Gone { before } => {
            Change::new("fact_gone", NotifyOn::Facts, Some(before), None)
        }
    }
}

/// How many changes of each kind.
pub fn counts(changes: &[Change]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for c in changes {
        *out.entry(c.kind.to_string()).or_default() += 1;
    }
    out
}

/// Whether `changes` hold one that `notify_on` tells.
pub fn worth_telling(changes: &[Change], notify_on: NotifyOn) -> bool {
    changes.iter().any(|c| c.level >= notify_on)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_is_told_at_its_level_and_every_level_below() {
        let fact = FactChange::New {
            after: "A cell holds 5 Ah.".into(),
        };
        let facts = [super::fact(&fact)];
        let direction = [Change::new("direction_new", NotifyOn::Any, None, Some("x"))];
        assert!(worth_telling(&facts, NotifyOn::Facts) && worth_telling(&facts, NotifyOn::Any));
        assert!(!worth_telling(&direction, NotifyOn::Sources));
        assert!(worth_telling(&direction, NotifyOn::Any));
        assert_eq!(counts(&facts)["fact_new"], 1);
    }
}
