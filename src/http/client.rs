//! The one reqwest client of a process: rustls with the ring provider (no OpenSSL), our user
//! agent, and a connection pool shared by every LLM and search call; and its twin that
//! follows no redirect, for a POST that must reach the URL it was given.

/// Builds the shared reqwest client.
pub fn client() -> Result<reqwest::Client, reqwest::Error> {
    builder().build()
}

/// A client that follows no redirect: a webhook's POST must be answered by the URL given,
/// since a redirect turns it into an empty GET (301, 302, 303) or carries the signed body
/// elsewhere (307, 308).
pub fn client_without_redirects() -> Result<reqwest::Client, reqwest::Error> {
    builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

fn builder() -> reqwest::ClientBuilder {
    // Installing twice is harmless: the second call reports the provider already set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().user_agent(concat!("researchflow/", env!("CARGO_PKG_VERSION")))
}
