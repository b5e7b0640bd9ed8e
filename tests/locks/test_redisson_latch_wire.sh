#!/usr/bin/env bash
# The wire check of redisson-latch, and the latch workload's verdicts,
# on one real redis-server on a free port:
#   1. a latch run (scenarios/latch.json, --algorithm redisson-latch)
#      PASSes with both invariants ok, while a waiter locklab did not write
#      (tests/locks/redisson_latch_peer.py, from Redisson's source) awaits
#      the same latch: it passes every round it joins, woken by the zero
#      message locklab's countDown publishes on Redisson's channel;
#   2. the same run with redisson-latch-naive FAILs, no_pass_before_zero
#      broken (its waiters pass when their 250 ms wait runs out, while the
#      parties' 400 ms of work go on); its coordinator first deletes the
#      latch the first run left set, cut mid-round;
#   3. `locklab check` on each run's folder, judging the latch from its
#      history alone (streamed and --in-memory), prints the run's verdict
#      and safety (PASS (safe); FAIL (safe, but 1 invariant broken)) and
#      its two invariant lines, counts and all;
#   4. everything both runs sent (MONITOR) is RCountDownLatch as
#      tests/fixtures/redisson_wire.json pins it (tests/wire/monitor_check.py
#      --latch): trySetCount, countDown, getCount, SUBSCRIBE, UNSUBSCRIBE
#      (and delete).
# node-redisson (tests/wire) has no CountDownLatch (its 1.0.4 has RLock
# alone), so the peer here is the Python one.
#   tests/locks/test_redisson_latch_wire.sh SOURCE_DIR LOCKLAB_BIN
set -euo pipefail
declare -A pid_of # a peer's PID by its name
pids=() # every process this test started and has not reaped, stopped by PID at the end
redis_pid=
# shellcheck disable=SC2317 # run by run_test.sh's clean-up
cleanup_more() {
  local p
  for p in "${pids[@]}" $redis_pid; do
    kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]}" $redis_pid; do
    wait "$p" 2>/dev/null || true
  done
}
# shellcheck source=tests/lib/run_test.sh
. "$(dirname "$0")/../lib/run_test.sh" redisson-latch-wire "$@"
# shellcheck source=tests/lib/peer_checks.sh
. "$src/tests/lib/peer_checks.sh"
py=/usr/bin/python3
export PYTHONDONTWRITEBYTECODE=1

redis_on_free_port || exit 1
echo "ran    redis-server on 127.0.0.1:$port (pid $redis_pid)"

redis-cli -p "$port" monitor >"$tmp/monitor.log" 2>&1 &
monitor_pid=$!
pids+=("$monitor_pid")
for _ in $(seq 50); do # MONITOR is on once it shows a PING of ours
  redis-cli -p "$port" ping >/dev/null
  grep -q '"ping"' "$tmp/monitor.log" 2>/dev/null && break
  sleep 0.1
done

# run NAME ALGORITHM: locklab's latch run on the server; its exit status
# in rc, its output in $tmp/NAME.out.
run() {
  rc=0
  timeout 60 "$bin" run scenarios/latch.json --algorithm "$2" --redis "127.0.0.1:$port" \
    --duration 4 --out "$tmp/$1" >"$tmp/$1.out" 2>&1 || rc=$?
  echo "ran    locklab run scenarios/latch.json --algorithm $2 (exit $rc): $(tail -1 "$tmp/$1.out")"
}

# 1. locklab's latch, a Redisson-protocol waiter beside its own.
"$py" "$src/tests/locks/redisson_latch_peer.py" --port "$port" --latch lock:latch:0 \
  --rounds 3 --deadline-s 30 >"$tmp/peer.sum" 2>"$tmp/peer.err" &
pids+=($!)
pid_of[peer]=$!
run ok redisson-latch
if [ "$rc" -eq 0 ] && grep -q '^End of run: PASS' "$tmp/ok.out" &&
  grep -q '^  ok   no_pass_before_zero ' "$tmp/ok.out" &&
  grep -q '^  ok   every_waiter_within_bound ' "$tmp/ok.out"; then
  ok "redisson-latch: PASS, $(grep -o '[0-9]* rounds of [^;]*' "$tmp/ok.out")"
else
  fail "redisson-latch: exit $rc, expected PASS with both invariants ok:"
  sed 's/^/         /' "$tmp/ok.out"
fi
if peer_wait peer; then
  expect peer passes -eq 3
  expect peer woken_zero -ge 1
fi

# 2. The naive latch on the same scenario must FAIL on the zero.
run naive redisson-latch-naive
if [ "$rc" -eq 1 ] && grep -q '^End of run: FAIL' "$tmp/naive.out" &&
  grep -q '^  !!!  no_pass_before_zero ' "$tmp/naive.out"; then
  ok "redisson-latch-naive: FAIL, $(grep -o '[0-9]* passed before the count reached zero' "$tmp/naive.out")"
else
  fail "redisson-latch-naive: exit $rc, expected FAIL with no_pass_before_zero broken:"
  sed 's/^/         /' "$tmp/naive.out"
fi
# 3. Each run judged again from its history alone, as the run judged it.
verdict_of() { # FILE PREFIX: the verdict and safety after PREFIX, before " - "
  sed -n "s/^$2 \([^-]*[^ -]\).*/\1/p" "$1" | tail -1
}
for name in ok naive; do
  for how in "" --in-memory; do
    crc=0
    "$bin" check "$tmp/$name" $how >"$tmp/$name.check$how" 2>&1 || crc=$?
    run_v=$(verdict_of "$tmp/$name.out" "End of run:")
    check_v=$(verdict_of "$tmp/$name.check$how" "End of check:")
    run_inv=$(grep -E '^  (ok  |!!! ) (no_pass_before_zero|every_waiter_within_bound) ' "$tmp/$name.out")
    check_inv=$(grep -E '^  (ok  |!!! ) (no_pass_before_zero|every_waiter_within_bound) ' \
      "$tmp/$name.check$how")
    want_rc=$([ "$name" = ok ] && echo 0 || echo 1)
    if [ -n "$run_v" ] && [ "$run_v" = "$check_v" ] && [ "$crc" -eq "$want_rc" ] &&
      [ -n "$run_inv" ] && [ "$run_inv" = "$check_inv" ]; then
      ok "check $name ${how:-(streamed)}: $(grep '^End of check:' "$tmp/$name.check$how"), the run's invariants to the letter"
    else
      fail "check $name ${how:-(streamed)} (exit $crc, expected $want_rc): run said '$run_v', check '$check_v':"
      sed 's/^/         /' "$tmp/$name.check$how"
      diff <(echo "$run_inv") <(echo "$check_inv") | sed 's/^/         /' || true
    fi
  done
done

# 4. What MONITOR showed of both runs, held to Redisson's RCountDownLatch.
kill "$monitor_pid" 2>/dev/null || true
reap "$monitor_pid" || true
if "$py" "$src/tests/wire/monitor_check.py" tests/fixtures/redisson_wire.json --latch \
  "$tmp/monitor.log" >"$tmp/monitor.check"; then
  ok "$(cat "$tmp/monitor.check")"
else
  fail "MONITOR against the fixture:"
  sed 's/^/         /' "$tmp/monitor.check"
fi

exit "$failed"
