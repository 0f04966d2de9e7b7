#!/usr/bin/env bash
# Times `researchflow validate steps` on a generated plan (default 10,000 steps) in a release
# build. Not part of the test suite. Usage: scripts/bench-validate.sh [STEPS] [RUNS]
set -euo pipefail

steps="${1:-10000}"
runs="${2:-5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cargo build --release --quiet --bin researchflow --example gen_steps
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

"$target_dir/release/examples/gen_steps" "$steps" "$work"
printf 'plan: %s steps, %s bytes\n' "$steps" "$(wc -c <"$work/steps.json")"

best=""
for i in $(seq 1 "$runs"); do
  start=$(date +%s%N)
  set +e
  "$target_dir/release/researchflow" validate steps "$work/steps.json" --atoms "$work/atoms.json" >"$work/out.json"
  code=$?
  set -e
  end=$(date +%s%N)
  ms=$(( (end - start) / 1000000 ))
  printf 'run %d: %d ms (exit %d)\n' "$i" "$ms" "$code"
  if [ "$code" -ne 0 ]; then
    echo "validation failed unexpectedly:" >&2
    head -c 2000 "$work/out.json" >&2
    exit 1
  fi
  if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
done
printf 'best of %d: %d ms (target: under 1000 ms)\n' "$runs" "$best"
[ "$best" -lt 1000 ] || { echo "slower than the 1 s target" >&2; exit 1; }
