#!/usr/bin/env bash
# What the queue's tests (tests/it/queue.rs) need: PostgreSQL's `initdb`, `pg_ctl`, `createdb` and
# `pg_dump`, with the `hstore` extension (apalis-postgres uses it). The tests start their own
# server on loopback in a temporary folder; this only installs the programs, from Debian's
# packages, when they are missing. Idempotent.
set -euo pipefail
for bin in /usr/lib/postgresql/*/bin; do
  if [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ] && ls /usr/share/postgresql/*/extension/hstore.control >/dev/null 2>&1; then
    exit 0
  fi
done
if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then
  exit 0
fi
if ! command -v apt-get >/dev/null; then
  echo "error: PostgreSQL's initdb and pg_ctl are missing and apt-get is not here: install PostgreSQL (15 or later) by hand" >&2
  exit 1
fi
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# The package's own cluster is not needed: policy-rc.d keeps it from starting where it can.
$sudo apt-get install -y -qq --no-install-recommends postgresql postgresql-contrib >/dev/null
ls /usr/lib/postgresql/*/bin/initdb >/dev/null
