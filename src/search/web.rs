//! [`WebSearch`]: the one configured web provider, and the one way a web search request is
//! sent.
//!
//! Each provider file builds its request and parses its answer; this file checks the
//! configuration, sends through [`with_retry`] with a per-attempt timeout, turns a non-2xx
//! answer into [`HttpError::Status`] (body redacted and truncated, `Retry-After` kept) and a
//! 2xx body that does not parse into [`SearchError::Malformed`], which is not retried. Every
//! attempt waits at the gate of the provider's URL: no limits are configured for it, but a 429
//! closes it for every search of the process and lowers the pace (see [`crate::http::gate`]).

use std::sync::Arc;
use std::time::Duration;

use super::{SearchConfigError, SearchError, SearchHit, brave, searxng, tavily};
use crate::http::{
    AtGate, Gate, Gates, HttpError, RetryObserver, Unusable, send_once, with_retry_at_gate,
};
use crate::settings::secret::redact;
use crate::settings::{ApiKey, BaseUrl, RateLimits, RetrySettings, SearchProviderKind, Settings};

/// A provider that can be called, with what it needs.
#[derive(Debug, Clone)]
enum Provider {
    Searxng { key: Option<ApiKey> },
    Tavily { key: ApiKey },
    Brave { key: ApiKey },
}

/// One configured web search provider.
#[derive(Debug, Clone)]
pub struct WebSearch {
    http: reqwest::Client,
    provider: Provider,
    /// The endpoint, e.g. `https://api.tavily.com/search`.
    url: BaseUrl,
    max_results: u32,
    timeout: Duration,
    retry: RetrySettings,
    gate: Arc<Gate>,
    secrets: Vec<ApiKey>,
}

impl WebSearch {
    /// The configured web provider (`None` when only `local` or nothing is configured); an
    /// error naming the config key when it cannot be used as configured. Its gate comes from
    /// `gates`, keyed by its URL.
    pub fn new(
        http: reqwest::Client,
        settings: &Settings,
        gates: &Gates,
    ) -> Result<Option<WebSearch>, SearchConfigError> {
        let search = &settings.search;
        let path = settings.config_path.display().to_string();
        let key = |provider: &'static str, env: &'static str| {
            search
                .api_key
                .clone()
                .ok_or_else(|| SearchConfigError::MissingKey {
                    path: path.clone(),
                    provider,
                    env,
                })
        };
        let base = |default: &str| {
            search.base_url.clone().unwrap_or_else(|| {
                // The defaults are constant http(s) URLs (`default_and_configured_endpoints`).
                BaseUrl::parse(default).expect("a default base URL is valid")
            })
        };
        let (provider, url) =
            match search.web_provider() {
                None | Some(SearchProviderKind::None | SearchProviderKind::Local) => {
                    return Ok(None);
                }
                Some(SearchProviderKind::Searxng) => {
                    let base = search.base_url.clone().ok_or_else(|| {
                        SearchConfigError::MissingBaseUrl {
                            path: path.clone(),
                            provider: "searxng",
                        }
                    })?;
                    let key = search.api_key.clone();
                    (Provider::Searxng { key }, base.join("/search"))
                }
                Some(SearchProviderKind::Tavily) => {
                    let key = key("tavily", "TAVILY_API_KEY")?;
                    let url = base(tavily::DEFAULT_BASE_URL).join("/search");
                    (Provider::Tavily { key }, url)
                }
                Some(SearchProviderKind::Brave) => {
                    let key = key("brave", "BRAVE_API_KEY")?;
                    let url = base(brave::DEFAULT_BASE_URL).join("/res/v1/web/search");
                    (Provider::Brave { key }, url)
                }
            };
        let gate = gates.gate(&url.to_string(), &url.to_string(), RateLimits::default());
        Ok(Some(WebSearch {
            http,
            provider,
            url,
            max_results: search.max_results,
            timeout: settings.search_timeout,
            retry: settings.retry,
            gate,
            secrets: settings.secrets(),
        }))
    }

