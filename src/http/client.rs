//! The one reqwest client of a process: rustls with the ring provider (no OpenSSL), our user
//! agent, and a connection pool shared by every LLM and search call.

/// Builds the shared reqwest client.
pub fn client() -> Result<reqwest::Client, reqwest::Error> {
    // Installing twice is harmless: the second call reports the provider already set.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .user_agent(concat!("researchflow/", env!("CARGO_PKG_VERSION")))
        .build()
}
