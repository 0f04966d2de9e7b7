//! The plan file model: one JSON document with a check list and a list of nodes.
//!
//! Unknown fields, top level, in `check_list` and per node, are kept in `extra` maps so a
//! load/save round trip leaves files written by other tools intact. This module holds data and
//! the queries on it; reading and writing files is in [`super::store`].

use serde::{Deserialize, Serialize};

pub use super::source::{Claim, QualityFinding, Source};
use serde_json::{Map, Value};

use super::node_id::NodeId;
use crate::usage::Usage;

/// The plan file format version this build writes.
pub const FORMAT_VERSION: u32 = 1;

/// The keys the format defines at the top level of a plan file; any other is an unknown field,
/// kept as it is ([`PlanFile::extra`]). Fuzzers and property tests draw unknown keys outside
/// these lists.
pub const PLAN_KEYS: &[&str] = &[
    "version",
    "workflow_id",
    "created_at",
    "check_list",
    "nodes",
    "rounds",
    "outcome",
    "corpus",
];
/// The keys the format defines in `check_list`.
pub const CHECK_LIST_KEYS: &[&str] = &["latest_id", "latest_batch", "refs"];
/// The keys the format defines in a node.
pub const NODE_KEYS: &[&str] = &[
    "node_id",
    "title",
    "summary",
    "info",
    "p_node",
    "batch",
    "type",
    "status",
    "created_at",
    "updated_at",
    "finished_at",
    "attempts",
    "errors",
    "usage",
    "sources",
    "truncated",
    "claims",
    "quality",
];

/// A whole plan file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanFile {
    #[serde(default = "default_version")]
    pub version: u32,
    #[serde(default)]
    pub workflow_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default)]
    pub check_list: CheckList,
    pub nodes: Vec<Node>,
    /// Planning rounds run on this plan so far, failed ones included (round numbers continue
    /// across resumes).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rounds: u32,
    /// How the last workflow run on this plan ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// The folder of documents the last run on this plan searched (absolute), when it had a
    /// corpus: a view made later links the documents the plan cites from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub corpus: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// How a workflow run ended, as the plan file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Outcome {
    /// `completed`, `degraded`, `final_failed`, `interrupted`, `failed`, ...
    pub status: String,
    pub finished_at: String,
    /// What went wrong, for any status but `completed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The run's budget, when it had one, and what it used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<BudgetRecord>,
    /// Whether the report answers the question: `false` when it says its sources do not
    /// (whatever the status); absent when no report was written, or in older files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered: Option<bool>,
}

/// A run's budget and its use, as the plan file records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BudgetRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_seconds: Option<u64>,
    /// `max_tokens` or `max_time`, when a limit stopped the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    pub used_tokens: u64,
    pub used_seconds: u64,
}

fn default_version() -> u32 {
    FORMAT_VERSION
}

/// What the next planning round reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckList {
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_id")]
    #[schemars(with = "Option<String>")]
    pub latest_id: Option<NodeId>,
    /// The batch of the latest planning round: -1 once the final summary is planned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_batch: Option<i64>,
    #[serde(default)]
    pub refs: Vec<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A new run's id: `wf-<UTC time>-<6 hex digits>`, unique even for runs started in the same
/// second (the digits mix the clock's nanoseconds, the process and a per-process seed).
pub fn workflow_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    // A fresh `RandomState` is seeded from the OS once per process and varied per instance.
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    let now = chrono::Utc::now();
    hasher.write_u128(now.timestamp_nanos_opt().unwrap_or(0) as u128);
    hasher.write_u32(std::process::id());
    let stamp = now.format("%Y%m%dT%H%M%SZ");
    format!("wf-{stamp}-{:06x}", hasher.finish() & 0x00ff_ffff)
}

/// The batch of the single final summary node (`batch: -1` in the file).
pub const FINAL_BATCH: i64 = -1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum NodeType {
    Start,
    Search,
    Summary,
    /// Accepted on load, never produced.
    End,
}

