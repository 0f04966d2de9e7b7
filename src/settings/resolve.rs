//! How the config file and the environment become [`Settings`]: one method per section, each
//! validating its values and naming the key to fix.
//!
//! Precedence: a non-empty value in the config file wins; the environment fills what the file
//! leaves out (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `OPENAI_MODEL`, and the web search
//! provider's key variable, e.g. `TAVILY_API_KEY`, which `web_providers` names); per-role
//! `roles.*` entries override the top-level endpoint for that role. Blank values count as
//! absent. Roles that share an endpoint (base URL and model) share its rate budget: the lower
//! of their `limits`.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

use super::base_url::BaseUrl;
use super::config_file::{ConfigFile, EngineKind, LimitsConfig, RoleConfig, StructuredOutput};
use super::mcp_search;
use super::resolved::{LlmEndpoint, LlmRoles, RateLimits, SearchSettings, Settings, SettingsError};
use super::role::Role;
use super::search_provider::{SearchProviderKind, web_provider_names};
use super::secret::{ApiKey, redact_url};
use crate::web_providers::WebProvider;

mod numbers;

impl Settings {
    /// The config file read: `config` (`--config`, else `RESEARCHFLOW_CONFIG`), else
    /// `./agent.config.json`.
    pub fn config_file(config: Option<&Path>) -> PathBuf {
        config
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("agent.config.json"))
    }

    /// Reads the config file ([`Settings::config_file`]) and the process environment. Without
    /// a config file (and none named), the environment and the defaults make the settings:
    /// enough for an offline run, or for a model configured by `OPENAI_BASE_URL` and
    /// `OPENAI_MODEL`.
    pub fn load(config: Option<&Path>) -> Result<Settings, SettingsError> {
        let path = Settings::config_file(config);
        let file = match (path.exists(), config) {
            (true, _) => ConfigFile::read(&path)?,
            (false, None) => ConfigFile::default(),
            (false, Some(_)) => return Err(SettingsError::Missing(path)),
        };
        let settings = Settings::resolve(&path, file, &|k| std::env::var(k).ok())?;
        // Every writer masks them from now on, whatever text quotes them.
        super::secret::remember(&settings.secrets());
        super::secret::remember_environment();
        let smtp_password = settings.smtp.as_ref().and_then(|s| s.password_env.as_ref());
        if let Some(password) = smtp_password.and_then(|var| std::env::var(var).ok()) {
            crate::text::secrets::remember(&password);
        }
        for url in settings.unsent_user_parts() {
            tracing::warn!(
                "`{url}` holds a user part (`user:password@`), and a key is set for it: the key is sent (`Authorization: Bearer`), the URL's user and password are not"
            );
        }
        Ok(settings)
    }

    /// Merges a parsed config file with an environment lookup and validates the result.
    pub fn resolve(
        path: &Path,
        file: ConfigFile,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Settings, SettingsError> {
        Resolver::new(path, &file, env).settings()
    }
}

struct Resolver<'a> {
    path: &'a Path,
    shown: String,
    file: &'a ConfigFile,
    env: &'a dyn Fn(&str) -> Option<String>,
}

/// Gives every role the lower of the budgets of the roles on its endpoint (base URL and
/// model): they share one budget at run time, so they share its limits here too.
fn share_budgets(roles: &mut LlmRoles) {
    let all = roles.all();
    let shared: Vec<RateLimits> = all
        .iter()
        .map(|e| {
            all.iter()
                .filter(|o| o.base_url == e.base_url && o.model == e.model)
                .fold(e.limits, |limits, o| limits.tighter(o.limits))
        })
        .collect();
    for (endpoint, limits) in roles.all_mut().zip(shared) {
        endpoint.limits = limits;
    }
}

/// A value that is set and not blank.
fn pick(v: &Option<String>) -> Option<String> {
    v.clone().filter(|s| !s.trim().is_empty())
}

