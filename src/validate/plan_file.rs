//! `validate plan`: the integrity of a researchflow plan file (SPEC section 1), checked on the
//! raw JSON value so that every type error has a precise path (`nodes[3].p_node`).
//!
//! | code | rule | path |
//! |------|------|------|
//! | `INVALID_TYPE` | the root, `check_list`, `nodes` and every field have their type: `node_id`, `title`, `type`, `status` strings, `batch` an integer, `summary` / `info` / `p_node` strings when present, `version` a non-negative integer and `workflow_id` a string when present, `check_list.latest_id` a string, `latest_batch` an integer, `refs` a list of strings | the field |
//! | `MISSING_FIELD` | `nodes`, and per node `node_id`, `title`, `batch`, `type`, `status` | the field |
//! | `INVALID_NODE_ID` | `node_id` and `check_list.latest_id` are letters a-z (Excel columns) | the field |
//! | `DUPLICATE_NODE_ID` | node ids are unique (ignoring case) | `nodes[i].node_id` |
//! | `INVALID_NODE_TYPE` | `type` is start, search, summary or end | `nodes[i].type` |
//! | `INVALID_STATUS` | `status` is planned, running, completed or failed | `nodes[i].status` |
//! | `INVALID_BATCH` | `batch` is >= 1, or -1 for the final summary | `nodes[i].batch` |
//! | `NO_START_NODE` | one node has type start | `nodes` |
//! | `MULTIPLE_START_NODES` | only one node has type start | `nodes[i].type` (the second and later) |
//! | `START_NODE_BATCH` | the start node is in batch 1 | `nodes[i].batch` |
//! | `MULTIPLE_FINAL_NODES` | at most one node has batch -1 | `nodes[i].batch` (the second and later) |
//! | `LATEST_ID_BEHIND` | `check_list.latest_id` is not lower than the highest node id | `check_list.latest_id` |
//! | `LATEST_BATCH_MISMATCH` | `check_list.latest_batch` is -1 when a batch -1 node exists, else the highest batch | `check_list.latest_batch` |
//! | `INVALID_REF` | every entry of `check_list.refs` and `p_node` follows the ref grammar; `:title` and `NEW1..3` are not allowed in a stored file | `check_list.refs[j]`, `nodes[i].p_node` |
//! | `UNKNOWN_REF_TARGET` | a ref names an existing node | as above |
//! | `REF_NOT_EARLIER` | a `p_node` ref names a node written earlier in the file than the node itself | `nodes[i].p_node` |
//!
//! Missing `check_list`, `latest_id` or `latest_batch` are not errors: the planning round infers
//! them (SPEC section 2). Unknown fields are allowed: other tools may add them. This module
//! checks a value; it never reads or writes the file.

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::describe::{invalid_type, kind, require_string};
use super::json_path;
use crate::diagnostics::Diagnostics;
use crate::plan::model::FINAL_BATCH;
use crate::plan::node_id::NodeId;
use crate::plan::refs::{self, RefField, RefTarget};

const NODE_TYPES: [&str; 4] = ["start", "search", "summary", "end"];
const STATUSES: [&str; 4] = ["planned", "running", "completed", "failed"];

/// What the cross-node checks need of one node.
#[derive(Default)]
struct NodeFacts<'a> {
    id: Option<NodeId>,
    batch: Option<i64>,
    p_node: Option<&'a str>,
}

/// Checks a parsed plan file.
pub fn validate_plan_file(doc: &Value) -> Diagnostics {
    let mut d = Diagnostics::new();
    let Some(root) = doc.as_object() else {
        d.error(
            "INVALID_TYPE",
            "",
            format!(
                "the plan file is {}: write an object with `check_list` and `nodes`",
                kind(doc)
            ),
        );
        return d;
    };
    check_header(root, &mut d);
    let Some(nodes) = nodes_of(root, &mut d) else {
        return d;
    };
    let facts: Vec<NodeFacts<'_>> = nodes
        .iter()
        .enumerate()
        .map(|(i, n)| check_node(i, n, &mut d))
        .collect();
    let position = index_node_ids(&facts, &mut d);
    check_start_and_final(nodes, &facts, &mut d);
    match root.get("check_list") {
        None | Some(Value::Null) => {}
        Some(Value::Object(cl)) => check_check_list(cl, &facts, &position, &mut d),
        Some(other) => {
            invalid_type("check_list", "check_list", other, "write an object", &mut d);
        }
    }
    for (i, f) in facts.iter().enumerate() {
        if let Some(p_node) = f.p_node {
            check_refs(
                p_node,
                &format!("nodes[{i}].p_node"),
                Some(i),
                &position,
                &mut d,
            );
        }
    }
    d
}

/// `version` and `workflow_id`, optional fields of the root.
fn check_header(root: &Map<String, Value>, d: &mut Diagnostics) {
    if let Some(v) = root.get("version")
        && v.as_u64().is_none()
    {
        invalid_type("version", "version", v, "write a non-negative integer", d);
    }
    if let Some(v) = root.get("workflow_id")
        && !v.is_string()
    {
        invalid_type("workflow_id", "workflow_id", v, "write a string", d);
    }
}

