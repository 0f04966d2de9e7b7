//! `validate steps`: one test per rule of seed 003, each on a minimal plan that breaks only that
//! rule, asserting the code and the path.

use researchflow::diagnostics::Diagnostics;
use researchflow::validate::{AtomRegistry, validate_steps};
use serde_json::{Value, json};

use crate::support::doc::{self, with, without};

fn registry() -> AtomRegistry {
    AtomRegistry::from_value(
        &json!([
            {"id": "read_file", "inputs": [{"name": "file_path", "required": true}, {"name": "encoding"}],
             "outputs": [{"name": "text"}, {"name": "size"}]},
            {"id": "summarize", "inputs": {"text": {"required": true}, "max_words": {}},
             "outputs": {"summary": {}}},
            {"id": "notify", "inputs": [{"name": "message", "required": true}], "outputs": []}
        ]),
        "test registry",
    )
    .expect("test registry is valid")
}

fn check(doc: Value) -> Diagnostics {
    validate_steps(&doc, &registry())
}

/// A valid two-step plan: read then summarise.
fn base() -> Value {
    json!({
        "target": "summarise a file",
        "plan": {
            "steps": [
                {"id": "read_file", "step_id": "read", "target": "read it", "inputs": {"file_path": "a.txt"}},
                {"id": "summarize", "step_id": "sum", "target": "sum it", "depends_on": ["read"],
                 "inputs": {"text": "${read.outputs.text}"}}
            ],
            "outputs": {"result": "${sum.outputs.summary}"}
        }
    })
}

#[track_caller]
fn assert_finding(d: &Diagnostics, code: &str, path: &str) {
    doc::assert_error(d, code, path);
    assert!(d.execution_order.is_none(), "no order when invalid");
}

#[track_caller]
fn assert_only(d: &Diagnostics, code: &str, path: &str) {
    doc::assert_single_error(d, code, path);
    assert!(d.execution_order.is_none(), "no order when invalid");
}

#[test]
fn the_base_plan_is_valid_and_ordered() {
    let d = check(base());
    assert!(d.valid, "{}", d.to_text());
    assert_eq!(d.execution_order, Some(vec!["read".into(), "sum".into()]));
    assert!(d.warnings.is_empty(), "{}", d.to_text());
}

#[test]
fn s1_target_is_a_required_string() {
    assert_only(
        &check(without(base(), "", "target")),
        "MISSING_FIELD",
        "target",
    );
    assert_only(
        &check(with(base(), "/target", json!(3))),
        "INVALID_TYPE",
        "target",
    );
}

#[test]
fn s2_plan_is_a_required_object() {
    assert_only(&check(without(base(), "", "plan")), "MISSING_FIELD", "plan");
    assert_only(
        &check(with(base(), "/plan", json!([]))),
        "INVALID_TYPE",
        "plan",
    );
    assert_only(&check(json!("text")), "INVALID_TYPE", "");
}

#[test]
fn s3_steps_is_a_non_empty_array() {
    assert_only(
        &check(without(base(), "/plan", "steps")),
        "MISSING_FIELD",
        "plan.steps",
    );
    assert_only(
        &check(with(base(), "/plan/steps", json!({}))),
        "INVALID_TYPE",
        "plan.steps",
    );
    assert_only(
        &check(with(base(), "/plan/steps", json!([]))),
        "EMPTY_STEPS",
        "plan.steps",
    );
}

#[test]
fn s4_steps_are_objects_with_id_target_and_inputs() {
    let d = check(with(base(), "/plan/steps/0", json!("read")));
    assert_finding(&d, "INVALID_TYPE", "plan.steps[0]");
    assert_only(
        &check(without(base(), "/plan/steps/0", "id")),
        "MISSING_FIELD",
        "plan.steps[0].id",
    );
    assert_only(
        &check(with(base(), "/plan/steps/0/id", json!(1))),
        "INVALID_TYPE",
        "plan.steps[0].id",
    );
    assert_only(
        &check(without(base(), "/plan/steps/1", "target")),
        "MISSING_FIELD",
        "plan.steps[1].target",
    );
    assert_only(
        &check(with(base(), "/plan/steps/1/target", json!(null))),
        "INVALID_TYPE",
        "plan.steps[1].target",
    );
    assert_only(
        &check(without(base(), "/plan/steps/0", "inputs")),
        "MISSING_FIELD",
        "plan.steps[0].inputs",
    );
    assert_only(
        &check(with(base(), "/plan/steps/0/inputs", json!(["a.txt"]))),
        "INVALID_TYPE",
        "plan.steps[0].inputs",
    );
}

