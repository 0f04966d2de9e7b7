//! `researchflow mcp`: serves researchflow over the Model Context Protocol, on stdio or (with
//! `--http ADDR`) streamable HTTP at `/mcp`. The roots, the config, the run flags and the HTTP
//! flags (the address, the bearer token an address that is not loopback needs, the allowed
//! origins) are checked before the first message: a root that is not a folder, a config that
//! does not read, or a flag that is wrong ends the command (exit 2) before any client is
//! served. No model configured is no error here: only a call that researches with one needs
//! it, and it says so. Exit 0 when the client goes or a signal stops the server (each run
//! still in flight saved first, `interrupted`).

use std::net::SocketAddr;
use std::time::Duration;

use crate::cli::{GlobalArgs, McpArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::mcp::mask::Mask;
use crate::mcp::serve::{self, HttpOptions};
use crate::mcp::token::{BearerToken, TOKEN_ENV};
use crate::mcp::{ResearchServer, Roots, Setup};
use crate::planner::LogOptions;
use crate::run::shutdown;
use crate::session::Session;
use crate::settings::{RunSettings, Settings, SettingsError};

pub async fn run(args: McpArgs, global: &GlobalArgs) -> CommandResult {
    let http = match &args.http {
        Some(raw) => Some(http_options(raw, &args)?),
        None => None,
    };
    let roots = Roots::new(&args.roots).map_err(|e| CommandError::usage(anyhow::anyhow!(e)))?;
    let config = global.config.as_deref();
    match RunSettings::resolve(config, &args.run, None) {
        Ok(_) => {}
        Err(SettingsError::NoLlm { .. }) => tracing::warn!(
            "no model is configured: `research` works only with `offline: true` and a `corpus`"
        ),
        Err(e) => return Err(CommandError::usage(e)),
    }
    let settings = Settings::load(config).map_err(CommandError::usage)?;
    let token = http.as_ref().and_then(|h| h.token.as_ref());
    let mask = Mask::known(&settings, token.map(BearerToken::key));
    let server = ResearchServer::new(Setup {
        roots,
        config: global.config.clone(),
        defaults: args.run,
        base: Session::models_only(settings)?,
        // The planner's input and output are debug output, as in a workflow.
        log: LogOptions {
            echo: global.verbose > 0,
            full: false,
            show_instructions: false,
        },
        mask,
    });
    let served = match http {
        Some(options) => serve::http(server, options, shutdown::on_signal()).await,
        None => serve::stdio(server, shutdown::on_signal()).await,
    };
    served.map_err(|e| CommandError::failure(anyhow::anyhow!(e)))?;
    Ok(ExitStatus::Success)
}

/// The HTTP flags checked: the address, the bearer token (required off loopback), the
/// origins allowed (loopback ones too when serving on loopback).
fn http_options(raw: &str, args: &McpArgs) -> Result<HttpOptions, CommandError> {
    let usage = |msg: String| CommandError::usage(anyhow::anyhow!(msg));
    let addr = listen_address(raw, args.allow_remote)?;
    let token = BearerToken::load(args.token_file.as_deref()).map_err(usage)?;
    let loopback = addr.ip().is_loopback();
    if token.is_none() && !loopback {
        return Err(usage(format!(
            "`--http {raw} --allow-remote` serves whoever reaches that address: give the bearer token every request must carry, with `--token-file FILE` or `{TOKEN_ENV}`"
        )));
    }
    let mut origins = args
        .allow_origins
        .iter()
        .map(|o| allowed_origin(o).map_err(usage))
        .collect::<Result<Vec<String>, CommandError>>()?;
    if loopback {
        origins.extend(LOOPBACK_ORIGINS.iter().map(ToString::to_string));
    }
    Ok(HttpOptions {
        addr,
        token,
        origins,
        max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
        session_idle: Duration::from_secs(args.session_idle),
    })
}

/// The origins of pages on this machine, served when the server is on loopback.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "https://localhost:*",
    "http://127.0.0.1:*",
    "https://127.0.0.1:*",
    "http://[::1]:*",
    "https://[::1]:*",
];