/// The node list; `None` (after reporting why) when there is none to check.
fn nodes_of<'a>(root: &'a Map<String, Value>, d: &mut Diagnostics) -> Option<&'a [Value]> {
    match root.get("nodes") {
        Some(Value::Array(nodes)) => Some(nodes.as_slice()),
        None => {
            d.error(
                "MISSING_FIELD",
                "nodes",
                "`nodes` is missing: add the list of nodes, starting with the start node",
            );
            None
        }
        Some(other) => {
            invalid_type("nodes", "nodes", other, "write a list of nodes", d);
            None
        }
    }
}

/// DUPLICATE_NODE_ID; returns where each id is first held, which refs resolve against.
fn index_node_ids(facts: &[NodeFacts<'_>], d: &mut Diagnostics) -> HashMap<NodeId, usize> {
    let mut position: HashMap<NodeId, usize> = HashMap::with_capacity(facts.len());
    for (i, f) in facts.iter().enumerate() {
        let Some(id) = f.id else { continue };
        if let Some(&first) = position.get(&id) {
            d.error(
                "DUPLICATE_NODE_ID",
                format!("nodes[{i}].node_id"),
                format!(
                    "node id `{id}` is already used by nodes[{first}]: give each node its own id"
                ),
            );
        } else {
            position.insert(id, i);
        }
    }
    position
}

fn check_node<'a>(i: usize, node: &'a Value, d: &mut Diagnostics) -> NodeFacts<'a> {
    let base = format!("nodes[{i}]");
    let mut facts = NodeFacts::default();
    let Some(obj) = node.as_object() else {
        d.error(
            "INVALID_TYPE",
            base,
            format!("node is {}: write an object", kind(node)),
        );
        return facts;
    };
    if let Some(raw) = require_string(obj, &base, "node_id", d) {
        match NodeId::parse(raw) {
            Ok(id) => facts.id = Some(id),
            Err(err) => {
                d.error(
                    "INVALID_NODE_ID",
                    json_path::key(&base, "node_id"),
                    format!("{err}: use letters like `b` or `aa`"),
                );
            }
        }
    }
    require_string(obj, &base, "title", d);
    if let Some(t) = require_string(obj, &base, "type", d)
        && !NODE_TYPES.contains(&t)
    {
        d.error(
            "INVALID_NODE_TYPE",
            json_path::key(&base, "type"),
            format!("node type `{t}` is unknown: use start, search, summary or end"),
        );
    }
    if let Some(s) = require_string(obj, &base, "status", d)
        && !STATUSES.contains(&s)
    {
        d.error(
            "INVALID_STATUS",
            json_path::key(&base, "status"),
            format!("status `{s}` is unknown: use planned, running, completed or failed"),
        );
    }
    let batch_path = json_path::key(&base, "batch");
    match obj.get("batch") {
        None => {
            d.error(
                "MISSING_FIELD",
                batch_path,
                "`batch` is missing: add an integer (1 for the start node)",
            );
        }
        Some(v) => match v.as_i64() {
            Some(b) if b == FINAL_BATCH || b >= 1 => facts.batch = Some(b),
            Some(b) => {
                d.error(
                    "INVALID_BATCH",
                    batch_path,
                    format!("batch `{b}` is invalid: use 1 or more, or -1 for the final summary"),
                );
            }
            None => {
                invalid_type(batch_path, "batch", v, "write an integer", d);
            }
        },
    }
    for field in ["summary", "info", "p_node"] {
        match obj.get(field) {
            None | Some(Value::String(_)) => {}
            Some(other) => {
                invalid_type(
                    json_path::key(&base, field),
                    field,
                    other,
                    "write a string",
                    d,
                );
            }
        }
    }
    facts.p_node = obj.get("p_node").and_then(Value::as_str);
    facts
}

fn check_start_and_final(nodes: &[Value], facts: &[NodeFacts<'_>], d: &mut Diagnostics) {
    let starts: Vec<usize> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.get("type").and_then(Value::as_str) == Some("start"))
        .map(|(i, _)| i)
        .collect();
    match starts.as_slice() {
        [] => {
            d.error("NO_START_NODE", "nodes", "no node has type `start`: the first node should be the question, type start, batch 1");
        }
        [first, rest @ ..] => {
            for &i in rest {
                d.error(
                    "MULTIPLE_START_NODES",
                    format!("nodes[{i}].type"),
                    format!(
                        "nodes[{first}] is already the start node: give this node another type"
                    ),
                );
            }
            if let Some(b) = facts[*first].batch
                && b != 1
            {
                d.error(
                    "START_NODE_BATCH",
                    format!("nodes[{first}].batch"),
                    format!("the start node is in batch `{b}`: it must be in batch 1"),
                );
            }
        }
    }
    let finals: Vec<usize> = (0..facts.len())
        .filter(|&i| facts[i].batch == Some(FINAL_BATCH))
        .collect();
    if let [first, rest @ ..] = finals.as_slice() {
        for &i in rest {
            d.error(
                "MULTIPLE_FINAL_NODES",
                format!("nodes[{i}].batch"),
                format!("nodes[{first}] is already the final node (batch -1): only one node may have batch -1"),
            );
        }
    }
}

