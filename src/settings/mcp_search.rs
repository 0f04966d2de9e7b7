//! Search provider `mcp`: a tool of an MCP server as the search provider. The server is started
//! by `search.command` (stdio) or reached at `search.url` (streamable HTTP); `search.tool` is
//! the tool called for each query, with `search.arguments` (default `{"query": "{query}"}`),
//! in which `{query}` and `{max_results}` are replaced. This module only reads and checks
//! the keys; `search::mcp` talks to the server.

use serde_json::{Map, Value};

use super::base_url::BaseUrl;
use super::config_file::SearchConfig;
use super::search_provider::SearchProviderKind;
use super::secret::redact_url;

/// How the MCP server of provider `mcp` is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpServer {
    /// A program and its arguments, started with the server's stdio as the transport.
    Command(Vec<String>),
    /// A streamable HTTP endpoint.
    Url(BaseUrl),
}

impl McpServer {
    /// The server as messages name it: the command line, or the URL without its password
    /// or query.
    pub fn label(&self) -> String {
        match self {
            McpServer::Command(argv) => argv.join(" "),
            McpServer::Url(url) => url.to_string(),
        }
    }
}

/// The MCP server and tool of provider `mcp`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpSearchSettings {
    pub server: McpServer,
    pub tool: String,
    /// The tool's arguments, placeholders and all.
    pub arguments: Map<String, Value>,
}

/// The placeholder replaced by the query.
pub const QUERY: &str = "{query}";
/// The placeholder replaced by `search.maxResults`.
pub const MAX_RESULTS: &str = "{max_results}";

impl McpSearchSettings {
    /// The arguments of one call: a string that is exactly `{max_results}` becomes that
    /// number, and every `{query}` and `{max_results}` in a string is replaced by its value.
    pub fn arguments_for(&self, query: &str, max_results: u32) -> Map<String, Value> {
        fn fill(value: &Value, query: &str, max: u32) -> Value {
            match value {
                Value::String(s) if s == MAX_RESULTS => Value::from(max),
                Value::String(s) => Value::String(
                    s.replace(QUERY, query)
                        .replace(MAX_RESULTS, &max.to_string()),
                ),
                Value::Array(items) => {
                    Value::Array(items.iter().map(|v| fill(v, query, max)).collect())
                }
                Value::Object(map) => Value::Object(
                    map.iter()
                        .map(|(k, v)| (k.clone(), fill(v, query, max)))
                        .collect(),
                ),
                other => other.clone(),
            }
        }
        self.arguments
            .iter()
            .map(|(k, v)| (k.clone(), fill(v, query, max_results)))
            .collect()
    }
}

/// A key of the `mcp` provider that cannot be used: `value` is `None` when it is missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyProblem {
    pub key: &'static str,
    pub value: Option<String>,
    pub hint: String,
}