impl NodeType {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
#[derive(strum::IntoStaticStr, strum::EnumIter)]
#[strum(serialize_all = "lowercase")]
pub enum NodeStatus {
    Planned,
    Running,
    Completed,
    Failed,
}

impl NodeStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One node: the start question, a search or summary task, or an end marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Node {
    #[serde(with = "id_string")]
    #[schemars(with = "String", regex(pattern = r"^\s*[A-Za-z]+\s*$"))]
    pub node_id: NodeId,
    pub title: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub info: String,
    #[serde(default)]
    pub p_node: String,
    /// The batch that made the node: 1 for the question, one more per round that planned
    /// tasks, -1 for the final summary.
    pub batch: i64,
    #[serde(rename = "type")]
    pub kind: NodeType,
    pub status: NodeStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finished_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<Source>,
    /// The model's answer was cut off by its token limit; the node holds what arrived.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// The sentences of its summary that cite sources, each checked against them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Claim>,
    /// What is wrong with its output that a repair did not mend (junk a model wrote).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub quality: Vec<QualityFinding>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Node {
    pub fn new(
        node_id: NodeId,
        title: impl Into<String>,
        kind: NodeType,
        batch: i64,
        status: NodeStatus,
    ) -> Node {
        Node {
            node_id,
            title: title.into(),
            summary: String::new(),
            info: String::new(),
            p_node: String::new(),
            batch,
            kind,
            status,
            created_at: None,
            updated_at: None,
            finished_at: None,
            attempts: None,
            errors: Vec::new(),
            usage: None,
            sources: Vec::new(),
            truncated: false,
            claims: Vec::new(),
            quality: Vec::new(),
            extra: Map::new(),
        }
    }

    pub fn with_summary(mut self, summary: impl Into<String>) -> Node {
        self.summary = summary.into();
        self
    }

    pub fn with_info(mut self, info: impl Into<String>) -> Node {
        self.info = info.into();
        self
    }

    pub fn with_p_node(mut self, p_node: impl Into<String>) -> Node {
        self.p_node = p_node.into();
        self
    }

    /// A node the workflow still has to run: planned, or running when a crash left it so.
    pub fn is_pending(&self) -> bool {
        matches!(self.kind, NodeType::Search | NodeType::Summary)
            && matches!(self.status, NodeStatus::Planned | NodeStatus::Running)
    }
}

impl PlanFile {
    /// A new plan with only the start node, whose title is the question.
    pub fn new(question: &str, workflow_id: String, created_at: String) -> PlanFile {
        let mut start = Node::new(
            NodeId::FIRST,
            question,
            NodeType::Start,
            1,
            NodeStatus::Completed,
        );
        start.created_at = Some(created_at.clone());
        PlanFile {
            version: FORMAT_VERSION,
            workflow_id,
            created_at: Some(created_at),
            check_list: CheckList {
                latest_id: Some(NodeId::FIRST),
                latest_batch: Some(1),
                refs: Vec::new(),
                extra: Map::new(),
            },
            nodes: vec![start],
            rounds: 0,
            outcome: None,
            corpus: None,
            extra: Map::new(),
        }
    }

    pub fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.iter().find(|n| n.node_id == id)
    }

    pub fn node_mut(&mut self, id: NodeId) -> Option<&mut Node> {
        self.nodes.iter_mut().find(|n| n.node_id == id)
    }

    /// The start node: the first node of type `start`, else the first node.
    pub fn start_node(&self) -> Option<&Node> {
        self.nodes
            .iter()
            .find(|n| n.kind == NodeType::Start)
            .or_else(|| self.nodes.first())
    }

    /// The user's question: the start node's title.
    pub fn question(&self) -> &str {
        self.start_node().map_or("", |n| n.title.as_str())
    }

