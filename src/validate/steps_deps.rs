//! References and dependencies between the steps of a step plan (rules R1-R3 and D1-D2 of
//! `steps`): which step each `${step_id.outputs.name}` names, the dependency graph built from
//! `depends_on` and from the references of steps without it, whether every referenced step is
//! sure to run first, and the execution order or the cycles. The rules run in that order
//! because each needs the one before: R3 asks the graph, and the graph needs the resolved
//! references. It must not judge a step's own fields (that is `steps_shape`) nor its inputs
//! against its atom beyond the outputs a reference names.

use std::collections::HashMap;

use serde_json::Value;

use super::atoms::AtomRegistry;
use super::graph::DepGraph;
use super::json_path;
use super::step_refs::{self, StepRef};
use super::steps_shape::Step;
use crate::diagnostics::Diagnostics;

/// The references of the plan once resolved.
pub(super) struct Links {
    /// Per step, each of its references that names a step of the plan, with that step's index.
    resolved: Vec<Vec<(StepRef, usize)>>,
    /// Per step, whether another step or `plan.outputs` reads one of its outputs.
    pub(super) used: Vec<bool>,
}

/// MALFORMED_STEP_REF, R1 and R2, for the references in every step's inputs and then in
/// `plan.outputs`.
pub(super) fn resolve_refs(
    doc: &Value,
    steps: &[Step<'_>],
    ids: &HashMap<&str, usize>,
    atoms: &AtomRegistry,
    d: &mut Diagnostics,
) -> Links {
    let mut malformed = Vec::new();
    let mut refs: Vec<Vec<StepRef>> = Vec::with_capacity(steps.len());
    for s in steps {
        let mut list = Vec::new();
        if let Some(inputs) = s.inputs {
            let base = json_path::key(&s.path, "inputs");
            for (k, v) in inputs {
                step_refs::collect(v, &json_path::key(&base, k), &mut list, &mut malformed);
            }
        }
        refs.push(list);
    }
    let mut output_refs = Vec::new();
    if let Some(outputs) = doc.pointer("/plan/outputs").filter(|v| v.is_object()) {
        step_refs::collect(outputs, "plan.outputs", &mut output_refs, &mut malformed);
    }
    for (path, text) in malformed {
        d.warn(
            "MALFORMED_STEP_REF",
            path,
            format!("`{text}` is not a step reference: write `${{step_id.outputs.name}}`"),
        );
    }
    let mut used = vec![false; steps.len()];
    let mut resolved = Vec::with_capacity(steps.len());
    for (i, list) in refs.into_iter().enumerate() {
        let mut found = Vec::new();
        for r in list {
            if let Some(t) = resolve(&r, steps, ids, atoms, d) {
                // A step reading its own output does not make that output used: R3 rejects it.
                used[t] |= t != i;
                found.push((r, t));
            }
        }
        resolved.push(found);
    }
    for r in &output_refs {
        if let Some(t) = resolve(r, steps, ids, atoms, d) {
            used[t] = true;
        }
    }
    Links { resolved, used }
}

/// R1 and R2 for one reference; the index of the step it names.
fn resolve(
    r: &StepRef,
    steps: &[Step<'_>],
    ids: &HashMap<&str, usize>,
    atoms: &AtomRegistry,
    d: &mut Diagnostics,
) -> Option<usize> {
    let Some(&target) = ids.get(r.step.as_str()) else {
        d.error(
            "UNKNOWN_STEP_REF",
            r.path.clone(),
            format!(
                "reference to unknown step `{}`: use a `step_id` of this plan or a step index",
                r.step
            ),
        );
        return None;
    };
    if let Some(atom) = steps[target].atom.and_then(|id| atoms.get(id))
        && !atom.has_output(&r.output)
    {
        d.error(
            "UNKNOWN_OUTPUT_FIELD",
            r.path.clone(),
            format!(
                "step `{}` (atom `{}`) has no output `{}`: use one of [{}]",
                r.step,
                atom.id,
                r.output,
                atom.outputs.join(", ")
            ),
        );
    }
    Some(target)
}

/// D1 and the graph: an edge per known `depends_on` entry, and for a step without `depends_on`
/// an implicit edge per reference. A reference to the step itself fails R3 here, as no edge
/// could ever satisfy it.
pub(super) fn dependency_graph(
    steps: &[Step<'_>],
    ids: &HashMap<&str, usize>,
    links: &Links,
    d: &mut Diagnostics,
) -> DepGraph {
    let mut graph = DepGraph::new(steps.len());
    for (i, s) in steps.iter().enumerate() {
        for &(j, dep) in s.depends_on.iter().flatten() {
            match ids.get(dep) {
                Some(&t) => graph.add_edge(i, t),
                None => {
                    d.error(
                        "UNKNOWN_DEPENDENCY",
                        json_path::index(&json_path::key(&s.path, "depends_on"), j),
                        format!(
                            "`depends_on` names unknown step `{dep}`: use a `step_id` of this plan or a step index"
                        ),
                    );
                }
            }
        }
    }
    for (i, s) in steps.iter().enumerate() {
        for (r, t) in &links.resolved[i] {
            if *t == i {
                d.error(
                    "REF_BEFORE_DEPENDENCY",
                    r.path.clone(),
                    format!(
                        "step `{}` references its own output `{}`: take it from an earlier step",
                        s.key, r.output
                    ),
                );
            } else if s.depends_on.is_none() {
                graph.add_edge(i, *t);
            }
        }
    }
    graph
}

/// R3 for the steps that declared their dependencies: each step they read must be reachable
/// through the graph. Steps without `depends_on` got an edge per reference instead.
pub(super) fn check_declared_refs(
    steps: &[Step<'_>],
    links: &Links,
    graph: &DepGraph,
    d: &mut Diagnostics,
) {
    for (i, s) in steps.iter().enumerate() {
        if s.depends_on.is_none() {
            continue;
        }
        for (r, t) in &links.resolved[i] {
            let t = *t;
            if t != i && !graph.reaches(i, t) {
                d.error(
                    "REF_BEFORE_DEPENDENCY",
                    r.path.clone(),
                    format!(
                        "step `{}` reads `{}` of step `{}` but does not depend on it: add `{}` to its `depends_on`",
                        s.key, r.output, steps[t].key, steps[t].key
                    ),
                );
            }
        }
    }
}

/// D2, and `execution_order` when the plan is valid so far.
pub(super) fn order_or_cycles(steps: &[Step<'_>], graph: &DepGraph, d: &mut Diagnostics) {
    match graph.topo_order() {
        Ok(order) => {
            if d.is_valid() {
                d.execution_order = Some(order.iter().map(|&i| steps[i].key.clone()).collect());
            }
        }
        Err(cycles) => {
            for cycle in cycles {
                let Some(&first) = cycle.first() else {
                    continue;
                };
                let mut names: Vec<String> = cycle
                    .iter()
                    .map(|&i| format!("`{}`", steps[i].key))
                    .collect();
                names.push(format!("`{}`", steps[first].key));
                d.error(
                    "CIRCULAR_DEPENDENCY",
                    steps[first].path.clone(),
                    format!(
                        "steps {} depend on each other in a cycle (each depends on the next, through `depends_on` or references): break one of these dependencies",
                        names.join(" -> ")
                    ),
                );
            }
        }
    }
}
