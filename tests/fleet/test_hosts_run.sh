#!/usr/bin/env bash
# A run whose servers locklab places on other hosts, reached over SSH: 3
# hosts the test makes (tests/lib/testhosts.sh: network namespaces with
# their own PID and mount namespaces and sshd, so a pid killed or a file
# written on this machine instead of on the host fails here), the
# sentinel failover row (scenarios/matrix/10_redis_sentinel_failover.json:
# master, replica and sentinel, one per host as Jepsen places one db per
# node; the master SIGKILLed over SSH, the replica promoted) with the
# verdict of the local fleet; the kill and the start seen in the hosts'
# command logs; afterwards no server and no folder of the run on any host.
# Also locklab stopped in the middle of a run by Ctrl-C, Ctrl-C twice and
# SIGKILL: nothing left there (the last two by its janitor).
#   tests/fleet/test_hosts_run.sh SOURCE_DIR LOCKLAB_BIN
set -uo pipefail
cleanup_more() { [ -n "${hosts:-}" ] && "$th" down "$hosts" >/dev/null 2>&1; }
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" hosts-run "$@"
th="$src/tests/lib/testhosts.sh"
hosts="$tmp/hosts"
if ! "$th" up "$hosts" 3 >"$tmp/up.out" 2>&1; then
  fail "testhosts up: $(cat "$tmp/up.out")"
  exit 1
fi
addr() { sed -n "s/^h$1 .*ansible_host=\([0-9.]*\).*/\1/p" "$hosts/inventory.ini"; }
on() { ssh -F "$hosts/ssh_config" "$@"; }
hosts_args=(--hosts "$hosts/inventory.ini" --ssh-known-hosts "$hosts/known_hosts")

# Nothing of the run on host I: no redis-server or sentinel, no folder.
nothing_left() { # nothing_left WHAT
  local i left
  for i in 1 2 3; do
    left=$(on "h$i" 'pgrep -a redis; ls -d /tmp/locklab-* /var/tmp/locklab-* 2>/dev/null; nft list tables' 2>&1)
    if [ -z "$left" ]; then
      ok "$1: nothing left on h$i"
    else
      fail "$1: left on h$i: $(tr '\n' ' ' <<<"$left")"
    fi
  done
}

# --- the failover row on the hosts -------------------------------------------
rc=0
timeout 120 "$bin" run scenarios/matrix/10_redis_sentinel_failover.json "${hosts_args[@]}" \
  --out "$tmp/failover" >"$tmp/failover.out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q '^End of run: PASS (safe)' "$tmp/failover.out"; then
  ok "failover: $(grep '^End of run' "$tmp/failover.out")"
else
  fail "failover: exit $rc: $(tail -n 5 "$tmp/failover.out" | tr '\n' '|')"
fi
for want in "redis $(addr 1):[0-9]+ \(managed on host h1, pid [0-9]+" \
  "redis $(addr 2):[0-9]+ \(managed on host h2, pid [0-9]+, replica" \
  "sentinel $(addr 1):[0-9]+ \(managed on host h1, pid [0-9]+"; do
  grep -Eq "server: $want" "$tmp/failover.out" && ok "failover: server: $want" ||
    fail "failover: no line 'server: $want'"
done
kill_line=$(grep -E '^ +SIGKILL redis-1 \(pid [0-9]+\); sentinel promoted redis-2' "$tmp/failover.out")
if [ -n "$kill_line" ]; then
  ok "failover:$kill_line"
else
  fail "failover: no kill and promotion in the report: $(grep -A2 'failover:' "$tmp/failover.out" | tr '\n' '|')"
fi
# the pid the report names is h1's: its kill is in h1's command log, and no
# process here ever had it as a redis-server
pid=$(sed -n 's/^ *SIGKILL redis-1 (pid \([0-9]*\)).*/\1/p' "$tmp/failover.out")
if [ -n "$pid" ] && "$th" log "$hosts" 1 | grep -q "kill -KILL $pid"; then
  ok "failover: h1's command log has the kill of its pid $pid"
else
  fail "failover: h1's command log lacks 'kill -KILL $pid'"
fi
"$th" log "$hosts" 2 | grep -q "setsid 'redis-server'" && ok "failover: h2's log has its replica's start" ||
  fail "failover: h2's command log lacks the replica's start"
