#!/usr/bin/env bash
# What a stopped locklab leaves behind: nothing. For the etcd lock on a
# 3-member cluster and the PostgreSQL lock behind pgbouncer, each in the
# middle of a run and in the middle of a fault (the leader or the server
# SIGSTOPped), and for the redis-cluster lock in the middle of a
# failover (a replica cut off, its master killed, the replica not yet
# promoted, another master partitioned) and the mysql-row lock in the
# middle of MariaDB's kill (down, its restart still ahead), locklab is
# stopped by Ctrl-C (SIGINT: exit 130), SIGTERM
# (130 too) and by
# SIGKILL (no chance to clean up: its janitor does, sim/fleet/janitor.h),
# and PostgreSQL's also by Ctrl-C twice (the run folder removed at once,
# the shared folder left to the janitor).
# Then no etcd, postgres, pgbouncer, redis-server or mariadbd process of
# the run may be left,
# running or stopped, no folder of it in TMPDIR, and no shared folder of
# it (PostgreSQL's and pgbouncer's, /var/tmp/locklab-UID/..., which the
# run folder links to). TMPDIR is mktemp's, 0700: the postgres user needs
# nothing of it.
#   tests/runs/test_cleanup.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
cleanup_more() { # a server its locklab left
  pkill -KILL -f "$tmp" 2>/dev/null
  [ -n "${shared:-}" ] && pkill -KILL -f "$shared" 2>/dev/null
}
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" cleanup "$@"
shared=

