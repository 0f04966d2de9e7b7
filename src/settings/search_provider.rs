//! [`SearchProviderKind`]: one name in `search.provider`: `local` (the corpus), `none`, `mcp` (a
//! tool of an MCP server, configured by `search.command` or `search.url`, see
//! [`super::mcp_search`]), or a web provider of [`crate::web_providers::WEB_PROVIDERS`], whose
//! names are the only others accepted. An unknown name is refused when the config file is
//! read, naming the choices.

use serde::Deserialize;

use crate::web_providers::{WEB_PROVIDERS, WebProvider, find};

/// One search provider as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchProviderKind {
    /// The local corpus index.
    Local,
    /// No search (dropped when resolved).
    None,
    /// A tool of an MCP server (`search.command` or `search.url`, `search.tool`).
    Mcp,
    /// A web search API.
    Web(&'static dyn WebProvider),
}

impl SearchProviderKind {
    /// The provider named `name`, as written in `search.provider`.
    pub fn from_name(name: &str) -> Option<SearchProviderKind> {
        match name {
            "local" => Some(SearchProviderKind::Local),
            "none" => Some(SearchProviderKind::None),
            "mcp" => Some(SearchProviderKind::Mcp),
            _ => find(name).map(SearchProviderKind::Web),
        }
    }

    /// Its name in `search.provider`.
    pub fn name(self) -> &'static str {
        match self {
            SearchProviderKind::Local => "local",
            SearchProviderKind::None => "none",
            SearchProviderKind::Mcp => "mcp",
            SearchProviderKind::Web(provider) => provider.spec().name,
        }
    }

    /// The web search API, when this is one.
    pub fn web(&self) -> Option<&'static dyn WebProvider> {
        match self {
            SearchProviderKind::Web(provider) => Some(*provider),
            SearchProviderKind::Local | SearchProviderKind::None | SearchProviderKind::Mcp => None,
        }
    }
}

/// The web providers' names for a message: `searxng, tavily or brave`.
pub fn web_provider_names() -> String {
    let names: Vec<&str> = WEB_PROVIDERS.iter().map(|p| p.spec().name).collect();
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.concat(),
    }
}

impl<'de> Deserialize<'de> for SearchProviderKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        SearchProviderKind::from_name(&name).ok_or_else(|| {
            let choices: Vec<String> = WEB_PROVIDERS
                .iter()
                .map(|p| p.spec().name)
                .chain(["mcp", "local", "none"])
                .map(|n| format!("`{n}`"))
                .collect();
            serde::de::Error::custom(format!(
                "unknown provider `{name}`: choose one of {}",
                choices.join(", ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_round_trips() {
        let all = WEB_PROVIDERS.iter().map(|p| SearchProviderKind::Web(*p));
        for kind in [
            SearchProviderKind::Local,
            SearchProviderKind::None,
            SearchProviderKind::Mcp,
        ]
        .into_iter()
        .chain(all)
        {
            assert_eq!(SearchProviderKind::from_name(kind.name()), Some(kind));
            let parsed: SearchProviderKind =
                serde_json::from_value(serde_json::json!(kind.name())).expect("a known name");
            assert_eq!(parsed, kind);
        }
    }

    #[test]
    fn an_unknown_name_lists_the_choices() {
        let err = serde_json::from_value::<SearchProviderKind>(serde_json::json!("bing"))
            .expect_err("unknown");
        assert_eq!(
            err.to_string(),
            "unknown provider `bing`: choose one of `searxng`, `tavily`, `brave`, `mcp`, `local`, `none`"
        );
        assert_eq!(web_provider_names(), "searxng, tavily or brave");
    }
}
