//! The plan file: model, node ids, refs, info blocks and the on-disk store.

pub mod info;
pub mod model;
pub mod node_id;
pub mod refs;
pub mod segments;
pub mod store;

pub use info::{Info, InfoPart};
pub use model::{
    BudgetRecord, CheckList, FINAL_BATCH, Node, NodeStatus, NodeType, Outcome, PlanFile, Source,
    Usage,
};
pub use node_id::NodeId;
pub use refs::{Ref, RefField, RefTarget};
pub use store::{PlanStore, StoreError};
