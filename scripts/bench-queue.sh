#!/usr/bin/env bash
# Benchmark of batches on PostgreSQL: `researchflow worker` processes against a stand-in server
# (scripts/bench/mock_llm.py), with a PostgreSQL started here on loopback in a temporary
# folder (scripts/setup/postgres.sh installs it). Not a test: it prints figures.
#
#  (a) throughput of 1, 2 and 4 workers of 32 jobs each, 1,000 questions, 300 ms a call, no
#      limit, beside a local `batch` at the same total concurrency (32, 64, 128 jobs); and the
#      database's transactions per question. Targets: 4 workers at least 3.6 times one, and
#      queue/local at least 0.9 at every count. Each line also prints how busy the machine's
#      CPUs were (on 2 cores, 4 workers with PostgreSQL and the mock keep them 80% busy: the
#      ratio is then the machine's, not the design's);
#  (b) goodput (calls admitted / R) of 1 and 4 workers of 32 jobs against a server admitting R
#      requests a second, and the share of requests refused: a server that announces its
#      budget in OpenAI's headers (targets: at least 95% of R, under 3% refused), one that
#      only answers 429 with Retry-After, and without (target: at least 90% of R); with
#      `limits.requestsPerMinute` at R, which the workers divide among them. No failed task.
#      Each on a new queue.
#
# Each question makes 4 calls one after another (planner, search analysis, planner, final).
# Times are wall times, from the first worker's start to the last one's exit (for a local
# batch: the process's). BIN=path runs another build of researchflow (to compare two).
# QUESTIONS=N and WORKERS="1 2 4" change the sizes of (a); PARTS="b" runs one part. Each (a) line
# also prints the CPU seconds of the workers (user + sys, `/usr/bin/time`) and of PostgreSQL's
# backends, and the database's WAL per question; PROFILE=1 adds the statements that took the
# database the longest (pg_stat_statements).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/setup/postgres.sh
if [ -z "${BIN:-}" ]; then
  cargo build --release --quiet --all-features --bin researchflow
  BIN="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/researchflow"
fi
bin="$BIN"
ulimit -n 8192 2>/dev/null || true
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

pg_stats=""
[ -n "${PROFILE:-}" ] && pg_stats="-c shared_preload_libraries=pg_stat_statements"
password="bench-$RANDOM$RANDOM"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')"
echo "$password" > "$work/pw" && chmod 644 "$work/pw"
"${as_pg[@]}" "$pgbin/initdb" -D "$work/pg" -U rf --pwfile="$work/pw" --auth-host=scram-sha-256 \
  --auth-local=trust -E UTF8 --no-sync >/dev/null
"${as_pg[@]}" "$pgbin/pg_ctl" -D "$work/pg" -l "$work/pg.log" -w \
  -o "-p $port -k $work -c listen_addresses=127.0.0.1 -c max_connections=300 $pg_stats" start >/dev/null
psql() { "$pgbin/psql" -h "$work" -p "$port" -U rf -qtAX "$@"; }

fresh_db() { # -> URL of a new, migrated database (called in a subshell: the count is a file)
  local n=$(( $(cat "$work/n" 2>/dev/null || echo 0) + 1 ))
  echo "$n" > "$work/n"
  "${as_pg[@]}" "$pgbin/createdb" -h "$work" -p "$port" -U rf "b$n"
  local url="postgres://rf:$password@127.0.0.1:$port/b$n"
  "$bin" -q queue migrate --queue "$url" >/dev/null
  [ -z "${PROFILE:-}" ] || psql -d "b$n" -c "CREATE EXTENSION pg_stat_statements" >/dev/null
  echo "$url"
}

start_mock() { # LATENCY RATE [MODE] [LIMITS_JSON]
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null && wait "$mock_pid" 2>/dev/null || true
  rm -f "$work/mock.url"
  python3 scripts/bench/mock_llm.py "$1" "$2" ${3:-} > "$work/mock.url" &
  mock_pid=$!
  for _ in $(seq 1 50); do [ -s "$work/mock.url" ] && break; sleep 0.1; done
  mock="$(head -n 1 "$work/mock.url")"
  cat > "$work/agent.config.json" <<JSON
{"baseURL": "$mock", "model": "bench-model", "apiKey": "bench",
 "retry": {"maxRetries": 3, "baseDelayMs": 200, "maxDelayMs": 2000},
 "limits": ${4:-"{}"},
 "search": {"provider": "none"}, "review": {"enabled": false}}
JSON
  chmod 600 "$work/agent.config.json"
}

