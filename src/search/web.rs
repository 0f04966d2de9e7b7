//! [`WebSearch`]: the one configured web provider, and the one way a web search request is
//! sent.
//!
//! Each provider ([`crate::web_providers`]) says what its request holds and how its answer
//! reads; this file checks the configuration against it, puts the key where the provider says
//! (at most one `Authorization` header), sends through [`with_retry`] with a per-attempt
//! timeout, turns a non-2xx answer into [`HttpError::Status`] (body redacted and truncated,
//! `Retry-After` kept) and a 2xx body that does not parse into [`SearchError::Malformed`], which
//! is not retried, and keeps only results with a web URL. Every attempt waits at the gate of
//! the provider's URL: no limits are configured for it, but a 429 closes it for every search
//! of the process and lowers the pace (see [`crate::http::gate`]).

use std::sync::Arc;
use std::time::Duration;

use super::{SearchConfigError, SearchError, SearchHit};
use crate::http::auth::sends_user_part;
use crate::http::{
    AtGate, Gate, Gates, HttpError, RetryObserver, Unusable, send_once, with_retry_at_gate,
};
use crate::settings::secret::redact;
use crate::settings::{ApiKey, BaseUrl, RateLimits, RetrySettings, Settings};
use crate::web_providers::{KeySentAs, WebHit, WebProvider};

/// One configured web search provider.
#[derive(Debug, Clone)]
pub struct WebSearch {
    http: reqwest::Client,
    provider: &'static dyn WebProvider,
    /// Always set when the provider requires a key.
    key: Option<ApiKey>,
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
        let Some(provider) = search.web_provider() else {
            return Ok(None);
        };
        let spec = provider.spec();
        let path = || settings.config_path.display().to_string();
        let base = match (&search.base_url, spec.default_base_url) {
            (Some(url), _) => url.clone(),
            // The defaults are constant http(s) URLs (`registry.rs` tests each).
            (None, Some(default)) => BaseUrl::parse(default).expect("a default base URL is valid"),
            (None, None) => {
                return Err(SearchConfigError::MissingBaseUrl {
                    path: path(),
                    provider: spec.name,
                });
            }
        };
        if spec.key_required && search.api_key.is_none() {
            return Err(SearchConfigError::MissingKey {
                path: path(),
                provider: spec.name,
                env: spec.key_env,
            });
        }
        let url = base.join(spec.path);
        let gate = gates.gate(&url.to_string(), &url.to_string(), RateLimits::default());
        Ok(Some(WebSearch {
            http,
            provider,
            key: search.api_key.clone(),
            url,
            max_results: search.max_results,
            timeout: settings.search_timeout,
            retry: settings.retry,
            gate,
            secrets: settings.secrets(),
        }))
    }

    /// The provider's name in `search.provider`, e.g. `tavily`.
    pub fn provider_name(&self) -> &'static str {
        self.provider.spec().name
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
        let parsed = self
            .provider
            .parse(&text)
            .map_err(|e| SearchError::Malformed {
                provider: self.provider_name(),
                message: redact(&e.to_string(), &self.secrets),
            })?;
        // max_results is 1..=20 (checked by the settings), so this never truncates.
        let max = usize::try_from(self.max_results).unwrap_or(usize::MAX);
        Ok(kept(parsed, max))
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
            Unusable::KeyRefused(status) if sends_user_part(url, self.bearer()) => {
                let key = if self.key.is_some() {
                    ", and check `search.apiKey`"
                } else {
                    ""
                };
                format!(
                    "the {name} search `{url}` refused the user and password of its URL (HTTP {status}, sent as Basic auth): correct them in `search.baseURL`{key}"
                )
            }
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
        // Errors show the URL without query or password.
        send_once(self.request(query), &self.url, self.timeout, &self.secrets).await
    }

    /// The request of one query, with the key where the provider sends it and at most one
    /// `Authorization` header (`http::auth`): the key as the bearer token, else the URL's user
    /// part, which a key in a header of its own leaves free.
    fn request(&self, query: &str) -> reqwest::RequestBuilder {
        let spec = self.provider.spec();
        let mut request =
            crate::http::request(&self.http, spec.method.clone(), &self.url, self.bearer());
        if let (KeySentAs::Header(name), Some(key)) = (spec.key_sent_as, &self.key) {
            request = request.header(name, key.expose());
        }
        self.provider.request(request, query, self.max_results)
    }

    /// The key when the provider takes it as the bearer token.
    fn bearer(&self) -> Option<&ApiKey> {
        let sent_as = self.provider.spec().key_sent_as;
        self.key.as_ref().filter(|_| sent_as == KeySentAs::Bearer)
    }
}

/// The first `max` of a provider's results that have an `http(s)` URL, their text cleaned: the
/// one place a web answer's untrusted results become hits.
fn kept(results: Vec<WebHit>, max: usize) -> Vec<SearchHit> {
    results
        .into_iter()
        .filter_map(|r| SearchHit::from_parts(r.title, r.url, r.snippet))
        .take(max)
        .collect()
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
    fn results_without_a_web_url_are_skipped_and_the_first_max_kept() {
        let result = |url: Option<&str>, title: &str| WebHit {
            title: Some(title.into()),
            url: url.map(String::from),
            snippet: None,
        };
        let results = vec![
            result(None, "no url"),
            result(Some("https://a"), "A"),
            result(Some(""), "empty url"),
            result(Some("javascript:alert(1)"), "script"),
            result(Some("https://b"), "B\nline"),
            result(Some("https://c"), "C"),
        ];
        let hits = kept(results, 2);
        let shown: Vec<(&str, &str)> = hits
            .iter()
            .map(|h| (h.title.as_str(), h.url.as_str()))
            .collect();
        assert_eq!(shown, [("A", "https://a"), ("B line", "https://b")]);
    }

    #[test]
    fn the_key_goes_where_the_provider_says_with_one_authorization_header() {
        let request = |search: &str| client(search).request("q").build().expect("builds");
        let tavily = request(r#"{"provider": "tavily", "apiKey": "k", "baseURL": "http://u:p@t"}"#);
        let auth: Vec<_> = tavily.headers().get_all("authorization").iter().collect();
        assert_eq!(auth, ["Bearer k"]);
        let brave = request(r#"{"provider": "brave", "apiKey": "k", "baseURL": "http://u:p@b"}"#);
        assert_eq!(brave.headers()["x-subscription-token"], "k");
        let auth: Vec<_> = brave.headers().get_all("authorization").iter().collect();
        assert_eq!(auth, ["Basic dTpw"], "the URL's user part");
    }

    #[test]
    fn debug_output_hides_the_key() {
        let c = client(r#"{"provider": "tavily", "apiKey": "tv-SECRET-key"}"#);
        assert!(!format!("{c:?}").contains("SECRET"));
    }
}