    /// The highest id in use: `check_list.latest_id` or any node's id, whichever is higher.
    pub fn latest_id(&self) -> Option<NodeId> {
        let max_node = self.nodes.iter().map(|n| n.node_id).max();
        self.check_list.latest_id.max(max_node)
    }

    /// The id the next new node gets; ids are never reused.
    pub fn next_id(&self) -> NodeId {
        self.latest_id().map_or(NodeId::FIRST, NodeId::next)
    }

    /// `check_list.latest_batch`, else inferred from the nodes (-1 once a final node exists,
    /// else the highest batch, else 1).
    pub fn latest_batch(&self) -> i64 {
        self.check_list
            .latest_batch
            .unwrap_or_else(|| self.inferred_latest_batch())
    }

    fn inferred_latest_batch(&self) -> i64 {
        if self.final_node().is_some() {
            FINAL_BATCH
        } else {
            self.nodes.iter().map(|n| n.batch).max().unwrap_or(1).max(1)
        }
    }

    /// The final summary node (batch -1), if planned.
    pub fn final_node(&self) -> Option<&Node> {
        self.nodes.iter().find(|n| n.batch == FINAL_BATCH)
    }

    /// Fills a missing `latest_id` / `latest_batch` from the nodes. Returns whether anything
    /// changed.
    pub fn infer_check_list(&mut self) -> bool {
        let mut changed = false;
        if self.check_list.latest_id.is_none() {
            self.check_list.latest_id = self.latest_id();
            changed |= self.check_list.latest_id.is_some();
        }
        if self.check_list.latest_batch.is_none() {
            self.check_list.latest_batch = Some(self.inferred_latest_batch());
            changed = true;
        }
        changed
    }
}

/// Serialises a [`NodeId`] as its lower-case string.
mod id_string {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use super::NodeId;

    pub fn serialize<S: Serializer>(id: &NodeId, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(id)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<NodeId, D::Error> {
        let raw = String::deserialize(d)?;
        NodeId::parse(&raw).map_err(D::Error::custom)
    }
}

/// Serialises an optional [`NodeId`]; an empty string reads as absent.
mod opt_id {
    use serde::{Deserialize, Deserializer, Serializer, de::Error};

    use super::NodeId;

    pub fn serialize<S: Serializer>(id: &Option<NodeId>, s: S) -> Result<S::Ok, S::Error> {
        match id {
            Some(id) => s.collect_str(id),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<NodeId>, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(None),
            Some(raw) if raw.trim().is_empty() => Ok(None),
            Some(raw) => NodeId::parse(&raw).map(Some).map_err(D::Error::custom),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Plan files store these names: they must never change.
    #[test]
    fn every_node_type_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<NodeType>(),
            "start search summary end"
        );
    }

    /// Plan files store these names: they must never change.
    #[test]
    fn every_node_status_keeps_its_stored_name() {
        assert_eq!(
            crate::text::stored_names::<NodeStatus>(),
            "planned running completed failed"
        );
    }

    const WITH_EXTRAS: &str = r#"{
      "version": 1,
      "workflow_id": "wf-1",
      "owner": {"team": "x"},
      "check_list": {"latest_id": "b", "latest_wave": 2, "refs": ["b:summary"], "note": 7},
      "nodes": [
        {"node_id": "a", "title": "Q?", "summary": "", "info": "", "p_node": "", "batch": 1,
         "type": "start", "status": "completed", "color": "red"},
        {"node_id": "B", "title": "T", "batch": 2, "type": "search", "status": "planned",
         "tags": ["k"]}
      ]
    }"#;

