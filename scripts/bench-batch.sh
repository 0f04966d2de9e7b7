#!/usr/bin/env bash
# Benchmark of `researchflow batch` against a stand-in server with fixed latency
# (scripts/bench/mock_llm.py). Not a test: it prints figures.
#
#  (a) wall time of 40 questions at 8 jobs against the ideal critical path (target: within 10%);
#  (b) goodput under a server limit of R requests per second (calls admitted / R) and the share
#      of requests refused: a server that announces its budget in OpenAI's headers (target:
#      at least 95% of R, under 3% refused), one that only answers 429 with Retry-After, and
#      with none (target: at least 90% of R), and with `limits.requestsPerMinute` at R;
#      no failed question;
#  (c) peak memory of 1,000 questions at 250 jobs (target: under 300 MB);
#  (d) the batch's own cost against a latency-free mock, at 300, 1,000 and 3,000 questions
#      (32 jobs, `--no-review`: the 4 calls below): CPU ms per question (user + sys of
#      `/usr/bin/time -v`; target: 3,000 questions cost at most 1.1x what 300 do, per
#      question) and bytes written per question ("File system outputs" of `/usr/bin/time -v`,
#      the 512-byte blocks the process dirtied: every file of the batch, plans, reports and
#      events included, each rewrite counted whole; 0 on tmpfs, which has no blocks);
#  (e) the batch's wall time against a plain client making the same calls
#      (scripts/bench/plain_client.py: 4 calls one after another per question, as many at
#      once) at 32 and 128 jobs, 300 ms per call, 8 questions per job, `--no-review`
#      (target: at most 1.1);
#  (f) peak memory of a long queue: 10,000 questions in one process at 32 jobs against a
#      latency-free mock, `--no-review` (target: under 100 MB; a queued question holds only
#      what makes its run, not the run's future).
#
# Each question makes 4 calls one after another (planner, search analysis, planner, final),
# so its critical path is 4 x LATENCY; with the review (on unless `--no-review`) it asks the
# review and the second opinion too, each twice (the mock does not answer their contract).
#
# BIN=path/to/researchflow benchmarks that binary instead of building this tree's (to hold
# two builds against each other); ONLY="d e" runs only those sections; REPEAT=3 runs (d) and
# (e) three times and keeps the least (on a busy machine, other work only adds to a figure).
# On a machine whose disk is busy with other work, its fsyncs swamp the CPU figures (sys
# time); TMPDIR=/dev/shm runs the batches on tmpfs, which leaves the CPU the batch itself
# spends (the bytes written then read 0: take them from a run on disk).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ -n "${BIN:-}" ]; then
  bin="$BIN"
else
  cargo build --release --quiet --bin researchflow
  bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/researchflow"
fi
only="${ONLY:-a b c d e f}"
repeat="${REPEAT:-1}"
section() { [[ " $only " == *" $1 "* ]]; }
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench.XXXXXX")"
mock_pid=""
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; rm -rf "$work"' EXIT
ulimit -n 8192 2>/dev/null || true

