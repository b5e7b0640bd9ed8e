#!/usr/bin/env bash
# locklab's uncontended redis-cluster lock cycle against redis-benchmark
# --cluster on the same Redis Cluster in the same run, paired as
# bench/client_sweep.sh pairs the single Redis: a cycle is SET NX PX then
# the compare-and-delete EVALSHA (algorithms/redis.c's release, which
# redis-cluster shares), so with the servers as the bottleneck the best N
# clients can do is
#     limit = 1 / (1/SET_rps + 1/EVALSHA_rps)
# both measured by redis-benchmark --cluster with N connections on random
# keys (-r), each key's {tag} one of the node it is sent to, as locklab's
# clients each have their own key (flash_sale, per_client skew, one item a
# client) spread over the slots by CRC16.
#
# The cluster: `locklab cluster up --redis-cluster-nodes 3` (3 masters, no
# replica: what a cycle costs, not what a replica's stream costs), in a
# throwaway folder, brought down on exit. Nothing is pinned: three servers
# and the client share the two cores, the same for both.
# Target: ratio >= 0.9 at every count.
#
#   bench/redis_cluster_cycle.sh [COUNT...]  (default 50 1000; env: LOCKLAB_BIN, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${LOCKLAB_BIN:-build/locklab}")
secs=${SECONDS_PER_RUN:-3}
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(50 1000)
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
command -v redis-benchmark >/dev/null || { echo "redis-benchmark not found" >&2; exit 2; }
for n in "${counts[@]}"; do
  [[ "$n" =~ ^[1-9][0-9]*$ ]] || { echo "$n: not a client count" >&2; exit 2; }
done

. bench/cluster_lib.sh
"$bin" cluster up --redis-nodes 0 --zookeeper-nodes 0 --redis-cluster-nodes 3 \
  --dir "$cluster_dir" >/dev/null
eps=$(sed -n 's/^redis-cluster=//p' "$cluster_dir/state")
[ -n "$eps" ] || { echo "no redis-cluster line in $cluster_dir/state" >&2; exit 3; }
first=${eps%%,*}
port=${first##*:}

release="if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
sha=""
for ep in ${eps//,/ }; do # EVALSHA finds it on whichever master a key's slot is
  sha=$(redis-cli -p "${ep##*:}" SCRIPT LOAD "$release")
done

flush() { local ep; for ep in ${eps//,/ }; do redis-cli -p "${ep##*:}" FLUSHALL >/dev/null; done; }

rps() { # N, then the command; -q prints "NAME: 105263.16 requests per second, ..."
  local c=$1
  shift
  redis-benchmark --cluster -h 127.0.0.1 -p "$port" -c "$c" -n $((c > 5000 ? 20 * c : 100000)) \
    -r 1000000 -q "$@" 2>/dev/null | tr '\r' '\n' |
    awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") v = $(i-1) } END { print v }' ||
    true
}

locklab_run() { # N: sets cycle, p50, p99 (ms), or why
  local n=$1 out="$work/run-$1"
  cat >"$work/cycle-$n.json" <<EOF
{
  "name": "redis_cluster_cycle",
  "clients": $n,
  "duration_s": $secs,
  "lock": { "algorithm": "redis-cluster", "ttl_ms": 10000, "wait_ms": 1000,
            "redis_cluster": { "masters": 3, "replicas": 0 } },
  "workload": { "type": "flash_sale", "items": $n, "stock": 1000000000, "critical_ms": 0, "skew": "per_client" },
  "expect": { "violations": 0 }
}
EOF
  local rc=0
  "$bin" run "$work/cycle-$n.json" --redis-cluster "$eps" --quiet --out "$out" >/dev/null \
    2>"$work/err-$n" || rc=$?
  why=""
  if [ "$rc" -ne 0 ]; then
    why="locklab exit $rc: $(head -n 1 "$work/err-$n")"
    return 1
  fi
  read -r cycle p50 p99 < <(awk -F'|' '$2 ~ /^ acquire $/ {
      for (i = 4; i <= 7; i++) gsub(/ /, "", $i); print $4, $5, $7 }' "$out/report.md")
}

echo "Redis Cluster of 3 masters ($eps); ${secs} s a run"
printf '%7s %11s %11s %11s %11s %9s %9s %7s\n' clients set_rps evalsha_rps limit locklab \
  p50_ms p99_ms ratio
fails=()
for n in "${counts[@]}"; do
  flush
  if ! locklab_run "$n"; then
    printf '%7s  %s\n' "$n" "$why"
    fails+=("$n: not run")
    continue
  fi
  flush
  set_rps=$(rps "$n" SET 'lock:{tag}:__rand_int__' owner NX PX 10000)
  eval_rps=$(rps "$n" EVALSHA "$sha" 1 'lock:{tag}:__rand_int__' owner)
  if [ -z "$set_rps" ] || [ -z "$eval_rps" ]; then
    printf '%7s  redis-benchmark --cluster gave no rate at %s connections\n' "$n" "$n"
    fails+=("$n: no redis-benchmark rate")
    continue
  fi
  read -r limit ratio < <(awk -v s="$set_rps" -v e="$eval_rps" -v c="$cycle" \
    'BEGIN { l = 1 / (1/s + 1/e); printf "%.1f %.3f\n", l, c / l }')
  printf '%7s %11.1f %11.1f %11.1f %11.1f %9s %9s %7.3f\n' "$n" "$set_rps" "$eval_rps" "$limit" \
    "$cycle" "$p50" "$p99" "$ratio"
  awk -v r="$ratio" 'BEGIN { exit !(r < 0.9) }' && fails+=("$n: ratio $ratio < 0.9")
done
if [ ${#fails[@]} -eq 0 ]; then
  echo "target (ratio >= 0.9 at every count): met"
else
  echo "target (ratio >= 0.9 at every count): missed: $(IFS=';'; echo "${fails[*]}")"
  exit 1
fi