impl<'a> Resolver<'a> {
    fn new(
        path: &'a Path,
        file: &'a ConfigFile,
        env: &'a dyn Fn(&str) -> Option<String>,
    ) -> Resolver<'a> {
        Resolver {
            path,
            shown: path.display().to_string(),
            file,
            env,
        }
    }

    fn settings(&self) -> Result<Settings, SettingsError> {
        let file = self.file;
        Ok(Settings {
            config_path: self.path.to_path_buf(),
            llm: self.llm()?,
            engine: file.engine.unwrap_or(EngineKind::Llm),
            structured_output: file.structured_output.unwrap_or(StructuredOutput::Auto),
            llm_timeout: numbers::timeout(file.timeouts.llm_ms, 300_000),
            llm_idle: numbers::timeout(file.timeouts.idle_ms, 60_000),
            search_timeout: numbers::timeout(file.timeouts.search_ms, 30_000),
            retry: self.retry()?,
            search: self.search()?,
            // At most 5: the cast cannot truncate.
            repair_attempts: file.planner.repair_attempts.map_or(1, |n| n.get() as u32),
            prompts_dir: self.prompts_dir()?,
            budget: self.file.budget.budget(),
            review: file.review.enabled.unwrap_or(true),
            claims_threshold: self.claims_threshold()?,
            verifier: file.roles.get(crate::settings::Role::Verifier).is_some(),
            html: true,
            smtp: self.smtp()?,
            documents: file
                .documents
                .resolve()
                .map_err(|(key, value, hint)| self.invalid(key, value, hint))?,
        })
    }

    /// `notify.smtp`, checked.
    fn smtp(&self) -> Result<Option<super::notify::SmtpConfig>, SettingsError> {
        let Some(smtp) = &self.file.notify.smtp else {
            return Ok(None);
        };
        if let Some((key, value, hint)) = smtp.problem() {
            return Err(self.invalid(key, value, &hint));
        }
        let mut smtp = smtp.clone();
        if let Some(raw) = &smtp.ca_file {
            let path = self.relative_to_config(raw);
            let pem = std::fs::read_to_string(&path).unwrap_or_default();
            if !pem.contains("-----BEGIN CERTIFICATE-----") {
                return Err(self.invalid(
                    "notify.smtp.caFile",
                    raw,
                    &format!(
                        "`{}` is not a readable PEM file of certificates: name the file of the certificate (or its authority's) that the SMTP server presents",
                        path.display()
                    ),
                ));
            }
            smtp.ca_file = Some(path.to_string_lossy().into_owned());
        }
        Ok(Some(smtp))
    }

    /// An environment variable that is set and not blank.
    fn env(&self, key: &str) -> Option<String> {
        (self.env)(key).filter(|v| !v.trim().is_empty())
    }

    fn invalid(&self, key: &str, value: impl ToString, hint: &str) -> SettingsError {
        SettingsError::Invalid {
            path: self.shown.clone(),
            key: key.to_string(),
            value: value.to_string(),
            hint: hint.to_string(),
        }
    }

    fn required(&self, key: &str, hint: String) -> SettingsError {
        SettingsError::Required {
            path: self.shown.clone(),
            key: key.to_string(),
            hint,
        }
    }

    /// The roles' endpoints; `None` when no base URL and no model is set anywhere (the
    /// file, its roles, the environment), which only the offline engine accepts.
    fn llm(&self) -> Result<Option<LlmRoles>, SettingsError> {
        let file = self.file;
        let any_role = Role::all().any(|role| {
            file.roles
                .get(role)
                .is_some_and(|r| pick(&r.base_url).is_some() || pick(&r.model).is_some())
        });
        let configured = pick(&file.base_url).is_some()
            || pick(&file.model).is_some()
            || self.env("OPENAI_BASE_URL").is_some()
            || self.env("OPENAI_MODEL").is_some()
            || any_role;
        if !configured {
            return Ok(None);
        }
        let mut endpoints = Vec::with_capacity(Role::COUNT);
        for role in Role::all() {
            endpoints.push(self.endpoint(role, file.roles.get(role))?);
        }
        let Ok(endpoints) = endpoints.try_into() else {
            unreachable!("one endpoint was pushed for each role");
        };
        let mut roles = LlmRoles::new(endpoints);
        share_budgets(&mut roles);
        Ok(Some(roles))
    }

    fn endpoint(
        &self,
        role: Role,
        over: Option<&RoleConfig>,
    ) -> Result<LlmEndpoint, SettingsError> {
        let file = self.file;
        let over = over.cloned().unwrap_or_default();
        let prefix = format!("roles.{}.", role.as_str());
        let base_url = pick(&over.base_url)
            .or_else(|| pick(&file.base_url))
            .or_else(|| self.env("OPENAI_BASE_URL"))
            .ok_or_else(|| {
                self.required(
                    "baseURL",
                    format!("set it (or `{prefix}baseURL`) or export `OPENAI_BASE_URL`"),
                )
            })?;
        let model = pick(&over.model)
            .or_else(|| pick(&file.model))
            .or_else(|| self.env("OPENAI_MODEL"))
            .ok_or_else(|| {
                self.required(
                    "model",
                    format!("set it (or `{prefix}model`) or export `OPENAI_MODEL`"),
                )
            })?;
        let key = pick(&over.api_key)
            .or_else(|| pick(&file.api_key))
            .or_else(|| self.env("OPENAI_API_KEY"));
        let (max_tokens_key, max_tokens) = match over.max_tokens {
            Some(n) => (format!("{prefix}maxTokens"), Some(n)),
            None => ("maxTokens".to_string(), file.max_tokens),
        };
        if let Some(n) = max_tokens
            && !(1..=1_000_000).contains(&n)
        {
            return Err(self.invalid(&max_tokens_key, n, "use 1 to 1000000 tokens"));
        }
        let (temperature_key, temperature) = match over.temperature {
            Some(t) => (format!("{prefix}temperature"), Some(t)),
            None => ("temperature".to_string(), file.temperature),
        };
        if let Some(t) = temperature
            && !(0.0..=2.0).contains(&t)
        {
            return Err(self.invalid(&temperature_key, t, "use 0 to 2"));
        }
        let temperature = temperature.or(role.spec().temperature);
        Ok(LlmEndpoint {
            base_url: self.url("baseURL", &base_url)?,
            model,
            api_key: key.and_then(ApiKey::new),
            max_tokens,
            temperature,
            stream: over.stream.or(file.stream).unwrap_or(true),
            limits: self.limits(&over.limits, &prefix)?,
        })
    }

    /// A role's rate budget, key by key: the role's own `limits`, else the top level's.
    fn limits(
        &self,
        own: &Option<LimitsConfig>,
        prefix: &str,
    ) -> Result<RateLimits, SettingsError> {
        let own = own.clone().unwrap_or_default();
        let top = self.file.limits.clone().unwrap_or_default();
        let one = |own: Option<u64>, top: Option<u64>, name: &str| {
            let (key, value) = match own {
                Some(n) => (format!("{prefix}limits.{name}"), Some(n)),
                None => (format!("limits.{name}"), top),
            };
            value
                .map(|n| {
                    u32::try_from(n)
                        .ok()
                        .and_then(NonZeroU32::new)
                        .ok_or_else(|| {
                            self.invalid(&key, n, "use a whole number from 1 to 4294967295")
                        })
                })
                .transpose()
        };
        Ok(RateLimits {
            requests_per_minute: one(
                own.requests_per_minute,
                top.requests_per_minute,
                "requestsPerMinute",
            )?,
            tokens_per_minute: one(
                own.tokens_per_minute,
                top.tokens_per_minute,
                "tokensPerMinute",
            )?,
        })
    }

    fn search(&self) -> Result<SearchSettings, SettingsError> {
        let s = &self.file.search;
        let mut providers: Vec<SearchProviderKind> =
            s.provider.as_ref().map(|p| p.0.clone()).unwrap_or_default();
        providers.retain(|p| *p != SearchProviderKind::None);
        providers.dedup();
        if !cfg!(feature = "mcp") && providers.contains(&SearchProviderKind::Mcp) {
            let why = crate::exit::feature_missing("the search provider `mcp`", "mcp");
            return Err(self.invalid("search.provider", "mcp", &why));
        }
        let web: Vec<&dyn WebProvider> = providers
            .iter()
            .filter_map(SearchProviderKind::web)
            .collect();
        if web.len() > 1 {
            let names: Vec<&str> = providers.iter().map(|p| p.name()).collect();
            return Err(self.invalid(
                "search.provider",
                format!("[{}]", names.join(", ")),
                &format!(
                    "list at most one web provider ({}), with or without `local`",
                    web_provider_names()
                ),
            ));
        }
        let api_key = pick(&s.api_key)
            .or_else(|| web.first().and_then(|p| self.env(p.spec().key_env)))
            .and_then(ApiKey::new);
        let base_url = match pick(&s.base_url) {
            Some(url) => Some(self.url("search.baseURL", &url)?),
            None => None,
        };
        let max_results = s.max_results.unwrap_or(5);
        if !(1..=20).contains(&max_results) {
            return Err(self.invalid("search.maxResults", max_results, "use 1 to 20"));
        }
        let mcp = mcp_search::resolve(s, &providers).map_err(|p| p.error(&self.shown))?;
        let read = s
            .read
            .resolve()
            .map_err(|(key, value, hint)| self.invalid(key, value, hint))?;
        Ok(SearchSettings {
            providers,
            base_url,
            api_key,
            max_results,
            corpus: pick(&s.corpus).map(|c| self.relative_to_config(&c)),
            index_dir: pick(&s.index_dir).map(|d| self.relative_to_config(&d)),
            mcp,
            read,
            embeddings_model: pick(&s.embeddings.model).map(|m| self.relative_to_config(&m)),
        })
    }

    /// A path from the config file: a relative one is relative to the config file's folder.
    fn relative_to_config(&self, raw: &str) -> PathBuf {
        let path = PathBuf::from(raw);
        match self.path.parent() {
            Some(parent) if path.is_relative() => parent.join(path),
            _ => path,
        }
    }

    /// The prompt folder, which must exist: a typo must not silently mean the built-in
    /// prompts.
    fn prompts_dir(&self) -> Result<Option<PathBuf>, SettingsError> {
        let from_file = pick(&self.file.prompts_dir);
        let in_file = from_file.is_some();
        let Some(raw) = from_file.or_else(|| self.env("RESEARCHFLOW_PROMPTS_DIR")) else {
            return Ok(None);
        };
        let dir = if in_file {
            self.relative_to_config(&raw)
        } else {
            PathBuf::from(&raw)
        };
        if !dir.is_dir() {
            let key = if in_file {
                "promptsDir"
            } else {
                "RESEARCHFLOW_PROMPTS_DIR"
            };
            return Err(self.invalid(
                key,
                dir.display(),
                "no such folder: create it, fix the path, or remove the key to use the built-in prompts",
            ));
        }
        Ok(Some(dir))
    }

    /// An http(s) URL without a trailing slash, its user part held apart.
    fn url(&self, key: &str, raw: &str) -> Result<BaseUrl, SettingsError> {
        BaseUrl::parse(raw).ok_or_else(|| {
            // The message shows the value: never its password.
            self.invalid(
                key,
                redact_url(raw),
                "use an http(s) URL such as `https://api.openai.com/v1`",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::resolved::RetrySettings;
    use std::time::Duration;

    fn llm(s: &Settings) -> &LlmRoles {
        s.llm.as_ref().expect("a model is configured")
    }

    #[test]
    fn without_any_model_there_is_no_llm_and_half_a_model_is_an_error() {
        let s = resolve("{}", &[]).expect("nothing is fine");
        assert!(s.llm.is_none());
        let err = s.require_llm().expect_err("no model");
        assert!(err.to_string().contains("--offline --corpus DIR"), "{err}");
        let s = resolve(
            "{}",
            &[("OPENAI_BASE_URL", "http://x/v1"), ("OPENAI_MODEL", "m")],
        )
        .expect("from the environment");
        assert_eq!(llm(&s).get(Role::Search).model, "m");
        let err = resolve(r#"{"roles": {"summary": {"model": "m"}}}"#, &[]).expect_err("no url");
        assert!(err.to_string().contains("`baseURL`"), "{err}");
    }

    fn resolve(json: &str, env: &[(&str, &str)]) -> Result<Settings, SettingsError> {
        let file = ConfigFile::parse("c.json", json).expect("parses");
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::resolve(Path::new("c.json"), file, &move |k| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn env_fills_what_the_file_leaves_out() {
        let s = resolve(
            r#"{"model": "m"}"#,
            &[
                ("OPENAI_BASE_URL", "http://x/v1/"),
                ("OPENAI_API_KEY", "sk-1"),
            ],
        )
        .expect("valid");
        assert_eq!(
            llm(&s).get(Role::Planning).base_url.to_string(),
            "http://x/v1"
        );
        assert_eq!(
            llm(&s)
                .get(Role::Planning)
                .api_key
                .as_ref()
                .map(ApiKey::expose),
            Some("sk-1")
        );
        assert_eq!(s.retry, RetrySettings::default());
        assert_eq!(s.structured_output, StructuredOutput::Auto);
        assert_eq!(
            llm(&s).get(Role::Planning).temperature,
            Some(0.0),
            "a planner is greedy by default"
        );
        assert_eq!(llm(&s).get(Role::Search).temperature, None);
        assert_eq!(llm(&s).get(Role::Summary).max_tokens, None);
    }

    #[test]
    fn roles_override_the_top_level_endpoint() {
        let s = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m", "apiKey": "k",
                "roles": {"summary": {"model": "big", "baseURL": "http://b/v1"}}}"#,
            &[],
        )
        .expect("valid");
        assert_eq!(llm(&s).get(Role::Planning).model, "m");
        assert_eq!(llm(&s).get(Role::Summary).model, "big");
        assert_eq!(
            llm(&s).get(Role::Summary).base_url.to_string(),
            "http://b/v1"
        );
        assert_eq!(
            llm(&s)
                .get(Role::Summary)
                .api_key
                .as_ref()
                .map(ApiKey::expose),
            Some("k")
        );
    }

    #[test]
    fn the_review_roles_fall_back_to_the_top_level_and_review_is_on_by_default() {
        let s = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m",
                "roles": {"second_opinion": {"model": "judge", "baseURL": "http://b/v1"}}}"#,
            &[],
        )
        .expect("valid");
        assert!(s.review);
        assert_eq!(llm(&s).get(Role::Review).model, "m");
        assert_eq!(llm(&s).get(Role::SecondOpinion).model, "judge");
        assert_eq!(
            llm(&s).get(Role::SecondOpinion).base_url.to_string(),
            "http://b/v1"
        );
        assert_eq!(Role::SecondOpinion.as_str(), "second_opinion");
        let s = resolve(r#"{"review": {"enabled": false}}"#, &[]).expect("valid");
        assert!(!s.review);
        let err =
            ConfigFile::parse("c.json", r#"{"review": {"enable": false}}"#).expect_err("typo");
        assert!(err.to_string().contains("`enable`"), "{err}");
    }

    #[test]
    fn token_limits_and_temperature_come_from_the_role_then_the_top_level() {
        let s = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m", "maxTokens": 500, "temperature": 0.7,
                "roles": {"summary": {"maxTokens": 3000}, "planning": {"temperature": 0.2}}}"#,
            &[],
        )
        .expect("valid");
        assert_eq!(llm(&s).get(Role::Planning).max_tokens, Some(500));
        assert_eq!(llm(&s).get(Role::Summary).max_tokens, Some(3000));
        assert_eq!(llm(&s).get(Role::Planning).temperature, Some(0.2));
        assert_eq!(llm(&s).get(Role::Search).temperature, Some(0.7));
        let err = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m", "roles": {"search": {"maxTokens": 0}}}"#,
            &[],
        )
        .expect_err("zero tokens");
        assert!(
            err.to_string().contains("`roles.search.maxTokens` is `0`"),
            "{err}"
        );
        let err = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m", "temperature": 3}"#,
            &[],
        )
        .expect_err("too hot");
        assert!(err.to_string().contains("`temperature` is `3`"), "{err}");
    }

    #[test]
    fn missing_and_invalid_values_name_the_key() {
        let err = resolve(r#"{"model": "m"}"#, &[]).expect_err("no url");
        assert!(
            err.to_string().contains("`baseURL`") && err.to_string().contains("OPENAI_BASE_URL")
        );
        let err = resolve(r#"{"baseURL": "ftp://x", "model": "m"}"#, &[]).expect_err("bad url");
        assert!(err.to_string().contains("`baseURL` is `ftp://x`"), "{err}");
        let err = resolve(r#"{"baseURL": "ftp://u:hunter2@x", "model": "m"}"#, &[])
            .expect_err("bad url with a password");
        assert!(!err.to_string().contains("hunter2"), "{err}");
        let err = resolve(
            r#"{"baseURL": "http://x", "model": "m", "retry": {"baseDelayMs": 10, "maxDelayMs": 5}}"#,
            &[],
        )
        .expect_err("bad retry");
        assert!(err.to_string().contains("retry.maxDelayMs"), "{err}");
        let err =
            ConfigFile::parse("c.json", r#"{"timeouts": {"llmMs": 0}}"#).expect_err("zero timeout");
        assert!(
            err.to_string()
                .contains("`timeouts.llmMs`: `0` is out of range: use 1 to 2592000000 (30 days)"),
            "{err}"
        );
    }

    #[test]
    fn a_url_user_part_is_unsent_where_a_key_is_the_bearer_token() {
        let url = r#""baseURL": "http://u:hunter2@x/v1", "model": "m""#;
        let keyed = resolve(&format!(r#"{{{url}, "apiKey": "k"}}"#), &[]).expect("valid");
        let shown: Vec<String> = keyed
            .unsent_user_parts()
            .iter()
            .map(|u| u.to_string())
            .collect();
        assert_eq!(shown, ["http://u:***@x/v1"], "one URL, said once");
        let basic = resolve(&format!("{{{url}}}"), &[]).expect("valid");
        assert!(basic.unsent_user_parts().is_empty(), "sent as Basic auth");
        let search = r#""search": {"provider": "searxng", "baseURL": "http://s:pw@sx""#;
        let keyed = resolve(&format!(r#"{{{search}, "apiKey": "k"}}}}"#), &[]).expect("valid");
        assert_eq!(keyed.unsent_user_parts().len(), 1);
        let brave = r#""search": {"provider": "brave", "baseURL": "http://s:pw@b""#;
        let header = resolve(&format!(r#"{{{brave}, "apiKey": "k"}}}}"#), &[]).expect("valid");
        assert!(
            header.unsent_user_parts().is_empty(),
            "Brave's key has its own header"
        );
    }

    #[test]
    fn limits_come_from_the_role_then_the_top_level_and_a_shared_endpoint_takes_the_lower() {
        let s = resolve(
            r#"{"baseURL": "http://a/v1", "model": "m",
                "limits": {"requestsPerMinute": 600, "tokensPerMinute": 90000},
                "roles": {"summary": {"model": "big", "limits": {"requestsPerMinute": 60}},
                          "search": {"limits": {"tokensPerMinute": 5000}}}}"#,
            &[],
        )
        .expect("valid");
        let rpm = |e: &LlmEndpoint| e.limits.requests_per_minute.map(NonZeroU32::get);
        let tpm = |e: &LlmEndpoint| e.limits.tokens_per_minute.map(NonZeroU32::get);
        assert_eq!(
            (
                rpm(llm(&s).get(Role::Summary)),
                tpm(llm(&s).get(Role::Summary))
            ),
            (Some(60), Some(90000))
        );
        // Planning and search share `http://a/v1` and `m`: one budget, the lower of each key.
        for e in [llm(&s).get(Role::Planning), llm(&s).get(Role::Search)] {
            assert_eq!((rpm(e), tpm(e)), (Some(600), Some(5000)));
        }
        let s = resolve(r#"{"baseURL": "http://a/v1", "model": "m"}"#, &[]).expect("valid");
        assert_eq!(llm(&s).get(Role::Planning).limits, RateLimits::default());
        assert_eq!(s.retry.max_rate_limit_wait, Duration::from_secs(600));
        for (json, key) in [
            (
                r#"{"limits": {"requestsPerMinute": 0}}"#,
                "`limits.requestsPerMinute` is `0`",
            ),
            (
                r#"{"roles": {"planning": {"limits": {"tokensPerMinute": 5000000000}}}}"#,
                "`roles.planning.limits.tokensPerMinute` is `5000000000`",
            ),
        ] {
            let mut value: serde_json::Value = serde_json::from_str(json).expect("json");
            value["baseURL"] = "http://a/v1".into();
            value["model"] = "m".into();
            let err = resolve(&value.to_string(), &[]).expect_err("invalid limit");
            assert!(err.to_string().contains(key), "{err}");
        }
        let err = ConfigFile::parse("c.json", r#"{"limits": {"requestsPerMinute": -1}}"#)
            .expect_err("negative");
        assert!(
            err.to_string().contains("limits.requestsPerMinute"),
            "{err}"
        );
    }

    #[test]
    fn search_key_comes_from_the_provider_variable() {
        let s = resolve(
            r#"{"baseURL": "http://x", "model": "m", "search": {"provider": "tavily"}}"#,
            &[("TAVILY_API_KEY", "tv-1"), ("BRAVE_API_KEY", "br-1")],
        )
        .expect("valid");
        assert_eq!(s.search.api_key.as_ref().map(ApiKey::expose), Some("tv-1"));
        assert_eq!(s.secrets().len(), 1);
    }
}
