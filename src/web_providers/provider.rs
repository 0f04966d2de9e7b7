//! [`WebProvider`]: everything researchflow knows of one web search API, in one trait: its
//! constants ([`ProviderSpec`]: its name in `search.provider`, where it lives, its key), the
//! request of one query and the hits of its answer.
//!
//! An implementation describes the API and nothing else. It never sends (`search/web.rs` does,
//! through the one retry policy), never reads settings or the environment (`settings` does, from
//! [`super::WEB_PROVIDERS`]), and never touches the key: `search/web.rs` puts it where
//! [`ProviderSpec::key_sent_as`] says, so no provider can put it in a URL or send two
//! `Authorization` headers.

use reqwest::{Method, RequestBuilder};

/// How a provider's key travels. Either way the request carries at most one `Authorization`
/// header (the rule of `http/auth.rs`): the bearer key, else the user part of `search.baseURL`
/// as Basic auth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySentAs {
    /// `Authorization: Bearer <key>`; a user part of `search.baseURL` is then not sent.
    Bearer,
    /// A header of its own (e.g. `X-Subscription-Token`), leaving `Authorization` to the URL's
    /// user part.
    Header(&'static str),
}

/// One result as the provider wrote it: untrusted, every field optional. `search` keeps it only
/// with an `http(s)` URL and cleans its text (`SearchHit::from_parts`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WebHit {
    pub title: Option<String>,
    pub url: Option<String>,
    pub snippet: Option<String>,
}

/// The constants that describe one provider: what `settings`, `search/web.rs`, `doctor` and the
/// messages need to know of it without sending anything.
#[derive(Debug)]
pub struct ProviderSpec {
    /// Its name in `search.provider`: lower case, unique, neither `local` nor `none`.
    pub name: &'static str,
    /// Where it lives when `search.baseURL` is not set; `None` for a self-hosted service, whose
    /// address the user must set.
    pub default_base_url: Option<&'static str>,
    /// The path of the search endpoint below the base URL, e.g. `/search`.
    pub path: &'static str,
    /// The method of a search request.
    pub method: Method,
    /// The environment variable that holds its key when `search.apiKey` is not set.
    pub key_env: &'static str,
    /// Whether it cannot be used without a key (else a key is sent only when one is set).
    pub key_required: bool,
    /// How the key is sent.
    pub key_sent_as: KeySentAs,
}

/// One web search API. Implement it in a file of its own and add the value to
/// [`super::WEB_PROVIDERS`]: config parsing, key lookup, the search client, `doctor` and the
/// error messages read it from there (ARCHITECTURE.md, "Recipes", "A web search provider").
pub trait WebProvider: Sync {
    /// Its constants (name, address, key).
    fn spec(&self) -> &'static ProviderSpec;

    /// One query: `request` is already addressed to the endpoint (base URL and
    /// [`ProviderSpec::path`]) and carries the key; this adds the query string, body and
    /// headers. `max_results` is 1 to 20.
    fn request(&self, request: RequestBuilder, query: &str, max_results: u32) -> RequestBuilder;

    /// The results of a 2xx answer's body, in the provider's order; an error when the body is
    /// not its result JSON (never retried).
    fn parse(&self, body: &str) -> Result<Vec<WebHit>, serde_json::Error>;
}

/// Providers are equal when their names are: a name is unique in the registry.
impl PartialEq for dyn WebProvider {
    fn eq(&self, other: &Self) -> bool {
        self.spec().name == other.spec().name
    }
}

impl Eq for dyn WebProvider {}

impl std::fmt::Debug for dyn WebProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.spec().name)
    }
}
