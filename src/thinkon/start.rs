//! A goal's tree opened in its folder: a new tree for a new goal (the root block saved first),
//! or the tree the folder holds, continued ([`open_goal`]). What is refused is a [`StartError`],
//! which each driver words in its own terms (a flag, a tool's argument).

use std::path::PathBuf;

use serde_json::json;

use super::{Block, ExecutorSet, StoreError, Tree, TreeMeta, TreeStore};
use crate::validate::ExecutorsError;

/// Depth at which blocks are no longer split, unless the caller or the tree says.
pub const DEFAULT_MAX_DEPTH: u32 = 3;

/// Why a goal's tree could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The goal is empty once control characters and white space are removed.
    #[error("the goal is empty once control characters and white space are removed")]
    EmptyGoal,
    /// No goal was given and the folder holds no tree.
    #[error("`{}` holds no tree to resume", .dir.display())]
    NoTree { dir: PathBuf },
    /// The folder holds the tree of another goal.
    #[error("`{}` holds the tree of another goal (`{goal}`)", .dir.display())]
    OtherGoal { dir: PathBuf, goal: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Executors(#[from] ExecutorsError),
}

/// A goal's folder as a driver without an executors file of its own opens it (a batch's
/// question, an MCP call): locked, its built-in executors (written on a first run), and the
/// tree of `goal`, new or continued ([`open_goal`]).
pub fn open_folder(
    dir: &std::path::Path,
    goal: Option<&str>,
    max_depth: Option<u32>,
) -> Result<(TreeStore, ExecutorSet, TreeMeta, Tree), StartError> {
    let store = TreeStore::open(dir)?;
    let executors = ExecutorSet::open(&store.default_executors_path(), true)?;
    let (meta, tree) = open_goal(&store, goal, max_depth)?;
    Ok((store, executors, meta, tree))
}

/// The tree `store` holds, continued (with `max_depth` when given), or a new one for `goal`.
/// A goal given for a folder that holds a tree must be that tree's goal.
pub fn open_goal(
    store: &TreeStore,
    goal: Option<&str>,
    max_depth: Option<u32>,
) -> Result<(TreeMeta, Tree), StartError> {
    let goal = goal.map(crate::text::strip_controls);
    let goal = goal.as_deref().map(str::trim);
    if goal == Some("") {
        return Err(StartError::EmptyGoal);
    }
    let dir = store.dir().to_path_buf();
    let Some(mut meta) = store.meta()? else {
        let goal = goal.ok_or(StartError::NoTree { dir })?;
        return new_tree(store, goal, max_depth.unwrap_or(DEFAULT_MAX_DEPTH));
    };
    if let Some(goal) = goal
        && goal != meta.goal
    {
        let goal = crate::text::truncate(&meta.goal, 120);
        return Err(StartError::OtherGoal { dir, goal });
    }
    if let Some(depth) = max_depth {
        meta.max_depth = depth;
    }
    let mut tree = Tree::new(store.load_blocks()?);
    if tree.root().is_none() {
        // The tree file was written, the root not yet: start the root again.
        let root = Block::new(Tree::root_id(), None, 0, json!(meta.goal));
        store.save(&root)?;
        tree.insert(root);
    }
    tracing::info!(
        "thinkon: continuing the tree of `{}` ({} block(s))",
        dir.display(),
        tree.len()
    );
    Ok((meta, tree))
}

fn new_tree(store: &TreeStore, goal: &str, max_depth: u32) -> Result<(TreeMeta, Tree), StartError> {
    let now = crate::clock::now();
    let meta = TreeMeta {
        version: super::store::TREE_VERSION,
        run_id: crate::plan::workflow_id().replacen("wf-", "tk-", 1),
        goal: goal.to_string(),
        root: Tree::root_id(),
        max_depth,
        status: "running".into(),
        created_at: now.clone(),
        updated_at: now,
    };
    let root = Block::new(Tree::root_id(), None, 0, json!(goal));
    store.save(&root)?;
    store.save_meta(&meta)?;
    Ok((meta, Tree::new(vec![root])))
}
