#!/usr/bin/env bash
# Runs one planning round on a copy of a fixture stage (the seed's plan:test1..3):
#   scripts/plan-stage.sh 1|2|3 [extra researchflow flags]
# The fixture itself is never changed; the result is fixtures/plan_stageN.copy.json, a scratch
# file that each run replaces with a fresh copy of the stage (--overwrite-copy), unless another
# process is working on it.
set -euo pipefail
stage="${1:-}"
case "$stage" in
  1|2|3) ;;
  *) echo "usage: scripts/plan-stage.sh 1|2|3 [flags]" >&2; exit 2 ;;
esac
shift
cd "$(dirname "$0")/.."
exec cargo run --quiet --release -- plan "fixtures/plan_stage${stage}.json" --on-copy --overwrite-copy "$@"