#[test]
fn s4_empty_inputs_are_fine_when_nothing_is_required() {
    let doc = json!({"target": "t", "plan": {"steps": [
        {"id": "read_file", "target": "r", "inputs": {"file_path": "a"}},
        {"id": "notify", "target": "n", "inputs": {"message": "${0.outputs.size}"}},
        {"id": "summarize", "target": "s", "inputs": {"text": "x"}}]}});
    let d = check(doc);
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn s5_step_id_is_a_non_empty_string() {
    // Dropping the id breaks the references to it too, so look only at the S5 finding.
    let d = check(with(base(), "/plan/steps/1/step_id", json!(7)));
    assert_finding(&d, "INVALID_TYPE", "plan.steps[1].step_id");
    let d = check(with(base(), "/plan/steps/1/step_id", json!("  ")));
    assert_finding(&d, "EMPTY_STEP_ID", "plan.steps[1].step_id");
    // An unnamed step falls back to its index.
    assert_finding(&d, "UNKNOWN_STEP_REF", "plan.outputs.result");
}

#[test]
fn s6_depends_on_is_an_array_of_strings() {
    let d = check(with(base(), "/plan/steps/1/depends_on", json!("read")));
    assert_only(&d, "INVALID_TYPE", "plan.steps[1].depends_on");
    let d = check(with(base(), "/plan/steps/1/depends_on", json!(["read", 0])));
    assert_only(&d, "INVALID_TYPE", "plan.steps[1].depends_on[1]");
}

#[test]
fn s7_outputs_is_an_object() {
    let d = check(with(
        base(),
        "/plan/outputs",
        json!(["${sum.outputs.summary}"]),
    ));
    assert_only(&d, "INVALID_TYPE", "plan.outputs");
}

#[test]
fn u1_step_ids_are_unique() {
    let d = check(with(base(), "/plan/steps/1/step_id", json!("read")));
    assert_finding(&d, "DUPLICATE_STEP_ID", "plan.steps[1].step_id");
    // An explicit id may not take another step's implicit index either.
    let doc = json!({"target": "t", "plan": {"steps": [
        {"id": "notify", "step_id": "1", "target": "a", "inputs": {"message": "m"}},
        {"id": "notify", "target": "b", "inputs": {"message": "m"}}]}});
    assert_only(&check(doc), "DUPLICATE_STEP_ID", "plan.steps[1]");
}

#[test]
fn a1_atom_ids_exist() {
    let d = check(with(base(), "/plan/steps/0/id", json!("read_files")));
    assert_only(&d, "UNKNOWN_ATOM_ID", "plan.steps[0].id");
    assert!(d.errors[0].message.contains("`read_files`"));
}

#[test]
fn a2_inputs_are_declared_by_the_atom() {
    let d = check(with(base(), "/plan/steps/0/inputs/path", json!("x")));
    assert_only(&d, "UNKNOWN_INPUT_FIELD", "plan.steps[0].inputs.path");
}

#[test]
fn a3_required_inputs_are_present_and_not_null() {
    let d = check(without(base(), "/plan/steps/0/inputs", "file_path"));
    assert_only(&d, "MISSING_REQUIRED_INPUT", "plan.steps[0].inputs");
    assert!(d.errors[0].message.contains("`file_path`"));
    let d = check(with(base(), "/plan/steps/0/inputs/file_path", json!(null)));
    assert_only(&d, "MISSING_REQUIRED_INPUT", "plan.steps[0].inputs");
}

#[test]
fn r1_references_name_a_step() {
    let d = check(with(
        base(),
        "/plan/steps/1/inputs/text",
        json!({"parts": ["head", "see ${reed.outputs.text} here"]}),
    ));
    assert_only(&d, "UNKNOWN_STEP_REF", "plan.steps[1].inputs.text.parts[1]");
    let d = check(with(
        base(),
        "/plan/outputs/result",
        json!("${nope.outputs.summary}"),
    ));
    assert_only(&d, "UNKNOWN_STEP_REF", "plan.outputs.result");
}

#[test]
fn r2_referenced_outputs_exist() {
    let d = check(with(
        base(),
        "/plan/steps/1/inputs/text",
        json!("${read.outputs.body}"),
    ));
    assert_only(&d, "UNKNOWN_OUTPUT_FIELD", "plan.steps[1].inputs.text");
}

#[test]
fn r3_a_declared_step_must_depend_on_what_it_references() {
    let d = check(with(base(), "/plan/steps/1/depends_on", json!([])));
    assert_only(&d, "REF_BEFORE_DEPENDENCY", "plan.steps[1].inputs.text");
    // Transitive dependencies are enough.
    let doc = json!({"target": "t", "plan": {"steps": [
        {"id": "read_file", "step_id": "r", "target": "r", "inputs": {"file_path": "a"}},
        {"id": "summarize", "step_id": "s", "target": "s", "depends_on": ["r"], "inputs": {"text": "${r.outputs.text}"}},
        {"id": "notify", "step_id": "n", "target": "n", "depends_on": ["s"], "inputs": {"message": "${r.outputs.size}"}}]}});
    let d = check(doc);
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn r3_a_step_cannot_read_its_own_output() {
    let d = check(with(
        base(),
        "/plan/steps/1/inputs/max_words",
        json!("${sum.outputs.summary}"),
    ));
    assert_only(
        &d,
        "REF_BEFORE_DEPENDENCY",
        "plan.steps[1].inputs.max_words",
    );
}

#[test]
fn references_without_depends_on_create_implicit_dependencies() {
    // The summary is written first but reads the file step: it must run second.
    let doc = json!({"target": "t", "plan": {"steps": [
        {"id": "summarize", "target": "s", "inputs": {"text": "${1.outputs.text}"}},
        {"id": "read_file", "target": "r", "inputs": {"file_path": "a"}},
        {"id": "notify", "target": "n", "inputs": {"message": "${0.outputs.summary}"}}]}});
    let d = check(doc);
    assert!(d.valid, "{}", d.to_text());
    assert_eq!(
        d.execution_order,
        Some(vec!["1".into(), "0".into(), "2".into()])
    );
}

#[test]
fn d1_dependencies_name_a_step() {
    let d = check(with(
        base(),
        "/plan/steps/1/depends_on",
        json!(["read", "load"]),
    ));
    assert_only(&d, "UNKNOWN_DEPENDENCY", "plan.steps[1].depends_on[1]");
}

#[test]
fn d2_cycles_are_reported_with_their_steps() {
    let doc = json!({"target": "t", "plan": {"steps": [
        {"id": "notify", "step_id": "a", "target": "a", "depends_on": ["c"], "inputs": {"message": "m"}},
        {"id": "notify", "step_id": "b", "target": "b", "depends_on": ["a"], "inputs": {"message": "m"}},
        {"id": "notify", "step_id": "c", "target": "c", "depends_on": ["b"], "inputs": {"message": "m"}},
        {"id": "notify", "step_id": "d", "target": "d", "inputs": {"message": "m"}}]}});
    let d = check(doc);
    assert_only(&d, "CIRCULAR_DEPENDENCY", "plan.steps[0]");
    assert!(
        d.errors[0].message.contains("`a` -> `c` -> `b` -> `a`"),
        "{}",
        d.errors[0].message
    );
}

#[test]
fn d2_reference_loops_are_cycles() {
    let doc = json!({"target": "t", "plan": {"steps": [
        {"id": "summarize", "target": "s", "inputs": {"text": "${1.outputs.text}"}},
        {"id": "read_file", "target": "r", "inputs": {"file_path": "${0.outputs.summary}"}}]}});
    let d = check(doc);
    assert_only(&d, "CIRCULAR_DEPENDENCY", "plan.steps[0]");
    assert!(d.errors[0].message.contains("`0`") && d.errors[0].message.contains("`1`"));
}

#[test]
fn every_error_is_collected() {
    let doc = json!({"plan": {"steps": [
        {"id": "nope", "target": "a", "inputs": {}},
        {"id": "read_file", "target": 1, "inputs": {"x": 1}, "depends_on": ["zz"]}],
        "outputs": 3}});
    let d = check(doc);
    for (code, path) in [
        ("MISSING_FIELD", "target"),
        ("INVALID_TYPE", "plan.outputs"),
        ("UNKNOWN_ATOM_ID", "plan.steps[0].id"),
        ("INVALID_TYPE", "plan.steps[1].target"),
        ("UNKNOWN_INPUT_FIELD", "plan.steps[1].inputs.x"),
        ("MISSING_REQUIRED_INPUT", "plan.steps[1].inputs"),
        ("UNKNOWN_DEPENDENCY", "plan.steps[1].depends_on[0]"),
    ] {
        assert_finding(&d, code, path);
    }
}

#[test]
fn unused_outputs_and_malformed_refs_are_warnings() {
    let doc = with(
        base(),
        "/plan/outputs/result",
        json!("${sum.output.summary}"),
    );
    let d = check(doc);
    assert!(d.valid, "{}", d.to_text());
    let codes: Vec<(&str, &str)> = d
        .warnings
        .iter()
        .map(|w| (w.code.as_str(), w.path.as_str()))
        .collect();
    assert_eq!(
        codes,
        vec![
            ("MALFORMED_STEP_REF", "plan.outputs.result"),
            ("UNUSED_STEP_OUTPUT", "plan.steps[1]")
        ]
    );
}

#[test]
fn ten_thousand_steps_validate_quickly() {
    let steps: Vec<Value> = (0..10_000)
        .map(|i| {
            if i == 0 {
                json!({"id": "read_file", "target": "r", "inputs": {"file_path": "a"}})
            } else {
                json!({"id": "summarize", "step_id": format!("s{i}"), "target": "s",
                       "depends_on": [if i == 1 { "0".to_string() } else { format!("s{}", i - 1) }],
                       "inputs": {"text": if i == 1 { "${0.outputs.text}".to_string() }
                                          else { format!("${{s{}.outputs.summary}}", i - 1) }}})
            }
        })
        .collect();
    let doc = json!({"target": "t", "plan": {"steps": steps}});
    let started = std::time::Instant::now();
    let d = check(doc);
    let took = started.elapsed();
    assert!(d.valid, "{}", d.to_text());
    assert_eq!(d.execution_order.map(|o| o.len()), Some(10_000));
    // Generous: a debug build on a busy machine; the release benchmark targets well under 1 s.
    assert!(took.as_secs() < 5, "took {took:?}");
}
