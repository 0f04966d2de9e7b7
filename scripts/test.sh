#!/usr/bin/env bash
# The README's test command: installs what the tests need and a fresh machine may lack (each
# `scripts/setup/*.sh`, idempotent, from the package registries only), then runs the whole
# suite with `cargo test --locked` (extra arguments are passed on). `.ci/run` calls exactly
# this. No test is skipped for want of a tool: a setup that fails stops here, naming it.
set -euo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
for setup in scripts/setup/*.sh; do
  if ! bash "$setup"; then
    echo "error: $setup failed: the tests need what it installs" >&2
    exit 1
  fi
done
cargo test --locked "$@"
