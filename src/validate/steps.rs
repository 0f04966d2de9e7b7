//! `validate steps`: a structured step plan (docs/SPEC.md, "Step plans") checked against an
//! atom registry.
//!
//! Rules, in the order they run (every finding is collected; nothing stops at the first):
//!
//! | rule | checks | code(s) | path |
//! |------|--------|---------|------|
//! | S1 | root has `target` (string) | `MISSING_FIELD` / `INVALID_TYPE` | `target` |
//! | S2 | root has `plan` (object) | `MISSING_FIELD` / `INVALID_TYPE` | `plan` |
//! | S3 | `plan.steps` is a non-empty array | `MISSING_FIELD` / `INVALID_TYPE` / `EMPTY_STEPS` | `plan.steps` |
//! | S4 | each step is an object with `id` (string), `target` (string), `inputs` (object) | `MISSING_FIELD` / `INVALID_TYPE` | `plan.steps[i].id` ... |
//! | S5 | `step_id`, when present, is a non-empty string | `INVALID_TYPE` / `EMPTY_STEP_ID` | `plan.steps[i].step_id` |
//! | S6 | `depends_on`, when present, is an array of strings | `INVALID_TYPE` | `plan.steps[i].depends_on[j]` |
//! | S7 | `plan.outputs`, when present, is an object | `INVALID_TYPE` | `plan.outputs` |
//! | U1 | effective step ids are unique | `DUPLICATE_STEP_ID` | `plan.steps[i].step_id` (or `plan.steps[i]`) |
//! | A1 | `id` names an atom of the registry | `UNKNOWN_ATOM_ID` | `plan.steps[i].id` |
//! | A2 | every input key is declared by the atom | `UNKNOWN_INPUT_FIELD` | `plan.steps[i].inputs.<key>` |
//! | A3 | every required input is present and not null | `MISSING_REQUIRED_INPUT` | `plan.steps[i].inputs` |
//! | R1 | a reference names a step of the plan | `UNKNOWN_STEP_REF` | the string holding it |
//! | R2 | the referenced output is declared by that step's atom | `UNKNOWN_OUTPUT_FIELD` | the string holding it |
//! | R3 | the referenced step is guaranteed to run first (below) | `REF_BEFORE_DEPENDENCY` | the string holding it |
//! | D1 | every `depends_on` entry names a step of the plan | `UNKNOWN_DEPENDENCY` | `plan.steps[i].depends_on[j]` |
//! | D2 | the dependency graph has no cycle | `CIRCULAR_DEPENDENCY` | `plan.steps[k]`, k the lowest index on the cycle |
//!
//! Warnings: `UNUSED_STEP_OUTPUT` (a step whose atom declares outputs, none of which any step or
//! `plan.outputs` references; path `plan.steps[i]`) and `MALFORMED_STEP_REF` (a `${...}` that
//! mentions outputs but is not `${step_id.outputs.name}`).
//!
//! Step identity: a step's effective id is its `step_id`, or its array index as a string (`"0"`)
//! when it has none (or when its `step_id` is invalid). Explicit ids may not repeat, nor collide
//! with another step's implicit index; references and `depends_on` to a repeated id resolve to
//! the first step holding it.
//!
//! References (`${step_id.outputs.name}`) are searched in every string of `inputs`, at any depth
//! and inside longer strings, and in `plan.outputs` (R1 and R2 only there).
//!
//! Dependencies and R3, precisely (without an explicit `depends_on`, references create implicit
//! dependencies, then the topological check runs):
//! - A step **without** `depends_on` depends on every step it references: each reference adds an
//!   implicit edge. R3 cannot fail for it; a reference loop shows up as `CIRCULAR_DEPENDENCY`.
//! - A step **with** `depends_on` (even `[]`) has declared its dependencies; its references add no
//!   edge. R3 fails for each step it references that is not reachable from it through the graph
//!   (its `depends_on`, then transitively every other step's declared or implicit edges).
//! - A step referencing its own outputs always fails R3.
//!
//! `execution_order` (only when valid) is Kahn's topological order with ties broken by array
//! index, so independent steps keep the order they are written in. All work is linear in the
//! size of the document, except R3's reachability search, which runs only for references not
//! already covered by a direct `depends_on` entry.
//!
//! This file runs the phases in the order of the table: the shape (S1-S7, `steps_shape`), then
//! U1 and A1-A3 (here), then references and dependencies (R1-R3, D1-D2, `steps_deps`), then the
//! unused-output warning (here). It must not read files: the command layer loads the documents.

