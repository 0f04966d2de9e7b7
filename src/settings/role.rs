//! The LLM roles and their prompts, each declared once. A [`Role`] is which agent a model call
//! serves, with its own endpoint under `roles.<name>`: its name (in the config and the
//! transcript) is the variant's, and [`Role::spec`] says what it is for, its default
//! temperature and whether only the review stage asks it. A [`Prompt`] is one kind of call to
//! a role: [`Prompt::spec`] names its role, its file of `prompts/` (built in, replaceable
//! through `promptsDir`) and the token limit of its answers. The code that makes the call
//! holds the rest beside it: the answer's schema and its contract.
//!
//! The lists of roles and prompts come from the enums (`strum`); the matches are exhaustive,
//! so a new variant without its row fails the build (ARCHITECTURE.md, "An LLM role").

use strum::{EnumCount, EnumIter, IntoEnumIterator, IntoStaticStr, VariantNames};

/// Which agent an LLM call serves; each may have its own endpoint.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, EnumCount, EnumIter, IntoStaticStr, VariantNames,
)]
#[strum(serialize_all = "snake_case")]
pub enum Role {
    Planning,
    Search,
    Summary,
    /// The review stage's reviewer of the report.
    Review,
    /// The review stage's second opinion, with the verdict.
    SecondOpinion,
    /// Judges the cited claims the content-word check leaves unsupported; asked only when
    /// `roles.verifier` is configured.
    Verifier,
}

/// What the crate knows of one role.
#[derive(Debug)]
pub struct RoleSpec {
    /// What the role's calls do, in a few words.
    pub what_for: &'static str,
    /// Its temperature when neither `roles.<name>.temperature` nor `temperature` is set;
    /// `None` leaves it to the server.
    pub temperature: Option<f32>,
    /// Whether only the review stage asks it: its endpoint is used (and probed by `doctor`)
    /// only while `review.enabled`.
    pub review_stage: bool,
}

impl Role {
    /// How many roles there are.
    pub const COUNT: usize = <Role as EnumCount>::COUNT;

    /// The roles' names, in declaration order, as in the config's `roles`.
    pub const NAMES: &'static [&'static str] = <Role as VariantNames>::VARIANTS;

    /// What the role is.
    pub const fn spec(self) -> RoleSpec {
        let (what_for, temperature, review_stage) = match self {
            // A planner should answer the same input the same way: greedy.
            Role::Planning => (
                "plans a workflow's rounds and Thinkon's blocks",
                Some(0.0),
                false,
            ),
            Role::Search => (
                "writes a task's search queries and analyses the results",
                None,
                false,
            ),
            Role::Summary => (
                "summarises tasks, writes the final report and Thinkon's reflections",
                None,
                false,
            ),
            Role::Review => ("reviews the report against its sources", None, true),
            Role::SecondOpinion => (
                "gives the review's second opinion and its verdict",
                None,
                true,
            ),
            // A judgement should not depend on the draw.
            Role::Verifier => (
                "judges the cited claims the content-word check leaves unsupported (only when `roles.verifier` is configured)",
                Some(0.0),
                false,
            ),
        };
        RoleSpec {
            what_for,
            temperature,
            review_stage,
        }
    }

    /// Every role, in declaration order (the order the config lists them).
    pub fn all() -> RoleIter {
        Role::iter()
    }

    /// As in the config's `roles` (`roles.second_opinion`).
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// The role named `name` in the config's `roles`.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::iter().find(|r| r.as_str() == name)
    }

    /// The role's prompts.
    pub fn prompts(self) -> impl Iterator<Item = Prompt> {
        Prompt::iter().filter(move |p| p.role() == self)
    }
}

/// One kind of call to a role, with its system prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, EnumCount, EnumIter)]
pub enum Prompt {
    /// A workflow's planning round.
    Planning,
    /// A workflow's planning round that must finish: the final summary's task alone.
    PlanningFinalise,
    /// The search agent's first call: search queries for a task.
    SearchQueries,
    /// The search agent's second call: analysis and overview of the results.
    SearchAnalysis,
    /// The summary agent.
    Summary,
    /// The final summary: the report.
    Final,
    /// The review stage's reviewer of the report.
    Review,
    /// The review stage's second opinion, with the verdict.
    SecondOpinion,
    /// The verifier of cited claims.
    Verifier,
    /// The Thinkon planner: one plan-next answer per block (docs/SPEC.md, "Plan-next answers
    /// (Thinkon)").
    ThinkonPlanner,
    /// The Thinkon planner in about 1,000 tokens instead of the full prompt's 9,500, for
    /// models whose context is 8k tokens or less (`thinkon --compact-prompt`).
    ThinkonPlannerCompact,
    /// The Thinkon reflection: a block's result in the four Core4 sections.
    ThinkonReflect,
}

