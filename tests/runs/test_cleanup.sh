#!/usr/bin/env bash
# What a stopped locklab leaves behind: nothing. For the etcd lock on a
# 3-member cluster and the PostgreSQL lock behind pgbouncer, each in the
# middle of a run and in the middle of a fault (the leader or the server
# SIGSTOPped), locklab is stopped by Ctrl-C (SIGINT: exit 130) and by
# SIGKILL (no chance to clean up: its janitor does, sim/fleet/janitor.h).
# Then no etcd, postgres or pgbouncer process of the run may be left,
# running or stopped, and no folder of it in TMPDIR.
#   tests/runs/test_cleanup.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
cleanup_more() { pkill -KILL -f "$tmp" 2>/dev/null; } # a server its locklab left
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" cleanup "$@"
chmod 711 "$tmp" # the postgres user passes through to its folders

# The run's servers, by the folder their command lines name (pgbouncer's
# ini, postgres's -D, etcd's --data-dir), and the postmaster's children,
# which name none.
left() {
  local p out=""
  for p in $(pgrep -f "$tmp/locklab-" 2>/dev/null); do
    out+=" $p:$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-60)"
  done
  for p in $postmasters; do
    [ -n "$(pgrep -P "$p" 2>/dev/null)" ] && out+=" children of $p"
  done
  echo "$out"
}

# case_run NAME SCENARIO SIGNAL WANT_STATUS: start, wait until the fault
# has stopped a server, stop locklab with SIGNAL, then look.
case_run() {
  local name=$1 scenario=$2 sig=$3 want=$4
  local out="$tmp/out-$name"
  TMPDIR=$tmp "$bin" run "$scenario" --quiet --out "$out" >"$tmp/$name.log" 2>&1 &
  pid=$!
  local i stopped=0 what=""
  for i in $(seq 300); do # up to 30 s for the fault to stop a server
    for p in $(pgrep -f "$tmp/locklab-"); do
      grep -q '^State:.*T' /proc/"$p"/status 2>/dev/null && stopped=1 &&
        what=$(tr '\0' ' ' </proc/"$p"/cmdline)
    done
    [ "$stopped" = 1 ] && break
    sleep 0.1
  done
  postmasters=$(pgrep -f "$tmp/locklab-.*/postgres-[0-9]*/data" 2>/dev/null | tr '\n' ' ')
  kill "-$sig" "$pid"
  wait "$pid"
  local rc=$?
  pid=
  [ "$rc" -eq "$want" ] && ok "$name: exit $rc" || fail "$name: exit $rc, wanted $want ($(tail -2 "$tmp/$name.log"))"
  [ "$stopped" = 1 ] && ok "$name: a server was stopped (SIGSTOP) when locklab was" ||
    fail "$name: no server was stopped when locklab was: the fault had not begun"
  # pg-1 behind pgbouncer is the PostgreSQL server, not the pooler in front
  case $name in pg-*) [[ $what == */bin/postgres\ -D* ]] && ok "$name: pg-1 is PostgreSQL" ||
    fail "$name: pg-1 paused \"$what\", not PostgreSQL" ;; esac
  local rest=
  for i in $(seq 100); do # the janitor takes a moment after a SIGKILL
    rest=$(left)
    [ -z "$rest" ] && [ -z "$(ls -d "$tmp"/locklab-* 2>/dev/null)" ] && break
    sleep 0.1
  done
  [ -z "$rest" ] && ok "$name: no server left" || fail "$name: left running:$rest"
  [ -z "$(ls -d "$tmp"/locklab-* 2>/dev/null)" ] && ok "$name: no folder left" ||
    fail "$name: left $(ls -d "$tmp"/locklab-*)"
}

cat >"$tmp/etcd.json" <<'JSON'
{ "name": "cleanup_etcd", "clients": 4, "duration_s": 30, "seed": 1,
  "lock": { "algorithm": "etcd", "ttl_ms": 2000, "wait_ms": 5000, "etcd": { "nodes": 3 } },
  "workload": { "type": "flash_sale", "items": 2, "stock": 100000, "critical_ms": 5 },
  "faults": [ { "at_ms": 1000, "type": "pause", "target": "etcd-leader", "duration_ms": 20000 } ] }
JSON
cat >"$tmp/pg.json" <<'JSON'
{ "name": "cleanup_pg", "clients": 4, "duration_s": 30, "seed": 1,
  "lock": { "algorithm": "postgres-advisory", "ttl_ms": 2000, "wait_ms": 5000,
            "postgres": { "pooler": "session" } },
  "workload": { "type": "flash_sale", "items": 2, "stock": 100000, "critical_ms": 5 },
  "faults": [ { "at_ms": 1000, "type": "pause", "target": "pg-1", "duration_ms": 20000 } ] }
JSON

case_run etcd-ctrl-c "$tmp/etcd.json" INT 130
case_run etcd-sigkill "$tmp/etcd.json" KILL 137
case_run pg-ctrl-c "$tmp/pg.json" INT 130
case_run pg-sigkill "$tmp/pg.json" KILL 137
exit $failed
