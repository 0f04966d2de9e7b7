#!/usr/bin/env bash
# What a developer waits for after an edit: the test binaries rebuilt once `src/lib.rs` changes
# (`cargo test --locked --all-features --no-run`, every dependency already built: a first,
# untimed build warms the cache), then the run of the whole suite (`cargo test --locked
# --all-features`). Prints for each the wall time, the CPU time (user + system: steadier than
# the wall time on a shared machine), the cores and the load average when it ended, plus the
# number of test binaries built and of tests passed. Uses the usual target folder
# (CARGO_TARGET_DIR or target/); extra arguments go to both cargo commands.
#
#   scripts/bench-tests.sh
#   CARGO_TARGET_DIR=/tmp/warm scripts/bench-tests.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-tests.XXXXXX")
trap 'rm -rf "$work"' EXIT
TIMEFORMAT='%R %U %S'

# `timed NAME COMMAND...`: runs the command, its stderr to `$work/NAME.log`, its stdout to
# `$work/NAME.out`, and its wall, user and system seconds to `$work/NAME.time`. A failure
# shows the end of both and is returned, so the figures can still be printed.
timed() {
  local name=$1
  shift
  if ! { time "$@" >"$work/$name.out" 2>"$work/$name.log"; } 2>"$work/$name.time"; then
    tail -n 30 "$work/$name.out" "$work/$name.log" >&2
    echo "bench-tests: \`$*\` failed (output above)" >&2
    return 1
  fi
}

# `report NAME WHAT DETAIL`: one line of figures for the last `timed` of that name, with the
# load averages (1, 5 and 15 minutes) when it ended.
report() {
  local name=$1 what=$2 detail=$3 wall user sys load
  read -r wall user sys <"$work/$name.time"
  load=$(uptime | sed 's/.*load average: //')
  awk -v what="$what" -v w="$wall" -v u="$user" -v s="$sys" -v d="$detail" -v n="$(nproc)" \
    -v l="$load" 'BEGIN {
    printf "%s: %.0f s wall, %.0f s CPU (user %.0f + system %.0f), %s, %d cores, load %s\n",
      what, w, u + s, u, s, d, n, l
  }'
}

cargo fetch --locked --quiet
cargo test --locked --all-features --no-run "$@" 2>"$work/warm.log" || {
  tail -n 30 "$work/warm.log" >&2
  echo "bench-tests: the warm-up build failed (log above)" >&2
  exit 1
}
touch src/lib.rs
timed build cargo test --locked --all-features --no-run "$@" || exit 1
binaries=$(grep -c '^ *Executable ' "$work/build.log" || true)
report build "test build after touching src/lib.rs" "$binaries test binaries"
status=0
timed run cargo test --locked --all-features "$@" || status=$?
# `test result: ok. 12 passed; 0 failed; ...`, one line a test binary (and the doctests).
counts=$({ grep -o 'test result: [A-Za-z]*\. [0-9]* passed; [0-9]* failed' "$work/run.out" || true; } \
  | awk '{ p += $4; f += $6 } END { printf "%d tests passed, %d failed", p, f }')
report run "test run" "$counts"
exit "$status"
