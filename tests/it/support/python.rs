//! The official MCP Python SDK (`mcp` on PyPI) that `scripts/setup/mcp-python.sh` installs,
//! both major versions, each in a virtualenv under the target folder; and the test's Python
//! scripts in `tests/mcp/`. A missing virtualenv fails the test with the command that
//! installs it: no MCP test is ever skipped.

use std::path::{Path, PathBuf};

use super::bin::{Cmd, program};

/// A major version of the Python SDK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sdk {
    /// 1.x: `ClientSession`, `FastMCP`, the initialize handshake.
    One,
    /// 2.x: `Client`, `MCPServer`, the 2026-07-28 protocol where both ends speak it.
    Two,
}

impl Sdk {
    /// Its virtualenv, as `scripts/setup/mcp-python.sh` names it.
    pub fn venv(self) -> PathBuf {
        let name = match self {
            Sdk::One => "sdk1",
            Sdk::Two => "sdk2",
        };
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target/mcp-venv")
            .join(name)
    }

    /// The virtualenv's Python.
    pub fn python(self) -> PathBuf {
        let python = self.venv().join("bin/python");
        assert!(
            python.exists(),
            "`{}` is missing: run `bash scripts/setup/mcp-python.sh` (scripts/test.sh runs it)",
            python.display()
        );
        python
    }

    /// `python tests/mcp/<script>` with the SDK's Python, isolated like every run.
    pub fn script(self, script: &str) -> Cmd {
        program(self.python()).arg(script_path(script))
    }
}

/// A script of `tests/mcp/`.
pub fn script_path(script: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(script)
}
