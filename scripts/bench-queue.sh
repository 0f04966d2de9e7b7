#!/usr/bin/env bash
# Benchmark of batches on PostgreSQL: `researchflow worker` processes against a stand-in server
# (scripts/bench/mock_llm.py), with a PostgreSQL started here on loopback in a temporary
# folder (scripts/setup/postgres.sh installs it). Not a test: it prints figures.
#
#  (a) throughput of 1, 2 and 4 workers, fixed latency, no limit, each worker bounded by its
#      own --jobs (target: 4 workers at least 3.5 times one);
#  (b) goodput of 1, 2 and 4 workers against a server admitting R requests a second, the rate
#      learnt from its 429s and shared through the database (target: at least 90% of R, at
#      most 10% of requests refused, no failed task).
#
# Each question makes 4 calls one after another (planner, search analysis, planner, final).
# Times are the database's: from the first question taken to the last one ended.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup/postgres.sh
cargo build --release --quiet --bin researchflow
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/researchflow"
pgbin="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
[ -n "$pgbin" ] || pgbin="$(dirname "$(command -v initdb)")"
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-queue.XXXXXX")"
as_pg=()
if [ "$(id -u)" = 0 ]; then chown postgres "$work"; as_pg=(runuser -u postgres --); fi
mock_pid=""
cleanup() {
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
  "${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -m immediate stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

password="bench-$RANDOM$RANDOM"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
echo "$password" > "$work/pw" && chmod 644 "$work/pw"
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U rf --pwfile="$work/pw" --auth-host=scram-sha-256 \
  --auth-local=trust -E UTF8 --no-sync >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c max_connections=300" start >/dev/null
psql() { "$pgbin/psql" -h "$work" -p "$port" -U rf -qtAX "$@"; }

fresh_db() { # -> URL of a new, migrated database (called in a subshell: the count is a file)
  local n=$(( $(cat "$work/n" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$work/n"
  "${as_pg[@]}" "$pgbin/createdb" -h "$work" -p "$port" -U rf "b$n"
  local url="postgres://rf:$password@127.0.0.1:$port/b$n"
  "$bin" -q queue migrate --queue "$url" >/dev/null
  echo "$url"
}

start_mock() { # LATENCY RATE
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  python3 scripts/bench/mock_llm.py "$1" "$2" > "$work/mock.url" &
  mock_pid=$!
  for _ in $(seq 1 50); do [ -s "$work/mock.url" ] && break; sleep 0.1; done
  mock="$(head -n 1 "$work/mock.url")"
  cat > "$work/agent.config.json" <<JSON
{"baseURL": "$mock", "model": "bench-model", "apiKey": "bench",
 "retry": {"maxRetries": 3, "baseDelayMs": 200, "maxDelayMs": 2000},
 "search": {"provider": "none"}, "review": {"enabled": false}}
JSON
  chmod 600 "$work/agent.config.json"
}

run_workers() { # URL WORKERS JOBS QUESTIONS -> prints "seconds completed failed_tasks"
  local url=$1 workers=$2 jobs=$3 questions=$4
  : > "$work/q.txt"
  for i in $(seq 1 "$questions"); do echo "Benchmark question number $i?" >> "$work/q.txt"; done
  (cd "$work" && "$bin" -q batch q.txt --queue "$url" --batch bench >/dev/null)
  local pids=()
  for _ in $(seq 1 "$workers"); do
    (cd "$work" && exec "$bin" -q worker --queue "$url" --batch bench --drain --jobs "$jobs" \
      --concurrency 1 >/dev/null 2>>"$work/workers.err") &
    pids+=($!)
  done
  wait "${pids[@]}"
  local db="${url##*/}"
  local secs completed
  secs=$(psql -d "$db" -c "SELECT round(extract(epoch FROM max(updated_at) - min(started_at))::numeric, 2) FROM researchflow.questions WHERE batch = 'bench'")
  completed=$(psql -d "$db" -c "SELECT count(*) FROM researchflow.questions WHERE batch = 'bench' AND status = 'completed'")
  rm -rf "$work/export"
  "$bin" -q batch export --queue "$url" --batch bench --out-dir "$work/export" >/dev/null
  local failed
  failed=$(cat "$work"/export/*.events.ndjson | grep -c '"event":"task_failed"' || true)
  echo "$secs $completed $failed"
}

export PGPASSWORD="$password"
jobs=4
echo "== (a) throughput: 200 ms per call, no limit, --jobs $jobs --concurrency 1 per worker"
start_mock 0.2 0
declare -A rate
for w in 1 2 4; do
  questions=$((24 * w))
  read -r secs completed failed < <(run_workers "$(fresh_db)" "$w" "$jobs" "$questions")
  rate[$w]=$(python3 -c "print(f'{$completed / $secs:.2f}')")
  echo "$w worker(s): $completed/$questions questions in $secs s = ${rate[$w]} questions/s; failed tasks: $failed"
done
python3 -c "print(f'speed-up: 2 workers {${rate[2]} / ${rate[1]}:.2f}x, 4 workers {${rate[4]} / ${rate[1]}:.2f}x one (target 3.5x)')"

R=10
echo "== (b) goodput: the server admits $R requests/s, 50 ms per call, --jobs $jobs per worker"
for w in 1 2 4; do
  start_mock 0.05 "$R"
  read -r secs completed failed < <(run_workers "$(fresh_db)" "$w" "$jobs" 30)
  stats=$(curl -s "${mock%/v1}/v1/stats" || echo '{}')
  python3 - "$w" "$secs" "$completed" "$failed" "$stats" "$R" <<'PY'
import json, sys
w, secs, completed, failed, stats, r = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4], json.loads(sys.argv[5] or "{}"), float(sys.argv[6])
req, ref = stats.get("requests", 0), stats.get("refused", 0)
ok = req - ref
print(f"{w} worker(s): {completed}/30 questions in {secs:.2f} s; {ok} calls admitted = {ok / secs:.1f}/s "
      f"of {r:.0f}/s ({ok / secs / r:.0%}); {ref} of {req} requests refused ({(ref / req if req else 0):.0%}); "
      f"failed tasks: {failed}")
PY
done
