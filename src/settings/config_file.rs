//! `agent.config.json`: the on-disk configuration, exactly as written, with every key named.
//!
//! Unknown keys are an error that names them (a typo must not be silently ignored). A file that
//! holds an API key and that other users may read gets a warning (never the key). This module
//! only parses; defaults, the environment and validation are applied in [`super::resolve`].

use std::path::Path;

use serde::Deserialize;

use super::role::Role;
use super::search_provider::SearchProviderKind;
use crate::cli::{Bounded, Budget, LimitArgs, Seconds, SecondsFromZero, Tokens};
use crate::files::read_bounded;

/// The largest config file read: a real one is a few kilobytes, so anything near this is the
/// wrong file.
pub const CONFIG_MAX_BYTES: u64 = 1024 * 1024;

/// The whole configuration file. All keys are optional here; `resolve` says what is required.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ConfigFile {
    /// The JSON Schema the file follows (`researchflow schema config`), for editors; not read.
    #[serde(rename = "$schema")]
    pub schema: Option<String>,
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    pub model: Option<String>,
    pub api_key: Option<String>,
    #[serde(default)]
    pub roles: Roles,
    pub structured_output: Option<StructuredOutput>,
    /// The most tokens one answer may have, for every role without its own.
    pub max_tokens: Option<u32>,
    /// Sampling temperature for every role without its own.
    pub temperature: Option<f32>,
    /// Whether answers are streamed (`"stream": true`, the default) for every role without its
    /// own say; `false` asks for whole answers.
    pub stream: Option<bool>,
    #[serde(default)]
    pub timeouts: Timeouts,
    #[serde(default)]
    pub retry: RetryConfig,
    /// The rate budget of every role's endpoint without its own.
    pub limits: Option<LimitsConfig>,
    #[serde(default)]
    pub search: SearchConfig,
    #[serde(default)]
    pub planner: PlannerConfig,
    /// A folder whose prompt files replace the built-in ones (missing files keep the default).
    pub prompts_dir: Option<String>,
    /// What plans and writes: `llm` (default) or `offline` (no model, no network).
    pub engine: Option<EngineKind>,
    #[serde(default)]
    pub budget: BudgetConfig,
    #[serde(default)]
    pub review: ReviewConfig,
    #[serde(default)]
    pub claims: ClaimsConfig,
    /// How `watch` tells what changed by mail (`notify.smtp`).
    #[serde(default)]
    pub notify: super::notify::NotifyConfig,
    /// The bounds of the process that parses web pages and corpus files.
    #[serde(default)]
    pub documents: super::documents::DocumentsConfig,
}

/// The check of cited claims against their sources.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ClaimsConfig {
    /// The share of a claim's content words its sources must hold (0 to 1, default 0.5).
    pub threshold: Option<f64>,
}

/// The review stage after the final report.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReviewConfig {
    /// Whether a workflow's report is reviewed (default true).
    pub enabled: Option<bool>,
}

/// What one run may spend; reaching a limit ends the run with a partial report.
// Each key has its flag's type (`cli/bounds.rs`), so its range, checked as the file is read.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BudgetConfig {
    /// Prompt plus completion tokens of every call.
    pub max_tokens: Option<Tokens>,
    /// Wall-clock seconds.
    pub max_seconds: Option<Seconds>,
    /// Seconds running tasks may still finish once the time budget is spent.
    pub grace_seconds: Option<SecondsFromZero>,
    /// Seconds the final summary may take once it starts, when a time budget is set.
    pub final_seconds: Option<Seconds>,
}

impl BudgetConfig {
    /// The budget these keys give, each to its flag's field.
    pub fn budget(&self) -> Budget {
        Budget {
            limits: LimitArgs {
                max_tokens: self.max_tokens,
                max_time: self.max_seconds,
            },
            grace: self.grace_seconds,
            final_time: self.final_seconds,
        }
    }
}

/// What plans the rounds and writes the results.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// An OpenAI-compatible model plans and writes.
    Llm,
    /// No model: a deterministic planner and extractive summaries over a local corpus, as
    /// `--offline` (`extractive`, its former name, is still read).
    #[serde(alias = "extractive")]
    Offline,
}

/// Per-role overrides of the model endpoint (`roles.<name>`), one per role of
/// [`super::role::Role`]; another name is refused, the valid ones named.
#[derive(Debug, Clone, Default)]
pub struct Roles([Option<RoleConfig>; Role::COUNT]);

impl Roles {
    /// `roles.<name>` of `role`, when the file has it.
    pub fn get(&self, role: Role) -> Option<&RoleConfig> {
        self.0[role as usize].as_ref()
    }
}

