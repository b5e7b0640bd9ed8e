#!/usr/bin/env bash
# The main job, from nothing: install what is missing, build, and answer
# "which lock should we use?" for the flash sale: the quick scorecard, one
# lock of each family (Redis, Redis fenced, Redlock, Redisson, ZooKeeper,
# etcd as clientv3 3.4 and 3.5, PostgreSQL's advisory lock) through the six
# most telling fault classes on a managed local fleet, servers started
# afresh for every cell; then the grid and the answer line. The reports
# stay in runs/ (scorecard.html links every cell's report).
# Extra arguments go to `locklab scorecard` (e.g. --seeds 3 --out /tmp/sc).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh >/dev/null
exec build/locklab scorecard --suite quick "$@"
