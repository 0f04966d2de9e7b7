//! The shape of a step plan (rules S1-S7 of `steps`): the root's `target` and `plan`, the step
//! list, and each step's fields and their types. What it learns of a step is kept in [`Step`],
//! which every later rule reads instead of the raw value. It must not look beyond one field at
//! a time: ids, atoms, references and dependencies are judged by the later rules, which can only
//! run once every step has been read.

use serde_json::{Map, Value};

use super::describe::{invalid_type, kind, require_string};
use super::json_path;
use crate::diagnostics::Diagnostics;

/// What the later rules need to know of one step.
pub(super) struct Step<'a> {
    pub(super) path: String,
    pub(super) atom: Option<&'a str>,
    pub(super) inputs: Option<&'a Map<String, Value>>,
    /// The effective id: `step_id`, else the index.
    pub(super) key: String,
    pub(super) explicit_id: bool,
    /// `Some` when `depends_on` is an array: its string entries with their positions.
    pub(super) depends_on: Option<Vec<(usize, &'a str)>>,
}

/// S1-S3 and S7; returns the steps when there are any to check.
pub(super) fn check_root<'a>(doc: &'a Value, d: &mut Diagnostics) -> Option<&'a Vec<Value>> {
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
pub(super) fn check_step<'a>(i: usize, v: &'a Value, d: &mut Diagnostics) -> Step<'a> {
    let mut step = Step {
        path: json_path::index("plan.steps", i),
        atom: None,
        inputs: None,
        key: i.to_string(),
        explicit_id: false,
        depends_on: None,
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
        Some(other) => invalid_type(inputs_path, "inputs", other, "write an object", d),
    }
    if let Some(id) = check_step_id(obj.get("step_id"), &step.path, d) {
        step.key = id.to_string();
        step.explicit_id = true;
    }
    step.depends_on = check_depends_on(obj.get("depends_on"), &step.path, d);
    step
}

/// S5; returns the `step_id` when it can stand for the step (else the index does).
fn check_step_id<'a>(
    step_id: Option<&'a Value>,
    step_path: &str,
    d: &mut Diagnostics,
) -> Option<&'a str> {
    let path = json_path::key(step_path, "step_id");
    match step_id {
        None => None,
        Some(Value::String(s)) if s.trim().is_empty() => {
            d.error(
                "EMPTY_STEP_ID",
                path,
                "`step_id` is empty: give it a name or drop it to use the step index",
            );
            None
        }
        Some(Value::String(s)) => Some(s),
        Some(other) => {
            invalid_type(path, "step_id", other, "write a string", d);
            None
        }
    }
}

/// S6; returns the string entries with their positions when `depends_on` is a list. A list with
/// a bad entry still counts as declared: the step has said it lists its dependencies.
fn check_depends_on<'a>(
    depends_on: Option<&'a Value>,
    step_path: &str,
    d: &mut Diagnostics,
) -> Option<Vec<(usize, &'a str)>> {
    let path = json_path::key(step_path, "depends_on");
    match depends_on {
        None => None,
        Some(Value::Array(items)) => {
            let mut deps = Vec::with_capacity(items.len());
            for (j, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => deps.push((j, s.as_str())),
                    other => {
                        d.error(
                            "INVALID_TYPE",
                            json_path::index(&path, j),
                            format!(
                                "`depends_on` entry is {}: write a step id as a string",
                                kind(other)
                            ),
                        );
                    }
                }
            }
            Some(deps)
        }
        Some(other) => {
            invalid_type(path, "depends_on", other, "write a list of step ids", d);
            None
        }
    }
}
