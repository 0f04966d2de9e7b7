//! Integration tests of the search providers (`researchflow::search`): the real
//! [`SearchClient`] against the mock SearXNG, Tavily and Brave servers on 127.0.0.1, through the
//! crate's one retry policy with millisecond backoff, so the whole file runs in a few seconds.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use researchflow::http::{HttpError, NoObserver, RetryNotice, RetryObserver, Unusable};
use researchflow::search::{SearchClient, SearchConfigError, SearchError, SearchHit};
use researchflow::settings::{ConfigFile, Settings, SettingsError};
use serde_json::{Value, json};

use crate::support;
use crate::support::mock_search::{result_snippet, result_title, result_url};
use crate::support::{Fault, MockSearch, Recorded, SearchKind};

const KEY: &str = "search-key-SECRET-9876";
const QUERY: &str = "Rust async runtimes";

/// Records every retry notice.
#[derive(Default)]
struct Notices(Mutex<Vec<RetryNotice>>);

impl RetryObserver for Notices {
    fn on_retry(&self, notice: &RetryNotice) {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(notice.clone());
    }
}

impl Notices {
    fn all(&self) -> Vec<RetryNotice> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

fn try_settings(search: Value, search_ms: u64) -> Result<Settings, SettingsError> {
    let config = json!({
        "baseURL": "http://127.0.0.1:9/v1",
        "model": "test-model",
        "timeouts": {"llmMs": 1000, "searchMs": search_ms},
        "retry": {"maxRetries": 3, "baseDelayMs": 5, "maxDelayMs": 20, "maxRetryAfterMs": 500},
        "search": search,
    });
    let file = ConfigFile::parse("test", &config.to_string())?;
    Settings::resolve(Path::new("test.json"), file, &|_| None)
}

fn settings(search: Value) -> Settings {
    try_settings(search, 2000).expect("valid settings")
}

fn provider(kind: SearchKind) -> &'static str {
    match kind {
        SearchKind::Searxng => "searxng",
        SearchKind::Tavily => "tavily",
        SearchKind::Brave => "brave",
    }
}

/// A client for `mock`, with the key and 4 results (SearXNG's mock always serves 3).
fn client_for(mock: &MockSearch, search_ms: u64) -> SearchClient {
    let s = try_settings(
        json!({
            "provider": provider(mock.kind()),
            "baseURL": mock.base_url(),
            "apiKey": KEY,
            "maxResults": 4,
        }),
        search_ms,
    )
    .expect("valid settings");
    let http = support::http_client().build().expect("reqwest client");
    SearchClient::new(http, &s)
        .expect("configured")
        .expect("a provider")
}

fn search_requests(mock: &MockSearch) -> Vec<Recorded> {
    let path = match mock.kind() {
        SearchKind::Searxng | SearchKind::Tavily => "/search",
        SearchKind::Brave => "/res/v1/web/search",
    };
    mock.requests()
        .into_iter()
        .filter(|r| r.path == path)
        .collect()
}

