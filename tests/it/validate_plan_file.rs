//! `validate plan`: one test per rule of a plan file's integrity, each on a minimal file that
//! breaks only that rule, asserting the code and the path.

use researchflow::diagnostics::Diagnostics;
use researchflow::validate::validate_plan_file;
use serde_json::{Value, json};

use crate::support::doc::{assert_single_error, with, without};

/// A valid plan: start, two searches, the final summary.
fn base() -> Value {
    json!({
        "version": 1,
        "workflow_id": "wf",
        "check_list": {"latest_id": "d", "latest_batch": -1, "refs": ["d:summary"]},
        "nodes": [
            {"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "", "batch": 1, "type": "start", "status": "completed"},
            {"node_id": "b", "title": "S1", "p_node": "a:info", "batch": 2, "type": "search", "status": "completed"},
            {"node_id": "c", "title": "S2", "p_node": "a:info", "batch": 2, "type": "search", "status": "failed"},
            {"node_id": "d", "title": "F", "p_node": "b:summary, c:info[search]", "batch": -1, "type": "summary", "status": "planned"}
        ]
    })
}

fn check(doc: Value) -> Diagnostics {
    validate_plan_file(&doc)
}

#[test]
fn the_base_plan_is_valid() {
    let d = check(base());
    assert!(d.valid, "{}", d.to_text());
    assert!(d.warnings.is_empty());
}

#[test]
fn a_fresh_plan_without_check_list_is_valid() {
    let d = check(
        json!({"nodes": [{"node_id": "a", "title": "Q", "batch": 1, "type": "start", "status": "completed"}]}),
    );
    assert!(d.valid, "{}", d.to_text());
}

#[test]
fn required_fields_are_present() {
    assert_single_error(
        &check(without(base(), "", "nodes")),
        "MISSING_FIELD",
        "nodes",
    );
    // Node `c` is read only by the final node; drop that read so only the rule under test fails.
    let unread_c = with(base(), "/nodes/3/p_node", json!("b:summary"));
    for field in ["node_id", "title", "batch", "type", "status"] {
        let d = check(without(unread_c.clone(), "/nodes/2", field));
        assert_single_error(&d, "MISSING_FIELD", &format!("nodes[2].{field}"));
    }
}

#[test]
fn fields_have_their_types() {
    assert_single_error(&check(json!([])), "INVALID_TYPE", "");
    assert_single_error(
        &check(with(base(), "/nodes", json!({}))),
        "INVALID_TYPE",
        "nodes",
    );
    let unread_c = with(base(), "/nodes/3/p_node", json!("b:summary"));
    assert_single_error(
        &check(with(unread_c, "/nodes/2", json!("c"))),
        "INVALID_TYPE",
        "nodes[2]",
    );
    for (field, value) in [
        ("title", json!(1)),
        ("batch", json!("2")),
        ("summary", json!(null)),
        ("info", json!({})),
        ("p_node", json!(["a:info"])),
        ("status", json!(true)),
    ] {
        let d = check(with(base(), &format!("/nodes/2/{field}"), value));
        assert_single_error(&d, "INVALID_TYPE", &format!("nodes[2].{field}"));
    }
    assert_single_error(
        &check(with(base(), "/check_list", json!([]))),
        "INVALID_TYPE",
        "check_list",
    );
    assert_single_error(
        &check(with(base(), "/check_list/refs", json!("d:summary"))),
        "INVALID_TYPE",
        "check_list.refs",
    );
    assert_single_error(
        &check(with(base(), "/check_list/refs/0", json!(3))),
        "INVALID_TYPE",
        "check_list.refs[0]",
    );
    assert_single_error(
        &check(with(base(), "/check_list/latest_batch", json!(1.5))),
        "INVALID_TYPE",
        "check_list.latest_batch",
    );
    assert_single_error(
        &check(with(base(), "/check_list/latest_id", json!(4))),
        "INVALID_TYPE",
        "check_list.latest_id",
    );
    assert_single_error(
        &check(with(base(), "/version", json!("1"))),
        "INVALID_TYPE",
        "version",
    );
    assert_single_error(
        &check(with(base(), "/workflow_id", json!(1))),
        "INVALID_TYPE",
        "workflow_id",
    );
}

#[test]
fn node_ids_are_letters() {
    // The refs to `c` break too; only the id finding matters here.
    let d = check(with(base(), "/nodes/1/node_id", json!("b2")));
    assert!(
        d.errors
            .iter()
            .any(|f| f.code == "INVALID_NODE_ID" && f.path == "nodes[1].node_id"),
        "{}",
        d.to_text()
    );
    assert_single_error(
        &check(with(base(), "/check_list/latest_id", json!("d!"))),
        "INVALID_NODE_ID",
        "check_list.latest_id",
    );
}

#[test]
fn node_ids_are_unique_ignoring_case() {
    let d = check(with(base(), "/nodes/2/node_id", json!("B")));
    // `c` disappears, so the final node's ref to it is unknown as well.
    assert!(
        d.errors
            .iter()
            .any(|f| f.code == "DUPLICATE_NODE_ID" && f.path == "nodes[2].node_id"),
        "{}",
        d.to_text()
    );
}

#[test]
fn types_and_statuses_are_known() {
    assert_single_error(
        &check(with(base(), "/nodes/1/type", json!("Search"))),
        "INVALID_NODE_TYPE",
        "nodes[1].type",
    );
    assert_single_error(
        &check(with(base(), "/nodes/1/status", json!("done"))),
        "INVALID_STATUS",
        "nodes[1].status",
    );
}

#[test]
fn batches_are_positive_or_final() {
    assert_single_error(
        &check(with(base(), "/nodes/1/batch", json!(0))),
        "INVALID_BATCH",
        "nodes[1].batch",
    );
    assert_single_error(
        &check(with(base(), "/nodes/1/batch", json!(-2))),
        "INVALID_BATCH",
        "nodes[1].batch",
    );
}

#[test]
fn there_is_one_start_node_in_batch_one() {
    let d = check(with(base(), "/nodes/0/type", json!("search")));
    assert_single_error(&d, "NO_START_NODE", "nodes");
    let d = check(with(base(), "/nodes/1/type", json!("start")));
    assert_single_error(&d, "MULTIPLE_START_NODES", "nodes[1].type");
    let d = check(with(base(), "/nodes/0/batch", json!(2)));
    assert_single_error(&d, "START_NODE_BATCH", "nodes[0].batch");
}

#[test]
fn at_most_one_final_node() {
    let d = check(with(base(), "/nodes/2/batch", json!(-1)));
    assert_single_error(&d, "MULTIPLE_FINAL_NODES", "nodes[3].batch");
}

#[test]
fn latest_id_is_not_behind_the_nodes() {
    assert_single_error(
        &check(with(base(), "/check_list/latest_id", json!("c"))),
        "LATEST_ID_BEHIND",
        "check_list.latest_id",
    );
    // Ahead is fine: ids of removed nodes are never reused.
    assert!(check(with(base(), "/check_list/latest_id", json!("z"))).valid);
}

#[test]
fn latest_batch_matches_the_nodes() {
    let d = check(with(base(), "/check_list/latest_batch", json!(2)));
    assert_single_error(&d, "LATEST_BATCH_MISMATCH", "check_list.latest_batch");
    let no_final = with(base(), "/nodes/3/batch", json!(3));
    assert!(check(with(no_final.clone(), "/check_list/latest_batch", json!(3))).valid);
    let d = check(with(no_final, "/check_list/latest_batch", json!(-1)));
    assert_single_error(&d, "LATEST_BATCH_MISMATCH", "check_list.latest_batch");
}

#[test]
fn refs_follow_the_grammar() {
    assert_single_error(
        &check(with(base(), "/nodes/3/p_node", json!("b:summary, c:body"))),
        "INVALID_REF",
        "nodes[3].p_node",
    );
    assert_single_error(
        &check(with(base(), "/nodes/3/p_node", json!("b:title"))),
        "INVALID_REF",
        "nodes[3].p_node",
    );
    assert_single_error(
        &check(with(base(), "/check_list/refs/0", json!("NEW1:summary"))),
        "INVALID_REF",
        "check_list.refs[0]",
    );
    assert_single_error(
        &check(with(base(), "/check_list/refs/0", json!("d"))),
        "INVALID_REF",
        "check_list.refs[0]",
    );
}

#[test]
fn ref_targets_exist() {
    assert_single_error(
        &check(with(base(), "/check_list/refs/0", json!("x:summary"))),
        "UNKNOWN_REF_TARGET",
        "check_list.refs[0]",
    );
    assert_single_error(
        &check(with(base(), "/nodes/3/p_node", json!("b:summary, y:info"))),
        "UNKNOWN_REF_TARGET",
        "nodes[3].p_node",
    );
}

#[test]
fn p_node_refs_point_to_earlier_nodes() {
    assert_single_error(
        &check(with(base(), "/nodes/1/p_node", json!("c:summary"))),
        "REF_NOT_EARLIER",
        "nodes[1].p_node",
    );
    assert_single_error(
        &check(with(base(), "/nodes/1/p_node", json!("b:summary"))),
        "REF_NOT_EARLIER",
        "nodes[1].p_node",
    );
}
