#!/usr/bin/env bash
# locklab's uncontended `redisson` (RLock) cycle against the limit
# redis-benchmark sets on the same redis-server, measured in the same run.
#
# A cycle is what Redisson sends: the acquire script by EVALSHA, the unlock
# script by EVALSHA (which DELs the hash, PUBLISHes "0" on the lock's
# channel and SETs the unlock latch), and the DEL of that latch, sent
# without waiting for its reply. With the server as the bottleneck,
#     limit = 1 / (1/acquire_rps + 1/unlock_rps + 1/del_rps)
# locklab's rate is acquisitions per second of bench/uncontended.json with
# --algorithm redisson (50 clients, one key each, no hold).
#
# The commands are taken from locklab itself: a short warm-up run is
# watched with MONITOR, which gives the two scripts' SHA1s (they stay in
# the server's script cache), the lease and latch lifetime they are sent
# with, and the calls each script makes inside the server. The bench stops
# (exit 3) unless those calls are the ones described here, so the figure
# cannot silently compare different work.
#
# Why a composite for the unlock: redis-benchmark repeats one command, and
# the unlock takes its publishing path only on a hash that holds our field
# at 1; repeated on its own it finds nothing and answers nil after two
# lookups, far cheaper than the real thing. So the peer runs one script on
# one shared key that does the acquire's work when the key is free and the
# unlock's when it is held: each call flips the state, the server runs them
# one at a time, so calls alternate exactly between the two, and
#     1/acquire_rps + 1/unlock_rps = 2/pair_rps.
# Inside the server the composite's two halves make the same calls as the
# real scripts, in number and kind: free, exists/hincrby/pexpire as the
# acquire does; held, exists/get/hincrby/del/publish/set where the unlock
# does get/hexists/hincrby/del/publish/set (one existence lookup for
# another). Differences, each stated: its acquire half carries the
# unlock's 3 keys and 5 args (a few hundred bytes more to parse: the
# limit comes out a little lower, in locklab's favour); the latch name is
# fresh per call (__rand_int__) as locklab's request ids are; the peer's
# DEL names a latch that does not exist, where locklab's deletes one (a
# cheaper DEL: the limit comes out a little higher, against locklab).
# The acquire script alone, on fresh keys, is measured too and printed
# (with the unlock it implies: 0.0 when the two runs' noise leaves it no
# room) as a check of the split, not used in the limit. The server is flushed after each peer run so the keys and latches
# it leaves (locklab deletes its own) do not expire on the next run's time.
#
# locklab sends the DEL just before the next acquire without waiting, so
# the server reads both in one read(2) and answers both in one write(2)
# (INFO stats: about 2 reads per cycle, not 3), where redis-benchmark's
# DEL is a request of its own: the limit above charges the DEL a whole
# round of system calls, and locklab can beat it. The last column
# brackets it from the other side: locklab against the acquire and the
# unlock alone (pair_rps / 2), as if the DEL cost the server nothing.
#
# Rounds alternate the peer and locklab so drift on this shared machine
# hits both. When taskset is there and the machine has two cores or more,
# the server gets core 0 and both clients core 1 (as bench/redis_cycle.sh).
#
#   bench/redisson_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS, SECONDS_PER_RUN, PIN=0 to not pin)
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

# The warm-up, watched: one client, a fraction of a second.
redis-cli -p "$port" monitor >"$work/monitor" 2>/dev/null &
monitor=$!
sleep 0.3
"$bin" run bench/uncontended.json --algorithm redisson --redis "127.0.0.1:$port" --clients 1 \
  --duration 0.2 --quiet --out "$work/warmup" >/dev/null
sleep 0.3
kill "$monitor" 2>/dev/null && wait "$monitor" 2>/dev/null || true

