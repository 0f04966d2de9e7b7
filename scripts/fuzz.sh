#!/usr/bin/env bash
# Fuzzes the parsers that read untrusted input on stable Rust: the four text parsers (the plan
# loader, the ref parser, the info block parser, the planner-answer extraction) and the
# document parsers (HTML pages and corpus HTML, PDF text, Markdown, charset decoding, gzip
# files). A release build of examples/fuzz_parsers/ generates at least 1,000,000 inputs per
# parser (random bytes, token soup, mutations of valid seeds, structure-aware valid inputs:
# deep and self-closed nesting, foreign content, compressed streams and bombs), runs each
# under catch_unwind in a worker process and checks the invariants of tests/it/parser_props.rs
# and of each parser's file in examples/fuzz_parsers/. Not part of the test suite.
#
# Usage: scripts/fuzz.sh [--seconds S] [--count N] [--seed N] [--only PARSER] [--slow-ms MS]
#                        [--hang-ms MS] [--max-mb MB]
#   PARSER: plan, refs, info, extract_json, html, pdf, markdown, charset or gzip.
#   Each parser runs for --count inputs (default 1,000,000) and --seconds (default 60),
#   whichever comes last; an explicit --seconds is also a hard limit (a short run).
#   A finding is a panic, a broken invariant, an input slower than --slow-ms (default 2000),
#   one whose peak memory passes --max-mb (default 512; a counting allocator refuses past it),
#   one still running after --hang-ms (default 2 x --slow-ms), or one that
#   kills its worker (a stack overflow, an abort). Each input is written to
#   <target>/fuzz-findings/current-<parser> before it runs, so even one that kills the process
#   is kept: a finding is saved as <target>/fuzz-findings/<parser>-<n>.txt (n: its number in
#   the parser's stream), why in <parser>.log, and the run goes on with a new worker; the
#   script exits 1. The seed is fixed unless given, so findings reproduce;
#   `--replay FILE --only PARSER` checks one saved input again.
#
# The last runs (default seed, a shared 2-core machine; RELIABILITY.md, "Parsers under
# fuzzing", has the details), inputs and findings per parser:
#   plan 1,000,000, refs 1,475,220, info 1,000,000, extract_json 1,000,000: 0 findings;
#   charset 1,587,691 and gzip 1,000,000: 0 findings;
#   after issue 56's fixes (2026-12-05): html 916,645 in 600 s: 0 (before: 59, a stack
#     overflow among them); markdown 1,000,000: 0 (before: 25,468 glued words); man 2,697,214:
#     0; pdf 838,554 in 600 s: 56 (28 over 512 MB, 28 slow or past 4 s: operators parsed
#     from streams under the 128 MB inflation cap; researchflow reads a PDF in a parser
#     process under documents.memoryMb and documents.timeoutMs; before: 25,949, 25,835 of
#     them words glued across a page break).
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
# An input left in flight means the fuzzer itself died while it ran: name it.
for current in "$findings"/current-*; do
  case "$current" in *.at | *"current-*") continue ;; esac
  if [ -s "$current.at" ] && grep -q ' r$' "$current.at"; then
    echo "the fuzzer died while this input ran: $current (input $(cut -d' ' -f1 "$current.at" | sed 's/^0*//'))" >&2
  fi
done
if [ "$code" -eq 0 ]; then
  [ "$replay" -eq 1 ] || echo "no findings"
elif [ "$code" -eq 1 ]; then
  [ "$replay" -eq 1 ] || echo "findings: $(ls "$findings"/*.txt 2>/dev/null | wc -l) file(s) in $findings (why: $findings/*.log)" >&2
elif [ "$code" -gt 128 ]; then
  # A replayed input that overflows the stack or aborts ends the process, as it ended a worker.
  echo "the fuzzer died by signal $((code - 128))" >&2
fi
exit "$code"