impl<'de> Deserialize<'de> for Roles {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Roles;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                // As serde says it of a struct, which `roles` was.
                f.write_str("struct Roles")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Roles, A::Error> {
                let mut roles = Roles::default();
                while let Some(RoleName(role)) = map.next_key()? {
                    roles.0[role as usize] = map.next_value()?;
                }
                Ok(roles)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// A key of `roles`: a role's name, else serde's message for an unknown field, which names the
/// valid ones (and, read as a key, the path names the wrong one: `roles.verifer`).
struct RoleName(Role);

impl<'de> Deserialize<'de> for RoleName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Role::from_name(&name)
            .map(RoleName)
            .ok_or_else(|| serde::de::Error::unknown_field(&name, Role::NAMES))
    }
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RoleConfig {
    pub model: Option<String>,
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
    pub stream: Option<bool>,
    pub limits: Option<LimitsConfig>,
}

/// A rate budget as written: requests and tokens a minute, both optional. Wider than the
/// resolved type so that a zero or an overflow gets a message naming the key.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct LimitsConfig {
    pub requests_per_minute: Option<u64>,
    pub tokens_per_minute: Option<u64>,
}

/// How the model is asked for JSON: the first form tried. A server that refuses a form is
/// asked with the next one down (`json_schema`, `json_object_schema`, `json_object`, `none`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum StructuredOutput {
    /// Negotiate per endpoint, starting with `json_schema`.
    Auto,
    /// `response_format: {"type": "json_schema", "json_schema": {...}}`.
    JsonSchema,
    /// `response_format: {"type": "json_object", "schema": {...}}` (llama-cpp-python and
    /// others turn the schema into a decoding grammar).
    JsonObjectSchema,
    /// `response_format: {"type": "json_object"}`.
    JsonObject,
    /// No `response_format`; the prompt alone asks for JSON.
    None,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Timeouts {
    /// The longest a model call may take, in milliseconds (default 300,000).
    pub llm_ms: Option<Millis<1>>,
    /// The longest a streamed model answer may stay silent (no byte), in milliseconds
    /// (default 60,000); it also bounds the wait for a stream's first token.
    pub idle_ms: Option<Millis<1>>,
    pub search_ms: Option<Millis<1>>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RetryConfig {
    pub max_retries: Option<Bounded<0, 20>>,
    pub base_delay_ms: Option<Millis<0>>,
    pub max_delay_ms: Option<Millis<0>>,
    pub max_retry_after_ms: Option<Millis<0>>,
    pub max_rate_limit_wait_ms: Option<Millis<0>>,
}

/// A span of milliseconds, at most 30 days: no deadline computed from one can overflow.
pub type Millis<const MIN: u64> = Bounded<MIN, { crate::clock::LONGEST_SECS * 1000 }>;

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SearchConfig {
    /// One provider, or a list whose results are merged (e.g. `["local", "searxng"]`).
    pub provider: Option<OneOrMany<SearchProviderKind>>,
    #[serde(rename = "baseURL")]
    pub base_url: Option<String>,
    pub api_key: Option<String>,
    pub max_results: Option<u32>,
    /// The folder of documents `local` searches.
    pub corpus: Option<String>,
    /// Where the local index lives (default: the user's cache folder).
    pub index_dir: Option<String>,
    /// Provider `mcp`: the command that starts the MCP server (stdio), e.g.
    /// `["python3", "search_server.py"]`.
    pub command: Option<Vec<String>>,
    /// Provider `mcp`: the server's streamable HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp`.
    pub url: Option<String>,
    /// Provider `mcp`: the tool called for each query.
    pub tool: Option<String>,
    /// Provider `mcp`: the tool's arguments; `{query}` and `{max_results}` are replaced.
    pub arguments: Option<serde_json::Map<String, serde_json::Value>>,
    /// How the pages behind web results are read.
    #[serde(default)]
    pub read: super::read::ReadConfig,
    /// Search the local corpus by meaning as well as by words.
    #[serde(default)]
    pub embeddings: EmbeddingsConfig,
}

/// `search.embeddings`: the sentence-embedding model the local index ranks by meaning with.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct EmbeddingsConfig {
    /// A model folder (`config.json`, `tokenizer.json`, `model.onnx`, `libonnxruntime.so`) as
    /// `scripts/setup/embedding-model.sh` makes it, e.g. all-MiniLM-L6-v2; relative to the
    /// config file's folder.
    pub model: Option<String>,
}

/// A value or a list of values, as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OneOrMany<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // Through a `Value`, so that a wrong name still gets the inner type's own message
        // (`unknown variant ...`), not serde's opaque "did not match any variant".
        let value = serde_json::Value::deserialize(d)?;
        let items = match value {
            serde_json::Value::Array(items) => items,
            one => vec![one],
        };
        items
            .into_iter()
            .map(|v| T::deserialize(v).map_err(serde::de::Error::custom))
            .collect::<Result<Vec<T>, D::Error>>()
            .map(OneOrMany)
    }
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlannerConfig {
    pub repair_attempts: Option<Bounded<0, 5>>,
}

