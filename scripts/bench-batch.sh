#!/usr/bin/env bash
# Benchmark of `researchflow batch` against a stand-in server with fixed latency
# (scripts/bench/mock_llm.py). Not a test: it prints figures.
#
#  (a) wall time of 40 questions at 8 jobs against the ideal critical path (target: within 10%);
#  (b) goodput under a server limit of R requests per second, without and with `limits`
#      (target: at least 90% of R, no failed question, at most 10% of requests refused);
#  (c) peak memory of 1,000 questions at 250 jobs (target: under 300 MB).
#
# Each question makes 4 calls one after another (planner, search analysis, planner, final),
# so its critical path is 4 x LATENCY.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --quiet --bin researchflow
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/researchflow"
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench.XXXXXX")"
mock_pid=""
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; rm -rf "$work"' EXIT
ulimit -n 8192 2>/dev/null || true

start_mock() { # LATENCY RATE [LIMITS_JSON]
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  python3 scripts/bench/mock_llm.py "$1" "$2" > "$work/mock.url" &
  mock_pid=$!
  for _ in $(seq 1 50); do [ -s "$work/mock.url" ] && break; sleep 0.1; done
  url="$(head -n 1 "$work/mock.url")"
  touch "$work/agent.config.json" && chmod 600 "$work/agent.config.json"
  cat > "$work/agent.config.json" <<JSON
{"baseURL": "$url", "model": "bench-model", "apiKey": "bench",
 "retry": {"maxRetries": 3, "baseDelayMs": 200, "maxDelayMs": 2000},
 "limits": ${3:-"{}"},
 "search": {"provider": "none"}}
JSON
}

questions() { # N FILE
  : > "$2"; for i in $(seq 1 "$1"); do echo "Benchmark question number $i?" >> "$2"; done
}

run_batch() { # NAME N JOBS -> prints seconds; leaves manifest
  questions "$2" "$work/$1.txt"
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$work" && /usr/bin/time -v "$bin" -q --config agent.config.json batch "$1.txt" --out-dir "$1" --jobs "$3" > "$1.out" 2> "$1.err") || true
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.2f}')"
}

counts() { python3 -c "import json; print(json.load(open('$work/$1.out'))['counts'])"; }
peak_mb() { awk '/Maximum resident set size/ {printf "%.0f", $6/1024}' "$work/$1.err"; }

echo "== (a) 40 questions at 8 jobs, 100 ms per call"
start_mock 0.1 0
secs=$(run_batch a 40 8)
ideal=$(python3 -c "print(f'{5 * 4 * 0.1:.2f}')")
echo "wall time ${secs} s; ideal critical path ${ideal} s (5 waves x 4 calls x 0.1 s); ratio $(python3 -c "print(f'{$secs / $ideal:.2f}')"); $(counts a)"

goodput() { # NAME LIMITS_JSON
  start_mock 0.05 10 "$2"
  local secs stats
  secs=$(run_batch "$1" 40 8)
  stats=$(curl -s "${url}/stats" || echo '{}')
  python3 - "$secs" "$stats" <<PY
import json, sys
secs = float(sys.argv[1]); s = json.loads(sys.argv[2] or "{}")
req, ref = s.get("requests", 0), s.get("refused", 0)
ok = req - ref
print(f"wall time {secs:.2f} s; {ok} calls admitted = {ok / secs:.1f}/s of 10/s ({ok / secs / 10:.0%}); "
      f"{ref} of {req} requests refused ({(ref / req if req else 0):.0%})")
PY
  echo "questions: $(counts "$1")"
}

echo "== (b) goodput: server admits 10 requests/s, 40 questions at 8 jobs, 50 ms per call"
echo "-- without limits (the rate is learnt from the server's 429s)"
goodput b '{}'
echo "-- with limits.requestsPerMinute 600"
goodput b2 '{"requestsPerMinute": 600}'

echo "== (c) 1,000 questions at 250 jobs, 100 ms per call"
start_mock 0.1 0
secs=$(run_batch c 1000 250)
echo "wall time ${secs} s; peak memory $(peak_mb c) MB; $(counts c)"