start_mock() { # LATENCY RATE [LIMITS_JSON] [MODE]
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  rm -f "$work/mock.url" # else the wait below may read the last mock's address
  python3 scripts/bench/mock_llm.py "$1" "$2" ${4:-} > "$work/mock.url" &
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

run_batch() { # NAME N JOBS [FLAG...] -> prints seconds; leaves manifest
  questions "$2" "$work/$1.txt"
  local t0 t1 name="$1" jobs="$3"
  shift 3
  t0=$(date +%s.%N)
  (cd "$work" && /usr/bin/time -v "$bin" -q --config agent.config.json batch "$name.txt" --out-dir "$name" --jobs "$jobs" "$@" > "$name.out" 2> "$name.err") || true
  t1=$(date +%s.%N)
  python3 -c "print(f'{$t1 - $t0:.2f}')"
}

counts() { python3 -c "import json; print(json.load(open('$work/$1.out'))['counts'])"; }
peak_mb() { awk '/Maximum resident set size/ {printf "%.0f", $6/1024}' "$work/$1.err"; }
# CPU seconds (user + sys) and bytes written, from `/usr/bin/time -v`.
cpu_s() { awk -F': ' '/User time|System time/ {s += $2} END {printf "%.3f", s}' "$work/$1.err"; }
written_bytes() { awk -F': ' '/File system outputs/ {printf "%.0f", $2 * 512}' "$work/$1.err"; }

if section a; then
echo "== (a) 40 questions at 8 jobs, 100 ms per call"
start_mock 0.1 0
secs=$(run_batch a 40 8)
ideal=$(python3 -c "print(f'{5 * 4 * 0.1:.2f}')")
echo "wall time ${secs} s; ideal critical path ${ideal} s (5 waves x 4 calls x 0.1 s); ratio $(python3 -c "print(f'{$secs / $ideal:.2f}')"); $(counts a)"
fi

goodput() { # NAME LIMITS_JSON MODE
  start_mock 0.05 10 "$2" "${3:-}"
  local secs stats
  secs=$(run_batch "$1" 40 8)
  stats=$(curl -s "${url}/stats" || echo '{}')
  python3 - "$secs" "$stats" <<PY
import json, sys
secs = float(sys.argv[1]); s = json.loads(sys.argv[2] or "{}")
req, ref = s.get("requests", 0), s.get("refused", 0)
ok = req - ref
print(f"wall time {secs:.2f} s; {ok} calls admitted = {ok / secs:.1f}/s of 10/s: goodput {ok / secs / 10:.0%}; "
      f"{ref} of {req} requests refused ({(ref / req if req else 0):.1%})")
PY
  echo "questions: $(counts "$1")"
}

if section b; then
echo "== (b) goodput: server admits 10 requests/s, 40 questions at 8 jobs, 50 ms per call, one process"
echo "-- the server announces its budget (x-ratelimit-*; target 95%, under 3% refused)"
goodput b '{}' headers
echo "-- the server only answers 429, with Retry-After (target 90%)"
goodput b2 '{}'
echo "-- the server only answers 429, without Retry-After (target 90%)"
goodput b3 '{}' bare
echo "-- 429 with Retry-After, limits.requestsPerMinute 600"
goodput b4 '{"requestsPerMinute": 600}'
fi

if section c; then
echo "== (c) 1,000 questions at 250 jobs, 100 ms per call"
start_mock 0.1 0
secs=$(run_batch c 1000 250)
echo "wall time ${secs} s; peak memory $(peak_mb c) MB; $(counts c)"
fi

if section d; then
echo "== (d) the batch's own cost: a latency-free mock, 32 jobs (the least of $repeat run(s))"
start_mock 0 0
first=""
for n in 300 1000 3000; do
  best=""
  for r in $(seq 1 "$repeat"); do
    secs=$(run_batch "d$n" "$n" 32 --no-review)
    per=$(python3 -c "print(f'{$(cpu_s "d$n") * 1000 / $n:.2f}')")
    bytes=$(python3 -c "print(f'{$(written_bytes "d$n") / $n / 1024:.1f}')")
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(not $per < $best)"; then
      best="$per" line="wall ${secs} s; CPU ${per} ms per question"
      line_bytes="${bytes} KiB written per question; $(counts "d$n")"
    fi
    rm -rf "${work:?}/d$n"
  done
  [ -z "$first" ] && first="$best"
  echo "$n questions: $line ($(python3 -c "print(f'{$best / $first:.2f}')")x that of 300); $line_bytes"
done
fi

if section e; then
echo "== (e) the batch against a plain client making the same calls, 300 ms per call (the least of $repeat run(s) each)"
for jobs in 32 128; do
  n=$((jobs * 8))
  batch_best="" plain_best=""
  for r in $(seq 1 "$repeat"); do
    start_mock 0.3 0
    secs=$(run_batch "e$jobs" "$n" "$jobs" --no-review)
    calls=$(curl -s -m 10 "${url}/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests"])' || echo '?')
    rm -rf "${work:?}/e$jobs"
    start_mock 0.3 0
    plain=$(python3 scripts/bench/plain_client.py "$url" "$n" "$jobs")
    plain_secs=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['seconds'])" "$plain")
    batch_best=$(python3 -c "print(min(float(x) for x in '$batch_best $secs'.split()))")
    plain_best=$(python3 -c "print(min(float(x) for x in '$plain_best $plain_secs'.split()))")
  done
  echo "$jobs jobs, $n questions: batch ${batch_best} s ($calls calls); plain client ${plain_best} s ($plain); ratio $(python3 -c "print(f'{$batch_best / $plain_best:.2f}')")"
done
fi

if section f; then
echo "== (f) a long queue: 10,000 questions at 32 jobs, a latency-free mock, --no-review"
start_mock 0 0
secs=$(run_batch f 10000 32 --no-review)
echo "wall time ${secs} s; peak memory $(peak_mb f) MB (target: under 100); $(counts f)"
fi