# One cycle from the middle of the warm-up: the client's commands (EVALSHA
# with 1 key, EVALSHA with 3 keys, DEL) and the scripts' calls. MONITOR
# quotes every argument: split on '" "'.
cycle=$(awk -F'" "' '
  /\[0 lua\]/ { if (on) { sub(/.*\[0 lua\] "/, "", $1); calls = calls " " $1 } next }
  $1 ~ /"EVALSHA$/ && $3 == "1" { n++; if (n == 50) { on = 1; acq = $2; lease = $5 } next }
  on && $1 ~ /"EVALSHA$/ && $3 == "3" { unl = $2; latch_ms = $11; sub(/"$/, "", latch_ms); calls = calls " |"; next }
  on && $1 ~ /"DEL$/ { print acq, unl, lease, latch_ms, calls; exit }' "$work/monitor")
read -r acq_sha unlock_sha lease latch_ms calls <<<"$cycle" || true
want='exists hincrby pexpire | get hexists hincrby del publish set'
if [ "${calls:-}" != "$want" ] || [ ${#acq_sha} -ne 40 ] || [ ${#unlock_sha} -ne 40 ]; then
  echo "locklab's redisson cycle is not the one this bench reproduces:" >&2
  echo "  want calls: $want" >&2
  seen=${calls:-"nothing (no whole cycle in the warm-up's MONITOR)"}
  echo "  saw:        $seen" >&2
  exit 3
fi

# KEYS: name, channel, latch; ARGV: message, lease, field, publish command,
# latch lifetime: the unlock's own keys and args.
composite='if redis.call("exists", KEYS[1]) == 0 then
  redis.call("hincrby", KEYS[1], ARGV[3], 1); redis.call("pexpire", KEYS[1], ARGV[2]); return nil
end
local done = redis.call("get", KEYS[3]) if done ~= false then return tonumber(done) end
if redis.call("hincrby", KEYS[1], ARGV[3], -1) > 0 then return 0 end
redis.call("del", KEYS[1]); redis.call(ARGV[4], KEYS[2], ARGV[1])
redis.call("set", KEYS[3], 1, "px", ARGV[5]); return 1'
pair_sha=$(redis-cli -p "$port" SCRIPT LOAD "$composite")
n=$((clients * 4000))
field=bench-owner:1

rps() { # redis-benchmark -q prints "NAME: 105263.16 requests per second, p50=..."
  "${pin_client[@]}" redis-benchmark -h 127.0.0.1 -p "$port" -c "$clients" -n "$n" -r 1000000000 -q "$@" 2>/dev/null |
    tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") v = $(i-1) } END { print v }'
  redis-cli -p "$port" FLUSHALL SYNC >/dev/null
}

echo "redis-server on 127.0.0.1:$port${pin_server[*]:+ (server: ${pin_server[*]}, clients: ${pin_client[*]})}; $clients clients"
echo "locklab's cycle (MONITOR): EVALSHA ${acq_sha:0:8} (${want%% |*}), EVALSHA ${unlock_sha:0:8} (${want##*| }), DEL latch; lease $lease ms, latch $latch_ms ms"
printf '%-6s %11s %11s %11s %11s %11s %11s %8s %8s\n' round acquire_rps pair_rps unlock_rps del_rps limit \
  locklab ratio no_del
ratios=() no_dels=()
for r in $(seq "$rounds"); do
  acq_rps=$(rps EVALSHA "$acq_sha" 1 "bench:__rand_int__" "$lease" "$field")
  pair_rps=$(rps EVALSHA "$pair_sha" 3 "bench:pair" "redisson_lock__channel:{bench:pair}" \
    "redisson_unlock_latch:{bench:pair}:__rand_int__" 0 "$lease" "$field" publish "$latch_ms")
  del_rps=$(rps DEL "redisson_unlock_latch:{bench:pair}:__rand_int__")
  "${pin_client[@]}" "$bin" run bench/uncontended.json --algorithm redisson --redis "127.0.0.1:$port" \
    --clients "$clients" --duration "$secs" --quiet --out "$work/run-$r" >/dev/null
  cycle=$(awk -F'|' '$2 ~ /^ acquire $/ { gsub(/ /, "", $4); print $4 }' "$work/run-$r/report.md")
  read -r unl limit ratio no_del < <(awk -v a="$acq_rps" -v p="$pair_rps" -v d="$del_rps" -v c="$cycle" 'BEGIN {
    u = 2/p - 1/a; l = 1 / (2/p + 1/d)
    printf "%.1f %.1f %.3f %.3f\n", (u > 0 ? 1/u : 0), l, c / l, c / (p / 2) }')
  printf '%-6s %11.1f %11.1f %11.1f %11.1f %11.1f %11.1f %8.3f %8.3f\n' "$r" "$acq_rps" "$pair_rps" "$unl" \
    "$del_rps" "$limit" "$cycle" "$ratio" "$no_del"
  ratios+=("$ratio") no_dels+=("$no_del")
done
median() { printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END {
  printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo "median ratio locklab / redis-benchmark limit over $rounds rounds: $(median "${ratios[@]}") (target >= 0.95)"
echo "median ratio locklab / limit without the DEL: $(median "${no_dels[@]}")"