cpu_ticks() { # -> "busy total" jiffies of the whole machine so far (/proc/stat)
  awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat
}

busy_since() { # "busy total" from cpu_ticks -> the machine's CPU busy share since then
  read -r b0 a0 <<<"$1"; read -r b1 a1 < <(cpu_ticks)
  python3 -c "print(f'{($b1 - $b0) / max($a1 - $a0, 1):.0%}')"
}

transactions() { # DB -> committed and rolled back transactions of that database so far
  psql -d "$1" -c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'"
}

backends_cpu() { # -> CPU seconds of the PostgreSQL backends that ended so far (reaped by the postmaster)
  awk '{print ($14 + $15 + $16 + $17) / 100}' "/proc/$(head -n 1 "$work/pg/postmaster.pid")/stat"
}

run_workers() { # URL WORKERS JOBS QUESTIONS [BATCH] -> prints "seconds completed failed_tasks transactions cpu_busy workers_cpu_s postgres_cpu_s wal_mb"
  local url=$1 workers=$2 jobs=$3 questions=$4 batch=${5:-bench}
  local db="${url##*/}"
  : > "$work/q.txt"
  for i in $(seq 1 "$questions"); do echo "Benchmark question number $i?" >> "$work/q.txt"; done
  (cd "$work" && "$bin" -q batch q.txt --queue "$url" --batch "$batch" >/dev/null)
  local before t0 t1 pids=()
  before=$(transactions "$db")
  local wal0 pg0; wal0=$(psql -d "$db" -c "SELECT pg_current_wal_lsn()"); pg0=$(backends_cpu)
  : > "$work/cpu"
  [ -z "${PROFILE:-}" ] || psql -d "$db" -c "SELECT pg_stat_statements_reset()" >/dev/null
  local ticks; ticks=$(cpu_ticks)
  t0=$(date +%s.%N)
  for _ in $(seq 1 "$workers"); do
    (cd "$work" && exec /usr/bin/time -a -o "$work/cpu" -f "%U %S" "$bin" -q worker --queue "$url" --batch "$batch" --drain --jobs "$jobs" \
      --concurrency 1 >/dev/null 2>>"$work/workers.err") &
    pids+=($!)
  done
  wait "${pids[@]}"
  t1=$(date +%s.%N)
  local busy; busy=$(busy_since "$ticks")
  local after completed failed
  after=$(transactions "$db")
  local wcpu pgcpu wal
  wcpu=$(awk '{t += $1 + $2} END {printf "%.1f", t}' "$work/cpu")
  sleep 0.5 # the workers' backends end and are reaped
  pgcpu=$(python3 -c "print(f'{$(backends_cpu) - $pg0:.1f}')")
  wal=$(psql -d "$db" -c "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal0') / 1e6, 1)")
  [ -z "${PROFILE:-}" ] || psql -d "$db" -c "SELECT round(total_exec_time) || ' ms, ' || calls || ' calls: ' || left(regexp_replace(query, '\s+', ' ', 'g'), 100) FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8" >&2
  completed=$(psql -d "$db" -c "SELECT count(*) FROM researchflow.questions WHERE batch = '$batch' AND status = 'completed'")
  rm -rf "$work/export"
  "$bin" -q batch export --queue "$url" --batch "$batch" --out-dir "$work/export" --no-html >/dev/null
  failed=$(cat "$work"/export/*.events.ndjson | grep -c '"event":"task_failed"' || true)
  echo "$(python3 -c "print(f'{$t1 - $t0:.2f}')") $completed $failed $((after - before)) $busy $wcpu $pgcpu $wal"
}

run_local() { # JOBS QUESTIONS -> prints "seconds completed cpu_busy"
  rm -rf "$work/local"
  local t0 t1 ticks
  ticks=$(cpu_ticks)
  t0=$(date +%s.%N)
  (cd "$work" && "$bin" -q --config agent.config.json batch q.txt --out-dir local --jobs "$1" >/dev/null 2>&1) || true
  t1=$(date +%s.%N)
  local busy completed
  busy=$(busy_since "$ticks")
  completed=$(python3 -c "import json; print(sum(i['status'] == 'completed' for i in json.load(open('$work/local/batch.json'))['items']))")
  echo "$(python3 -c "print(f'{$t1 - $t0:.2f}')") $completed $busy"
}


export PGPASSWORD="$password"
jobs=32
questions=${QUESTIONS:-1000}
if [[ " ${PARTS:-a b} " == *" a "* ]]; then
echo "== (a) throughput: $questions questions, 300 ms per call, no limit, --jobs $jobs --concurrency 1 per worker"
start_mock 0.3 0
declare -A rate
for w in ${WORKERS:-1 2 4}; do
  : > "$work/workers.err"
  read -r secs completed failed xacts wbusy wcpu pgcpu wal < <(run_workers "$(fresh_db)" "$w" "$jobs" "$questions")
  rate[$w]=$(python3 -c "print(f'{$completed / $secs:.2f}')")
  read -r lsecs lcompleted lbusy < <(run_local $((w * jobs)) "$questions")
  local_rate=$(python3 -c "print(f'{$lcompleted / $lsecs:.2f}')")
  echo "$w worker(s): $completed/$questions questions in $secs s = ${rate[$w]} questions/s; failed tasks: $failed;" \
    "$(python3 -c "print(f'{$xacts / $questions:.1f}')") database transactions a question;" \
    "machine CPU busy $wbusy"
  echo "  CPU: workers $wcpu s, PostgreSQL's backends $pgcpu s; the database's WAL $(python3 -c "print(f'{$wal * 1000 / $questions:.0f}')") kB a question"
  echo "  local batch at --jobs $((w * jobs)): $lcompleted/$questions in $lsecs s = $local_rate questions/s;" \
    "queue/local $(python3 -c "print(f'{${rate[$w]} / $local_rate:.2f}')") (target 0.9); machine CPU busy $lbusy"
done
[ -n "${rate[1]:-}" ] && [ -n "${rate[2]:-}" ] && [ -n "${rate[4]:-}" ] &&
  python3 -c "print(f'speed-up: 2 workers {${rate[2]} / ${rate[1]}:.2f}x, 4 workers {${rate[4]} / ${rate[1]}:.2f}x one (target 3.6x)')"

fi

if [[ " ${PARTS:-a b} " == *" b "* ]]; then
R=10
goodput() { # URL BATCH LABEL WORKERS: 60 questions, and what the server admitted and refused
  : > "$work/workers.err"
  curl -s "${mock%/v1}/v1/stats/reset" >/dev/null
  read -r secs completed failed xacts _ _ _ _ < <(run_workers "$1" "$4" "$jobs" 60 "$2")
  stats=$(curl -s "${mock%/v1}/v1/stats" || echo '{}')
  python3 - "$secs" "$completed" "$failed" "$stats" "$R" "$3" <<'PY'
import json, sys
secs, completed, failed, stats, r, label = float(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4] or "{}"), float(sys.argv[5]), sys.argv[6]
req, ref = stats.get("requests", 0), stats.get("refused", 0)
ok = req - ref
print(f"{label}: {completed}/60 questions in {secs:.2f} s; {ok} calls admitted = {ok / secs:.1f}/s "
      f"of {r:.0f}/s: goodput {ok / secs / r:.0%}; {ref} of {req} requests refused "
      f"({(ref / req if req else 0):.1%}); failed tasks: {failed}")
at = stats.get("refused_at", [])
early = [t for t in at if t < 1.0]
print(f"  refused in the first second: {len(early)}"
      + (" (at " + ", ".join(f"{t * 1000:.0f}" for t in early) + " ms)" if early else "") + "; after, at "
      + (", ".join(f"{t:.1f}" for t in at if t >= 1.0) or "none") + " s")
PY
}
echo "== (b) goodput: the server admits $R requests/s, 50 ms per call, workers of --jobs $jobs"
for w in 1 4; do
  start_mock 0.05 "$R" headers
  goodput "$(fresh_db)" bench "$w worker(s), the server announces its budget (target 95%, under 3% refused)" "$w"
  start_mock 0.05 "$R"
  goodput "$(fresh_db)" bench "$w worker(s), 429 with Retry-After only (target 90%)" "$w"
  start_mock 0.05 "$R" bare
  goodput "$(fresh_db)" bench "$w worker(s), 429 without Retry-After (target 90%)" "$w"
  start_mock 0.05 "$R" "" "{\"requestsPerMinute\": $((R * 60))}"
  goodput "$(fresh_db)" bench "$w worker(s), 429 with Retry-After, limits.requestsPerMinute $((R * 60))" "$w"
done
fi
