#!/usr/bin/env bash
# The managed Redis Cluster (sim/fleet/redis_cluster_server.c), asked of
# the real redis-server with redis-cli: `locklab cluster up
# --redis-cluster-nodes 6` joins 3 masters and 3 replicas, every slot
# covered, each master's range and its one replica as the kind says; a key
# of each master's range is written through the first node (redis-cli -c
# follows MOVED) and read back from its master; a master SIGSTOPped past
# cluster-node-timeout is replaced by its replica and the cluster is ok
# again; `cluster down` leaves no node running. A count the kind does not
# run is refused before anything starts.
#   tests/runs/test_redis_cluster.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
cleanup_more() {
  [ -n "${stopped:-}" ] && kill -CONT "$stopped" 2>/dev/null
  TMPDIR=$tmp "$bin" cluster down >/dev/null 2>&1
  pkill -KILL -f "$tmp/" 2>/dev/null
}
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" redis_cluster "$@"
stopped=
export TMPDIR=$tmp
cli() { timeout 5 redis-cli -h 127.0.0.1 "$@"; }

out=$("$bin" cluster up --redis-nodes 0 --zookeeper-nodes 0 --redis-cluster-nodes 7 2>&1)
rc=$?
if [ $rc -eq 2 ] && [ -z "$(pgrep -f "$tmp/" 2>/dev/null)" ]; then
  ok "--redis-cluster-nodes 7 refused, nothing started: $out"
else
  fail "--redis-cluster-nodes 7: exit $rc: $out"
fi

if ! timeout 120 "$bin" cluster up --redis-nodes 0 --zookeeper-nodes 0 --redis-cluster-nodes 6 \
  >"$tmp/up.out" 2>&1; then
  fail "cluster up: $(cat "$tmp/up.out")"
  exit 1
fi
mapfile -t ports < <(awk '$2 == "redis-cluster" { sub(".*:", "", $3); print $3 }' "$tmp/up.out")
mapfile -t pids < <(awk '$2 == "redis-cluster" { print $5 }' "$tmp/up.out")
[ ${#ports[@]} -eq 6 ] || { fail "cluster up printed ${#ports[@]} nodes: $(cat "$tmp/up.out")"; exit 1; }
info=$(cli -p "${ports[0]}" cluster info | tr -d '\r')
if grep -qx "cluster_state:ok" <<<"$info" && grep -qx "cluster_slots_assigned:16384" <<<"$info" &&
  grep -qx "cluster_known_nodes:6" <<<"$info" && grep -qx "cluster_size:3" <<<"$info"; then
  ok "6 nodes, 3 masters, all 16384 slots assigned, cluster_state:ok"
else
  fail "cluster info: $info"
fi

# The layout the kind promises: master i (the i-th node) serves the i-th
# third of the slots; replica i (node 3 + i) follows master i.
cli -p "${ports[0]}" cluster nodes >"$tmp/nodes"
want_ranges=("0-5460" "5461-10921" "10922-16383")
layout_ok=1
for i in 0 1 2; do
  m=$(awk -v p="127.0.0.1:${ports[$i]}@" 'index($2, p) == 1' "$tmp/nodes")
  r=$(awk -v p="127.0.0.1:${ports[$((3 + i))]}@" 'index($2, p) == 1' "$tmp/nodes")
  mid=$(awk '{ print $1 }' <<<"$m")
  [[ $m == *master* ]] && [ "$(awk '{ print $9 }' <<<"$m")" = "${want_ranges[$i]}" ] &&
    [[ $r == *slave* ]] && [ "$(awk '{ print $4 }' <<<"$r")" = "$mid" ] || layout_ok=0
done
[ $layout_ok -eq 1 ] && ok "masters rc-1..rc-3 own the slots in thirds, rc-4..rc-6 replicate them in order" ||
  fail "layout: $(cat "$tmp/nodes")"

# One key per master's range, written through rc-1 (MOVED followed by
# redis-cli -c), read back from the master that owns its slot.
moved_ok=1
first_key=
for key in a b c d e f g h; do
  slot=$(cli -p "${ports[0]}" cluster keyslot "$key")
  owner=$((slot <= 5460 ? 0 : slot <= 10921 ? 1 : 2))
  [ $owner -eq 0 ] && [ -z "$first_key" ] && first_key=$key
  cli -c -p "${ports[0]}" set "$key" "v-$key" >/dev/null
  [ "$(cli -p "${ports[$owner]}" get "$key")" = "v-$key" ] || moved_ok=0
done
[ -n "$first_key" ] || moved_ok=0 # some of a..h hash into rc-1's third
[ $moved_ok -eq 1 ] && ok "keys of every range written through rc-1, each on the master of its slot" ||
  fail "a key was not where its slot says"

# rc-1 stopped past cluster-node-timeout (2 s): rc-4 promoted, the cluster ok.
kill -STOP "${pids[0]}" && stopped=${pids[0]}
promoted=0
for _ in $(seq 100); do # 20 s at most
  role=$(cli -p "${ports[3]}" role 2>/dev/null | head -1)
  state=$(cli -p "${ports[1]}" cluster info 2>/dev/null | tr -d '\r' | grep cluster_state)
  [ "$role" = master ] && [ "$state" = cluster_state:ok ] && { promoted=1; break; }
  sleep 0.2
done
kill -CONT "$stopped" && stopped=
[ $promoted -eq 1 ] && ok "rc-1 stopped: its replica rc-4 promoted, cluster_state:ok again" ||
  fail "rc-1 stopped: rc-4 is ${role:-?}, ${state:-no answer}"
[ "$(cli -p "${ports[3]}" get "$first_key")" = "v-$first_key" ] &&
  ok "rc-1's key $first_key served by rc-4 itself" ||
  fail "key $first_key on rc-4 after the failover: $(cli -p "${ports[3]}" get "$first_key")"

"$bin" cluster down >"$tmp/down.out" 2>&1 || fail "cluster down: $(cat "$tmp/down.out")"
left=""
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left+=" $p"; done
[ -z "$left" ] && ok "cluster down: no node left running" || fail "still running:$left"
exit $failed
