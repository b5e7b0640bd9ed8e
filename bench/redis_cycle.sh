#!/usr/bin/env bash
# locklab's uncontended Redis lock cycle against the limit redis-benchmark
# sets on the same redis-server, measured in the same run.
#
# A cycle is SET NX PX then the compare-and-delete EVALSHA, so with the
# server as the bottleneck the best a client can do is
#     limit = 1 / (1/SET_rps + 1/EVALSHA_rps)
# locklab's rate is acquisitions per second of bench/uncontended.json (50
# clients, one key each, no hold). Rounds alternate the peer and locklab so
# drift on this shared machine hits both. When taskset is there and the
# machine has two cores or more, the server gets core 0 and both clients
# core 1, as redis.io's benchmarking advice has it: otherwise whichever
# client happens to share a core with the server loses, and the figure
# measures the scheduler.
#
#   bench/redis_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS, SECONDS_PER_RUN, PIN=0 to not pin)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
rounds=${1:-5}
clients=${CLIENTS:-50}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }

. bench/lib.sh
pin_server=() pin_client=()
if [ "${PIN:-1}" = 1 ] && command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
  pin_server=(taskset -c 0) pin_client=(taskset -c 1)
fi
start_redis "${pin_server[@]}"

release='if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) end return 0'
sha=$(redis-cli -p "$port" SCRIPT LOAD "$release")
n=$((clients * 4000))

rps() { # redis-benchmark -q prints "NAME: 105263.16 requests per second, p50=..."
  "${pin_client[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$clients" -n "$n" -q "$@" 2>/dev/null |
    tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") v = $(i-1) } END { print v }'
}

echo "redis-server on 127.0.0.1:$port${pin_server[*]:+ (server: ${pin_server[*]}, clients: ${pin_client[*]})}; $clients clients"
printf '%-6s %12s %12s %12s %12s %8s\n' round set_rps evalsha_rps limit locklab ratio
ratios=()
for r in $(seq "$rounds"); do
  set_rps=$(rps SET lock:bench owner NX PX 10000)
  eval_rps=$(rps EVALSHA "$sha" 1 lock:bench owner)
  "${pin_client[@]}" "$bin" run bench/uncontended.json --redis "127.0.0.1:$port" --clients "$clients" \
    --duration "$secs" --quiet --out "$work/run-$r" >/dev/null
  cycle=$(awk -F'|' '$2 ~ /^ acquire $/ { gsub(/ /, "", $4); print $4 }' "$work/run-$r/report.md")
  read -r limit ratio < <(awk -v s="$set_rps" -v e="$eval_rps" -v c="$cycle" \
    'BEGIN { l = 1 / (1/s + 1/e); printf "%.1f %.3f\n", l, c / l }')
  printf '%-6s %12.1f %12.1f %12.1f %12.1f %8.3f\n' "$r" "$set_rps" "$eval_rps" "$limit" "$cycle" "$ratio"
  ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END {
  m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "median ratio locklab / redis-benchmark limit over %d rounds: %.3f (target >= 0.95)\n", NR, m }'