use std::collections::HashMap;

use serde_json::Value;

use super::atoms::AtomRegistry;
use super::json_path;
use super::steps_deps::{check_declared_refs, dependency_graph, order_or_cycles, resolve_refs};
use super::steps_shape::{Step, check_root, check_step};
use crate::diagnostics::Diagnostics;

/// Checks a parsed step plan against a registry.
pub fn validate_steps(doc: &Value, atoms: &AtomRegistry) -> Diagnostics {
    let mut d = Diagnostics::new();
    let Some(steps) = check_root(doc, &mut d) else {
        return d;
    };
    let steps: Vec<Step<'_>> = steps
        .iter()
        .enumerate()
        .map(|(i, v)| check_step(i, v, &mut d))
        .collect();
    let ids = index_step_ids(&steps, &mut d);
    for s in &steps {
        check_atom(s, atoms, &mut d);
    }
    let links = resolve_refs(doc, &steps, &ids, atoms, &mut d);
    let graph = dependency_graph(&steps, &ids, &links, &mut d);
    check_declared_refs(&steps, &links, &graph, &mut d);
    order_or_cycles(&steps, &graph, &mut d);
    // While references are broken, which outputs are read is not known for sure.
    if d.is_valid() {
        warn_unused_outputs(&steps, &links.used, atoms, &mut d);
    }
    d
}

/// U1; returns the first step holding each effective id, which references and `depends_on`
/// resolve to.
fn index_step_ids<'s>(steps: &'s [Step<'_>], d: &mut Diagnostics) -> HashMap<&'s str, usize> {
    let mut ids: HashMap<&str, usize> = HashMap::with_capacity(steps.len());
    for (i, s) in steps.iter().enumerate() {
        if let Some(&first) = ids.get(s.key.as_str()) {
            let path = if s.explicit_id {
                json_path::key(&s.path, "step_id")
            } else {
                s.path.clone()
            };
            d.error(
                "DUPLICATE_STEP_ID",
                path,
                format!(
                    "step id `{}` is already used by plan.steps[{first}]: give each step a unique `step_id`",
                    s.key
                ),
            );
        } else {
            ids.insert(s.key.as_str(), i);
        }
    }
    ids
}

/// A1-A3 for one step.
fn check_atom(s: &Step<'_>, atoms: &AtomRegistry, d: &mut Diagnostics) {
    let Some(atom_id) = s.atom else { return };
    let Some(atom) = atoms.get(atom_id) else {
        d.error(
            "UNKNOWN_ATOM_ID",
            json_path::key(&s.path, "id"),
            format!("unknown atom id `{atom_id}`: use an id from the atom registry"),
        );
        return;
    };
    let Some(inputs) = s.inputs else { return };
    let inputs_path = json_path::key(&s.path, "inputs");
    for key in inputs.keys() {
        if atom.input(key).is_none() {
            let declared: Vec<&str> = atom.inputs.iter().map(|i| i.name.as_str()).collect();
            d.error(
                "UNKNOWN_INPUT_FIELD",
                json_path::key(&inputs_path, key),
                format!(
                    "atom `{atom_id}` has no input `{key}`: use one of [{}]",
                    declared.join(", ")
                ),
            );
        }
    }
    for input in atom.inputs.iter().filter(|i| i.required) {
        if inputs.get(&input.name).is_none_or(Value::is_null) {
            d.error(
                "MISSING_REQUIRED_INPUT",
                inputs_path.clone(),
                format!(
                    "required input `{}` of atom `{atom_id}` is missing: set it to a value or a `${{step_id.outputs.name}}` reference",
                    input.name
                ),
            );
        }
    }
}

fn warn_unused_outputs(
    steps: &[Step<'_>],
    used: &[bool],
    atoms: &AtomRegistry,
    d: &mut Diagnostics,
) {
    for (i, s) in steps.iter().enumerate() {
        let declares_outputs = s
            .atom
            .and_then(|id| atoms.get(id))
            .is_some_and(|a| !a.outputs.is_empty());
        if declares_outputs && !used[i] {
            d.warn(
                "UNUSED_STEP_OUTPUT",
                s.path.clone(),
                format!(
                    "no step and no `plan.outputs` entry reads an output of step `{}`: reference it or drop the step",
                    s.key
                ),
            );
        }
    }
}
