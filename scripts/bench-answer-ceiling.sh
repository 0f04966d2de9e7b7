#!/usr/bin/env bash
# How far can the offline engine's answers go without a reader? Not a test: it prints figures.
# For each answerable question of a shipped eval set, the quotable units (sentences, split as
# the engine splits them) of the documents the engine's searches found are ranked by their
# content terms (weighted as the engine weighs them), by meaning (the embedding model) and by
# both; it prints how often a gold answer is among the first 1, 3 and 5
# (scripts/bench/answer_ceiling.py), beside what the engine answered. The first 3 by the best
# ranking is the most an answer of three quoted sentences could hold.
#
#   bench-answer-ceiling.sh [SET.jsonl CORPUS_DIR]   default: fixtures/eval/debian.jsonl over
#                                                   fixtures/corpus-debian
# Needs the embedding model (RESEARCHFLOW_BENCH_EMBEDDINGS, default
# target/models/all-MiniLM-L6-v2 from scripts/setup/embedding-model.sh). About 4 minutes for
# the debian set on 2 cores: the eval run's first index, then every sentence embedded.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
set_file="$(realpath "${1:-$root/fixtures/eval/debian.jsonl}")"
corpus="$(realpath "${2:-$root/fixtures/corpus-debian}")"
model="$(realpath "${RESEARCHFLOW_BENCH_EMBEDDINGS:-$root/target/models/all-MiniLM-L6-v2}")"
cd "$root"
cargo build --release --quiet --bin researchflow --example answer_units
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release"
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-ceiling.XXXXXX")"
trap 'rm -rf "$work"' EXIT

printf '{"search": {"embeddings": {"model": "%s"}}}\n' "$model" > "$work/agent.config.json"
(cd "$work" && "$target/researchflow" -q eval "$set_file" --offline --corpus "$corpus" \
  --index-dir "$work/index" --out-dir "$work/out" --json > "$work/eval.out") || true
python3 - "$work/out/eval.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["totals"]
print(f"the engine (words and meaning): answered {t['answer_matches']} of {t['questions']}, "
      f"F1 {t['f1']:.3f}")
PY
units="$target/examples/answer_units"
"$units" units "$corpus" "$work/index" > "$work/units.jsonl"
python3 -c 'import json,sys; [print(json.loads(l)[sys.argv[2]]) for l in open(sys.argv[1])]' \
  "$work/units.jsonl" text > "$work/units.txt"
python3 -c 'import json,sys; [print(json.loads(l)[sys.argv[2]]) for l in open(sys.argv[1])]' \
  "$set_file" question > "$work/questions.txt"
for f in units questions; do
  "$units" terms < "$work/$f.txt" > "$work/$f.terms"
  "$units" embed "$model" < "$work/$f.txt" > "$work/$f.vec"
done
python3 scripts/bench/answer_ceiling.py "$set_file" "$work/out" "$work/units.jsonl" \
  "$work/units.terms" "$work/questions.terms" "$work/units.vec" "$work/questions.vec"
