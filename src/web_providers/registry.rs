//! [`WEB_PROVIDERS`]: every web search provider, one line each. Config parsing
//! (`search.provider`, the key variables), the search client, `doctor` and the error messages
//! that list the choices all read this list, so a provider added here is known everywhere.

use super::WebProvider;
use super::brave::Brave;
use super::searxng::Searxng;
use super::tavily::Tavily;

/// Every web search provider, in the order messages list them.
pub static WEB_PROVIDERS: &[&dyn WebProvider] = &[&Searxng, &Tavily, &Brave];

/// The provider named `name` in `search.provider`.
pub fn find(name: &str) -> Option<&'static dyn WebProvider> {
    WEB_PROVIDERS
        .iter()
        .copied()
        .find(|p| p.spec().name == name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::BaseUrl;
    use crate::web_providers::KeySentAs;

    #[test]
    fn every_provider_is_found_by_its_name_and_names_are_unique() {
        for (at, provider) in WEB_PROVIDERS.iter().enumerate() {
            let (name, env) = (provider.spec().name, provider.spec().key_env);
            assert_eq!(find(name).map(|p| p.spec().name), Some(name));
            assert!(
                !name.is_empty() && name.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "`{name}`: lower case, as written in `search.provider`"
            );
            assert!(!["local", "none"].contains(&name), "`{name}` is taken");
            for other in &WEB_PROVIDERS[at + 1..] {
                assert_ne!(name, other.spec().name, "two providers named `{name}`");
                assert_ne!(env, other.spec().key_env, "`{name}`'s key variable");
            }
        }
        assert!(find("bing").is_none() && find("local").is_none());
    }

    #[test]
    fn defaults_paths_and_key_variables_are_well_formed() {
        for spec in WEB_PROVIDERS.iter().map(|p| p.spec()) {
            let (name, env) = (spec.name, spec.key_env);
            if let Some(url) = spec.default_base_url {
                // `search/web.rs` relies on this: it parses the default without a fallback.
                assert!(BaseUrl::parse(url).is_some(), "`{name}`: `{url}`");
            }
            assert!(spec.path.starts_with('/'), "`{name}`");
            assert!(
                env.chars().all(|c| c.is_ascii_uppercase() || c == '_'),
                "`{name}`: `{env}`"
            );
            if let KeySentAs::Header(header) = spec.key_sent_as {
                assert!(
                    !header.eq_ignore_ascii_case("authorization"),
                    "`{name}`: a key of its own header leaves `Authorization` to the URL"
                );
            }
        }
    }

    #[test]
    fn the_book_documents_every_provider_and_its_key_variable() {
        let book = include_str!("../../docs/src/configuration.md");
        for provider in WEB_PROVIDERS {
            let (name, env) = (provider.spec().name, provider.spec().key_env);
            assert!(
                book.contains(&format!("`{name}`")),
                "docs/src/configuration.md: `{name}`"
            );
            assert!(
                book.contains(&format!("`{env}`")),
                "docs/src/configuration.md: `{env}`"
            );
        }
    }
}
