//! The LLM roles: which agent a model call serves, each with its own endpoint under
//! `roles.<name>`. [`ROLES`] holds one row per role, in [`Role::ALL`] order: its name (in the
//! config and the transcript), what it is for, its prompt files (built in from `prompts/`,
//! each with the token limit of its calls), its default temperature, and whether only the
//! review stage uses it. Config parsing (`roles.*`), the resolved endpoints, the prompts and
//! `doctor` read the table; code that asks a role something names the role and its prompt.
//!
//! A new role is a variant, its row and its prompt file (ARCHITECTURE.md, "How to add an LLM
//! role"); the build fails when a row is missing or out of order.

/// Which agent an LLM call serves; each may have its own endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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
    pub role: Role,
    /// As in the config's `roles` (`roles.second_opinion`) and the transcript.
    pub name: &'static str,
    /// What the role's calls do, in a few words.
    pub what_for: &'static str,
    /// The system prompts of its calls.
    pub prompts: &'static [PromptSpec],
    /// Its temperature when neither `roles.<name>.temperature` nor `temperature` is set;
    /// `None` leaves it to the server.
    pub temperature: Option<f32>,
    /// Whether only the review stage asks it: its endpoint is used (and probed by `doctor`)
    /// only while `review.enabled`.
    pub review_stage: bool,
}

/// One system prompt: a file of `prompts/`, replaceable through `promptsDir`.
#[derive(Debug)]
pub struct PromptSpec {
    /// The file name, e.g. `planning.system.md`.
    pub file: &'static str,
    /// The token limit of a call with this prompt, unless the role sets `maxTokens`.
    pub max_tokens: u32,
    /// The text built into the binary.
    pub built_in: &'static str,
}

/// The row of a prompt file of `prompts/`, its text built in.
macro_rules! prompt {
    ($file:literal, max_tokens: $max_tokens:expr) => {
        PromptSpec {
            file: $file,
            max_tokens: $max_tokens,
            built_in: include_str!(concat!("../../prompts/", $file)),
        }
    };
}

/// Every role, one row each, in [`Role::ALL`] order.
pub static ROLES: [RoleSpec; Role::COUNT] = [
    RoleSpec {
        role: Role::Planning,
        name: "planning",
        what_for: "plans a workflow's rounds and Thinkon's blocks",
        prompts: &[
            prompt!("planning.system.md", max_tokens: 1024),
            prompt!("thinkon.planner.md", max_tokens: 2048),
            prompt!("thinkon.planner.compact.md", max_tokens: 2048),
        ],
        // A planner should answer the same input the same way: greedy.
        temperature: Some(0.0),
        review_stage: false,
    },
    RoleSpec {
        role: Role::Search,
        name: "search",
        what_for: "writes a task's search queries and analyses the results",
        prompts: &[
            prompt!("search.queries.md", max_tokens: 256),
            prompt!("search.analysis.md", max_tokens: 2048),
        ],
        temperature: None,
        review_stage: false,
    },
    RoleSpec {
        role: Role::Summary,
        name: "summary",
        what_for: "summarises tasks, writes the final report and Thinkon's reflections",
        prompts: &[
            prompt!("summary.system.md", max_tokens: 2048),
            prompt!("final.system.md", max_tokens: 4096),
            prompt!("thinkon.reflect.md", max_tokens: 1536),
        ],
        temperature: None,
        review_stage: false,
    },
    RoleSpec {
        role: Role::Review,
        name: "review",
        what_for: "reviews the report against its sources",
        prompts: &[prompt!("review.system.md", max_tokens: 1024)],
        temperature: None,
        review_stage: true,
    },
    RoleSpec {
        role: Role::SecondOpinion,
        name: "second_opinion",
        what_for: "gives the review's second opinion and its verdict",
        prompts: &[prompt!("second_opinion.system.md", max_tokens: 768)],
        temperature: None,
        review_stage: true,
    },
    RoleSpec {
        role: Role::Verifier,
        name: "verifier",
        what_for: "judges the cited claims the content-word check leaves unsupported (only when `roles.verifier` is configured)",
        prompts: &[prompt!("verifier.system.md", max_tokens: 1024)],
        // A judgement should not depend on the draw.
        temperature: Some(0.0),
        review_stage: false,
    },
];

