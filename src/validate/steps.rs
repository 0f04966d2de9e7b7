//! `validate steps`: a structured step plan (seed 003) checked against an atom registry.
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
//! Dependencies and R3, precisely (seed 003: "without an explicit depends_on, references create
//! implicit dependencies, then the topological check runs"):
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
//! already covered by a direct `depends_on` entry. This module must not read files: the command
//! layer loads the documents.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::atoms::AtomRegistry;
use super::describe::{invalid_type, kind, require_string};
use super::graph::DepGraph;
use super::json_path;
use super::step_refs::{self, StepRef};
use crate::diagnostics::Diagnostics;

/// What the checks need to know of one step.
struct Step<'a> {
    path: String,
    atom: Option<&'a str>,
    inputs: Option<&'a Map<String, Value>>,
    /// The effective id: `step_id`, else the index.
    key: String,
    explicit_id: bool,
    /// `Some` when `depends_on` is an array: its string entries with their positions.
    depends_on: Option<Vec<(usize, &'a str)>>,
    refs: Vec<StepRef>,
}

/// Checks a parsed step plan against a registry.
pub fn validate_steps(doc: &Value, atoms: &AtomRegistry) -> Diagnostics {
    let mut d = Diagnostics::new();
    let Some(steps) = check_root(doc, &mut d) else {
        return d;
    };
    let mut steps: Vec<Step<'_>> = steps
        .iter()
        .enumerate()
        .map(|(i, v)| check_step(i, v, &mut d))
        .collect();

    // References in inputs, collected before ids are indexed (which borrows the steps).
    let mut malformed = Vec::new();
    for s in &mut steps {
        if let Some(inputs) = s.inputs {
            let base = json_path::key(&s.path, "inputs");
            for (k, v) in inputs {
                step_refs::collect(v, &json_path::key(&base, k), &mut s.refs, &mut malformed);
            }
        }
    }
    // U1: first holder of each effective id.
    let mut by_key: HashMap<&str, usize> = HashMap::with_capacity(steps.len());
    for (i, s) in steps.iter().enumerate() {
        if let Some(&first) = by_key.get(s.key.as_str()) {
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
            by_key.insert(s.key.as_str(), i);
        }
    }

    // A1-A3.
    for s in &steps {
        check_atom(s, atoms, &mut d);
    }

    // References in plan.outputs, then R1, R2 and the step each one resolves to.
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
    let resolve = |r: &StepRef, d: &mut Diagnostics| -> Option<usize> {
        let Some(&target) = by_key.get(r.step.as_str()) else {
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
    };
    // Resolved references per step: (position in s.refs, target index).
    let mut resolved: Vec<Vec<(usize, usize)>> = Vec::with_capacity(steps.len());
    for s in &steps {
        let mut list = Vec::new();
        for (k, r) in s.refs.iter().enumerate() {
            if let Some(t) = resolve(r, &mut d) {
                list.push((k, t));
            }
        }
        resolved.push(list);
    }
    for r in &output_refs {
        if let Some(t) = resolve(r, &mut d) {
            used[t] = true;
        }
    }

    // D1 and the graph.
    let mut graph = DepGraph::new(steps.len());
    for (i, s) in steps.iter().enumerate() {
        if let Some(deps) = &s.depends_on {
            for &(j, dep) in deps {
                match by_key.get(dep) {
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
    }
    for (i, s) in steps.iter().enumerate() {
        for &(k, t) in &resolved[i] {
            used[t] |= t != i;
            if t == i {
                d.error(
                    "REF_BEFORE_DEPENDENCY",
                    s.refs[k].path.clone(),
                    format!(
                        "step `{}` references its own output `{}`: take it from an earlier step",
                        s.key, s.refs[k].output
                    ),
                );
            } else if s.depends_on.is_none() {
                graph.add_edge(i, t);
            }
        }
    }

    // R3 for steps that declared their dependencies.
    for (i, s) in steps.iter().enumerate() {
        if s.depends_on.is_none() {
            continue;
        }
        for &(k, t) in &resolved[i] {
            if t != i && !graph.reaches(i, t) {
                d.error(
                    "REF_BEFORE_DEPENDENCY",
                    s.refs[k].path.clone(),
                    format!(
                        "step `{}` reads `{}` of step `{}` but does not depend on it: add `{}` to its `depends_on`",
                        s.key, s.refs[k].output, steps[t].key, steps[t].key
                    ),
                );
            }
        }
    }

    // D2 and the order.
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

    if d.is_valid() {
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
    d
}

/// S1-S3 and S7; returns the steps when there are any to check.
fn check_root<'a>(doc: &'a Value, d: &mut Diagnostics) -> Option<&'a Vec<Value>> {
    let Some(root) = doc.as_object() else {
        d.error(
            "INVALID_TYPE",
            "",
            format!(
                "the document is {}: write an object with `target` and `plan`",
                kind(doc)
            ),
        );
        return None;
    };
    require_string(root, "", "target", d);
    let plan = match root.get("plan") {
        None => {
            d.error(
                "MISSING_FIELD",
                "plan",
                "`plan` is missing: add an object with `steps`",
            );
            return None;
        }
        Some(Value::Object(plan)) => plan,
        Some(other) => {
            invalid_type("plan", "plan", other, "write an object with `steps`", d);
            return None;
        }
    };
    if let Some(outputs) = plan.get("outputs")
        && !outputs.is_object()
    {
        invalid_type(
            "plan.outputs",
            "plan.outputs",
            outputs,
            "write an object",
            d,
        );
    }
    match plan.get("steps") {
        None => {
            d.error(
                "MISSING_FIELD",
                "plan.steps",
                "`plan.steps` is missing: add a list of steps",
            );
            None
        }
        Some(Value::Array(steps)) if steps.is_empty() => {
            d.error(
                "EMPTY_STEPS",
                "plan.steps",
                "`plan.steps` is empty: add at least one step",
            );
            None
        }
        Some(Value::Array(steps)) => Some(steps),
        Some(other) => {
            invalid_type(
                "plan.steps",
                "plan.steps",
                other,
                "write a list of steps",
                d,
            );
            None
        }
    }
}

/// S4-S6 for one step.
fn check_step<'a>(i: usize, v: &'a Value, d: &mut Diagnostics) -> Step<'a> {
    let path = json_path::index("plan.steps", i);
    let mut step = Step {
        path,
        atom: None,
        inputs: None,
        key: i.to_string(),
        explicit_id: false,
        depends_on: None,
        refs: Vec::new(),
    };
    let Some(obj) = v.as_object() else {
        d.error(
            "INVALID_TYPE",
            step.path.clone(),
            format!(
                "step is {}: write an object with `id`, `target` and `inputs`",
                kind(v)
            ),
        );
        return step;
    };
    step.atom = require_string(obj, &step.path, "id", d);
    require_string(obj, &step.path, "target", d);
    let inputs_path = json_path::key(&step.path, "inputs");
    match obj.get("inputs") {
        None => {
            d.error(
                "MISSING_FIELD",
                inputs_path,
                "`inputs` is missing: add an object (`{}` when the atom needs none)",
            );
        }
        Some(Value::Object(inputs)) => step.inputs = Some(inputs),
        Some(other) => {
            invalid_type(inputs_path, "inputs", other, "write an object", d);
        }
    }
    match obj.get("step_id") {
        None => {}
        Some(Value::String(s)) if s.trim().is_empty() => {
            d.error(
                "EMPTY_STEP_ID",
                json_path::key(&step.path, "step_id"),
                "`step_id` is empty: give it a name or drop it to use the step index",
            );
        }
        Some(Value::String(s)) => {
            step.key = s.clone();
            step.explicit_id = true;
        }
        Some(other) => {
            invalid_type(
                json_path::key(&step.path, "step_id"),
                "step_id",
                other,
                "write a string",
                d,
            );
        }
    }
    let deps_path = json_path::key(&step.path, "depends_on");
    match obj.get("depends_on") {
        None => {}
        Some(Value::Array(items)) => {
            let mut deps = Vec::with_capacity(items.len());
            for (j, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => deps.push((j, s.as_str())),
                    other => {
                        d.error(
                            "INVALID_TYPE",
                            json_path::index(&deps_path, j),
                            format!(
                                "`depends_on` entry is {}: write a step id as a string",
                                kind(other)
                            ),
                        );
                    }
                }
            }
            step.depends_on = Some(deps);
        }
        Some(other) => {
            invalid_type(
                deps_path,
                "depends_on",
                other,
                "write a list of step ids",
                d,
            );
        }
    }
    step
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
