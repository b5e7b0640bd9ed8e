#!/usr/bin/env bash
# How long the ZooKeeper clients' closes take at the end of a run whose
# server does not answer them: 40 idle clients (open loop, one step every
# 10 s each) on locklab's own ZooKeeper, the server SIGSTOPped (by its PID,
# found by the run's own TMPDIR) 0.2 s before the run's end and SIGCONTed
# 12 s later. zookeeper_close waits up to 1.5 s for the reply to its
# closeSession: run on the worker, one close at a time per worker (two
# every 1.5 s here); waited for in the seam, all at once. Prints the
# client sockets locklab still holds at points after the stop, from
# /proc/PID/fd, and when the last one went.
#
#   bench/zookeeper_close.sh     (env: LOCKLAB_BIN, BUILD_DIR)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=${LOCKLAB_BIN:-${BUILD_DIR:-build}/locklab}
[ -x "$bin" ] || { echo "build first: scripts/build.sh ($bin)" >&2; exit 2; }
work=$(mktemp -d)
lp='' zps=''
cleanup() {
  # shellcheck disable=SC2086 # one PID a word
  [ -n "$zps" ] && kill -CONT $zps 2>/dev/null
  [ -n "$lp" ] && kill "$lp" 2>/dev/null && wait "$lp" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cat > "$work/idle.json" <<JSON
{"name": "zookeeper_close", "clients": 40, "rate": 4, "duration_s": 4, "seed": 1,
 "lock": {"algorithm": "zookeeper", "ttl_ms": 10000, "wait_ms": 1000},
 "workload": {"type": "flash_sale", "items": 40, "stock": 1000000000, "critical_ms": 0,
              "skew": "per_client"}}
JSON
mkdir "$work/tmp"
TMPDIR=$work/tmp "$bin" run "$work/idle.json" -q -o "$work/run" >"$work/run.log" 2>&1 &
lp=$!
socks() { find /proc/"$lp"/fd -lname 'socket:*' 2>/dev/null | wc -l; }
now() { date +%s.%N; }
for _ in $(seq 1200); do [ "$(socks)" -ge 40 ] && break; sleep 0.05; done
[ "$(socks)" -ge 40 ] || { echo "the clients did not connect: $(cat "$work/run.log")" >&2; exit 3; }
sleep 3.8 # the run starts as the last client connects: 0.2 s before its end
zps=$(pgrep -f "$work/tmp/locklab-.*zoo" | tr '\n' ' ')
[ -n "$zps" ] || { echo "no ZooKeeper server of the run found" >&2; exit 3; }
# shellcheck disable=SC2086 # one PID a word
kill -STOP $zps
t_stop=$(now)
marks=(0.5 1 2 4 8 11.5) next=0 line="" gone=""
for _ in $(seq 400); do # 20 s at most
  n=$(socks)
  e=$(echo "$(now) - $t_stop" | bc)
  while [ "$next" -lt ${#marks[@]} ] && [ "$(echo "$e >= ${marks[$next]}" | bc)" = 1 ]; do
    line+=" +${marks[$next]} s: $n;"
    next=$((next + 1))
  done
  [ "$n" -lt 5 ] && { gone=$e; break; }
  if [ -n "$zps" ] && [ "$(echo "$e > 12" | bc)" = 1 ]; then
    # shellcheck disable=SC2086
    kill -CONT $zps
    zps=
  fi
  sleep 0.05
done
echo "client sockets open after the server stopped:${line:- (all gone before +0.5 s)}"
echo "all closed ${gone:-not within 20} s after the stop"
if [ -n "$zps" ]; then
  # shellcheck disable=SC2086
  kill -CONT $zps
  zps=''
fi
for _ in $(seq 600); do kill -0 "$lp" 2>/dev/null || break; sleep 0.1; done # its own end
wait "$lp"
echo "locklab: exit $? ($(tail -1 "$work/run.log"))"
lp=''