[ -s "$tmp/failover/servers/redis-1.log" ] && grep -q 'Ready to accept' "$tmp/failover/servers/redis-1.log" &&
  ok "failover: redis-1's log fetched back from h1" || fail "failover: no redis-1 log in the run folder"
nothing_left failover

# --- the replica's link cut on its host (nftables there), then the master
# killed: without WAIT the promoted replica lacks the lock (UNSAFE), with
# WAIT 1 nobody was granted it on a master alone (safe), as on this machine
row() { # row NAME FILE WANT_END
  local rc=0
  timeout 120 "$bin" run "scenarios/matrix/$2.json" "${hosts_args[@]}" --out "$tmp/$1" \
    >"$tmp/$1.out" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] && grep -Eq "^End of run: $3" "$tmp/$1.out"; then
    ok "$1: $(grep '^End of run' "$tmp/$1.out")"
  else
    fail "$1: exit $rc: $(tail -n 4 "$tmp/$1.out" | tr '\n' '|')"
  fi
  cut=$(grep -E "nftables table locklab_[A-Za-z0-9_]+ on host h2 drops redis-2's packets to and from its master $(addr 1):[0-9]+; then table locklab_[A-Za-z0-9_]+ removed on host h2" "$tmp/$1.out")
  [ -n "$cut" ] && ok "$1:$cut" || fail "$1: no cut on h2 in the report"
  nothing_left "$1"
}
row cut 11_redis_sentinel_cut_failover "PASS \(expected UNSAFE: [0-9]+ violations?"
row cut_wait 12_redis_sentinel_cut_failover_wait "PASS \(safe\)"

# --- stopped in the middle: Ctrl-C (the run stops its servers there),
# Ctrl-C twice and SIGKILL (its janitor reaches the hosts from the notes
# the run left in its folder) ---------------------------------------------------
# nothing_left_within WHAT SECONDS: nothing_left, once the hosts are clear or
# the time is up
nothing_left_within() {
  local i s
  for ((s = 0; s < $2 * 10; s++)); do
    left=
    for i in 1 2 3; do
      left+=$(on "h$i" 'pgrep -a redis; ls -d /tmp/locklab-* /var/tmp/locklab-* 2>/dev/null; nft list tables' 2>&1)
    done
    [ -z "$left" ] && break
    sleep 0.1
  done
  nothing_left "$1"
}
case_stop() { # case_stop NAME SIGNALS WANT_EXIT
  local name=$1 sigs=$2 want=$3 s rc=0
  TMPDIR=/var/tmp "$bin" run "scenarios/matrix/${scenario:-10_redis_sentinel_failover}.json" "${hosts_args[@]}" \
    --duration 30 --out "$tmp/$name" >"$tmp/$name.out" 2>&1 &
  pid=$!
  for _ in $(seq 200); do # the servers up on the hosts
    on h2 'pgrep redis-server' >/dev/null 2>&1 && break
    sleep 0.1
  done
  sleep 2
  for s in $sigs; do
    kill -"$s" "$pid"
    sleep 0.2
  done
  wait "$pid" || rc=$?
  pid=
  [ "$rc" -eq "$want" ] && ok "$name: exit $rc" || fail "$name: exit $rc (want $want): $(tail -n 3 "$tmp/$name.out" | tr '\n' '|')"
  nothing_left_within "$name" 20
  # and here: its run folder (in /var/tmp, a folder every host has too)
  ls -d /var/tmp/locklab-?????? 2>/dev/null | grep -qv "$before_var" &&
    fail "$name: a run folder left here: $(ls -d /var/tmp/locklab-??????)" ||
    ok "$name: no run folder left here"
}
before_var=$(ls -d /var/tmp/locklab-?????? 2>/dev/null | paste -sd'|' -)
before_var=${before_var:-none}
case_stop interrupted INT 130
case_stop interrupted_twice "INT INT" 130
case_stop killed KILL 137
scenario=11_redis_sentinel_cut_failover case_stop killed_during_cut KILL 137

"$th" down "$hosts" >"$tmp/down.out" 2>&1 || fail "testhosts down: $(cat "$tmp/down.out")"
hosts=
exit "$failed"
