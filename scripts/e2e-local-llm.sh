#!/usr/bin/env bash
# End-to-end check of researchflow against a real OpenAI-compatible server (for instance
# llama.cpp's server, or llama-cpp-python's, with a small model on loopback). Not part of CI: it needs a live
# server and a small model may take many minutes.
#
#   RESEARCHFLOW_E2E_BASE_URL=http://127.0.0.1:18081/v1 RESEARCHFLOW_E2E_MODEL=gemma3 \
#     scripts/e2e-local-llm.sh
#
# Inputs (environment):
#   RESEARCHFLOW_E2E_BASE_URL  required, the server's base URL with its /v1 path
#   RESEARCHFLOW_E2E_MODEL     required, the model name to put in the config
#   RESEARCHFLOW_E2E_QUERY     the research question (default below)
#   RESEARCHFLOW_BIN           the binary to test (default: `cargo build --release` and use it)
#   RESEARCHFLOW_E2E_KEEP=1    keep the work folder even when every check passes
#   RESEARCHFLOW_E2E_THINKON_ARGS  the thinkon run's flags (see below)
#
# Every request goes through scripts/record-proxy.py, which logs it, so the checks can look at
# what was sent and what the server answered. The script runs `doctor --json` (when the binary
# has that subcommand), then a workflow with at most 4 rounds and no web search, and prints one
# PASS/FAIL line per check and a summary. The checks: doctor exits 0 with "ok": true; the
# workflow's outcome is honest (exit 0 with completed or partial, 1 with degraded or
# final_failed); at least one task the planner made (search or summary, not the final batch)
# completed, or the run (degraded, or final_failed) says that none did (a tiny model's tasks titled like ids
# are dropped by the plan gate); no two tasks share a title (case, punctuation and spaces ignored; the start node
# is the question, not a task, and a task may search the question itself); every chat
# request carries max_tokens or max_completion_tokens; the transcript has one line per chat
# request (read once the proxy is stopped); the review stage ended (completed, or failed
# without touching the research; skipped when no report was written or the run is degraded); the
# server is still up after the run (a schema once killed it); a replay of the run from its
# transcript, with no server listening, gives the same nodes and exit code; and `thinkon` on the same
# question ends honestly (exit 0 with completed or partial, 1 with failed, result.md written: a
# tiny model may well fail) with planner requests that carry only the seed's context, no block
# id. The thinkon flags: RESEARCHFLOW_E2E_THINKON_ARGS (default `--compact-prompt --max-depth 2
# --max-blocks 8`: the seed's prompt does not fit in an 8k context). Last, research that reads:
# fixtures/corpus served as a loopback site with a SearXNG-shaped search whose snippets are only
# titles (scripts/bench/site.py), and a workflow that reads its pages, started from the three
# search tasks of fixtures/plan_stage2.json set back to `planned` (a tiny model's planner often
# plans no usable search: its tasks are dropped, and reading would go untested), at most 2
# rounds; it must end honestly, read pages (`page_read` events with passages), show the
# analysis passages that only the page bodies hold, and, when it completes, cite in its report
# a page it read.
#
# Exit 0 when every check passes, 1 when one fails, 2 when the run could not be set up. The work
# folder (config, plan, report, logs, requests.ndjson) is kept unless every check passed.
set -euo pipefail

base_url="${RESEARCHFLOW_E2E_BASE_URL:-}"
model="${RESEARCHFLOW_E2E_MODEL:-}"
if [ -z "$base_url" ] || [ -z "$model" ]; then
  echo "error: set RESEARCHFLOW_E2E_BASE_URL (e.g. http://127.0.0.1:18081/v1) and RESEARCHFLOW_E2E_MODEL (e.g. gemma3)" >&2
  exit 2
fi
query="${RESEARCHFLOW_E2E_QUERY:-How do solid-state batteries compare with lithium-ion?}"
root="$(cd "$(dirname "$0")/.." && pwd)"

if [ -n "${RESEARCHFLOW_BIN:-}" ]; then
  bin="$(cd "$(dirname "$RESEARCHFLOW_BIN")" && pwd)/$(basename "$RESEARCHFLOW_BIN")"
else
  (cd "$root" && cargo build --release --quiet --bin researchflow)
  target_dir="$(cd "$root" && cargo metadata --format-version 1 --no-deps |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
  bin="$target_dir/release/researchflow"
