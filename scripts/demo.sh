#!/usr/bin/env bash
# The main job, from nothing: install what is missing, build, and answer
# "which lock should we use?" for the flash sale: the same scenario with
# Redis, Redlock (5 masters) and ZooKeeper, one after another on a managed
# local fleet, then one table side by side; the reports stay in runs/.
# Extra arguments go to `locklab compare` (e.g. --duration 5 --out /tmp/cmp).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
exec build/locklab compare scenarios/flash_sale.json --algorithms redis,redlock,zookeeper "$@"