    /// `searxng`, `tavily` or `brave`.
    pub fn provider_name(&self) -> &'static str {
        match self.provider {
            Provider::Searxng { .. } => "searxng",
            Provider::Tavily { .. } => "tavily",
            Provider::Brave { .. } => "brave",
        }
    }

    /// Runs one query and returns at most `search.maxResults` hits, retrying transient
    /// failures; each attempt has the `timeouts.searchMs` budget.
    pub async fn search(
        &self,
        query: &str,
        observer: &dyn RetryObserver,
    ) -> Result<Vec<SearchHit>, SearchError> {
        let what = format!("{} search", self.provider_name());
        let gate = AtGate {
            gate: &self.gate,
            tokens: 0,
        };
        let text = with_retry_at_gate(&self.retry, &what, observer, Some(gate), || {
            self.send_once(query)
        })
        .await
        .map_err(|e| self.explain(e))?;
        // max_results is 1..=20 (checked by the settings), so this never truncates.
        let max = usize::try_from(self.max_results).unwrap_or(usize::MAX);
        let parsed = match &self.provider {
            Provider::Searxng { .. } => searxng::parse(&text, max),
            Provider::Tavily { .. } => tavily::parse(&text, max),
            Provider::Brave { .. } => brave::parse(&text, max),
        };
        parsed.map_err(|e| SearchError::Malformed {
            provider: self.provider_name(),
            message: redact(&e.to_string(), &self.secrets),
        })
    }

    /// `err` as [`SearchError::Unusable`] when the provider cannot be used as configured.
    fn explain(&self, err: HttpError) -> SearchError {
        let Some(why) = err.unusable() else {
            return SearchError::Http(err);
        };
        let (name, url) = (self.provider_name(), &self.url);
        let message = match why {
            Unusable::Unreachable => format!(
                "cannot reach the {name} search at `{url}`: check `search.baseURL` and that the service runs"
            ),
            Unusable::KeyRefused(status) => format!(
                "the {name} search `{url}` refused the API key (HTTP {status}): set `search.apiKey` or the provider's key variable"
            ),
            Unusable::NotFound => {
                format!("the {name} search answered HTTP 404 at `{url}`: check `search.baseURL`")
            }
            Unusable::QuotaExhausted => format!(
                "the {name} search says the account's quota is exhausted (HTTP 429): add credit or use another key"
            ),
        };
        SearchError::Unusable { why, message }
    }

    /// One attempt: the body of a 2xx answer, or the error.
    async fn send_once(&self, query: &str) -> Result<String, HttpError> {
        let url = &self.url;
        let request = match &self.provider {
            Provider::Searxng { key } => searxng::request(&self.http, url, key.as_ref(), query),
            Provider::Tavily { key } => {
                tavily::request(&self.http, url, key, query, self.max_results)
            }
            Provider::Brave { key } => {
                brave::request(&self.http, url, key, query, self.max_results)
            }
        };
        // Errors show `url` without query or password.
        send_once(request, url, self.timeout, &self.secrets).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::ConfigFile;
    use std::path::Path;

    fn client(search: &str) -> WebSearch {
        let text =
            format!(r#"{{"baseURL": "http://127.0.0.1:9/v1", "model": "m", "search": {search}}}"#);
        let file = ConfigFile::parse("c.json", &text).expect("parses");
        let settings = Settings::resolve(Path::new("c.json"), file, &|_| None).expect("valid");
        WebSearch::new(
            crate::http::client().expect("client"),
            &settings,
            &Gates::new(),
        )
        .expect("configured")
        .expect("a provider")
    }

    #[test]
    fn default_and_configured_endpoints() {
        let c = client(r#"{"provider": "tavily", "apiKey": "tv-key"}"#);
        assert_eq!(c.url.address(), "https://api.tavily.com/search");
        let c = client(r#"{"provider": "brave", "apiKey": "br-key"}"#);
        assert_eq!(
            c.url.address(),
            "https://api.search.brave.com/res/v1/web/search"
        );
        let c = client(r#"{"provider": "brave", "apiKey": "br-key", "baseURL": "http://b:1/"}"#);
        assert_eq!(c.url.address(), "http://b:1/res/v1/web/search");
        let c = client(r#"{"provider": "searxng", "baseURL": "http://u:pw@s:8080/sx"}"#);
        assert_eq!(c.url.address(), "http://s:8080/sx/search");
        assert_eq!(c.url.to_string(), "http://u:***@s:8080/sx/search");
        assert_eq!(c.provider_name(), "searxng");
    }

    #[test]
    fn debug_output_hides_the_key() {
        let c = client(r#"{"provider": "tavily", "apiKey": "tv-SECRET-key"}"#);
        assert!(!format!("{c:?}").contains("SECRET"));
    }
}