const KINDS: [SearchKind; 3] = [SearchKind::Searxng, SearchKind::Tavily, SearchKind::Brave];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hits_are_what_the_mock_served() {
    for kind in KINDS {
        let mock = MockSearch::start(kind).await;
        let client = client_for(&mock, 2000);
        assert_eq!(client.provider_name(), provider(kind));
        let hits = client
            .search(QUERY, &NoObserver)
            .await
            .expect("search works");
        let expected = if kind == SearchKind::Searxng { 3 } else { 4 };
        assert_eq!(hits.len(), expected, "{kind:?}");
        let urls: Vec<String> = hits.iter().map(|h| h.url.clone()).collect();
        assert_eq!(urls, mock.returned_urls(), "{kind:?}");
        assert_eq!(
            hits[0],
            SearchHit {
                title: result_title(QUERY, 1),
                url: result_url(QUERY, 1),
                snippet: result_snippet(QUERY, 1),
                in_corpus: None,
            },
            "{kind:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searxng_caps_hits_at_max_results() {
    let mock = MockSearch::start(SearchKind::Searxng).await;
    let s = settings(json!({"provider": "searxng", "baseURL": mock.base_url(), "maxResults": 2}));
    let client = SearchClient::new(support::http_client().build().expect("client"), &s)
        .expect("configured")
        .expect("a provider");
    let hits = client
        .search(QUERY, &NoObserver)
        .await
        .expect("search works");
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[1].url, result_url(QUERY, 2));
    let request = &search_requests(&mock)[0];
    assert_eq!(request.header("authorization"), None, "no key, no header");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_carry_the_query_count_and_key_in_the_right_place() {
    for kind in KINDS {
        let mock = MockSearch::start(kind).await;
        mock.require_key(KEY);
        let client = client_for(&mock, 2000);
        client
            .search(QUERY, &NoObserver)
            .await
            .expect("key accepted");
        let requests = search_requests(&mock);
        assert_eq!(requests.len(), 1, "{kind:?}");
        let r = &requests[0];
        assert!(
            !r.query.contains(KEY),
            "{kind:?}: key in the URL: {}",
            r.query
        );
        assert!(!r.raw_body.contains(KEY), "{kind:?}: key in the body");
        let bearer = format!("Bearer {KEY}");
        match kind {
            SearchKind::Searxng => {
                assert_eq!(r.method, "GET");
                assert_eq!(r.query_param("q").as_deref(), Some(QUERY));
                assert_eq!(r.query_param("format").as_deref(), Some("json"));
                assert_eq!(r.header("authorization"), Some(bearer.as_str()));
            }
            SearchKind::Tavily => {
                assert_eq!(r.method, "POST");
                assert_eq!(
                    r.body,
                    json!({"query": QUERY, "max_results": 4, "search_depth": "basic"})
                );
                assert_eq!(r.header("authorization"), Some(bearer.as_str()));
            }
            SearchKind::Brave => {
                assert_eq!(r.method, "GET");
                assert_eq!(r.query_param("q").as_deref(), Some(QUERY));
                assert_eq!(r.query_param("count").as_deref(), Some("4"));
                assert_eq!(r.header("x-subscription-token"), Some(KEY));
                assert_eq!(r.header("accept"), Some("application/json"));
                assert_eq!(r.header("authorization"), None);
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_key_is_a_final_401() {
    for kind in KINDS {
        let mock = MockSearch::start(kind).await;
        mock.require_key("another-key-1234");
        let client = client_for(&mock, 2000);
        let notices = Notices::default();
        let err = client
            .search(QUERY, &notices)
            .await
            .expect_err("key refused");
        match &err {
            SearchError::Unusable {
                why: Unusable::KeyRefused(401),
                message,
            } => {
                assert!(message.contains("search.apiKey"), "{kind:?}: {message}");
                assert!(
                    !message.contains('?'),
                    "{kind:?}: query in the error URL: {message}"
                );
            }
            other => panic!("{kind:?}: expected a refused key, got {other:?}"),
        }
        assert_eq!(search_requests(&mock).len(), 1, "{kind:?}: not retried");
        assert!(notices.all().is_empty());
        let shown = err.to_string();
        assert!(!shown.contains(KEY), "{shown}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searxng_without_a_key_where_one_is_required_is_a_final_401() {
    let mock = MockSearch::start(SearchKind::Searxng).await;
    mock.require_key(KEY);
    let s = settings(json!({"provider": "searxng", "baseURL": mock.base_url()}));
    let client = SearchClient::new(support::http_client().build().expect("client"), &s)
        .expect("configured")
        .expect("a provider");
    let err = client.search(QUERY, &NoObserver).await.expect_err("no key");
    assert!(
        matches!(
            &err,
            SearchError::Unusable {
                why: Unusable::KeyRefused(401),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(search_requests(&mock).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limits_are_retried_with_their_delays() {
    for kind in KINDS {
        let mock = MockSearch::start(kind).await;
        mock.push_fault(Fault::rate_limited(None));
        mock.push_fault(Fault::rate_limited_ms(120));
        let client = client_for(&mock, 2000);
        let notices = Notices::default();
        let hits = client
            .search(QUERY, &notices)
            .await
            .expect("third try works");
        assert!(!hits.is_empty());
        assert_eq!(search_requests(&mock).len(), 3, "{kind:?}");
        let notices = notices.all();
        assert_eq!(notices.len(), 2, "{kind:?}");
        let what = format!("{} search", provider(kind));
        assert!(
            notices
                .iter()
                .all(|n| n.what == what && n.cause == "HTTP 429")
        );
        assert!(!notices[0].server_asked);
        assert!(
            notices[0].delay >= Duration::from_millis(5)
                && notices[0].delay <= Duration::from_millis(20),
            "backoff delay {:?}",
            notices[0].delay
        );
        assert!(notices[1].server_asked);
        assert_eq!(notices[1].delay, Duration::from_millis(120));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_are_retried() {
    for kind in KINDS {
        let mock = MockSearch::start(kind).await;
        mock.push_fault(Fault::server_error(503));
        let client = client_for(&mock, 2000);
        let notices = Notices::default();
        client
            .search(QUERY, &notices)
            .await
            .expect("second try works");
        assert_eq!(search_requests(&mock).len(), 2, "{kind:?}");
        assert_eq!(notices.all()[0].cause, "HTTP 503");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_answer_is_not_retried() {
    for kind in KINDS {
        let mock = MockSearch::start(kind).await;
        mock.push_raw(200, r#"{"results": [{"url": "https://x", "title": "#);
        let client = client_for(&mock, 2000);
        let err = client
            .search(QUERY, &NoObserver)
            .await
            .expect_err("malformed");
        match &err {
            SearchError::Malformed {
                provider: p,
                message,
            } => {
                assert_eq!(*p, provider(kind));
                assert!(message.contains("EOF"), "{message}");
            }
            other => panic!("{kind:?}: expected Malformed, got {other:?}"),
        }
        assert!(err.to_string().contains("search.baseURL"), "{err}");
        assert_eq!(search_requests(&mock).len(), 1, "{kind:?}");
    }
    // Valid JSON of the wrong shape, and an error body the server served as 200.
    let mock = MockSearch::start(SearchKind::Tavily).await;
    mock.push_raw(200, r#"{"detail": {"error": "bad"}}"#);
    let err = client_for(&mock, 2000)
        .search(QUERY, &NoObserver)
        .await
        .expect_err("wrong shape");
    assert!(err.to_string().contains("missing field `results`"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_server_times_out_after_every_retry() {
    let mock = MockSearch::start(SearchKind::Brave).await;
    for _ in 0..4 {
        mock.push_fault(Fault::Hang);
    }
    let client = client_for(&mock, 300);
    let notices = Notices::default();
    let err = client.search(QUERY, &notices).await.expect_err("times out");
    match &err {
        SearchError::Http(HttpError::Timeout { url, timeout }) => {
            assert_eq!(*timeout, Duration::from_millis(300));
            assert!(!url.contains('?'), "{url}");
        }
        other => panic!("expected a timeout, got {other:?}"),
    }
    assert!(
        !err.is_unusable(),
        "a slow server is not a misconfigured one: the run goes on"
    );
    assert_eq!(search_requests(&mock).len(), 4, "one try and three retries");
    assert_eq!(notices.all().len(), 3);
    assert!(notices.all().iter().all(|n| n.cause == "timeout"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_retried() {
    let mock = MockSearch::start(SearchKind::Searxng).await;
    mock.push_fault(Fault::Drop);
    let client = client_for(&mock, 2000);
    let notices = Notices::default();
    let hits = client
        .search(QUERY, &notices)
        .await
        .expect("second try works");
    assert_eq!(hits.len(), 3);
    assert_eq!(search_requests(&mock).len(), 2);
    let notices = notices.all();
    assert_eq!(notices.len(), 1);
    assert_eq!(notices[0].cause, "connection dropped");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_every_time_is_a_transport_error() {
    let mock = MockSearch::start(SearchKind::Tavily).await;
    for _ in 0..4 {
        mock.push_fault(Fault::Drop);
    }
    let err = client_for(&mock, 2000)
        .search(QUERY, &NoObserver)
        .await
        .expect_err("always dropped");
    assert!(
        matches!(err, SearchError::Http(HttpError::Transport { .. })),
        "{err:?}"
    );
    assert_eq!(search_requests(&mock).len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_none_is_no_client() {
    let http = support::http_client().build().expect("client");
    let client = SearchClient::new(http.clone(), &settings(json!({"provider": "none"})));
    assert!(matches!(client, Ok(None)));
    let client = SearchClient::new(http, &settings(json!({})));
    assert!(matches!(client, Ok(None)), "none is the default");
}

#[test]
fn configuration_errors_name_the_key_to_set() {
    let http = support::http_client().build().expect("client");
    let error = |search: Value| -> SearchConfigError {
        SearchClient::new(http.clone(), &settings(search)).expect_err("not usable")
    };

    let err = error(json!({"provider": "searxng", "apiKey": KEY}));
    assert!(matches!(err, SearchConfigError::MissingBaseUrl { .. }));
    assert!(err.to_string().contains("`search.baseURL`"), "{err}");

    let err = error(json!({"provider": "tavily"}));
    let shown = err.to_string();
    assert!(
        shown.contains("`search.apiKey`") && shown.contains("`TAVILY_API_KEY`"),
        "{shown}"
    );
    let err = error(json!({"provider": "brave", "baseURL": "http://127.0.0.1:9"}));
    assert!(err.to_string().contains("`BRAVE_API_KEY`"), "{err}");

    let err = error(json!({"provider": "local"}));
    assert!(matches!(err, SearchConfigError::NoCorpus { .. }));
    assert!(
        err.to_string().contains("`search.corpus`") && err.to_string().contains("--corpus"),
        "{err}"
    );
    assert!(err.to_string().contains("`test.json`"), "{err}");
}

#[test]
fn keys_from_the_environment_are_used() {
    let config =
        json!({"baseURL": "http://127.0.0.1:9/v1", "model": "m", "search": {"provider": "brave"}});
    let file = ConfigFile::parse("test", &config.to_string()).expect("parses");
    let s = Settings::resolve(Path::new("test.json"), file, &|k| {
        (k == "BRAVE_API_KEY").then(|| KEY.to_string())
    })
    .expect("valid");
    let http = support::http_client().build().expect("client");
    let client = SearchClient::new(http, &s).expect("key from env");
    assert_eq!(client.map(|c| c.provider_name()), Some("brave".to_string()));
}
