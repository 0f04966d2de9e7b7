#!/usr/bin/env bash
# Fuzzes the four parsers that read untrusted text (the plan loader, the ref parser, the info
# block parser and the planner-answer extraction) on stable Rust: a release build of
# examples/fuzz_parsers/ generates at least 1,000,000 inputs per parser (random bytes, token
# soup, mutations of valid seeds, valid inputs with a known parse), runs each under
# catch_unwind and checks the invariants of tests/it/parser_props.rs. Not part of the test suite.
#
# Usage: scripts/fuzz.sh [--seconds S] [--count N] [--seed N] [--only PARSER] [--slow-ms MS]
#   Each parser runs for --count inputs (default 1,000,000) and --seconds (default 60),
#   whichever comes last; an explicit --seconds is also a hard limit (a short run).
#   A panic, a broken invariant or an input slower than --slow-ms (default 2000) is written to
#   <target>/fuzz-findings/<parser>-<n>.txt and the script exits 1. The seed is fixed unless
#   given, so findings reproduce; `--replay FILE --only PARSER` checks one saved input again.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cargo build --release --quiet --example fuzz_parsers
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
findings="$target_dir/fuzz-findings"
# A new run starts with no findings; a replay reads one of them.
replay=0
case " $* " in
  *" --replay "*) replay=1 ;;
  *) rm -rf "$findings" ;;
esac

set +e
"$target_dir/release/examples/fuzz_parsers" --findings "$findings" "$@"
code=$?
set -e
if [ "$code" -eq 0 ]; then
  [ "$replay" -eq 1 ] || echo "no findings"
elif [ "$code" -eq 1 ]; then
  echo "findings: $(ls "$findings" 2>/dev/null | wc -l) file(s) in $findings" >&2
elif [ "$code" -gt 128 ]; then
  # A stack overflow or an abort ends the process: catch_unwind cannot save the input.
  echo "the fuzzer died by signal $((code - 128)); rerun with the same --seed and --only PARSER to find it" >&2
fi
exit "$code"