fn check_check_list(
    cl: &Map<String, Value>,
    facts: &[NodeFacts<'_>],
    position: &HashMap<NodeId, usize>,
    d: &mut Diagnostics,
) {
    let max_id = facts.iter().filter_map(|f| f.id).max();
    check_latest_id(cl.get("latest_id"), max_id, d);
    check_latest_batch(cl.get("latest_batch"), facts, d);
    match cl.get("refs") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (j, item) in items.iter().enumerate() {
                let path = format!("check_list.refs[{j}]");
                match item {
                    Value::String(s) => check_refs(s, &path, None, position, d),
                    other => {
                        d.error(
                            "INVALID_TYPE",
                            path,
                            format!("ref is {}: write a string like `b:summary`", kind(other)),
                        );
                    }
                }
            }
        }
        Some(other) => {
            invalid_type("check_list.refs", "refs", other, "write a list of refs", d);
        }
    }
}

/// `latest_id` may be ahead of the nodes (ids of deleted nodes are never reused), never behind.
fn check_latest_id(latest_id: Option<&Value>, max_id: Option<NodeId>, d: &mut Diagnostics) {
    match latest_id {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) if s.trim().is_empty() => {}
        Some(Value::String(s)) => match NodeId::parse(s) {
            Ok(latest) => {
                if let Some(max) = max_id
                    && latest < max
                {
                    d.error(
                        "LATEST_ID_BEHIND",
                        "check_list.latest_id",
                        format!("`latest_id` is `{latest}` but node `{max}` exists: set it to `{max}` or later so ids are never reused"),
                    );
                }
            }
            Err(err) => {
                d.error(
                    "INVALID_NODE_ID",
                    "check_list.latest_id",
                    format!("{err}: use letters like `b` or `aa`"),
                );
            }
        },
        Some(other) => {
            invalid_type(
                "check_list.latest_id",
                "latest_id",
                other,
                "write a node id string",
                d,
            );
        }
    }
}

/// A final node (batch -1) closes the plan, so `latest_batch` must then say -1; before that it
/// is the highest batch.
fn check_latest_batch(latest_batch: Option<&Value>, facts: &[NodeFacts<'_>], d: &mut Diagnostics) {
    let v = match latest_batch {
        None | Some(Value::Null) => return,
        Some(v) => v,
    };
    let Some(b) = v.as_i64() else {
        invalid_type(
            "check_list.latest_batch",
            "latest_batch",
            v,
            "write an integer",
            d,
        );
        return;
    };
    let final_exists = facts.iter().any(|f| f.batch == Some(FINAL_BATCH));
    let expected = if final_exists {
        Some(FINAL_BATCH)
    } else {
        facts
            .iter()
            .filter_map(|f| f.batch)
            .filter(|&b| b >= 1)
            .max()
    };
    if let Some(expected) = expected
        && b != expected
    {
        let why = if final_exists {
            "a final node (batch -1) exists".to_string()
        } else {
            format!("the highest batch is `{expected}`")
        };
        d.error(
            "LATEST_BATCH_MISMATCH",
            "check_list.latest_batch",
            format!("`latest_batch` is `{b}` but {why}: set it to `{expected}`"),
        );
    }
}

/// Grammar, targets and (for `p_node`, when `owner` is given) order of a comma separated list.
fn check_refs(
    raw: &str,
    path: &str,
    owner: Option<usize>,
    position: &HashMap<NodeId, usize>,
    d: &mut Diagnostics,
) {
    let (parsed, errors) = refs::parse_list(raw);
    for err in errors {
        d.error("INVALID_REF", path, format!("{err}"));
    }
    for r in parsed {
        if r.field == RefField::Title {
            d.error(
                "INVALID_REF",
                path,
                format!(
                    "ref `{r}` uses `:title`, which a stored file may not hold: use `:summary`"
                ),
            );
            continue;
        }
        let id = match r.target {
            RefTarget::New(n) => {
                d.error("INVALID_REF", path, format!("ref `{r}` keeps the placeholder `NEW{n}`: replace it with the id of the node it stands for"));
                continue;
            }
            RefTarget::Node(id) => id,
        };
        match (position.get(&id), owner) {
            (None, _) => {
                d.error(
                    "UNKNOWN_REF_TARGET",
                    path,
                    format!("ref `{r}` names no node of this file: fix the id or drop the ref"),
                );
            }
            (Some(&at), Some(owner)) if at >= owner => {
                d.error(
                    "REF_NOT_EARLIER",
                    path,
                    format!("ref `{r}` names nodes[{at}], which is not earlier than this node (nodes[{owner}]): a task may only read nodes written before it"),
                );
            }
            _ => {}
        }
    }
}
