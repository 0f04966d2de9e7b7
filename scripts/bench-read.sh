#!/usr/bin/env bash
# Benchmark of reading the pages behind web results (`search.read`, issue 30) on the shipped
# question set (fixtures/eval/batteries.jsonl, 40 questions) with fixtures/corpus served as a
# web site. Not a test: it prints figures.
#
# Set-up, all on loopback: scripts/bench/site.py serves the corpus documents as pages (with
# their Content-Type) and a SearXNG-shaped search over them that ranks the documents by the
# query's words and returns the top 5 with the document's title as the only snippet, so that
# a fact can come only from reading the page. The model is scripts/bench/mock_llm.py (10 ms a
# call): it searches for the question, its analysis quotes one sentence of result [1]'s text
# as the prompt shows it (the snippet, here the title; or, when the page was read, the
# passages chosen from it, in the page's reading order), and its final report repeats that
# quote with its citation. In mode `quote` the sentence is the first one; in mode
# `quote-best` the one sharing the most words with the question. The set is scored with its
# evidence given as the site's URLs (eval compares a web source by its URL).
#
# For each mode, `researchflow eval` runs twice with the search provider `searxng` pointed at
# the site:
#   before: search.read.pages 0 (snippets only)
#   after:  search.read.pages 5, allowPrivate true (the site is on loopback)
#
# How to read the figures:
#   answered, F1, citation precision, evidence recall, supported claims: `eval`'s totals
#     (see docs/src/commands/eval.md). "supported claims" is the share of the final reports'
#     cited claims that the content-word check finds in what their sources hold (title and
#     snippet, plus the passages of a page read). The stand-in quotes only what it is shown,
#     so its claims are supported either way; what changes is what they say. So the same
#     claims are also re-checked by this script (an approximation of the check: no stemmer)
#     against their sources' titles and snippets alone: how many the snippets could support
#     without the passages. Precision and recall do not move: the stand-in cites result [1]
#     whatever it reads.
#   pages read: `page_read` events over all the runs' events files (`*.events.ndjson`), by
#     where the page came from: `web` (fetched) or `memory` (read earlier in the same eval,
#     which is one batch, and served again); `page_unread` events; and the documents the site
#     served, to set beside them.
#   pages/s: pages fetched over the eval's wall time (what the whole run sustained, the model
#     and search included), and over the reading time (the union of the transcripts' page
#     lines' spans [at - latency, at]: the wall time during which a page was being read).
#   bytes to the model per search task: the UTF-8 bytes of the messages (system and user) of
#     each analysis request in the transcripts (`"kind":"llm"` lines of role `search` that
#     are not the queries request; retries would count), summed, over the search tasks; and
#     the bytes of every request of a question, per question. (The tokens are no measure of
#     it: the stand-in reports 20 a call whatever it is sent.)
# The stand-in is faithful but lazy: it says one sentence of result [1], so the scores
# measure what that sentence carries, not what a real model makes of what it reads.
#
#     scripts/bench-read.sh                (some ten seconds once the release build is there)
#     BENCH_KEEP=1 scripts/bench-read.sh   keeps the runs' folder, and says where
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --quiet --bin researchflow
bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/researchflow"
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-read.XXXXXX")"
site_pid=""
mock_pid=""
cleanup() {
  [ -n "$site_pid" ] && kill "$site_pid" 2>/dev/null
  [ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null
  if [ -n "${BENCH_KEEP:-}" ]; then echo "kept: $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

# The URL the server writing FILE prints there once listening.
url_of() {
  for _ in $(seq 1 50); do [ -s "$1" ] && break; sleep 0.1; done
  head -n 1 "$1"
}

python3 scripts/bench/site.py fixtures/corpus > "$work/site.url" &
site_pid=$!
site="$(url_of "$work/site.url")"

# The set, its evidence as the site's URLs.
python3 - fixtures/eval/batteries.jsonl "$site" > "$work/set.jsonl" <<'PY'
import json, sys
site = sys.argv[2]
url = lambda e: [url(a) for a in e] if isinstance(e, list) else f"{site}/{e}"
for line in open(sys.argv[1]):
    if line.strip() and not line.lstrip().startswith("#"):
        gold = json.loads(line)
        gold["evidence"] = [url(e) for e in gold["evidence"]]
        print(json.dumps(gold))
PY

# run NAME MOCK_URL READ_JSON: one evaluation, `search.read` as READ_JSON, in $work/NAME;
# its wall time in NAME.seconds, the site's counts before and after it in NAME.site.
run() {
  local config="$work/$1.config.json" t0 t1
  touch "$config" && chmod 600 "$config"
  cat > "$config" <<JSON
{"baseURL": "$2", "model": "bench-model", "apiKey": "bench",
 "retry": {"maxRetries": 2, "baseDelayMs": 100, "maxDelayMs": 1000},
 "review": {"enabled": false},
 "search": {"provider": "searxng", "baseURL": "$site", "maxResults": 5, "read": $3}}
JSON
  curl -s "$site/stats" > "$work/$1.site"
  t0=$(date +%s.%N)
  "$bin" -q --config "$config" eval "$work/set.jsonl" --out-dir "$work/$1" --json \
    > "$work/$1.out" || true
  t1=$(date +%s.%N)
  printf '\n' >> "$work/$1.site"
  curl -s "$site/stats" >> "$work/$1.site"
  python3 -c "print($t1 - $t0)" > "$work/$1.seconds"
}

for mode in quote quote-best; do
  rm -f "$work/mock.url"
  python3 scripts/bench/mock_llm.py 0.01 0 "$mode" > "$work/mock.url" &
  mock_pid=$!
  mock="$(url_of "$work/mock.url")"
  run "$mode-before" "$mock" '{"pages": 0}'
  run "$mode-after" "$mock" '{"pages": 5, "allowPrivate": true}'
  kill "$mock_pid" && wait "$mock_pid" 2>/dev/null || true
  mock_pid=""
done

python3 - "$work" src/sentences.rs <<'PY'
import glob, json, os, re, sys
from datetime import datetime

work = sys.argv[1]
# researchflow's own stopword list, as the claim check uses it.
STOP = set(re.findall(r'"([^"]*)"', open(sys.argv[2]).read().split("STOPWORDS")[1].split("];")[0]))
THRESHOLD = 0.5  # claims.threshold's default


def terms(text):
    """Content words as the claim check counts them, roughly: no stemmer, a plural `s` off."""
    words = re.findall(r"[^\W_]+", re.sub(r"\[\d+(?:,\s*\d+)*\]", " ", text.lower()))
    return {w[:-1] if len(w) > 3 and w.endswith("s") else w
            for w in words if len(w) > 1 and w not in STOP}


def recheck(out):
    """The final reports' cited claims checked again by the script: against their sources'
    titles and snippets alone, and with the passages too; and how often the latter agrees
    with researchflow's own verdict."""
    alone = full = agree = claims = 0
    for path in glob.glob(os.path.join(out, "*.json")):
        plan = json.load(open(path))
        final = [n for n in plan.get("nodes", []) if n.get("claims")] if isinstance(plan, dict) else []
        for node in final[-1:]:
            for claim in node["claims"]:
                said = terms(claim["sentence"])
                cited = [node["sources"][n - 1] for n in claim["cites"]
                         if 0 < n <= len(node["sources"])]
                snippets = set().union(*(terms(s["title"]) | terms(s.get("snippet") or "")
                                         for s in cited))
                passages = set().union(*(terms(p) for s in cited for p in s.get("passages", [])))
                share = lambda held: len(said & held) / len(said) if said else 0.0
                claims += 1
                alone += share(snippets) >= THRESHOLD
                full += (ok := share(snippets | passages) >= THRESHOLD)
                agree += ok == claim["supported"]
    return dict(claims=claims, alone=alone, full=full, agree=agree)


def at(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def figures(name):
    out = os.path.join(work, name)
    t = json.load(open(os.path.join(out, "eval.json")))["totals"]
    wall = float(open(os.path.join(work, name + ".seconds")).read())
    read, unread = {"web": 0, "memory": 0}, 0
    for path in glob.glob(os.path.join(out, "**", "*.events.ndjson"), recursive=True):
        for line in open(path):
            event = json.loads(line)
            if event.get("event") == "page_read":
                read[event["from"]] = read.get(event["from"], 0) + 1
            elif event.get("event") == "page_unread":
                unread += 1
    spans, analysis, everything, tasks = [], 0, 0, set()
    transcripts = glob.glob(os.path.join(out, "**", "*.transcript.jsonl"), recursive=True)
    for path in transcripts:
        for line in open(path):
            entry = json.loads(line)
            if entry["kind"] == "page":
                end = at(entry["at"])
                spans.append((end - entry["latency_ms"] / 1000, end))
            if entry["kind"] != "llm":
                continue
            sent = sum(len(str(m.get("content", "")).encode()) for m in entry["messages"])
            everything += sent
            system = next((str(m.get("content", "")) for m in entry["messages"]
                           if m.get("role") == "system"), "")
            if entry["role"] == "search" and "web search queries" not in system:
                analysis += sent
                tasks.add((path, entry.get("node")))
    reading, last = 0.0, None  # the union of the page lines' spans
    for start, end in sorted(spans):
        if last is None or start > last:
            reading, last = reading + end - start, end
        elif end > last:
            reading, last = reading + end - last, end
    was, now = (json.loads(l) for l in open(os.path.join(work, name + ".site")))
    site = {k: now[k] - was[k] for k in now}
    return dict(t=t, wall=wall, read=read, unread=unread, reading=reading, tasks=len(tasks),
                recheck=recheck(out),
                per_task=analysis / len(tasks) if tasks else 0.0,
                per_question=everything / len(transcripts) if transcripts else 0.0, site=site)


f = lambda v: "-" if v is None else f"{v:.3f}"
rate = lambda n, s: f"{n / s:.1f}" if s > 0 else "-"
for mode in ("quote", "quote-best"):
    runs = {}
    for when, label in (("before", "search.read.pages 0: snippets only"),
                        ("after", "search.read.pages 5: passages of the pages read")):
        r = runs[when] = figures(f"{mode}-{when}")
        t, web = r["t"], r["read"]["web"]
        print(f"== mode {mode}, {when} ({label})")
        print(f"answered {t['answer_matches']} of {t['questions']} (scored {t['scored']}); "
              f"token F1 {f(t['f1'])}; citation precision {f(t['citation_precision'])}; "
              f"evidence recall {f(t['evidence_recall'])}; "
              f"supported claims {t['claims_supported']} of {t['claims_cited']} "
              f"({f(t['supported_claims'])}); tokens {t['tokens']}")
        print(f"pages read: {web} fetched + {r['read']['memory']} from the batch's memory, "
              f"{r['unread']} unread (the site served {r['site']['pages']} pages, "
              f"{r['site']['searches']} searches); pages fetched/s {rate(web, r['wall'])} over "
              f"the eval's wall time ({r['wall']:.1f} s), {rate(web, r['reading'])} over the "
              f"reading time ({r['reading']:.3f} s)")
        c = r["recheck"]
        print(f"the same claims re-checked by this script (roughly): {c['alone']} of "
              f"{c['claims']} supported by their sources' titles and snippets alone, "
              f"{c['full']} with the passages too (agreeing with researchflow's verdict on "
              f"{c['agree']})")
        print(f"bytes to the model: {r['per_task']:,.0f} per search task in its analysis "
              f"request ({r['tasks']} tasks); {r['per_question']:,.0f} per question in all "
              f"requests")
    b, a = runs["before"], runs["after"]
    print(f"== mode {mode}, before -> after: answered {b['t']['answer_matches']} -> "
          f"{a['t']['answer_matches']}; F1 {f(b['t']['f1'])} -> {f(a['t']['f1'])}; "
          f"supported claims {f(b['t']['supported_claims'])} -> "
          f"{f(a['t']['supported_claims'])}; analysis bytes per task {b['per_task']:,.0f} -> "
          f"{a['per_task']:,.0f} (x{a['per_task'] / b['per_task'] if b['per_task'] else 0:.1f})")
PY
