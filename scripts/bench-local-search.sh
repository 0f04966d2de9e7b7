#!/usr/bin/env bash
# Benchmarks the local-corpus search engine in a release build: generates a corpus (default
# 10,000 documents of a few KB), builds its index, runs queries (default 1,000), and prints the
# build rate, query latency p50/p99, index size and peak memory. Not part of the test suite.
# Targets on a 2-core machine: build >= 2,000 documents/s, p99 < 10 ms, peak memory < 300 MB.
# Usage: scripts/bench-local-search.sh [DOCS] [QUERIES]
# With RESEARCHFLOW_BENCH_EMBEDDINGS=DIR (a sentence-embedding model folder, for instance
# target/models/all-MiniLM-L6-v2 from scripts/setup/embedding-model.sh), the index embeds every
# chunk and queries rank by words and meaning: the figures are printed and the word-only
# targets are not held against them (embedding runs at about 23-35 chunks a second on 2 cores,
# by chunk length: scripts/bench-embed.sh measures it).
set -euo pipefail

docs="${1:-10000}"
queries="${2:-1000}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

cargo build --release --quiet --example bench_local_search
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

bench="$target_dir/release/examples/bench_local_search"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -v -o "$work/time.txt" "$bench" "$docs" "$queries" "$work" | tee "$work/out.txt"
  kb="$(sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time.txt")"
  printf 'peak memory (/usr/bin/time -v): %d MB\n' "$((kb / 1024))"
else
  "$bench" "$docs" "$queries" "$work" | tee "$work/out.txt"
  kb="$(sed -n 's/^peak memory (VmHWM): \([0-9]*\) MB/\1/p' "$work/out.txt")"
  kb=$((kb * 1024))
fi

rate="$(sed -n 's/^build: .* s, \([0-9]*\) documents\/s.*/\1/p' "$work/out.txt")"
p99="$(sed -n 's/^queries: .* p99 \([0-9.]*\) ms.*/\1/p' "$work/out.txt")"
if [ -n "${RESEARCHFLOW_BENCH_EMBEDDINGS:-}" ]; then
  echo "with embeddings: figures only, no targets"
  exit 0
fi
fail=0
[ "$rate" -ge 2000 ] || { echo "build slower than 2,000 documents/s" >&2; fail=1; }
awk -v p="$p99" 'BEGIN { exit !(p < 10) }' || { echo "query p99 not under 10 ms" >&2; fail=1; }
[ "$kb" -lt $((300 * 1024)) ] || { echo "peak memory not under 300 MB" >&2; fail=1; }
[ "$fail" -eq 0 ] && echo "all targets met"
exit "$fail"
