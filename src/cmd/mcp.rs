//! `researchflow mcp`: serves researchflow over the Model Context Protocol, on stdio or (with
//! `--http ADDR`) streamable HTTP at `/mcp`. The roots, the config and the run flags are
//! checked before the first message: a root that is not a folder, a config that does not
//! read, or a flag that is wrong ends the command (exit 2) before any client is served. No
//! model configured is no error here: only a call that researches with one needs it, and it
//! says so. Exit 0 when the client goes or a signal stops the server (each run still in
//! flight saved first, `interrupted`).

use std::net::SocketAddr;
use std::sync::Arc;

use crate::cli::{GlobalArgs, McpArgs};
use crate::exit::{CommandError, CommandResult, ExitStatus};
use crate::kernel::{Services, shutdown};
use crate::mcp::serve;
use crate::mcp::{ResearchServer, Roots, Setup};
use crate::planner::LogOptions;
use crate::settings::{RunSettings, Settings, SettingsError};

pub async fn run(args: McpArgs, global: &GlobalArgs) -> CommandResult {
    let addr = match &args.http {
        Some(raw) => Some(listen_address(raw, args.allow_remote)?),
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
    let server = ResearchServer::new(Setup {
        roots,
        config: global.config.clone(),
        defaults: args.run,
        base: Arc::new(Services::bare(settings)?),
        // The planner's input and output are debug output, as in a workflow.
        log: LogOptions {
            echo: global.verbose > 0,
            full: false,
            show_instructions: false,
        },
    });
    let served = match addr {
        Some(addr) => serve::http(server, addr, shutdown::on_signal()).await,
        None => serve::stdio(server, shutdown::on_signal()).await,
    };
    served.map_err(|e| CommandError::failure(anyhow::anyhow!(e)))?;
    Ok(ExitStatus::Success)
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
            "`--http {raw}` is not a loopback address: there is no authentication, so whoever reaches it could run research with your keys and read the runs under the roots; serve on `127.0.0.1`, or pass `--allow-remote` to serve there anyway"
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
}
