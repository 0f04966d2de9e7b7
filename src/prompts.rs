//! The system prompts: built into the binary from `prompts/` (each [`Prompt`] names its file),
//! and replaceable file by file by a folder named in the config (`promptsDir`) or
//! `RESEARCHFLOW_PROMPTS_DIR`.

use std::path::{Path, PathBuf};

use crate::settings::Prompt;

/// Every prompt's text (a workflow's and a Thinkon goal's), loaded once before any work
/// starts: `prompts[Prompt::Planning]`.
#[derive(Debug, Clone)]
pub struct Prompts([String; Prompt::COUNT]);

impl Prompts {
    pub fn load(dir: Option<&Path>) -> Result<Prompts, PromptError> {
        let mut texts = Vec::with_capacity(Prompt::COUNT);
        for prompt in Prompt::all() {
            texts.push(load(prompt.file(), dir)?);
        }
        let Ok(texts) = texts.try_into() else {
            unreachable!("one text was pushed for each prompt");
        };
        Ok(Prompts(texts))
    }
}

impl std::ops::Index<Prompt> for Prompts {
    type Output = str;

    fn index(&self, prompt: Prompt) -> &str {
        &self.0[prompt as usize]
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
        .map(str::to_string)
        .ok_or_else(|| PromptError::Unknown(name.to_string()))
}

/// The built-in text of the prompt whose file is `name`.
fn built_in(name: &str) -> Option<&'static str> {
    Prompt::from_file(name).map(|p| p.spec().built_in)
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
    fn every_prompt_loads_built_in_and_is_indexed_by_its_variant() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("verifier.system.md"), "mine").expect("write");
        let prompts = Prompts::load(Some(dir.path())).expect("the prompts");
        for prompt in Prompt::all() {
            let want = match prompt {
                Prompt::Verifier => "mine",
                _ => prompt.spec().built_in,
            };
            assert_eq!(&prompts[prompt], want, "{prompt:?}");
        }
    }

    #[test]
    fn every_file_of_the_prompts_folder_is_built_in() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("prompts");
        for entry in std::fs::read_dir(&folder).expect("prompts/") {
            let name = entry.expect("entry").file_name();
            let name = name.to_string_lossy();
            assert!(
                built_in(&name).is_some(),
                "`prompts/{name}` is no `Prompt`'s file"
            );
        }
    }
}