// The build fails unless row `i` of `ROLES` is the role `Role::ALL[i]`, whose discriminant is
// `i`: `Role::spec` indexes the table by it.
const _: () = {
    let mut i = 0;
    while i < Role::COUNT {
        assert!(
            Role::ALL[i] as usize == i,
            "Role::ALL is in declaration order"
        );
        assert!(
            ROLES[i].role as usize == i,
            "ROLES has one row per role, in order"
        );
        i += 1;
    }
};

/// The roles' names, for the message about an unknown one.
pub static ROLE_NAMES: [&str; Role::COUNT] = {
    let mut names = [""; Role::COUNT];
    let mut i = 0;
    while i < Role::COUNT {
        names[i] = ROLES[i].name;
        i += 1;
    }
    names
};

impl Role {
    /// Every role, in the order the config lists them.
    pub const ALL: [Role; 6] = [
        Role::Planning,
        Role::Search,
        Role::Summary,
        Role::Review,
        Role::SecondOpinion,
        Role::Verifier,
    ];

    /// How many roles there are.
    pub const COUNT: usize = Role::ALL.len();

    /// The role's row of [`ROLES`].
    pub const fn spec(self) -> &'static RoleSpec {
        &ROLES[self as usize]
    }

    /// As in the config's `roles` (`roles.second_opinion`).
    pub fn as_str(self) -> &'static str {
        self.spec().name
    }

    /// The role named `name` in the config's `roles`.
    pub fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == name)
    }

    /// The role's prompt `file`. A constant that names a file the role does not have fails
    /// the build: `const LIMIT: u32 = Role::Search.prompt("search.queries.md").max_tokens;`.
    pub const fn prompt(self, file: &str) -> &'static PromptSpec {
        let prompts = self.spec().prompts;
        let mut i = 0;
        while i < prompts.len() {
            if same(prompts[i].file, file) {
                return &prompts[i];
            }
            i += 1;
        }
        panic!("the role has no such prompt file: see ROLES in settings/role.rs");
    }
}

/// `a == b`, in a `const fn`.
const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_role_in_order_and_unique_names() {
        assert_eq!(ROLES.len(), Role::ALL.len());
        for (at, role) in Role::ALL.into_iter().enumerate() {
            let spec = role.spec();
            assert_eq!(spec.role, role);
            assert_eq!(ROLES[at].role, role);
            assert_eq!(ROLE_NAMES[at], spec.name);
            assert_eq!(Role::from_name(spec.name), Some(role));
            assert!(
                !spec.what_for.is_empty() && !spec.prompts.is_empty(),
                "{role:?}"
            );
            assert!(
                spec.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_'),
                "`{}`: as written in `roles`",
                spec.name
            );
            for other in &Role::ALL[at + 1..] {
                assert_ne!(spec.name, other.as_str());
            }
        }
        assert_eq!(Role::from_name("verifer"), None);
        assert_eq!(Role::SecondOpinion.as_str(), "second_opinion");
    }

    #[test]
    fn every_prompt_has_text_a_limit_and_one_role() {
        let all: Vec<&PromptSpec> = ROLES.iter().flat_map(|r| r.prompts).collect();
        for (at, prompt) in all.iter().enumerate() {
            assert!(!prompt.built_in.trim().is_empty(), "`{}`", prompt.file);
            assert!(prompt.max_tokens > 0, "`{}`", prompt.file);
            let twice = all[at + 1..].iter().any(|p| p.file == prompt.file);
            assert!(!twice, "`{}` is in two rows", prompt.file);
        }
        assert_eq!(
            Role::Search.prompt("search.queries.md").max_tokens,
            256,
            "the README's default"
        );
    }

    #[test]
    fn the_readme_lists_every_role() {
        let readme = include_str!("../../README.md");
        let names: Vec<&str> = ROLE_NAMES.to_vec();
        let row = format!("`roles.{{{}}}`", names.join(","));
        assert!(readme.contains(&row), "README's config table: {row}");
    }
}
