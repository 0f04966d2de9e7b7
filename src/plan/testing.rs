//! Plans, nodes and sources for unit tests, so that a test spells out only what it is about
//! (test builds only; the integration tests build theirs from files). Every node is completed
//! unless a test says otherwise, as most tests read finished research.

use super::{FINAL_BATCH, Node, NodeId, NodeStatus, NodeType, PlanFile, Source};

/// The node id `id`: a test writes valid ones.
pub fn id(id: &str) -> NodeId {
    NodeId::parse(id).expect("a valid test id")
}

/// The plan of `question` (workflow `wf`, made at `t`): its start node `a`, then `nodes`.
pub fn plan(question: &str, nodes: impl IntoIterator<Item = Node>) -> PlanFile {
    let mut plan = PlanFile::new(question, "wf".into(), "t".into());
    plan.nodes.extend(nodes);
    plan
}

/// A search task of the first planned batch.
pub fn search(node: &str, title: &str) -> Node {
    Node::new(id(node), title, NodeType::Search, 2, NodeStatus::Completed)
}

/// A summary task of `batch`.
pub fn summary(node: &str, title: &str, batch: i64) -> Node {
    Node::new(
        id(node),
        title,
        NodeType::Summary,
        batch,
        NodeStatus::Completed,
    )
}

/// The final summary.
pub fn final_summary(node: &str, title: &str) -> Node {
    summary(node, title, FINAL_BATCH)
}

/// Source `n`: `https://example.test/n`, titled `Tn`.
pub fn source(n: u32) -> Source {
    Source::new(format!("https://example.test/{n}"), format!("T{n}"))
}

/// What only tests set in a chain; `with_summary`, `with_info` and `with_p_node` serve the code.
impl Node {
    pub fn with_status(mut self, status: NodeStatus) -> Node {
        self.status = status;
        self
    }

    pub fn with_sources(mut self, sources: impl IntoIterator<Item = Source>) -> Node {
        self.sources = sources.into_iter().collect();
        self
    }
}
