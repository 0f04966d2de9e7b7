#!/usr/bin/env bash
# Benchmarks researchflow's embedding of a corpus against ONNX Runtime run from Python on the
# same chunks, the same model and the same machine. Not part of the test suite: it prints
# figures.
#
# researchflow's side is examples/bench_embed.rs (a release build): it builds the corpus's
# index by words, writes its chunks (cut as the index cuts them) to chunks.jsonl, then times
# the index's open with the model, which embeds every chunk and keeps the vectors; then it
# times queries by meaning (one short query embedded, the documents ranked by their nearest
# chunk, top 10). The reference is scripts/bench/embed_reference.py: `tokenizers` and
# `onnxruntime.InferenceSession` with default CPU options, one text a run (its fastest setting
# here, as researchflow's: batches of 32 embed about 24 chunks/s), in the file's order,
# in a throwaway venv (target/bench-venv, pinned versions, reused when present). The two run
# in ROUNDS interleaved rounds (researchflow, reference, researchflow, ...); each side's
# fastest round counts, and the least query p50 and p99 of the rounds. Also printed: each
# side's peak memory (/usr/bin/time -v when present, else researchflow's VmHWM alone), and
# whether both sides' vectors agree (least cosine >= 0.999).
#
# Usage: scripts/bench-embed.sh [CORPUS_DIR] [MODEL_DIR] [ROUNDS]
#   defaults: fixtures/corpus-debian (~565 chunks), target/models/all-MiniLM-L6-v2 (from
#   scripts/setup/embedding-model.sh), 3. A round of the debian corpus takes 20-30 s a side on
#   2 cores.
# Targets: chunks/s ratio researchflow/reference >= 1.0 (on 2 cores the reference embeds
# about 34 chunks/s of the shipped corpora, whose chunks average about 200 tokens), query by
# meaning p50 <= 5 ms, index build peak memory <= 400 MB. Exits 1 when one is missed.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
corpus="$(realpath "${1:-$root/fixtures/corpus-debian}")"
model="$(realpath "${2:-$root/target/models/all-MiniLM-L6-v2}")"
rounds="${3:-3}"
cd "$root"
if [ ! -f "$model/model.onnx" ] || [ ! -f "$model/libonnxruntime.so" ]; then
  echo "error: \`$model\` is no model folder: make one with scripts/setup/embedding-model.sh" >&2
  exit 2
fi

cargo build --release --quiet --example bench_embed
target_dir="$(cargo metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
bench="$target_dir/release/examples/bench_embed"

venv="$target_dir/bench-venv"
pins="onnxruntime==1.31.1 tokenizers==0.23.3 numpy==2.4.6"
if [ "$(cat "$venv/pins" 2>/dev/null)" != "$pins" ]; then
  rm -rf "$venv"
  python3 -m venv "$venv"
  # shellcheck disable=SC2086 # the pins are words
  "$venv/bin/pip" install --quiet --disable-pip-version-check $pins
  echo "$pins" >"$venv/pins"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-bench-embed.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# measured NAME COMMAND...: runs COMMAND, its output shown and appended to $work/NAME.out,
# its peak memory (kB, when /usr/bin/time is there) appended to $work/NAME.kb.
measured() {
  local name="$1"
  shift
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$work/time.txt" "$@" | tee -a "$work/$name.out"
    sed -n 's/.*Maximum resident set size (kbytes): *//p' "$work/time.txt" >>"$work/$name.kb"
  else
    "$@" | tee -a "$work/$name.out"
  fi
}

for round in $(seq 1 "$rounds"); do
  echo "--- round $round of $rounds"
  measured researchflow "$bench" "$corpus" "$model" "$work/out"
  check=()
  [ "$round" -eq "$rounds" ] && check=(--check "$work/out/vectors.safetensors")
  measured reference "$venv/bin/python" scripts/bench/embed_reference.py \
    "$work/out/chunks.jsonl" "$model" "${check[@]}"
done

# best NAME: "CHUNKS SECONDS" of NAME's fastest round.
best() {
  sed -n 's/^[a-z]*: \([0-9]*\) chunks in \([0-9.]*\) s,.*/\1 \2/p' "$work/$1.out" | sort -g -k2 | head -n 1
}
read -r chunks rf_s < <(best researchflow)
read -r _ ref_s < <(best reference)
p50="$(sed -n 's/^query by meaning: p50 \([0-9.]*\) ms.*/\1/p' "$work/researchflow.out" | sort -g | head -n 1)"
p99="$(sed -n 's/^query by meaning: .* p99 \([0-9.]*\) ms.*/\1/p' "$work/researchflow.out" | sort -g | head -n 1)"
if [ -s "$work/researchflow.kb" ]; then
  rf_mb="$(($(sort -g "$work/researchflow.kb" | tail -n 1) / 1024))"
  ref_mb="$(($(sort -g "$work/reference.kb" | tail -n 1) / 1024))"
else
  rf_mb="$(sed -n 's/^peak memory (VmHWM): \([0-9]*\) MB/\1/p' "$work/researchflow.out" | sort -g | tail -n 1)"
  ref_mb="?"
fi

echo "--- $chunks chunks of $corpus, best of $rounds rounds, $(nproc) cores"
awk -v n="$chunks" -v a="$rf_s" -v b="$ref_s" 'BEGIN {
  printf "researchflow: %.1f chunks/s (%.2f s)\n", n / a, a
  printf "onnxruntime:  %.1f chunks/s (%.2f s)\n", n / b, b
  printf "ratio researchflow/onnxruntime: %.2f (target >= 1.0)\n", b / a
}'
echo "query by meaning (researchflow, least of the rounds): p50 $p50 ms, p99 $p99 ms (target p50 <= 5 ms)"
echo "peak memory: researchflow $rf_mb MB (target <= 400 MB), onnxruntime $ref_mb MB"
grep '^agreement:' "$work/reference.out" || true

fail=0
awk -v a="$rf_s" -v b="$ref_s" 'BEGIN { exit !(b / a >= 1.0) }' ||
  { echo "researchflow embeds slower than the reference" >&2; fail=1; }
awk -v p="$p50" 'BEGIN { exit !(p <= 5) }' || { echo "query p50 over 5 ms" >&2; fail=1; }
[ "$rf_mb" -le 400 ] || { echo "peak memory over 400 MB" >&2; fail=1; }
grep -q '^agreement: .*: agree$' "$work/reference.out" ||
  { echo "the two sides' vectors do not agree" >&2; fail=1; }
[ "$fail" -eq 0 ] && echo "all targets met"
exit "$fail"
