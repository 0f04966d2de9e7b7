#!/usr/bin/env bash
# The headless browser the view tests open the HTML views in (tests/it/view_browser.rs): Debian's
# `chromium`, with fonts so a page has glyphs to draw. Idempotent: nothing happens when
# `/usr/bin/chromium` is there. Installs with apt-get (root, or sudo when there is one).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "error: /usr/bin/chromium is missing and installing it needs root: run 'apt-get install chromium fonts-dejavu-core' as root" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core
/usr/bin/chromium --version
