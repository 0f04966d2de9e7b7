#!/usr/bin/env bash
# aiosmtpd (PyPI), a third-party SMTP server the `watch --notify mailto:` tests send mail to
# and read it back from (its Maildir handler), pinned, in a virtualenv under the target folder
# where tests/it/support/smtp.rs finds it: target/smtp-venv.
# Idempotent: a venv that already has its pinned version is left as it is.
set -euo pipefail
cd "$(dirname "$0")/../.."
PYTHON="${PYTHON:-python3}"
dir="target/smtp-venv" version="1.4.6"
if "$dir/bin/python" -c "import importlib.metadata as m, sys, aiosmtpd.controller, aiosmtpd.handlers; sys.exit(m.version('aiosmtpd') != '$version')" 2>/dev/null; then
  exit 0
fi
echo "scripts/setup/smtp-python.sh: installing aiosmtpd==$version into $dir" >&2
rm -rf "$dir"
"$PYTHON" -m venv "$dir"
"$dir/bin/python" -m pip install --quiet --disable-pip-version-check "aiosmtpd==$version"
