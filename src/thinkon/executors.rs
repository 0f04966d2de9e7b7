//! The executors the planner may call: `executors.yaml` (written with the built-in ones on a
//! first run when the file is absent), what its commands mean to the runtime, and which of
//! them the runtime can run.
//!
//! The runtime runs three executors: `search: <query>` (the search sub-agent), `summarize:
//! <instruction>` (the summary sub-agent over what the block's parent has done) and `shell:
//! <command>` (only with `--allow-shell`). A command that names another executor the file
//! declares fails its block: declaring a tool does not give the runtime a way to run it.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use serde_json::Value;

use crate::validate::executors::shell_command;
use crate::validate::{Executors, ExecutorsError, document};

/// The executors file written on a first run when there is none.
pub const BUILT_IN: &str = r#"# The executors the Thinkon planner may call (it reads this list and invents no other
# tool). A command names an executor as `<id>: <argument>`. researchflow runs
# `search`, `summarize` and `shell`; a tool declared here that it cannot run fails its block.
executors:
  - id: search
    usage: "search: <query>"
    guarantees: "runs the query on the configured search provider and answers with an analysis of the results, citing them, and their sources"
    limits: "one query per call; with search provider `none` the analysis comes from the model alone, and the observation says so"
    side_effects: none
  - id: summarize
    usage: "summarize: <instruction>"
    guarantees: "a synthesis, following the instruction, of what the current block has done so far"
    limits: "sees only the results already in the block's done; searches nothing"
    side_effects: none
  - id: shell
    usage: "shell: <command>"
    guarantees: "the exit status and the output of the command, run through sh in the run's work folder"
    limits: "runs only when researchflow thinkon is started with --allow-shell; a timeout and an output cap apply"
    side_effects: "whatever the command does"
"#;

/// The executors file of a run: the declared ids (for the validator) and the whole document
/// (for the planner's context).
#[derive(Debug, Clone)]
pub struct ExecutorSet {
    pub path: PathBuf,
    pub declared: Executors,
    /// The file's content, as the planner reads it.
    pub document: Value,
}

impl ExecutorSet {
    /// Reads the executors file at `path`; with `write_built_in`, a missing file is first
    /// written with [`BUILT_IN`].
    pub fn open(path: &Path, write_built_in: bool) -> Result<ExecutorSet, ExecutorsError> {
        if write_built_in && !path.exists() {
            crate::atomic::write(path, BUILT_IN.as_bytes()).map_err(|e| {
                ExecutorsError::Invalid {
                    source_name: path.display().to_string(),
                    what: format!("cannot write the built-in executors: {e}"),
                }
            })?;
            tracing::info!(
                "thinkon: wrote the built-in executors to `{}`",
                path.display()
            );
        }
        let document = document::read_document(path)?;
        let declared = Executors::from_value(&document, &path.display().to_string())?;
        let document = match document {
            Value::Object(mut map) => map.remove("executors").unwrap_or(Value::Object(map)),
            other => other,
        };
        Ok(ExecutorSet {
            path: path.to_path_buf(),
            declared,
            document,
        })
    }
}

/// The executors researchflow runs, whatever the file declares: what the runtime's own calls
/// (the depth limit's `search:`) are classified against.
pub static RUNNABLE: LazyLock<Executors> = LazyLock::new(|| {
    // A constant list of valid ids: reading it cannot fail.
    Executors::from_value(
        &serde_json::json!(["search", "summarize", "shell"]),
        "built-in",
    )
    .unwrap_or_default()
});

/// What an executor call asks the runtime to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Call {
    Search(String),
    Summarize(String),
    Shell(String),
    /// A declared executor the runtime has no way to run.
    Unsupported(String),
    /// An executor the file does not declare.
    Undeclared,
}

/// The call `command` makes under the declared executors.
pub fn classify(command: &str, declared: &Executors) -> Call {
    if let Some(shell) = shell_command(command) {
        return Call::Shell(shell.to_string());
    }
    let command = command.trim();
    let Some(id) = declared.matching(command) else {
        return Call::Undeclared;
    };
    let argument = command[id.len()..]
        .trim_start_matches([':', ' '])
        .trim()
        .to_string();
    match id {
        "search" => Call::Search(argument),
        "summarize" => Call::Summarize(argument),
        "shell" => Call::Shell(argument),
        other => Call::Unsupported(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_file_declares_what_the_runtime_runs() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let path = tmp.path().join("executors.yaml");
        let set = ExecutorSet::open(&path, true).expect("written and read");
        assert_eq!(set.declared.ids(), ["search", "summarize", "shell"]);
        assert_eq!(set.document.as_array().map(Vec::len), Some(3));
        assert!(ExecutorSet::open(&tmp.path().join("none.yaml"), false).is_err());
    }

    #[test]
    fn commands_are_classified() {
        let declared = Executors::from_value(
            &serde_json::json!(["search", "summarize", "shell", "git"]),
            "t",
        )
        .expect("valid");
        let c = |s: &str| classify(s, &declared);
        assert_eq!(
            c("search: solid-state batteries"),
            Call::Search("solid-state batteries".into())
        );
        assert_eq!(c("summarize: compare"), Call::Summarize("compare".into()));
        assert_eq!(c("shell: ls -l"), Call::Shell("ls -l".into()));
        assert_eq!(c("SHELL:ls"), Call::Shell("ls".into()));
        assert_eq!(c("git: status"), Call::Unsupported("git".into()));
        assert_eq!(c("curl x"), Call::Undeclared);
    }
}