/// `--allow-origin ORIGIN` checked and written with its port: `scheme://host:port`, `:*` for
/// any port, the scheme's default port when none is given (as a browser's `Origin` leaves it
/// out), or `null`.
fn allowed_origin(raw: &str) -> Result<String, String> {
    let bad = || {
        format!(
            "`--allow-origin {raw}` is not an origin: give a scheme, a host and a port, e.g. `https://app.example` or `http://localhost:*`"
        )
    };
    let trimmed = raw.trim().trim_end_matches('/');
    if trimmed == "null" {
        return Ok(trimmed.to_string());
    }
    let (scheme, authority) = trimmed.split_once("://").ok_or_else(bad)?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "http" => "80",
        "https" => "443",
        _ => return Err(bad()),
    };
    let host_end = if authority.starts_with('[') {
        authority.find(']').map(|i| i + 1).ok_or_else(bad)?
    } else {
        authority.find(':').unwrap_or(authority.len())
    };
    let (host, port) = authority.split_at(host_end);
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-.[]:".contains(c));
    let port = match port.strip_prefix(':') {
        None if port.is_empty() => default_port,
        Some(p) if p == "*" || (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) => p,
        _ => return Err(bad()),
    };
    if !host_ok {
        return Err(bad());
    }
    Ok(format!("{}://{host}:{port}", scheme.to_ascii_lowercase()))
}

/// `--http ADDR` as a socket address: `IP:PORT`, or a port alone (`PORT`, `:PORT`,
/// `localhost:PORT`), which is loopback, `127.0.0.1:PORT`; an address that is not loopback
/// needs `--allow-remote`.
fn listen_address(raw: &str, allow_remote: bool) -> Result<SocketAddr, CommandError> {
    let usage = |msg: String| CommandError::usage(anyhow::anyhow!(msg));
    let trimmed = raw.trim();
    let port = trimmed
        .strip_prefix("localhost:")
        .or_else(|| trimmed.strip_prefix(':'))
        .or_else(|| {
            trimmed
                .bytes()
                .all(|b| b.is_ascii_digit())
                .then_some(trimmed)
        });
    let addr: SocketAddr = match port {
        Some(port) => format!("127.0.0.1:{port}").parse(),
        None => trimmed.parse(),
    }
    .map_err(|e| {
        usage(format!(
            "`--http {raw}` is not an address: {e}: give IP:PORT, e.g. `127.0.0.1:8765`, or a port alone for loopback"
        ))
    })?;
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(usage(format!(
            "`--http {raw}` is not a loopback address: whoever reaches it could run research with your keys and read the runs under the roots; serve on `127.0.0.1`, or pass `--allow-remote` with a bearer token (`--token-file FILE` or `{TOKEN_ENV}`) to serve there"
        )));
    }
    Ok(addr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_alone_is_loopback_and_other_addresses_need_allow_remote() {
        let at = |raw: &str, remote: bool| listen_address(raw, remote).map(|a| a.to_string());
        for raw in ["8765", ":8765", "localhost:8765", "127.0.0.1:8765"] {
            assert_eq!(
                at(raw, false).ok().as_deref(),
                Some("127.0.0.1:8765"),
                "{raw}"
            );
        }
        assert_eq!(at("[::1]:0", false).ok().as_deref(), Some("[::1]:0"));
        let refused = listen_address("0.0.0.0:8765", false).expect_err("not loopback");
        assert!(refused.to_string().contains("--allow-remote"), "{refused}");
        assert_eq!(
            at("0.0.0.0:8765", true).ok().as_deref(),
            Some("0.0.0.0:8765")
        );
        assert!(listen_address("somewhere", false).is_err());
        assert!(listen_address("99999", false).is_err());
    }

    #[test]
    fn an_allowed_origin_is_written_with_its_port() {
        let ok = |raw: &str| allowed_origin(raw).ok();
        assert_eq!(
            ok("https://app.example").as_deref(),
            Some("https://app.example:443")
        );
        assert_eq!(
            ok("http://app.example/").as_deref(),
            Some("http://app.example:80")
        );
        assert_eq!(
            ok("HTTP://localhost:*").as_deref(),
            Some("http://localhost:*")
        );
        assert_eq!(
            ok("http://[::1]:8080").as_deref(),
            Some("http://[::1]:8080")
        );
        assert_eq!(ok("null").as_deref(), Some("null"));
        for bad in [
            "app.example",
            "ftp://x",
            "https://",
            "https://x/path",
            "https://x:8a",
            "https://u@x",
        ] {
            let err = allowed_origin(bad).expect_err(bad);
            assert!(err.contains("--allow-origin"), "{err}");
        }
    }
}