/// Why the configuration file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigFileError {
    #[error("cannot read config `{path}`: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("config `{path}` is not valid JSON (line {line}, column {column}): {message}")]
    Json {
        path: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("config `{path}`: `{field}`: {message}")]
    Field {
        path: String,
        field: String,
        message: String,
    },
}

impl ConfigFile {
    pub fn read(path: &Path) -> Result<ConfigFile, ConfigFileError> {
        let shown = path.display().to_string();
        let text = read_bounded(path, CONFIG_MAX_BYTES).map_err(|e| ConfigFileError::Read {
            path: shown.clone(),
            source: e.into_io(),
        })?;
        let file = ConfigFile::parse(&shown, &text)?;
        if file.has_api_key() && readable_by_others(path) {
            tracing::warn!(
                "config `{shown}` holds an API key and other users can read it: restrict it with `chmod 600 {shown}`"
            );
        }
        Ok(file)
    }

    /// Whether any `apiKey` of the file (top level, a role, search) is set and not blank.
    pub fn has_api_key(&self) -> bool {
        let roles = Role::all().filter_map(|r| self.roles.get(r));
        [&self.api_key, &self.search.api_key]
            .into_iter()
            .chain(roles.map(|r| &r.api_key))
            .flatten()
            .any(|k| !k.trim().is_empty())
    }

    pub fn parse(shown: &str, text: &str) -> Result<ConfigFile, ConfigFileError> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| ConfigFileError::Json {
                path: shown.to_string(),
                line: e.line(),
                column: e.column(),
                message: e.to_string(),
            })?;
        serde_path_to_error::deserialize(value).map_err(|e| {
            let field = e.path().to_string();
            let mut message = e.into_inner().to_string();
            // A key not known: where every key is; a value out of range says what to give.
            if message.starts_with("unknown field") {
                message.push_str("; agent.config.example.json lists every key");
            }
            ConfigFileError::Field {
                path: shown.to_string(),
                field: if field == "." {
                    "(top level)".into()
                } else {
                    field
                },
                message,
            }
        })
    }
}