# The run's processes: by the folder their command lines name
# (pgbouncer's ini, postgres's -D, etcd's --data-dir), or by the folder
# they work in (redis-server rewrites its command line to its address,
# and works in its --dir).
ours() {
  local p
  pgrep -f "$tmp/locklab-" 2>/dev/null
  [ -n "${shared:-}" ] && pgrep -f "$shared/" 2>/dev/null
  for p in $(pgrep redis-server 2>/dev/null); do
    [[ $(readlink /proc/"$p"/cwd 2>/dev/null) == "$tmp"/* ]] && echo "$p"
  done
}
# The run's servers, and the postmaster's children, which name none.
left() {
  local p out=""
  for p in $(ours); do
    out+=" $p:$(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null | cut -c1-60)"
  done
  for p in $postmasters; do
    [ -n "$(pgrep -P "$p" 2>/dev/null)" ] && out+=" children of $p"
  done
  for p in $children; do # given to init once their postmaster died: found by pid
    grep -q '^postgres' /proc/"$p"/cmdline 2>/dev/null && out+=" $p:$(tr '\0' ' ' </proc/"$p"/cmdline | cut -c1-60)"
  done
  echo "$out"
}

# case_run NAME SCENARIO SIGNAL WANT_STATUS: start, wait until the fault
# has stopped a server, stop locklab with SIGNAL (INT2: Ctrl-C twice),
# then look.
case_run() { # case_run NAME SCENARIO SIGNAL EXIT [SECONDS after a server is seen stopped]
  local name=$1 scenario=$2 sig=$3 want=$4 after=${5:-0}
  local out="$tmp/out-$name"
  TMPDIR=$tmp "$bin" run "$scenario" --quiet --out "$out" >"$tmp/$name.log" 2>&1 &
  pid=$!
  local i stopped=0 what="" l runs="" r
  shared=
  for i in $(seq 300); do # up to 30 s for the fault to stop a server
    for l in "$tmp"/locklab-*/postgres-*; do # a link to the servers' shared folder
      [ -L "$l" ] && shared=$(dirname "$(readlink "$l")")
    done
    for l in "$tmp"/locklab-*; do # its netfilter table is named after it
      [ -d "$l" ] && [[ " $runs " != *" ${l##*/locklab-} "* ]] && runs+=" ${l##*/locklab-}"
    done
    for p in $(ours); do
      grep -q '^State:.*T' /proc/"$p"/status 2>/dev/null && stopped=1 &&
        what=$(tr '\0' ' ' </proc/"$p"/cmdline)
    done
    [ "$stopped" = 1 ] && break
    sleep 0.1
  done
  postmasters=$(pgrep -f "${shared:-$tmp/locklab-.*}/postgres-[0-9]*/data" 2>/dev/null | tr '\n' ' ')
  children=$(for p in $postmasters; do pgrep -P "$p"; done | tr '\n' ' ')
  sleep "$after"
  if [ "$sig" = INT2 ]; then # the second abandons the report: the run folder goes at once
    kill -INT "$pid"
    sleep 0.05 # two at once would be one pending signal
    kill -INT "$pid"
  else
    kill "-$sig" "$pid"
  fi
  wait "$pid"
  local rc=$?
  pid=
  [ "$rc" -eq "$want" ] && ok "$name: exit $rc" || fail "$name: exit $rc, wanted $want ($(tail -2 "$tmp/$name.log"))"
  if [ "$sig" = INT2 ]; then
    [ ! -e "$out/report.json" ] && ok "$name: the report abandoned" ||
      fail "$name: a report was written: the second Ctrl-C came too late to abandon it"
  fi
  local when="when locklab was"
  [ "$after" != 0 ] && when="$after s before locklab was"
  [ "$stopped" = 1 ] && ok "$name: a server was stopped (SIGSTOP) $when" ||
    fail "$name: no server was stopped when locklab was: the fault had not begun"
  # pg-1 behind pgbouncer is the PostgreSQL server, not the pooler in front
  case $name in pg-*) [[ $what == */bin/postgres\ -D* ]] && ok "$name: pg-1 is PostgreSQL" ||
    fail "$name: pg-1 paused \"$what\", not PostgreSQL" ;; esac
  local rest=
  for i in $(seq 100); do # the janitor takes a moment after a SIGKILL
    rest=$(left)
    [ -z "$rest" ] && [ -z "$(ls -d "$tmp"/locklab-* 2>/dev/null)" ] &&
      { [ -z "$shared" ] || [ ! -e "$shared" ]; } && break
    sleep 0.1
  done
  [ -z "$rest" ] && ok "$name: no server left" || fail "$name: left running:$rest"
  [ -z "$(ls -d "$tmp"/locklab-* 2>/dev/null)" ] && ok "$name: no folder left" ||
    fail "$name: left $(ls -d "$tmp"/locklab-*)"
  case $name in rc-*)
    local tables=""
    for r in $runs; do
      nft list table inet "locklab_$r" >/dev/null 2>&1 && tables+=" locklab_$r"
    done
    [ -n "$runs" ] && [ -z "$tables" ] && ok "$name: no nftables table left" ||
      fail "$name: left nftables table(s)${tables:- (no run folder seen)}" ;;
  esac
  case $name in pg-*)
    [[ $shared == /*/locklab-"$(id -u)"/[0-9a-f]* ]] && ok "$name: servers in $shared" ||
      fail "$name: no shared folder seen (\"$shared\")"
    [ -n "$shared" ] && [ ! -e "$shared" ] && ok "$name: no shared folder left" ||
      fail "$name: left $shared" ;;
  esac
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

# rc-4 cut off (stopped) at 0.3 s, its master rc-1 killed at 0.5 s, rc-4
# continued at 2.3 s and promoted some 2 s later: locklab is stopped 2.5 s
# after rc-4 is seen stopped, with rc-1 dead and the cluster failing over,
# and rc-2 partitioned from the rest since 0.2 s (its nftables table in
# force: the run's table must go too, sim/fleet/netfilter.h).
cat >"$tmp/rc.json" <<'JSON'
{ "name": "cleanup_redis_cluster", "clients": 4, "duration_s": 30, "seed": 1,
  "lock": { "algorithm": "redis-cluster", "ttl_ms": 2000, "wait_ms": 5000 },
  "workload": { "type": "flash_sale", "items": 2, "stock": 100000, "critical_ms": 5 },
  "faults": [ { "at_ms": 200, "type": "partition", "target": "rc-2", "side_clients": 1,
                "duration_ms": 20000 },
              { "at_ms": 300, "type": "replica_cut", "target": "rc-4", "duration_ms": 2000 },
              { "at_ms": 500, "type": "kill", "target": "rc-1" } ] }
JSON

# mysql-1 paused at 0.5 s for 1 s (seen stopped), then killed at 2 s, to
# come back only at 22 s: locklab is stopped 2.5 s after the pause was
# seen, with MariaDB down in the middle of its kill and the run waiting.
cat >"$tmp/my.json" <<'JSON'
{ "name": "cleanup_mysql", "clients": 4, "duration_s": 30, "seed": 1,
  "lock": { "algorithm": "mysql-row", "ttl_ms": 2000, "wait_ms": 1000 },
  "workload": { "type": "flash_sale", "items": 2, "stock": 100000, "critical_ms": 5 },
  "faults": [ { "at_ms": 500, "type": "pause", "target": "mysql-1", "duration_ms": 1000 },
              { "at_ms": 2000, "type": "kill", "target": "mysql-1", "restart_after_ms": 20000 } ] }
JSON

case_run my-ctrl-c "$tmp/my.json" INT 130 2.5
case_run my-sigterm "$tmp/my.json" TERM 130 2.5
case_run my-sigkill "$tmp/my.json" KILL 137 2.5
case_run rc-ctrl-c "$tmp/rc.json" INT 130 2.5
case_run rc-sigterm "$tmp/rc.json" TERM 130 2.5
case_run rc-sigkill "$tmp/rc.json" KILL 137 2.5
case_run etcd-ctrl-c "$tmp/etcd.json" INT 130
case_run etcd-sigkill "$tmp/etcd.json" KILL 137
case_run pg-ctrl-c "$tmp/pg.json" INT 130
case_run pg-sigkill "$tmp/pg.json" KILL 137
case_run pg-ctrl-c-twice "$tmp/pg.json" INT2 130
exit $failed
