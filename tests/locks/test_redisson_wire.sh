#!/usr/bin/env bash
# The wire check of the redisson lock: an independent client speaking
# Redisson's protocol (tests/locks/redisson_peer.py, written from
# Redisson's scripts, not from locklab's code) and locklab contend on the
# same lock names of one real redis-server, and one merged history must
# keep mutual exclusion.
#   1. the peer alone against Redisson's facts: its hash field and
#      re-entry count (HGETALL, exact), the watchdog keeping a short lease
#      alive, the unlock message 0 on redisson_lock__channel:{name}; its
#      history two nested sections of one owner;
#   2. peer against peer: the merged history checks clean, and both woke
#      by message (the peer's own wiring, before locklab is involved);
#   3. locklab holds, the peers wait: a flash sale run with
#      --algorithm redisson while peers contend on its lock:stock:N keys;
#      the run PASSes, the merged history checks clean, the peer waited
#      and was woken by an unlock message (locklab publishes where Redisson
#      listens); a peer on a wrong channel was never woken by one, and a
#      peer that ignores the lock makes the same merged check FAIL;
#   4. the peer holds re-entrantly (HGETALL: its field, count 2), locklab
#      waits subscribed on the lock's channel (PUBSUB NUMSUB) and is
#      granted only after the peer's outer release, long before the
#      peer's lease could have lapsed; the same history with the peer's
#      outer release moved past locklab's grant must FAIL the check (the
#      nested section still holds the key).
# Parts 3 and 4 need locklab's redisson lock: without it the test FAILs
# (it never skips them silently).
#   tests/locks/test_redisson_wire.sh SOURCE_DIR LOCKLAB_BIN
set -euo pipefail
declare -A pid_of # a peer's or a run's PID by its name
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
. "$(dirname "$0")/../lib/run_test.sh" redisson-wire "$@"
# shellcheck source=tests/lib/peer_checks.sh
. "$src/tests/lib/peer_checks.sh"
py=/usr/bin/python3
peer=$src/tests/locks/redisson_peer.py
merge=$src/tests/lib/history_merge.py
export PYTHONDONTWRITEBYTECODE=1

redis_on_free_port || exit 1
rcli() { redis-cli -p "$port" "$@"; }
echo "ran    redis-server on 127.0.0.1:$port (pid $redis_pid)"

# Start a peer in the background: peer_bg NAME ARGS...; its summary goes
# to $tmp/NAME.sum, its history to $tmp/NAME.jsonl.
peer_bg() {
  local name=$1
  shift
  "$py" "$peer" --port "$port" --out "$tmp/$name.jsonl" "$@" >"$tmp/$name.sum" 2>"$tmp/$name.err" &
  pids+=($!)
  pid_of[$name]=$!
}

# 1. The peer alone, held to Redisson's facts.
key=lock:wire:reenter
chan="redisson_lock__channel:{$key}"
timeout 10 redis-cli -p "$port" subscribe "$chan" >"$tmp/sub.txt" 2>&1 &
sub_pid=$!
pids+=("$sub_pid")
for _ in $(seq 50); do
  [ "$(rcli pubsub numsub "$chan" | sed -n 2p)" = 1 ] && break
  sleep 0.1
done
peer_bg alone --lock "$key" --holds 1 --hold-ms 2500 --lease-ms 600 --reenter --deadline-s 15
hash=
for _ in $(seq 50); do # until the re-entry (the count 2) or 2.5 s
  hash=$(rcli hgetall "$key")
  [ "$(sed -n 2p <<<"$hash")" = 2 ] && break
  sleep 0.05
done
sleep 1.4 # more than two leases: only the watchdog keeps the lock now
hash_late=$(rcli hgetall "$key")
pttl_late=$(rcli pttl "$key")
if peer_wait alone; then
  owner=$(field "$tmp/alone.sum" owner)
  if ! [[ "$owner" =~ ^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}:[0-9]+$ ]]; then
    fail "alone: owner '$owner' is not <uuid4>:<thread id>"
  fi
  want=$(printf '%s\n2' "$owner")
  if [ "$hash" = "$want" ]; then
    ok "alone: HGETALL $key while held twice: {$owner: 2}"
  else
    fail "alone: HGETALL $key gave '$hash', expected '$want'"
  fi
  if [ "$hash_late" = "$want" ] && [ "$pttl_late" -gt 0 ]; then
    ok "alone: 1.4 s into a 600 ms lease still {$owner: 2}, pttl $pttl_late ms (renewed)"
  else
    fail "alone: after 1.4 s of a 600 ms lease HGETALL gave '$hash_late', pttl '$pttl_late'"
  fi
  expect alone grants -eq 1
  expect alone reentries -eq 1
  expect alone releases -eq 1
  expect alone lost -eq 0
  expect alone renewals -ge 3
