#!/usr/bin/env bash
# locklab's ZooKeeper lock cycle on uncontended keys against the raw rate of
# the same C client (libzookeeper_st, as locklab) on the same server, in the same run.
#
# Peer: build/bench/zk_raw_cycle, one session per thread, looping
# create(EPHEMERAL|SEQUENCE) + get_children + delete under its own parent:
# the three requests the lock recipe needs when nobody else holds the key.
# locklab: bench/uncontended.json with --algorithm zookeeper, every client
# on its own key, the same thread count. Rounds alternate peer and locklab
# so drift on this shared machine hits both; the ratio is of the medians.
#
#   bench/zookeeper_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS=16, SECONDS_PER_RUN=5)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
peer=${PEER_BIN:-build/bench/zk_raw_cycle}
rounds=${1:-3}
clients=${CLIENTS:-16}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] && [ -x "$peer" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }

. bench/cluster_lib.sh
cluster_up 0 1
echo "zookeeper on $zk_eps (standalone, tickTime 500, forceSync=no); $clients clients, ${secs}s per run"
printf '%-6s %14s %14s %8s\n' round raw_cycles/s locklab/s ratio
raws=() locks=()
for r in $(seq "$rounds"); do
  raw=$("$peer" "$zk_eps" "$clients" "$secs" | sed -n 's/.*rate=\([0-9.]*\).*/\1/p')
  "$bin" run bench/uncontended.json --algorithm zookeeper --zookeeper "$zk_eps" \
    --clients "$clients" --duration "$secs" --quiet --out "$work/run-$r" >/dev/null
  lk=$(acquire_rate "$work/run-$r")
  printf '%-6s %14.1f %14.1f %8.3f\n' "$r" "$raw" "$lk" "$(awk -v a="$lk" -v b="$raw" 'BEGIN { print a / b }')"
  raws+=("$raw") locks+=("$lk")
done
mr=$(printf '%s\n' "${raws[@]}" | median)
ml=$(printf '%s\n' "${locks[@]}" | median)
awk -v l="$ml" -v r="$mr" -v n="$rounds" 'BEGIN {
  printf "median over %d rounds: locklab %.1f cycles/s, raw client %.1f cycles/s, ratio %.3f (target >= 0.9)\n", n, l, r, l / r }'