/// What the crate knows of one prompt.
#[derive(Debug)]
pub struct PromptSpec {
    /// The role asked with it.
    pub role: Role,
    /// The file name, e.g. `planning.system.md`.
    pub file: &'static str,
    /// The token limit of an answer to it, unless the role sets `maxTokens`.
    pub max_tokens: u32,
    /// The text built into the binary.
    pub built_in: &'static str,
}

/// A prompt's row: its role, its file of `prompts/` (its text built in) and its token limit.
macro_rules! row {
    ($role:ident, $file:literal, $max_tokens:expr) => {
        PromptSpec {
            role: Role::$role,
            file: $file,
            max_tokens: $max_tokens,
            built_in: include_str!(concat!("../../prompts/", $file)),
        }
    };
}

impl Prompt {
    /// How many prompts there are.
    pub const COUNT: usize = <Prompt as EnumCount>::COUNT;

    /// The prompt's row.
    pub const fn spec(self) -> PromptSpec {
        match self {
            Prompt::Planning => row!(Planning, "planning.system.md", 1024),
            // The planner asks every round with the planning prompt's limit
            // (`planner::round::PLANNER_MAX_TOKENS`): this row says the same.
            Prompt::PlanningFinalise => row!(Planning, "planning.finalise.md", 1024),
            Prompt::SearchQueries => row!(Search, "search.queries.md", 256),
            Prompt::SearchAnalysis => row!(Search, "search.analysis.md", 2048),
            Prompt::Summary => row!(Summary, "summary.system.md", 2048),
            Prompt::Final => row!(Summary, "final.system.md", 4096),
            Prompt::Review => row!(Review, "review.system.md", 1024),
            Prompt::SecondOpinion => row!(SecondOpinion, "second_opinion.system.md", 768),
            Prompt::Verifier => row!(Verifier, "verifier.system.md", 1024),
            Prompt::ThinkonPlanner => row!(Planning, "thinkon.planner.md", 2048),
            // Asked with the same limit as the full prompt.
            Prompt::ThinkonPlannerCompact => row!(Planning, "thinkon.planner.compact.md", 2048),
            Prompt::ThinkonReflect => row!(Summary, "thinkon.reflect.md", 1536),
        }
    }

    /// Every prompt, in declaration order.
    pub fn all() -> PromptIter {
        Prompt::iter()
    }

    /// The role asked with it.
    pub const fn role(self) -> Role {
        self.spec().role
    }

    /// Its file name in `prompts/` (and in `promptsDir`).
    pub const fn file(self) -> &'static str {
        self.spec().file
    }

    /// The token limit of an answer to it, unless the role sets `maxTokens`.
    pub const fn max_tokens(self) -> u32 {
        self.spec().max_tokens
    }

    /// The prompt whose file is `file`.
    pub fn from_file(file: &str) -> Option<Prompt> {
        Prompt::iter().find(|p| p.file() == file)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_has_a_unique_config_name_a_purpose_and_a_prompt() {
        assert_eq!(Role::NAMES.len(), Role::COUNT);
        for (at, role) in Role::all().enumerate() {
            assert_eq!(role as usize, at, "arrays are indexed by the discriminant");
            assert_eq!(Role::NAMES[at], role.as_str());
            assert_eq!(Role::from_name(role.as_str()), Some(role));
            assert!(!role.spec().what_for.is_empty(), "{role:?}");
            assert!(role.prompts().next().is_some(), "{role:?} has no prompt");
            assert!(
                role.as_str()
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_'),
                "`{}`: as written in `roles`",
                role.as_str()
            );
        }
        assert_eq!(Role::from_name("verifer"), None);
        assert_eq!(Role::SecondOpinion.as_str(), "second_opinion");
    }

    #[test]
    fn every_prompt_has_text_a_limit_and_its_own_file() {
        for (at, prompt) in Prompt::all().enumerate() {
            assert_eq!(
                prompt as usize, at,
                "arrays are indexed by the discriminant"
            );
            let spec = prompt.spec();
            assert!(!spec.built_in.trim().is_empty(), "`{}`", spec.file);
            assert!(spec.max_tokens > 0, "`{}`", spec.file);
            assert_eq!(
                Prompt::from_file(spec.file),
                Some(prompt),
                "one file, one prompt"
            );
        }
        assert_eq!(
            Prompt::SearchQueries.max_tokens(),
            256,
            "the book's default (docs/src/configuration.md)"
        );
    }

    #[test]
    fn the_book_lists_every_role() {
        let book = include_str!("../../docs/src/configuration.md");
        for name in Role::NAMES {
            let key = format!("`roles.{name}`");
            assert!(book.contains(&key), "docs/src/configuration.md: {key}");
        }
    }
}
