//! `researchflow doctor`: probes every configured endpoint, once each (roles that share an
//! endpoint are probed together; the review's two roles only while `review.enabled`), and the
//! search provider, then prints a table, or JSON with `--json`. Research without a model
//! (`--offline`, `engine: offline`, or no model and a corpus given) checks the corpus, its
//! index and the embedding model instead ([`corpus`]). Exit 0 when everything works, 1
//! otherwise; 2 without a usable configuration (no model and no corpus, a named file that does
//! not exist, a key that is wrong), which `--json` reports too, under `config`, with nothing
//! probed. Never prints a key; URLs are redacted.

mod corpus;

use std::path::Path;
use std::time::Instant;

use serde::Serialize;

use crate::cli::{CorpusArgs, DoctorArgs, GlobalArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::http::NoObserver;
use crate::llm::probe::{EndpointReport, probe};
use crate::output::{absolute, print_json, print_text};
use crate::run::Services;
#[cfg(feature = "mcp")]
use crate::search::McpSearch;
use crate::search::SearchClient;
use crate::settings::{EngineKind, Role, Settings, SettingsError};
use crate::transcript::Tape;

/// What the search provider did with one query.
#[derive(Debug, Clone, Serialize)]
struct SearchReport {
    provider: String,
    ok: bool,
    hits: Option<usize>,
    latency_ms: Option<u64>,
    error: Option<String>,
    /// Provider `mcp`: the server's tools, and whether the configured one is among them.
    #[serde(skip_serializing_if = "Option::is_none")]
    mcp: Option<McpReport>,
}

/// What the MCP search server offers.
#[derive(Debug, Clone, Serialize)]
struct McpReport {
    server: String,
    tool: String,
    /// `None` when the tools could not be listed (then `error` says why).
    tools: Option<Vec<String>>,
    tool_found: bool,
    error: Option<String>,
}

/// The configuration the probes come from: the file (absolute), whether it exists, and what
/// makes it unusable.
#[derive(Debug, Clone, Serialize)]
struct ConfigReport {
    ok: bool,
    file: String,
    exists: bool,
    error: Option<String>,
}

impl ConfigReport {
    fn of(file: &Path, error: Option<&SettingsError>) -> ConfigReport {
        ConfigReport {
            ok: error.is_none(),
            file: absolute(file),
            exists: file.exists(),
            error: error.map(ToString::to_string),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
struct Report {
    ok: bool,
    config: ConfigReport,
    endpoints: Vec<EndpointReport>,
    /// `None` when nothing was probed (no usable configuration, or research without a model).
    search: Option<SearchReport>,
    /// Research without a model: the corpus, its index and the embedding model.
    corpus: Option<corpus::CorpusReport>,
}

pub async fn run(args: DoctorArgs, global: &GlobalArgs) -> CommandResult {
    let file = Settings::config_file(global.config.as_deref());
    let mut settings = match usable_settings(global.config.as_deref(), &args.corpus) {
        Ok(settings) => settings,
        Err(err) => return unusable_config(&args, &file, err),
    };
    if settings.engine == EngineKind::Offline {
        return offline(&args, &file, &settings).await;
    }
    // A doctor answers quickly: one retry of a transient failure is enough to tell, and a
    // rate limit is an ordinary retry, not a wait of minutes at the gate.
    settings.retry.max_retries = settings.retry.max_retries.min(1);
    settings.retry.max_rate_limit_wait = std::time::Duration::ZERO;
    let services = Services::bare(settings)?;
    let endpoints = probe_endpoints(&services).await?;
    let search = probe_search(&services).await;
    let ok = search.ok && endpoints.iter().all(|e| e.ok);
    let report = Report {
        ok,
        config: ConfigReport::of(&file, None),
        endpoints,
        search: Some(search),
        corpus: None,
    };
    if args.json {
        print_json(&report)?;
    } else {
        print_text(&table(&report))?;
    }
    Ok(if ok {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// The settings, with a model to probe, or for research without one: offline as asked, or
/// when no model is configured and a corpus is.
fn usable_settings(config: Option<&Path>, corpus: &CorpusArgs) -> Result<Settings, SettingsError> {
    match Settings::with_corpus(config, corpus) {
        Err(SettingsError::NoLlm { .. }) if has_corpus(config, corpus) => {
            let offline = CorpusArgs {
                offline: true,
                ..corpus.clone()
            };
            Settings::with_corpus(config, &offline)
        }
        other => other,
    }
}

fn has_corpus(config: Option<&Path>, corpus: &CorpusArgs) -> bool {
    corpus.corpus.is_some() || Settings::load(config).is_ok_and(|s| s.search.corpus.is_some())
}

/// Research without a model: the corpus, its index and the embedding model, nothing probed.
async fn offline(args: &DoctorArgs, file: &Path, settings: &Settings) -> CommandResult {
    let checked = corpus::check(settings).await;
    let report = Report {
        ok: checked.ok,
        config: ConfigReport::of(file, None),
        endpoints: Vec::new(),
        search: None,
        corpus: Some(checked),
    };
    if args.json {
        print_json(&report)?;
    } else if let Some(checked) = &report.corpus {
        print_text(&corpus::lines(checked))?;
    }
    Ok(if report.ok {
        ExitStatus::Success
    } else {
        ExitStatus::Failure
    })
}

/// No configuration to probe: exit 2 naming what is missing, and with `--json` the same in a
/// report, so that a script reading stdout learns it too.
fn unusable_config(args: &DoctorArgs, file: &Path, err: SettingsError) -> CommandResult {
    if args.json {
        print_json(&Report {
            ok: false,
            config: ConfigReport::of(file, Some(&err)),
            endpoints: Vec::new(),
            search: None,
            corpus: None,
        })?;
    }
    Err(CommandError::usage(err))
}

/// One probe per endpoint; roles that share one are probed together.
async fn probe_endpoints(services: &Services) -> Result<Vec<EndpointReport>, CommandError> {
    let (settings, http) = (&services.settings, &services.http);
    let mut endpoints = Vec::new();
    let mut seen: Vec<(&crate::settings::LlmEndpoint, usize)> = Vec::new();
    let roles = settings.require_llm().map_err(CommandError::usage)?;
    // The review stage's roles only when the review runs (`review.enabled`).
    let used = |role: &Role| settings.asks(*role);
    for role in Role::all().filter(used) {
        let endpoint = roles.get(role);
        let same = |e: &crate::settings::LlmEndpoint| {
            e.base_url == endpoint.base_url
                && e.model == endpoint.model
                && e.api_key == endpoint.api_key
        };
        if let Some((_, at)) = seen.iter().find(|(e, _)| same(e)) {
            let report: &mut EndpointReport = &mut endpoints[*at];
            report.roles.push(role.as_str());
            continue;
        }
        let client = services.llm(role, &Tape::default())?;
        let report = probe(
            http,
            &client,
            endpoint,
            settings.llm_timeout,
            vec![role.as_str()],
        )
        .await;
        seen.push((endpoint, endpoints.len()));
        endpoints.push(report);
    }
    Ok(endpoints)
}

async fn probe_search(services: &Services) -> SearchReport {
    let settings = &services.settings;
    let provider = match settings.search.providers.as_slice() {
        [] => "none".to_string(),
        list => list.iter().map(|p| p.name()).collect::<Vec<_>>().join("+"),
    };
    let client = match SearchClient::with_gates(
        services.http.clone(),
        settings,
        &services.gates,
        &services.parsing,
        &Default::default(),
    ) {
        Ok(Some(client)) => client,
        Ok(None) => {
            return SearchReport {
                provider,
                ok: true,
                hits: None,
                latency_ms: None,
                error: None,
                mcp: None,
            };
        }
        Err(e) => {
            return SearchReport {
                provider,
                ok: false,
                hits: None,
                latency_ms: None,
                error: Some(e.to_string()),
                mcp: None,
            };
        }
    };
    #[cfg(feature = "mcp")]
    let mcp = match client.mcp() {
        Some(mcp) => Some(probe_mcp(&mcp).await),
        None => None,
    };
    // Without the feature, provider `mcp` is refused before a client is made.
    #[cfg(not(feature = "mcp"))]
    let mcp: Option<McpReport> = None;
    let started = Instant::now();
    let result = client.search("researchflow doctor", &NoObserver).await;
    let latency = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    SearchReport {
        provider,
        ok: result.is_ok() && mcp.as_ref().is_none_or(|m| m.tool_found),
        hits: result.as_ref().ok().map(Vec::len),
        latency_ms: Some(latency),
        error: result.err().map(|e| e.to_string()),
        mcp,
    }
}

/// The tools of the MCP search server, and whether the configured one is among them.
#[cfg(feature = "mcp")]
async fn probe_mcp(mcp: &McpSearch) -> McpReport {
    let listed = mcp.tools(&NoObserver).await;
    McpReport {
        server: mcp.server().to_string(),
        tool: mcp.tool().to_string(),
        tool_found: listed
            .as_ref()
            .is_ok_and(|tools| tools.iter().any(|t| t == mcp.tool())),
        error: listed.as_ref().err().map(ToString::to_string),
        tools: listed.ok(),
    }
}

/// The report as an aligned table, one row per endpoint, then the search provider and the
/// verdict.
fn table(report: &Report) -> String {
    let yes_no = |v: Option<bool>| match v {
        Some(true) => "yes",
        Some(false) => "NO",
        None => "-",
    };
    let mut rows = vec![
        [
            "roles",
            "endpoint",
            "model",
            "reached",
            "key",
            "listed",
            "structured",
            "token limit",
            "latency",
        ]
        .map(String::from),
    ];
    for e in &report.endpoints {
        rows.push([
            e.roles.join(","),
            e.base_url.clone(),
            e.model.clone(),
            yes_no(Some(e.reachable)).into(),
            yes_no(e.key_accepted).into(),
            yes_no(e.model_listed).into(),
            e.structured_output.unwrap_or("-").into(),
            e.token_limit.unwrap_or("-").into(),
            e.latency_ms.map_or("-".into(), |ms| format!("{ms} ms")),
        ]);
    }
    let widths: Vec<usize> = (0..9)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    for e in &report.endpoints {
        for note in &e.notes {
            out.push_str(&format!("note ({}): {note}\n", e.roles.join(",")));
        }
        if let Some(err) = &e.error {
            out.push_str(&format!("error ({}): {err}\n", e.roles.join(",")));
        }
    }
    if let Some(s) = &report.search {
        out.push_str(&match (&s.error, s.hits) {
            (Some(err), _) => format!("search `{}`: error: {err}\n", s.provider),
            (None, Some(hits)) => format!(
                "search `{}`: {hits} hit(s) in {} ms\n",
                s.provider,
                s.latency_ms.unwrap_or(0)
            ),
            (None, None) => format!("search `{}`: no web search (LLM only)\n", s.provider),
        });
        if let Some(m) = &s.mcp {
            out.push_str(&mcp_lines(m));
        }
    }
    out.push_str(if report.ok {
        "everything works\n"
    } else {
        "something does not work: see above\n"
    });
    out
}

/// The MCP search server's tools, as lines of the table's text.
fn mcp_lines(m: &McpReport) -> String {
    match &m.tools {
        Some(tools) => format!(
            "mcp server `{}`: tools: {}\nmcp tool `{}`: {}\n",
            m.server,
            if tools.is_empty() {
                "none".to_string()
            } else {
                tools.join(", ")
            },
            m.tool,
            if m.tool_found {
                "listed"
            } else {
                "NOT listed: set `search.tool` to one of the tools above"
            }
        ),
        None => format!(
            "mcp server `{}`: cannot list its tools: {}\n",
            m.server,
            m.error.as_deref().unwrap_or("unknown error")
        ),
    }
}