fi
# Its history: two takes, two releases, the second take nested in the first.
n_ok=$(grep -c '"type":"ok","f":"acquire"' "$tmp/alone.jsonl" || true)
n_rel=$(grep -c '"type":"invoke","f":"release"' "$tmp/alone.jsonl" || true)
"$bin" check "$tmp/alone.jsonl" >"$tmp/alone.check" 2>&1 || true
if [ "$n_ok" = 2 ] && [ "$n_rel" = 2 ] &&
  grep -qxF 'checker: 2 sections, 0 violations (0 overlapping pairs), 0 concurrent entries' "$tmp/alone.check" &&
  grep -q '^End of check: PASS' "$tmp/alone.check"; then
  ok "alone: its history has 2 grants and 2 releases, checked as 2 nested sections of one owner"
else
  fail "alone: history with $n_ok grants, $n_rel releases (expected 2 and 2); locklab check:"
  sed 's/^/         /' "$tmp/alone.check"
fi
[ "$(rcli exists "$key")" = 0 ] || fail "alone: $key still exists after the release"
latches=$(rcli --scan --pattern 'redisson_unlock_latch*')
[ -z "$latches" ] || fail "alone: unlock latch keys left behind: $latches"
kill "$sub_pid" 2>/dev/null || true
reap "$sub_pid" 2>/dev/null || true
# redis-cli prints a message as three lines: message, channel, payload;
# the inner unlock (count 2 -> 1) publishes nothing, the outer one "0".
msgs=$(grep -c -x message "$tmp/sub.txt" || true)
if [ "$msgs" = 1 ] && grep -A2 -x message "$tmp/sub.txt" | tail -n 2 | tr '\n' ' ' | grep -qxF "$chan 0 "; then
  ok "alone: one unlock message, 0 on $chan"
else
  fail "alone: expected one message '0' on $chan; redis-cli saw:"
  sed 's/^/         /' "$tmp/sub.txt"
fi

# 2. Peer against peer on one key: the peer's wiring, merged and checked.
peer_bg pa --lock lock:wire:peers --holds 40 --hold-ms 20 --lease-ms 900 --client 1000 --deadline-s 20
peer_bg pb --lock lock:wire:peers --holds 40 --hold-ms 20 --lease-ms 900 --client 1001 --deadline-s 20
all=true
for n in pa pb; do
  peer_wait $n || all=false
done
if [ "$all" = true ]; then
  for n in pa pb; do
    expect $n grants -eq 40
    expect $n releases -eq 40
    expect $n lost -eq 0
    expect $n errors -eq 0
  done
  # each takes the key again as soon as it let it go: a try that finds
  # it held twice (before and after subscribing) waits for the message
  w=$(($(field "$tmp/pa.sum" woken_message) + $(field "$tmp/pb.sum" woken_message)))
  if [ "$w" -ge 1 ]; then
    ok "peers: $w waits woken by the other's unlock message"
  else
    fail "peers: no wait was woken by a message"
  fi
  check_merged peers 0 "$tmp/pa.jsonl" "$tmp/pb.jsonl"
fi

# 3 and 4 need locklab's redisson lock.
algorithms=$("$bin" list 2>&1 || true) # whole, not piped: grep -q would cut list's pipe
if ! grep -qE '^  redisson ' <<<"$algorithms"; then
  fail "locklab has no redisson lock ('locklab list'): parts 3 and 4 did not run"
  exit 1
fi