    /// Every key of the lists is a field of the model, and the model writes no other.
    #[test]
    fn the_key_lists_are_the_models_fields() {
        let full = serde_json::json!({
            "version": 1, "workflow_id": "wf", "created_at": "t", "rounds": 2,
            "outcome": {"status": "completed", "finished_at": "t"}, "corpus": "/c",
            "check_list": {"latest_id": "b", "latest_batch": 1, "refs": []},
            "nodes": [{"node_id": "a", "title": "Q", "summary": "s", "info": "i", "p_node": "",
                "batch": 1, "type": "start", "status": "completed", "created_at": "t",
                "updated_at": "t", "finished_at": "t", "attempts": 1, "errors": ["e"],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                "sources": [{"url": "https://x.test", "title": "x", "snippet": "s"}],
                "truncated": true,
                "claims": [{"sentence": "S [1].", "cites": [1], "supported": true,
                    "score": 1.0, "by": "lexical"}],
                "quality": [{"code": "ECHOED_PROMPT", "message": "m"}]}]
        });
        let plan: PlanFile = serde_json::from_value(full).expect("every key is known");
        assert!(plan.extra.is_empty() && plan.check_list.extra.is_empty());
        assert!(plan.nodes[0].extra.is_empty());
        let back = serde_json::to_value(&plan).expect("serialises");
        let keys = |v: &Value| -> Vec<String> {
            let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
            k.sort();
            k
        };
        let sorted = |list: &[&str]| -> Vec<String> {
            let mut k: Vec<String> = list.iter().map(|s| (*s).to_string()).collect();
            k.sort();
            k
        };
        assert_eq!(keys(&back), sorted(PLAN_KEYS));
        assert_eq!(keys(&back["check_list"]), sorted(CHECK_LIST_KEYS));
        assert_eq!(keys(&back["nodes"][0]), sorted(NODE_KEYS));
    }

    #[test]
    fn unknown_fields_survive_a_round_trip() {
        let plan: PlanFile = serde_json::from_str(WITH_EXTRAS).expect("valid plan");
        let back: Value = serde_json::to_value(&plan).expect("serialises");
        assert_eq!(back["owner"]["team"], "x");
        assert_eq!(back["check_list"]["note"], 7);
        assert_eq!(back["nodes"][0]["color"], "red");
        assert_eq!(back["nodes"][1]["tags"][0], "k");
        assert_eq!(
            back["nodes"][1]["node_id"], "b",
            "ids are written in lower case"
        );
        let again: PlanFile = serde_json::from_value(back).expect("re-reads");
        assert_eq!(again, plan);
    }

    #[test]
    fn missing_latest_fields_are_inferred() {
        let mut plan: PlanFile = serde_json::from_str(
            r#"{"nodes":[
              {"node_id":"a","title":"Q","batch":1,"type":"start","status":"completed"},
              {"node_id":"c","title":"T","batch":3,"type":"search","status":"completed"},
              {"node_id":"b","title":"T","batch":2,"type":"search","status":"completed"}]}"#,
        )
        .expect("valid plan");
        assert_eq!(plan.check_list.latest_id, None);
        assert!(plan.infer_check_list());
        assert_eq!(
            plan.check_list.latest_id.map(|i| i.to_string()),
            Some("c".into())
        );
        assert_eq!(plan.check_list.latest_batch, Some(3));
        assert_eq!(plan.next_id().to_string(), "d");
        assert!(!plan.infer_check_list(), "second inference changes nothing");
    }

    #[test]
    fn a_final_node_makes_the_inferred_batch_final() {
        let mut plan = PlanFile::new("Q", "wf".into(), "t".into());
        plan.check_list.latest_batch = None;
        plan.nodes.push(Node::new(
            NodeId::parse("b").expect("id"),
            "S",
            NodeType::Summary,
            FINAL_BATCH,
            NodeStatus::Planned,
        ));
        assert_eq!(plan.latest_batch(), FINAL_BATCH);
    }

    #[test]
    fn next_id_never_reuses_an_id_beyond_latest_id() {
        let mut plan = PlanFile::new("Q", "wf".into(), "t".into());
        plan.check_list.latest_id = NodeId::parse("e").ok();
        assert_eq!(plan.next_id().to_string(), "f");
        plan.check_list.latest_id = None;
        assert_eq!(plan.next_id().to_string(), "b");
    }
}
