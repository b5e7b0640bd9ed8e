#!/usr/bin/env bash
# Redlock's uncontended lock cycle on 5 independent Redis masters against
# the "5 x single Redis" limit, in the same run on the same servers.
#
# A Redlock cycle asks every node what a single-instance cycle asks one
# node (SET NX PX, then the compare-and-delete script), so on a machine
# where the client's CPU is the bottleneck a cycle costs five single
# cycles, and the limit is a fifth of locklab's own single-Redis rate
# (bench/uncontended.json, --algorithm redis, on the first of the five).
# A ratio above 1 means the fan-out (all nodes asked at once) wins back
# more than it costs; below 1 is Redlock's own overhead.
#
#   bench/redlock_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS=16, SECONDS_PER_RUN=5)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
rounds=${1:-3}
clients=${CLIENTS:-16}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }

. bench/cluster_lib.sh
cluster_up 5 0
first=${redis_eps%%,*}
echo "5 redis masters: $redis_eps; $clients clients, ${secs}s per run"
printf '%-6s %14s %14s %14s %8s\n' round redis/s limit=redis/5 redlock/s ratio
singles=() redlocks=()
for r in $(seq "$rounds"); do
  "$bin" run bench/uncontended.json --algorithm redis --redis "$first" \
    --clients "$clients" --duration "$secs" --quiet --out "$work/redis-$r" >/dev/null
  "$bin" run bench/uncontended.json --algorithm redlock --redis "$redis_eps" \
    --clients "$clients" --duration "$secs" --quiet --out "$work/redlock-$r" >/dev/null
  one=$(acquire_rate "$work/redis-$r")
  five=$(acquire_rate "$work/redlock-$r")
  awk -v r="$r" -v o="$one" -v f="$five" 'BEGIN { printf "%-6s %14.1f %14.1f %14.1f %8.3f\n", r, o, o / 5, f, f / (o / 5) }'
  singles+=("$one") redlocks+=("$five")
done
ms=$(printf '%s\n' "${singles[@]}" | median)
mr=$(printf '%s\n' "${redlocks[@]}" | median)
awk -v s="$ms" -v f="$mr" -v n="$rounds" 'BEGIN {
  printf "median over %d rounds: redlock %.1f cycles/s, single redis %.1f, limit (single/5) %.1f, ratio %.3f\n", n, f, s, s / 5, f / (s / 5) }'