# A small flash sale on the keys lock:stock:0 and lock:stock:1
# (sim/workloads/flash_sale.c names them so).
scen() { # scen NAME CLIENTS ITEMS DURATION_S CRITICAL_MS
  cat >"$tmp/$1.json" <<JSON
{
  "name": "wire_$1",
  "description": "Flash sale on the redisson lock, contended by an independent Redisson client.",
  "clients": $2,
  "duration_s": $4,
  "seed": 1,
  "lock": { "algorithm": "redisson", "ttl_ms": 10000, "wait_ms": 8000 },
  "workload": { "type": "flash_sale", "items": $3, "stock": 1000000, "critical_ms": $5 },
  "expect": { "violations": 0, "invariants": "hold" }
}
JSON
}
# locklab run in the background: run_bg NAME; run_wait NAME must PASS.
run_bg() {
  timeout -s INT -k 20 60 "$bin" run "$tmp/$1.json" --algorithm redisson \
    --redis "127.0.0.1:$port" --out "$tmp/$1" --history-jsonl -q >"$tmp/$1.log" 2>&1 &
  pids+=($!)
  pid_of[run_$1]=$!
}
run_wait() {
  local rc=0 pid
  pid=${pid_of[run_$1]}
  reap "$pid" || rc=$?
  if [ "$rc" -ne 0 ]; then
    fail "$1: locklab run exited $rc (expected 0, PASS); its output:"
    sed 's/^/         /' "$tmp/$1.log"
    return 1
  fi
  echo "ran    $1: locklab run: $(tail -n 1 "$tmp/$1.log")"
}
# The keys locklab's own grants were on must be the peers' names: else
# the merged check would pass with nothing contended.
same_keys() { # same_keys RUN KEY...
  local run=$1 k
  shift
  for k in "$@"; do
    grep -q "\"type\":\"ok\",\"f\":\"acquire\",\"key\":\"$k\"" "$tmp/$run/history.jsonl" ||
      fail "$run: locklab granted nothing on $k: not the names the peers contended on"
  done
}

# 3. locklab holds, the peers wait. Four locklab clients on two keys for
# 6 s, 20 ms in each critical section (the keys are held most of the
# time, so a peer's try after subscribing finds them held too), and the
# peers leave 10 ms between their sections (else the one that just let a
# key go takes it again before a woken waiter can); beside them for 5 s: a Redisson peer on lock:stock:0, one on
# lock:stock:1 that subscribes and publishes on a wrong channel, and one
# that takes no lock at all on both (kept out of the first merge). Only
# locklab's clients release lock:stock:0 besides the first peer, so every
# message that wakes it was locklab's.
scen hold 4 2 6 20
run_bg hold
peer_bg p3 --lock lock:stock:0 --holds 100000 --run-ms 5000 --hold-ms 5 --gap-ms 10 --wait-ms 3000 \
  --lease-ms 3000 --client 1000 --deadline-s 30
peer_bg wrong --lock lock:stock:1 --holds 100000 --run-ms 5000 --hold-ms 5 --gap-ms 10 --wait-ms 400 \
  --lease-ms 3000 --client 1001 --deadline-s 30 --channel-prefix redisson_lock_channel
peer_bg rogue --lock lock:stock:0,lock:stock:1 --holds 100000 --run-ms 5000 --hold-ms 5 --client 1002 \
  --deadline-s 30 --no-lock
run_wait hold || true
all=true
for n in p3 wrong rogue; do
  peer_wait $n || all=false
done
if [ "$all" = true ] && [ -f "$tmp/hold/history.jsonl" ]; then
  same_keys hold lock:stock:0 lock:stock:1
  expect p3 grants -ge 1
  expect p3 waits -ge 1
  expect p3 woken_message -ge 1
  expect p3 lost -eq 0
  expect p3 errors -eq 0
  echo "ran    hold: the peer waited $(field "$tmp/p3.sum" waits) times, woken $(field "$tmp/p3.sum" woken_message) times by an unlock message"
  expect wrong waits -ge 1
  expect wrong woken_message -eq 0
  expect wrong woken_timeout -ge 1
  expect wrong lost -eq 0
  check_merged hold 0 "$tmp/hold/history.jsonl" "$tmp/p3.jsonl" "$tmp/wrong.jsonl"
  # the negative control: the same merge with the rogue peer must FAIL
  check_merged hold-rogue '>0' "$tmp/hold/history.jsonl" "$tmp/p3.jsonl" "$tmp/wrong.jsonl" "$tmp/rogue.jsonl"
  rc=0
  "$bin" check "$tmp/hold-rogue.jsonl" >/dev/null 2>&1 || rc=$?
  if [ "$rc" = 1 ]; then
    ok "hold-rogue: locklab check with the default expectation exits 1 (FAIL)"
  else
    fail "hold-rogue: locklab check exited $rc, expected 1"
  fi
fi

# 4. The peer holds lock:stock:0 re-entrantly; one locklab client on one
# item waits for it. Its lease is 20 s: a grant within 5 s of the peer's
# release came from the unlock, not from the lease running out.
left=$(rcli exists lock:stock:0 lock:stock:1)
if [ "$left" != 0 ]; then
  fail "hold: $left lock keys still exist after every holder released: $(rcli --scan --pattern 'lock:stock:*' | tr '\n' ' ')"
  rcli del lock:stock:0 lock:stock:1 >/dev/null
