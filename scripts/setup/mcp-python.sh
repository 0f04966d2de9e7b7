#!/usr/bin/env bash
# The official MCP Python SDK (`mcp` on PyPI), which the MCP tests drive researchflow with: as a
# client of `researchflow mcp`, and as the server of an MCP search provider. Both major
# versions, each pinned, each in a virtualenv of its own under the target folder, where
# tests/it/support/python.rs finds them: target/mcp-venv/sdk1 (1.x: `ClientSession`, `FastMCP`)
# and target/mcp-venv/sdk2 (2.x: `Client`, `MCPServer`, the 2026-07-28 protocol).
# Idempotent: a venv that already has its pinned version is left as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
install() {
  local dir="target/mcp-venv/$1" version="$2"
  # The pinned version, and what the tests import from it (a half-done install fails this).
  if "$dir/bin/python" -c "import importlib.metadata as m, sys, mcp, mcp.client.streamable_http, uvicorn; sys.exit(m.version('mcp') != '$version')" 2>/dev/null; then
    return 0
  fi
  echo "scripts/setup/mcp-python.sh: installing mcp==$version into $dir" >&2
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  "$dir/bin/python" -m pip install --quiet --disable-pip-version-check "mcp==$version"
}
install sdk1 1.30.0
install sdk2 2.3.0
