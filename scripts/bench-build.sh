#!/usr/bin/env bash
# What a newcomer waits for: a clean release build, as `cargo install --locked --path .` makes
# it, in a fresh target folder (the sources are fetched first: downloads are not build time).
# Prints the wall time, the CPU time (user + system: steadier than the wall time on a shared
# machine), the number of crates compiled and the cores used. Extra arguments go to cargo
# (`--timings` writes cargo's per-crate report into the printed folder, kept with KEEP=1).
#
#   scripts/bench-build.sh            # the default build
#   KEEP=1 scripts/bench-build.sh --timings
set -euo pipefail
cd "$(dirname "$0")/.."
target=$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-build.XXXXXX")
if [ "${KEEP:-}" != 1 ]; then
  trap 'rm -rf "$target"' EXIT
fi
cargo fetch --locked --quiet
log="$target/build.log"
TIMEFORMAT='%R %U %S'
if ! { time cargo build --release --locked --target-dir "$target" "$@" 2>"$log"; } 2>"$target/time"; then
  tail -n 20 "$log" >&2
  echo "bench-build: the build failed (log above)" >&2
  exit 1
fi
read -r wall user sys <"$target/time"
crates=$(grep -c '^ *Compiling ' "$log" || true)
cores=$(nproc)
awk -v w="$wall" -v u="$user" -v s="$sys" -v c="$crates" -v n="$cores" 'BEGIN {
  printf "clean release build: %.0f s wall, %.0f s CPU (user %.0f + system %.0f), %d crates, %d cores\n", w, u + s, u, s, c, n
}'
if [ "${KEEP:-}" = 1 ]; then
  echo "target folder kept: $target"
fi