fi
latches=$(rcli --scan --pattern 'redisson_unlock_latch*' | head -n 3)
[ -z "$latches" ] || echo "note   unlock latch keys left behind (Redisson deletes each after its unlock): $latches"
peer_bg p4 --lock lock:stock:0 --holds 1 --hold-ms 3000 --lease-ms 20000 --reenter \
  --client 1000 --deadline-s 20
hash=
for _ in $(seq 50); do # until the re-entry (the count 2) or 2.5 s
  hash=$(rcli hgetall lock:stock:0)
  [ "$(sed -n 2p <<<"$hash")" = 2 ] && break
  sleep 0.05
done
scen wait 1 1 6 1
run_bg wait
chan="redisson_lock__channel:{lock:stock:0}"
subs=0
for _ in $(seq 100); do # while the peer holds (3 s), 5 s at most
  subs=$(rcli pubsub numsub "$chan" | sed -n 2p)
  [ "$subs" -ge 1 ] && break
  kill -0 "${pid_of[p4]}" 2>/dev/null || break
  sleep 0.05
done
hash_mid=$(rcli hgetall lock:stock:0)
if peer_wait p4; then
  want=$(printf '%s\n2' "$(field "$tmp/p4.sum" owner)")
  if [ "$hash" = "$want" ] && [ "$hash_mid" = "$want" ]; then
    ok "wait: HGETALL lock:stock:0 while the peer held it twice, locklab waiting: {$(field "$tmp/p4.sum" owner): 2}"
  else
    fail "wait: HGETALL lock:stock:0 gave '$hash' then '$hash_mid', expected '$want'"
  fi
  if [ "$subs" -ge 1 ]; then
    ok "wait: locklab's waiter subscribed on $chan (PUBSUB NUMSUB $subs)"
  else
    fail "wait: nobody subscribed on $chan while locklab waited for the peer"
  fi
  expect p4 reentries -eq 1
  expect p4 releases -eq 1
fi
if run_wait wait; then
  same_keys wait lock:stock:0
  check_merged wait 0 "$tmp/wait/history.jsonl" "$tmp/p4.jsonl"
  "$py" - "$tmp/wait.jsonl" "$tmp/wait-late.jsonl" <<'PY' || failed=1
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ev = lines[1:-1]
rel = [e for e in ev if e.get("process") == 1000 and e["type"] == "invoke" and e["f"] == "release"]
got = [e for e in ev if e.get("process") == 0 and e["type"] == "ok" and e["f"] == "acquire"]
if len(rel) != 2 or not got:
    print(f"FAIL   wait: {len(rel)} peer releases (expected 2: inner, outer), {len(got)} locklab grants")
    sys.exit(1)
gap = (got[0]["time"] - rel[1]["time"]) / 1e6
if not 0 <= gap < 5000:
    print(f"FAIL   wait: locklab's first grant came {gap:.1f} ms after the peer's outer release, expected within 5 s")
    sys.exit(1)
print(f"ok     wait: locklab's first grant {gap:.1f} ms after the peer's outer release (its lease had 17 s left)")
# The same history with the peer's outer release 1 ms after locklab's
# first grant: as if the key had been freed by the inner release while
# the peer still held it once. The check must see the nested section.
late = got[0]["time"] + 1000000
for e in ev:
    if e.get("process") == 1000 and e["f"] == "release" and e["time"] >= rel[1]["time"]:
        e["time"] = late
ev.sort(key=lambda e: e["time"])
with open(sys.argv[2], "w") as f:
    for o in [lines[0]] + ev + [lines[-1]]:
        f.write(json.dumps(o, separators=(",", ":")) + "\n")
PY
  rc=0
  "$bin" check "$tmp/wait-late.jsonl" --show-violations 1 >"$tmp/wait-late.check" 2>&1 || rc=$?
  if [ "$rc" = 1 ] && grep -q '^!!! violation on lock:stock:0: client 1000' "$tmp/wait-late.check"; then
    ok "wait-late: the peer's outer section still held when locklab entered: $(grep '^checker:' "$tmp/wait-late.check")"
  else
    fail "wait-late: locklab check exited $rc (expected 1, a violation of client 1000's nested section):"
    sed 's/^/         /' "$tmp/wait-late.check"
  fi
fi

if [ "$failed" = 0 ]; then
  echo "test_redisson_wire: locklab's redisson lock and an independent Redisson client keep one lock"
fi
exit "$failed"