/// The `mcp` provider's settings from the `search` section: `Some` when `mcp` is among the
/// providers (then exactly one of `command` and `url`, and `tool`, are required), `None`
/// otherwise (then none of its keys may be set: a key that does nothing is a mistake).
pub(super) fn resolve(
    s: &SearchConfig,
    providers: &[SearchProviderKind],
) -> Result<Option<McpSearchSettings>, KeyProblem> {
    let invalid = |key: &'static str, value: String, hint: &str| KeyProblem {
        key,
        value: Some(value),
        hint: hint.to_string(),
    };
    let tool = s.tool.as_deref().map(str::trim).filter(|t| !t.is_empty());
    if !providers.contains(&SearchProviderKind::Mcp) {
        let set = [
            ("search.command", s.command.is_some()),
            ("search.url", s.url.is_some()),
            ("search.tool", s.tool.is_some()),
            ("search.arguments", s.arguments.is_some()),
        ];
        if let Some((key, _)) = set.iter().find(|(_, is_set)| *is_set) {
            return Err(invalid(
                key,
                "set".into(),
                "it is read only with provider `mcp`: add `\"mcp\"` to `search.provider`, or remove the key",
            ));
        }
        return Ok(None);
    }
    let server = match (&s.command, s.url.as_deref()) {
        (Some(argv), None) => {
            if argv.first().is_none_or(|program| program.trim().is_empty()) {
                return Err(invalid(
                    "search.command",
                    format!("{argv:?}"),
                    "give the program and its arguments, e.g. `[\"python3\", \"search_server.py\"]`",
                ));
            }
            McpServer::Command(argv.clone())
        }
        (None, Some(url)) => McpServer::Url(BaseUrl::parse(url).ok_or_else(|| {
            invalid(
                "search.url",
                redact_url(url),
                "use the server's http(s) endpoint, e.g. `http://127.0.0.1:8000/mcp`",
            )
        })?),
        (Some(_), Some(_)) => {
            return Err(invalid(
                "search.url",
                "set with `search.command`".into(),
                "give one: `search.command` starts a server over stdio, `search.url` reaches one over HTTP",
            ));
        }
        (None, None) => {
            return Err(KeyProblem {
                key: "search.command",
                value: None,
                hint: "provider `mcp` needs the server: `search.command` (e.g. `[\"python3\", \"search_server.py\"]`) or `search.url`".into(),
            });
        }
    };
    let Some(tool) = tool else {
        return Err(KeyProblem {
            key: "search.tool",
            value: None,
            hint: "name the server's tool that searches (`researchflow doctor` lists its tools)"
                .into(),
        });
    };
    let arguments = s
        .arguments
        .clone()
        .unwrap_or_else(|| Map::from_iter([("query".to_string(), Value::from(QUERY))]));
    if !Value::Object(arguments.clone()).to_string().contains(QUERY) {
        return Err(invalid(
            "search.arguments",
            Value::Object(arguments).to_string(),
            "no string holds `{query}`, so the query would never be sent: e.g. `{\"query\": \"{query}\", \"limit\": \"{max_results}\"}`",
        ));
    }
    Ok(Some(McpSearchSettings {
        server,
        tool: tool.to_string(),
        arguments,
    }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[cfg(feature = "mcp")]
    fn resolve(search: Value) -> Result<crate::settings::Settings, crate::settings::SettingsError> {
        use crate::settings::{ConfigFile, Settings};
        let text = json!({"search": search}).to_string();
        let file = ConfigFile::parse("c.json", &text).expect("parses");
        Settings::resolve(std::path::Path::new("c.json"), file, &|_| None)
    }

    // Without the feature the provider is refused outright (`tests/it/lean.rs`).
    #[cfg(feature = "mcp")]
    #[test]
    fn a_command_or_a_url_and_a_tool_make_the_provider() {
        let s = resolve(
            json!({"provider": "mcp", "command": ["python3", "s.py"], "tool": "web_search"}),
        )
        .expect("valid");
        let mcp = s.search.mcp.expect("mcp settings");
        assert_eq!(mcp.server.label(), "python3 s.py");
        assert_eq!(mcp.tool, "web_search");
        assert_eq!(Value::Object(mcp.arguments), json!({"query": "{query}"}));
        let s = resolve(json!({"provider": ["local", "mcp"], "url": "http://u:pw@h:8000/mcp", "tool": "t", "corpus": "."}))
            .expect("valid");
        let mcp = s.search.mcp.clone().expect("mcp settings");
        assert_eq!(mcp.server.label(), "http://u:***@h:8000/mcp");
        assert!(
            s.secrets().iter().any(|k| k.expose() == "pw"),
            "the URL's password is a secret"
        );
    }

    #[test]
    fn the_placeholders_are_replaced_and_max_results_alone_is_a_number() {
        let mcp = McpSearchSettings {
            server: McpServer::Command(vec!["x".into()]),
            tool: "t".into(),
            arguments: json!({"q": "{query}", "limit": "{max_results}", "opts": {"text": "{query} top {max_results}", "n": [1, "{max_results}"]}, "flag": true})
                .as_object()
                .cloned()
                .expect("object"),
        };
        assert_eq!(
            Value::Object(mcp.arguments_for("rust \"async\"", 7)),
            json!({"q": "rust \"async\"", "limit": 7, "opts": {"text": "rust \"async\" top 7", "n": [1, 7]}, "flag": true})
        );
    }

    // Without the feature the provider is refused outright (`tests/it/lean.rs`).
    #[cfg(feature = "mcp")]
    #[test]
    fn what_is_missing_or_useless_is_named() {
        let err = |search: Value| resolve(search).expect_err("refused").to_string();
        let text = err(json!({"provider": "mcp", "tool": "t"}));
        assert!(text.contains("`search.command`"), "{text}");
        let text = err(json!({"provider": "mcp", "command": ["x"]}));
        assert!(text.contains("`search.tool`"), "{text}");
        let text =
            err(json!({"provider": "mcp", "command": ["x"], "url": "http://h/mcp", "tool": "t"}));
        assert!(text.contains("give one"), "{text}");
        let text = err(json!({"provider": "mcp", "command": [], "tool": "t"}));
        assert!(text.contains("`search.command`"), "{text}");
        let text = err(json!({"provider": "mcp", "url": "ftp://h", "tool": "t"}));
        assert!(text.contains("`search.url`"), "{text}");
        let text = err(
            json!({"provider": "mcp", "command": ["x"], "tool": "t", "arguments": {"q": "fixed"}}),
        );
        assert!(text.contains("`{query}`"), "{text}");
        let text = err(json!({"provider": "none", "tool": "t"}));
        assert!(
            text.contains("`search.tool`") && text.contains("provider `mcp`"),
            "{text}"
        );
    }
}
