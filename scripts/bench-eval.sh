#!/usr/bin/env bash
# Benchmark of `researchflow eval` on the shipped question set (fixtures/eval/batteries.jsonl,
# 52 questions over fixtures/corpus, 12 of them traps). Not a test: it prints figures.
#
#  (a) the offline engine (no model, no network). Targets: citation precision at least 0.9,
#      evidence recall at least 0.8, supported claims 100%; issue 57's: stated-answer
#      precision at least 0.9, at least 80% of the unanswerable questions abstained.
#  (b) the model pipeline against a stand-in server (scripts/bench/mock_llm.py in `quote`
#      mode: it searches for the question and quotes the first result's first sentence), the
#      corpus as its search provider: what retrieval alone gives a faithful but lazy model.
#  (c) the same in `quote-best` mode: the stand-in quotes the sentence of the first result it
#      is shown (snippet or passages) that shares the most words with the question.
#
#  bench-eval.sh [SET.jsonl CORPUS_DIR]: another shipped set and its corpus (fixtures/eval/
#  debian.jsonl over fixtures/corpus-debian, licenses.jsonl over fixtures/corpus-licenses).
#  With RESEARCHFLOW_BENCH_EMBEDDINGS=MODEL_DIR (e.g. target/models/all-MiniLM-L6-v2, from
#  scripts/setup/embedding-model.sh), (a) runs a second time ranking by meaning too. With
#  RESEARCHFLOW_BENCH_BIN=PATH, that binary runs instead of a release build (a debug build
#  gives the same figures, slower).
#
#  Each engine's figures: first the strict ones, read from each report's leading statement
#  (docs/src/commands/eval.md): stated-answer precision, coverage and abstention, over every
#  question and without the set's traps; then the older ones, a gold answer anywhere in the
#  report among them.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
set_file="$(realpath "${1:-$root/fixtures/eval/batteries.jsonl}")"
corpus="$(realpath "${2:-$root/fixtures/corpus}")"
cd "$root"
if [ -n "${RESEARCHFLOW_BENCH_BIN:-}" ]; then
  bin="$(realpath "$RESEARCHFLOW_BENCH_BIN")"
else
  cargo build --release --quiet --bin researchflow
  bin="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release/researchflow"
fi
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-eval.XXXXXX")"
mock_pid=""
trap '[ -n "$mock_pid" ] && kill "$mock_pid" 2>/dev/null; rm -rf "$work"' EXIT

figures() { # EVAL_JSON
  python3 - "$1" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
t = e["totals"]
f = lambda v: "-" if v is None else f"{v:.3f}"
def strict(s):
    return (f"stated-answer precision {f(s['precision'])} ({s['right']} right of {s['right'] + s['wrong']} stated), "
            f"coverage {f(s['coverage'])} ({s['right']} of {s['answerable']} answerable), "
            f"abstention {f(s['abstention'])} ({s['abstained_unanswerable']} of {s['unanswerable']} unanswerable)")
print(f"strict, all {t['questions']} questions: {strict(t['strict'])}")
if t.get("strict_without_traps"):
    plain = t["strict_without_traps"]
    anywhere = sum(1 for q in e["questions"] if not q.get("trap") and q["answer_match"])
    print(f"strict, without the {t['questions'] - plain['questions']} traps: {strict(plain)}; "
          f"gold anywhere {anywhere} of {plain['questions']}")
print(f"gold anywhere {t['answer_matches']} of {t['questions']} (scored {t['scored']}); "
      f"token F1 {f(t['f1'])}; citation precision {f(t['citation_precision'])}; "
      f"evidence recall {f(t['evidence_recall'])}; "
      f"supported claims {t['claims_supported']} of {t['claims_cited']} ({f(t['supported_claims'])}); "
      f"tokens {t['tokens']}; seconds {t['seconds']:.1f} (sum over questions)")
PY
}

echo "== (a) offline engine"
t0=$(date +%s.%N)
"$bin" -q eval "$set_file" --offline --corpus "$corpus" --index-dir "$work/index" \
  --out-dir "$work/offline" --json > "$work/offline.out" || true
t1=$(date +%s.%N)
figures "$work/offline/eval.json"
python3 - "$work/offline/eval.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
met = lambda ok: "met" if ok else "NOT met"
print(f"targets: citation precision >= 0.9 {met((t['citation_precision'] or 0) >= 0.9)}; "
      f"evidence recall >= 0.8 {met((t['evidence_recall'] or 0) >= 0.8)}; "
      f"supported 100% {met(t['supported_claims'] == 1.0)}")
s = t["strict"]
print(f"issue 57 targets: stated-answer precision >= 0.9 {met((s['precision'] or 0) >= 0.9)}; "
      f"unanswerable abstained >= 0.8 {met((s['abstention'] or 0) >= 0.8)}")
PY
echo "wall time $(python3 -c "print(f'{$t1 - $t0:.1f}')") s at 4 jobs"

# (b) and (c): the stand-in server in MODE, the corpus as the search provider.
stand_in() { # MODE
  python3 scripts/bench/mock_llm.py 0.01 0 "$1" > "$work/mock-$1.url" &
  mock_pid=$!
  for _ in $(seq 1 50); do [ -s "$work/mock-$1.url" ] && break; sleep 0.1; done
  url="$(head -n 1 "$work/mock-$1.url")"
  touch "$work/agent.config.json" && chmod 600 "$work/agent.config.json"
  cat > "$work/agent.config.json" <<JSON
{"baseURL": "$url", "model": "bench-model", "apiKey": "bench",
 "retry": {"maxRetries": 2, "baseDelayMs": 100, "maxDelayMs": 1000},
 "review": {"enabled": false}}
JSON
  t0=$(date +%s.%N)
  "$bin" -q --config "$work/agent.config.json" eval "$set_file" --corpus "$corpus" \
    --index-dir "$work/index" --out-dir "$work/mock-$1" --json > "$work/mock-$1.out" || true
  t1=$(date +%s.%N)
  kill "$mock_pid" 2>/dev/null || true
  mock_pid=""
  figures "$work/mock-$1/eval.json"
  echo "wall time $(python3 -c "print(f'{$t1 - $t0:.1f}')") s at 4 jobs"
}

if [ -n "${RESEARCHFLOW_BENCH_EMBEDDINGS:-}" ]; then
  model="$(realpath "$RESEARCHFLOW_BENCH_EMBEDDINGS")"
  echo "== (a') offline engine, ranking by meaning too ($model)"
  mkdir -p "$work/meaning"
  printf '{"search": {"embeddings": {"model": "%s"}}}\n' "$model" > "$work/meaning/agent.config.json"
  t0=$(date +%s.%N)
  (cd "$work/meaning" && "$bin" -q eval "$set_file" --offline --corpus "$corpus" \
    --index-dir "$work/meaning/index" --out-dir "$work/meaning/out" --json > "$work/meaning.out") || true
  t1=$(date +%s.%N)
  figures "$work/meaning/out/eval.json"
  echo "wall time $(python3 -c "print(f'{$t1 - $t0:.1f}')") s at 4 jobs, the first index's embedding included"
fi

echo "== (b) model pipeline against the stand-in server (quote mode, 10 ms a call)"
stand_in quote
echo "== (c) the same, the stand-in quoting the shown sentence that shares the most words with the question (quote-best)"
stand_in quote-best
