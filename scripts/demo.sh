#!/usr/bin/env bash
# The main job, from nothing: install what is missing, build, run the flash
# sale against a managed redis-server, print the summary, keep the reports.
# Extra arguments go to `locklab run` (e.g. --duration 5 --out /tmp/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
exec build/locklab run scenarios/flash_sale.json "$@"