/// Whether the group or others may read `path` (unix permission bits; elsewhere never said).
fn readable_by_others(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o044 != 0)
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_anywhere_count_and_blank_ones_do_not() {
        let parse = |text: &str| ConfigFile::parse("c.json", text).expect("parses");
        assert!(!parse(r#"{"apiKey": " "}"#).has_api_key());
        assert!(parse(r#"{"apiKey": "k"}"#).has_api_key());
        assert!(parse(r#"{"roles": {"summary": {"apiKey": "k"}}}"#).has_api_key());
        assert!(parse(r#"{"search": {"apiKey": "k"}}"#).has_api_key());
        assert!(parse(r#"{"roles": {"second_opinion": {"apiKey": "k"}}}"#).has_api_key());
    }

    #[cfg(unix)]
    #[test]
    fn group_or_world_readable_files_are_told_apart() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("c.json");
        std::fs::write(&path, "{}").expect("write");
        for (mode, open) in [(0o600, false), (0o400, false), (0o640, true), (0o604, true)] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
            assert_eq!(readable_by_others(&path), open, "{mode:o}");
        }
    }

    #[test]
    fn the_offline_engine_is_named_as_its_flag_and_its_former_name_still_read() {
        let parse = |text: &str| ConfigFile::parse("c.json", text).expect("parses").engine;
        assert_eq!(parse(r#"{"engine": "offline"}"#), Some(EngineKind::Offline));
        assert_eq!(
            parse(r#"{"engine": "extractive"}"#),
            Some(EngineKind::Offline)
        );
        assert_eq!(parse(r#"{"engine": "llm"}"#), Some(EngineKind::Llm));
        assert!(ConfigFile::parse("c.json", r#"{"engine": "model"}"#).is_err());
        let written = serde_json::to_value(EngineKind::Offline).expect("json");
        assert_eq!(written, serde_json::json!("offline"));
    }

    #[test]
    fn unknown_keys_are_named() {
        let err = ConfigFile::parse("c.json", r#"{"baseUrl": "x"}"#).expect_err("typo");
        let text = err.to_string();
        assert!(text.contains("`baseUrl`"), "{text}");
        let err = ConfigFile::parse("c.json", r#"{"roles": {"planning": {"modle": "m"}}}"#)
            .expect_err("nested typo");
        let text = err.to_string();
        assert!(
            text.contains("roles.planning") && text.contains("`modle`"),
            "{text}"
        );
    }

    #[test]
    fn a_budget_key_has_its_flags_range_named_with_the_file_and_the_key() {
        let refused = |json: &str| {
            ConfigFile::parse("c.json", json)
                .expect_err("out of range")
                .to_string()
        };
        // What to give, and no pointer to the list of keys: the key is a known one.
        assert_eq!(
            refused(r#"{"budget": {"graceSeconds": 2592001}}"#),
            "config `c.json`: `budget.graceSeconds`: `2592001` is out of range: use 0 to \
             2592000 (30 days)"
        );
        let zero = refused(r#"{"budget": {"maxTokens": 0}}"#);
        assert!(
            zero.contains("`budget.maxTokens`: `0` is out of range: use 1 or more"),
            "{zero}"
        );
        let cfg = ConfigFile::parse(
            "c.json",
            r#"{"budget": {"maxSeconds": 60, "graceSeconds": 0}}"#,
        )
        .expect("in range");
        let budget = cfg.budget.budget();
        assert_eq!(budget.max_time(), Some(std::time::Duration::from_secs(60)));
        assert_eq!(budget.grace(), std::time::Duration::ZERO);
    }

    #[test]
    fn roles_are_read_by_name_and_an_unknown_one_is_named_with_the_valid_ones() {
        let cfg = ConfigFile::parse(
            "c.json",
            r#"{"roles": {"second_opinion": {"model": "judge"}, "search": null}}"#,
        )
        .expect("valid");
        let model = |role| cfg.roles.get(role).and_then(|r| r.model.as_deref());
        assert_eq!(model(Role::SecondOpinion), Some("judge"));
        assert!(cfg.roles.get(Role::Search).is_none() && cfg.roles.get(Role::Review).is_none());
        let err = ConfigFile::parse("c.json", r#"{"roles": {"verifer": {}}}"#).expect_err("typo");
        assert_eq!(
            err.to_string(),
            "config `c.json`: `roles.verifer`: unknown field `verifer`, expected one of \
             `planning`, `search`, `summary`, `review`, `second_opinion`, `verifier`; \
             agent.config.example.json lists every key"
        );
    }

    #[test]
    fn a_provider_is_one_name_or_a_list_and_typos_are_named() {
        let cfg = ConfigFile::parse(
            "c.json",
            r#"{"search": {"provider": ["local", "searxng"]}}"#,
        )
        .expect("a list");
        assert_eq!(
            cfg.search.provider,
            Some(OneOrMany(vec![
                SearchProviderKind::Local,
                SearchProviderKind::from_name("searxng").expect("a web provider")
            ]))
        );
        let cfg = ConfigFile::parse("c.json", r#"{"search": {"provider": "brave"}}"#).expect("one");
        assert_eq!(
            cfg.search.provider,
            Some(OneOrMany(vec![
                SearchProviderKind::from_name("brave").expect("a web provider")
            ]))
        );
        let err = ConfigFile::parse("c.json", r#"{"search": {"provider": ["local", "bing"]}}"#)
            .expect_err("typo");
        let text = err.to_string();
        assert!(
            text.contains("search.provider") && text.contains("bing"),
            "{text}"
        );
    }

    #[test]
    fn every_documented_key_parses() {
        let text = include_str!("../../agent.config.example.json");
        let cfg = ConfigFile::parse("example", text).expect("example parses");
        assert!(cfg.base_url.is_some() && cfg.model.is_some());
        assert!(cfg.roles.get(Role::Planning).is_some() && cfg.roles.get(Role::Search).is_some());
        assert!(cfg.roles.get(Role::Summary).is_some());
        assert!(cfg.structured_output.is_some());
        assert!(cfg.max_tokens.is_some() && cfg.temperature.is_some());
        let summary = cfg.roles.get(Role::Summary).expect("summary role");
        assert!(summary.max_tokens.is_some());
        assert!(
            cfg.roles
                .get(Role::Planning)
                .and_then(|r| r.temperature)
                .is_some()
        );
        assert!(cfg.timeouts.llm_ms.is_some() && cfg.timeouts.search_ms.is_some());
        assert!(cfg.retry.max_retry_after_ms.is_some());
        assert!(cfg.retry.max_rate_limit_wait_ms.is_some());
        let limits = cfg.limits.as_ref().expect("limits");
        assert!(limits.requests_per_minute.is_some() && limits.tokens_per_minute.is_some());
        assert!(summary.limits.is_some());
        assert!(cfg.search.provider.is_some() && cfg.search.max_results.is_some());
        assert!(cfg.planner.repair_attempts.is_some());
        assert!(cfg.roles.get(Role::Review).is_some());
        assert!(cfg.roles.get(Role::SecondOpinion).is_some());
        assert!(cfg.review.enabled.is_some());
    }
}
