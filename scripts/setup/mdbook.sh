#!/usr/bin/env bash
# mdBook, which builds the book under docs/ (tests/it/docs.rs runs `mdbook build docs`): the
# pinned version from crates.io, compiled with `cargo install --locked` without its default
# features (no `serve` or `watch`: the tests only build), into target/tools/ (its binary
# target/tools/bin/mdbook), where the tests find it. About three minutes of compiling on 2
# cores, once. Idempotent: nothing happens when that binary is there at the pinned version.
set -euo pipefail
cd "$(dirname "$0")/../.."
version="0.4.52"
bin="target/tools/bin/mdbook"
if [ -x "$bin" ] && [ "$("$bin" --version)" = "mdbook v$version" ]; then
  exit 0
fi
echo "scripts/setup/mdbook.sh: installing mdbook $version into target/tools" >&2
cargo install mdbook --version "$version" --locked --no-default-features --root target/tools
"$bin" --version
