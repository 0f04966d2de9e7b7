//! The plan file: model, node ids, refs, info blocks, the on-disk store, and the names of the
//! files written beside it.

pub mod beside;
pub mod footer;
pub mod info;
pub mod model;
pub mod node_id;
pub mod refs;
pub mod segments;
pub mod source;
pub mod store;
#[cfg(test)]
pub mod testing;

pub use beside::Beside;
pub use info::{Info, InfoPart};
pub use model::{
    BudgetRecord, CHECK_LIST_KEYS, CheckList, FINAL_BATCH, NODE_KEYS, Node, NodeStatus, NodeType,
    Outcome, PLAN_KEYS, PlanFile, workflow_id,
};
pub use node_id::NodeId;
pub use refs::{Ref, RefField, RefTarget};
pub use source::{Claim, QualityFinding, Source};
pub use store::{PlanStore, StoreError};
