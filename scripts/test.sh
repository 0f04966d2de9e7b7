#!/usr/bin/env bash
# The README's test command: installs what the tests need and a fresh machine may lack (each
# `scripts/setup/*.sh`, idempotent, from the package registries only), then runs the whole
# suite with `cargo test --locked --all-features` (extra arguments are passed on), then the
# module `lean` of the test binary on the default build. `.ci/run` calls exactly this. No
# test is skipped for want of a tool: a setup that fails stops here, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
for setup in scripts/setup/*.sh; do
  if ! bash "$setup"; then
    echo "error: $setup failed: the tests need what it installs" >&2
    exit 1
  fi
done
# The whole suite on the full build (every optional feature: the queue, MCP), then the
# default build's own checks (tests/it/lean.rs: what a build without them refuses, and how):
# the integration tests are one binary, `it`, whose module `lean` this names.
cargo test --locked --all-features "$@"
cargo test --locked --test it lean::