fi
[ -x "$bin" ] || { echo "error: \`$bin\` is not an executable: set RESEARCHFLOW_BIN" >&2; exit 2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-e2e.XXXXXX")"
proxy_pid=""
status=1
cleanup() {
  if [ -n "$proxy_pid" ]; then
    kill "$proxy_pid" 2>/dev/null || true
    wait "$proxy_pid" 2>/dev/null || true
  fi
  if [ "$status" -eq 0 ] && [ "${RESEARCHFLOW_E2E_KEEP:-0}" != 1 ]; then
    rm -rf "$work"
  else
    echo "work folder kept: $work" >&2
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# a. The recording proxy; it prints its base URL once it listens.
python3 "$root/scripts/record-proxy.py" "$base_url" "$work/requests.ndjson" \
  >"$work/proxy.url" 2>"$work/proxy.err" &
proxy_pid=$!
for _ in $(seq 1 100); do
  [ -s "$work/proxy.url" ] && break
  kill -0 "$proxy_pid" 2>/dev/null || { cat "$work/proxy.err" >&2; echo "error: the proxy did not start" >&2; exit 2; }
  sleep 0.1
done
proxy_url="$(head -n 1 "$work/proxy.url")"
[ -n "$proxy_url" ] || { echo "error: the proxy printed no URL within 10 s" >&2; exit 2; }
touch "$work/requests.ndjson"
echo "== proxy: $proxy_url -> $base_url"

# b. A config of our own: the proxy as the server, no web search.
config="$work/agent.config.json"
PROXY_URL="$proxy_url" MODEL="$model" python3 - "$config" <<'EOF'
import json, os, sys
config = {"baseURL": os.environ["PROXY_URL"], "model": os.environ["MODEL"],
          "search": {"provider": "none"}}
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump(config, f, indent=2)
EOF

# Run from the work folder so a `.env` in the caller's folder is not read.
cd "$work"

# c. doctor, when this build has it.
doctor_code=""
if "$bin" doctor --help >/dev/null 2>&1; then
  echo "== researchflow doctor --json"
  set +e
  "$bin" --config "$config" doctor --json >"$work/doctor.json" 2>"$work/doctor.err"
  doctor_code=$?
  set -e
  cat "$work/doctor.json"
  [ "$doctor_code" -eq 0 ] || cat "$work/doctor.err" >&2
else
  echo "== note: this researchflow has no \`doctor\` subcommand yet; going on with the workflow"
fi

# d. The workflow; its log goes to stderr as it runs. Requests logged before it are doctor's.
before_workflow=$(wc -l < "$work/requests.ndjson")
echo "== researchflow workflow --query \"$query\" --max-rounds 4"
started=$(date +%s)
set +e
"$bin" --config "$config" workflow --query "$query" --out "$work/plan.json" --max-rounds 4 \
  >"$work/workflow.json" 2> >(tee "$work/workflow.err" >&2)
workflow_code=$?
set -e
echo "workflow exit code $workflow_code after $(( $(date +%s) - started )) s; its output:"
cat "$work/workflow.json"

# d2. The replay of that run from its transcript, against an address where no server listens.
replay_code=""
if "$bin" workflow --help 2>/dev/null | grep -q -- "--replay"; then
  echo "== researchflow workflow --replay plan.transcript.jsonl (no server)"
  python3 - "$config" "$work/dead.config.json" <<'EOF'
import json, sys
config = json.load(open(sys.argv[1], encoding="utf-8"))
config["baseURL"] = "http://127.0.0.1:1/v1"
json.dump(config, open(sys.argv[2], "w", encoding="utf-8"))
EOF
  set +e
  "$bin" --config "$work/dead.config.json" workflow --replay "$work/plan.transcript.jsonl" \
    --out "$work/replay.json" >"$work/replay.out" 2>"$work/replay.err"
  replay_code=$?
  set -e
  [ "$replay_code" -eq 0 ] || tail -n 5 "$work/replay.err" >&2
fi

# d3. Thinkon on the same question (after the workflow: its requests come last), with the
# compact prompt unless told otherwise: the seed's does not fit in an 8k context.
before_thinkon=$(wc -l < "$work/requests.ndjson")
thinkon_code=""
if "$bin" thinkon --help >/dev/null 2>&1; then
  read -r -a thinkon_args <<< "${RESEARCHFLOW_E2E_THINKON_ARGS:---compact-prompt --max-depth 2 --max-blocks 8}"
  echo "== researchflow thinkon --goal \"$query\" ${thinkon_args[*]}"
  set +e
  "$bin" --config "$config" thinkon --goal "$query" --dir "$work/thinkon" "${thinkon_args[@]}" \
    >"$work/thinkon.json" 2>"$work/thinkon.err"
  thinkon_code=$?
  set -e
  echo "thinkon exit code $thinkon_code; its output:"
  cat "$work/thinkon.json"
  tail -n 3 "$work/thinkon.err" | cut -c1-400
fi

# d4. Research that reads: the corpus as a loopback site, its search's snippets only titles.
python3 "$root/scripts/bench/site.py" "$root/fixtures/corpus" 3 >"$work/site.url" 2>"$work/site.err" &
site_pid=$!
for _ in $(seq 1 100); do [ -s "$work/site.url" ] && break; sleep 0.1; done
site_url="$(head -n 1 "$work/site.url")"
SITE_URL="$site_url" python3 - "$config" "$work/read.config.json" <<'EOF'
import json, os, sys
config = json.load(open(sys.argv[1], encoding="utf-8"))
config["search"] = {"provider": "searxng", "baseURL": os.environ["SITE_URL"], "maxResults": 3,
                    "read": {"pages": 3, "allowPrivate": True, "passageChars": 3000}}
json.dump(config, open(sys.argv[2], "w", encoding="utf-8"))
EOF
mkdir -p "$work/read"
python3 - "$root/fixtures/plan_stage2.json" "$work/read/plan.json" <<'EOF'
import json, sys
plan = json.load(open(sys.argv[1], encoding="utf-8"))
for node in plan["nodes"]:
    if node["type"] == "search":
        node.update(summary="", info="", status="planned")
        for key in ("sources", "usage", "finished_at", "updated_at", "attempts"):
            node.pop(key, None)
json.dump(plan, open(sys.argv[2], "w", encoding="utf-8"), indent=2)
EOF
before_read=$(wc -l < "$work/requests.ndjson")
echo "== researchflow workflow --plan read/plan.json (3 planned searches, reading the pages of $site_url) --max-rounds 2"
set +e
"$bin" --config "$work/read.config.json" workflow --plan "$work/read/plan.json" \
  --max-rounds 2 >"$work/read.json" 2>"$work/read.err"
read_code=$?
set -e
kill "$site_pid" 2>/dev/null || true
wait "$site_pid" 2>/dev/null || true
echo "reading workflow exit code $read_code; its output:"
cat "$work/read.json"

# e. The proxy stopped first: a request the run gave up on is logged once its answer comes, or
# (still unanswered) when the proxy stops; the checks below read the whole log.
kill "$proxy_pid" 2>/dev/null || true
wait "$proxy_pid" 2>/dev/null || true
proxy_pid=""

# f. The checks and the summary.
set +e
WORK="$work" DOCTOR_CODE="$doctor_code" WORKFLOW_CODE="$workflow_code" REPLAY_CODE="$replay_code" \
  BEFORE_WORKFLOW="$before_workflow" BEFORE_THINKON="$before_thinkon" THINKON_CODE="$thinkon_code" \
  BASE_URL="$base_url" READ_CODE="$read_code" BEFORE_READ="$before_read" python3 - <<'EOF'
import collections, json, os, re, sys

work = os.environ["WORK"]
failures = 0


def check(name, ok, detail):
    global failures
    failures += 0 if ok else 1
    print(f"{'PASS' if ok else 'FAIL'}  {name}: {detail}")


def load(path):
    try:
        with open(os.path.join(work, path), encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as err:
        return err


print("== checks")
if os.environ["DOCTOR_CODE"]:
    doctor = load("doctor.json")
    ok_field = doctor.get("ok") if isinstance(doctor, dict) else None
    check("doctor", os.environ["DOCTOR_CODE"] == "0" and ok_field is True,
          f"exit code {os.environ['DOCTOR_CODE']}, \"ok\": {json.dumps(ok_field)}")

code = os.environ["WORKFLOW_CODE"]
workflow_out = load("workflow.json")
status = workflow_out.get("status") if isinstance(workflow_out, dict) else None
reason = (workflow_out.get("reason") or "") if isinstance(workflow_out, dict) else ""
expected = {"completed": "0", "partial": "0", "degraded": "1", "final_failed": "1"}.get(status)
check("workflow outcome is honest", expected == code, f"exit code {code}, status {status}")

plan = load("plan.json")
nodes = plan.get("nodes", []) if isinstance(plan, dict) else []
if not isinstance(plan, dict):
    print(f"      (no plan to read: {plan})")

done = [n for n in nodes if n.get("type") in ("search", "summary")
        and n.get("batch") != -1 and n.get("status") == "completed"]
# A final summary that failed over no research says both (status final_failed).
said_none = status in ("degraded", "final_failed") and "no research task completed" in reason
check("planner-made task completed, or the run says none did", bool(done) or said_none,
      f"{len(done)} completed search/summary node(s) outside the final batch"
      + (f"; status {status}: {reason}" if not done else ""))

by_title = collections.defaultdict(list)
for n in (n for n in nodes if n.get("type") != "start"):
    by_title[re.sub(r"[\W_]+", "", str(n.get("title", "")).lower())].append(n)
dupes = [same for same in by_title.values() if len(same) > 1]
check("distinct task titles", not dupes, "none repeated" if not dupes else "; ".join(
    ", ".join(str(n.get("node_id")) for n in same) + f" ({json.dumps(same[0].get('title'))})"
    for same in dupes))

requests = []
with open(os.path.join(work, "requests.ndjson"), encoding="utf-8") as f:
    for line in f:
        if line.strip():
            requests.append(json.loads(line))
chats = [r for r in requests if r["method"] == "POST" and r["path"].split("?")[0].endswith("/chat/completions")]
unbounded = [i for i, r in enumerate(chats) if not isinstance(r["body"], dict)
             or not ({"max_tokens", "max_completion_tokens"} & r["body"].keys())]
if not chats:
    check("token limit on every chat request", False, "no chat-completions request was recorded")
else:
    check("token limit on every chat request", not unbounded,
          f"{len(chats) - len(unbounded)} of {len(chats)} carry max_tokens or max_completion_tokens")

review = workflow_out.get("review") if isinstance(workflow_out, dict) else None
if review is not None:
    # Without a report (final_failed), or over a degraded run's report, which disowns itself,
    # there is nothing to review: skipped is right.
    reviewable = status in ("completed", "partial")
    ok_statuses = ("completed", "failed") if reviewable else ("skipped",)
    check("review stage", review.get("status") in ok_statuses,
          f"status {review.get('status')}, verdict {review.get('verdict')}"
          + (f", errors {review.get('errors')}" if review.get("errors") else ""))
# A server that serves one request at a time keeps generating the answers a client gave up
# on (llama-cpp-python does not stop at a closed connection): busy is not dead. A refused
# connection is; a timeout is waited out, up to 15 minutes.
import socket, time, urllib.error, urllib.request
alive, waited, started = False, "", time.monotonic()
while time.monotonic() - started < 900:
    try:
        with urllib.request.urlopen(os.environ["BASE_URL"].rstrip("/") + "/models", timeout=30) as r:
            alive = r.status == 200
        break
    except urllib.error.URLError as err:
        if isinstance(err.reason, (socket.timeout, TimeoutError)):
            continue
        break  # refused or reset: the server died during the run
    except (socket.timeout, TimeoutError):
        continue
    except Exception:
        break
if alive and time.monotonic() - started > 30:
    waited = f" after {time.monotonic() - started:.0f} s busy with answers given up on"
check("server still up after the run", alive,
      f"GET /models answered{waited}" if alive else "no answer (connection refused or server gone)")

if os.environ["REPLAY_CODE"]:
    with open(os.path.join(work, "plan.transcript.jsonl"), encoding="utf-8") as f:
        transcript = [json.loads(l) for l in f if l.strip()]
    llm_lines = [l for l in transcript if l.get("kind") == "llm"]
    # doctor's probes came first and are not part of the run.
    runs = [r for r in requests[int(os.environ["BEFORE_WORKFLOW"]):int(os.environ["BEFORE_THINKON"])]
            if r["method"] == "POST" and r["path"].split("?")[0].endswith("/chat/completions")]
    check("one transcript line per chat request of the run", len(llm_lines) == len(runs),
          f"{len(llm_lines)} llm line(s), {len(runs)} chat request(s) after doctor's")
    keys = ("node_id", "title", "summary", "info", "p_node", "batch", "type", "status", "sources")
    replay = load("replay.json")
    same = isinstance(replay, dict) and [[n.get(k) for k in keys] for n in nodes] == [
        [n.get(k) for k in keys] for n in replay.get("nodes", [])]
    check("replay with no server reproduces the plan",
          os.environ["REPLAY_CODE"] == code and same,
          f"exit code {os.environ['REPLAY_CODE']}, nodes {'identical' if same else 'differ'}")

if os.environ["THINKON_CODE"]:
    code = os.environ["THINKON_CODE"]
    out = load("thinkon.json")
    status = out.get("status") if isinstance(out, dict) else None
    honest = {"completed": "0", "partial": "0", "failed": "1"}.get(status) == code
    result = os.path.join(work, "thinkon", "result.md")
    check("thinkon outcome is honest", honest and os.path.exists(result),
          f"exit code {code}, status {status}, result.md {'written' if os.path.exists(result) else 'missing'}"
          + (f", reason: {out.get('reason')}" if isinstance(out, dict) and out.get("reason") else ""))
    planner = []
    for r in requests[int(os.environ["BEFORE_THINKON"]):]:
        body = r["body"] if isinstance(r["body"], dict) else {}
        users = [m.get("content") for m in body.get("messages", []) if m.get("role") == "user"]
        if users and isinstance(users[0], str) and users[0].startswith("Context JSON:\n"):
            planner.append(json.loads(users[0][len("Context JSON:\n"):]))
    shapes = {tuple(c.keys()) for c in planner}
    ids = [k for c in planner for b in [c["think"], *c["path"]] for k in b
           if k not in ("goal", "plan", "done")]
    check("thinkon planner requests carry the seed's context only", bool(planner)
          and shapes == {("think", "path", "max_depth", "executors")} and not ids,
          f"{len(planner)} planner request(s), keys {sorted(shapes)}, other block keys {ids}")

read_dir = os.path.join(work, "read")
read_code = os.environ["READ_CODE"]
read_out = load("read.json")
read_status = read_out.get("status") if isinstance(read_out, dict) else None
check("reading workflow outcome is honest",
      {"completed": "0", "partial": "0", "degraded": "1", "final_failed": "1"}.get(read_status) == read_code,
      f"exit code {read_code}, status {read_status}")
read_events = []
if os.path.exists(os.path.join(read_dir, "plan.events.ndjson")):
    with open(os.path.join(read_dir, "plan.events.ndjson"), encoding="utf-8") as f:
        read_events = [json.loads(l) for l in f if l.strip()]
pages = [e for e in read_events if e.get("event") == "page_read"]
with_passages = {e["url"] for e in pages if e.get("passages", 0) > 0}
check("pages read with passages", bool(with_passages),
      f"{len(pages)} page_read event(s), {len(with_passages)} page(s) gave passages")
shown = [r for r in requests[int(os.environ["BEFORE_READ"]):]
         if r["method"] == "POST" and isinstance(r["body"], dict)
         and any("passages of the page:" in str(m.get("content")) for m in r["body"].get("messages", []))]
check("the analysis was shown page passages", bool(shown), f"{len(shown)} request(s) with passages")
if read_status == "completed":
    report = ""
    if os.path.exists(os.path.join(read_dir, "plan.report.md")):
        report = open(os.path.join(read_dir, "plan.report.md"), encoding="utf-8").read()
    cited = [u for u in with_passages if u in report]
    check("the completed report cites a page read", bool(cited),
          f"{len(cited)} page(s) read linked in the report")

print("== summary")
print(f"nodes ({len(nodes)}):")
for n in nodes:
    print(f"  {n.get('node_id')!s:>4}  {n.get('type', '?'):<8} {n.get('status', '?'):<10} "
          f"batch {n.get('batch')!s:>3}  {n.get('title', '')}")
    for err in n.get("errors", [])[-1:]:
        print(f"        last error: {err[:300]}")
report_path = os.path.join(work, "plan.report.md")
if os.path.exists(report_path):
    with open(report_path, encoding="utf-8") as f:
        lines = [l.rstrip() for l in f if l.strip()][:8]
    print("report, first lines:")
    for l in lines:
        print(f"  | {l[:160]}")
else:
    print("report: none written")


def format_kind(body):
    rf = body.get("response_format") if isinstance(body, dict) else None
    if not isinstance(rf, dict):
        return "none"
    kind = str(rf.get("type"))
    return kind + "+schema" if kind == "json_object" and "schema" in rf else kind


kinds = collections.Counter(format_kind(r["body"]) for r in chats)
print(f"chat requests: {len(chats)} (all requests: {len(requests)})")
print("  by response_format: " + (", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) or "-"))
statuses = collections.Counter(str(r["status"] or "unanswered") for r in requests)
print("  statuses: " + (", ".join(f"{k} x{v}" for k, v in sorted(statuses.items())) or "-"))
times = sorted(r.get("elapsed_ms", 0) / 1000 for r in chats if r["status"] == 200)
if times:
    print(f"  answered (200) in: fastest {times[0]:.1f} s, median {times[len(times) // 2]:.1f} s, "
          f"slowest {times[-1]:.1f} s")
limits = collections.Counter(
    str(r["body"].get("max_tokens", r["body"].get("max_completion_tokens")))
    for r in chats if isinstance(r["body"], dict))
print("  token limits sent: " + ", ".join(f"{k} x{v}" for k, v in sorted(limits.items())))
print(f"== {'all checks passed' if not failures else f'{failures} check(s) failed'}")
sys.exit(1 if failures else 0)
EOF
status=$?
set -e
exit "$status"
