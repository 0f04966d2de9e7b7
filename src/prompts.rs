//! The system prompts: built into the binary from `prompts/` (each role's row of
//! [`crate::settings::ROLES`] names its files), and replaceable file by file by a folder named
//! in the config (`promptsDir`) or `RESEARCHFLOW_PROMPTS_DIR`.

use std::path::{Path, PathBuf};

use crate::settings::{PromptSpec, ROLES};

/// The planner's system prompt.
pub const PLANNING: &str = "planning.system.md";
/// The search agent's first call: search queries for a task.
pub const SEARCH_QUERIES: &str = "search.queries.md";
/// The search agent's second call: analysis and overview of the results.
pub const SEARCH_ANALYSIS: &str = "search.analysis.md";
/// The summary agent.
pub const SUMMARY: &str = "summary.system.md";
/// The final summary: the report.
pub const FINAL: &str = "final.system.md";
/// The review stage's reviewer of the report.
pub const REVIEW: &str = "review.system.md";
/// The review stage's second opinion, with the verdict.
pub const SECOND_OPINION: &str = "second_opinion.system.md";
/// The verifier of cited claims.
pub const VERIFIER: &str = "verifier.system.md";
/// The Thinkon planner: one plan-next answer per block (docs/SPEC.md, "Plan-next answers
/// (Thinkon)").
pub const THINKON_PLANNER: &str = "thinkon.planner.md";
/// The Thinkon planner in about 1,000 tokens instead of the full prompt's 9,500, for models
/// whose context is 8k tokens or less (`thinkon --compact-prompt`).
pub const THINKON_PLANNER_COMPACT: &str = "thinkon.planner.compact.md";
/// The Thinkon reflection: a block's result in the four Core4 sections.
pub const THINKON_REFLECT: &str = "thinkon.reflect.md";

/// Every prompt a run needs (a workflow's and a Thinkon goal's), loaded once before any work
/// starts.
#[derive(Debug, Clone)]
pub struct Prompts {
    pub planning: String,
    pub search_queries: String,
    pub search_analysis: String,
    pub summary: String,
    pub final_report: String,
    pub review: String,
    pub second_opinion: String,
    pub verifier: String,
    pub thinkon_planner: String,
    /// The Thinkon planner for small contexts (`thinkon --compact-prompt`).
    pub thinkon_planner_compact: String,
    pub thinkon_reflect: String,
}

impl Prompts {
    pub fn load(dir: Option<&Path>) -> Result<Prompts, PromptError> {
        Ok(Prompts {
            planning: load(PLANNING, dir)?,
            search_queries: load(SEARCH_QUERIES, dir)?,
            search_analysis: load(SEARCH_ANALYSIS, dir)?,
            summary: load(SUMMARY, dir)?,
            final_report: load(FINAL, dir)?,
            review: load(REVIEW, dir)?,
            second_opinion: load(SECOND_OPINION, dir)?,
            verifier: load(VERIFIER, dir)?,
            thinkon_planner: load(THINKON_PLANNER, dir)?,
            thinkon_planner_compact: load(THINKON_PLANNER_COMPACT, dir)?,
            thinkon_reflect: load(THINKON_REFLECT, dir)?,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    #[error("cannot read prompt `{path}`: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("no prompt named `{0}`")]
    Unknown(String),
}

/// The largest prompt file read.
const PROMPT_MAX_BYTES: u64 = 1024 * 1024;

/// The prompt `name`: from `dir` when that folder holds the file, else the built-in one.
pub fn load(name: &str, dir: Option<&Path>) -> Result<String, PromptError> {
    if let Some(dir) = dir {
        let path = dir.join(name);
        if path.exists() {
            // A prompt is a page of text: a device or a huge file is refused, not read.
            return crate::files::read_bounded(&path, PROMPT_MAX_BYTES).map_err(|e| {
                PromptError::Read {
                    path,
                    source: e.into_io(),
                }
            });
        }
    }
    built_in(name)
        .map(|p| p.built_in.to_string())
        .ok_or_else(|| PromptError::Unknown(name.to_string()))
}

/// The built-in prompt `name`, from the role that has it.
fn built_in(name: &str) -> Option<&'static PromptSpec> {
    ROLES
        .iter()
        .flat_map(|role| role.prompts)
        .find(|p| p.file == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_overrides_built_in() {
        let dir = tempfile::tempdir().expect("tempdir");
        let built_in = load("planning.system.md", Some(dir.path())).expect("built in");
        assert!(built_in.contains("next_check_list"));
        std::fs::write(dir.path().join("planning.system.md"), "mine").expect("write");
        assert_eq!(
            load("planning.system.md", Some(dir.path())).expect("override"),
            "mine"
        );
        assert!(load("nope.md", None).is_err());
    }

    #[test]
    fn every_named_prompt_is_a_role_s_and_every_role_s_prompt_loads() {
        let named = [
            PLANNING,
            SEARCH_QUERIES,
            SEARCH_ANALYSIS,
            SUMMARY,
            FINAL,
            REVIEW,
            SECOND_OPINION,
            THINKON_PLANNER,
            THINKON_PLANNER_COMPACT,
            THINKON_REFLECT,
        ];
        for name in named {
            assert!(built_in(name).is_some(), "`{name}` is in no row of ROLES");
        }
        let dir = tempfile::tempdir().expect("tempdir");
        for prompt in ROLES.iter().flat_map(|r| r.prompts) {
            let text = load(prompt.file, Some(dir.path())).expect("built in");
            assert_eq!(text, prompt.built_in);
        }
        Prompts::load(None).expect("the workflow's prompts");
    }

    #[test]
    fn every_file_of_the_prompts_folder_is_built_in() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        for entry in std::fs::read_dir(&folder).expect("prompts/") {
            let name = entry.expect("entry").file_name();
            let name = name.to_string_lossy();
            assert!(
                built_in(&name).is_some(),
                "`prompts/{name}` is in no row of ROLES"
            );
        }
    }
}
