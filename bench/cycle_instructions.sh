#!/usr/bin/env bash
# Client-side instructions per uncontended Redis lock cycle, counted by
# callgrind (repeatable, unlike time on a shared machine): locklab's whole
# business step (acquire, read, write, release, plus its histogram records
# and history appends) against bench/hiredis_cycle, the bare cycle written
# with redisCommandArgv, measured in the same run against the same server.
#
# ALGORITHM=redisson counts another Redis lock's step the same way (the
# peer stays the bare SET/EVALSHA cycle: the figure to watch is then
# locklab's own count, from one change to the next).
#
# It also says where locklab's count went, from the same profile
# (callgrind_annotate, inclusive): the once-a-second turn of the tallies
# left on the client's thread (tally_turn: a swap and a wake-up, the seal
# itself on the sealer's thread; more of them under valgrind, which slows
# the run ~50x: a second spans ~200 steps instead of ~10,000), the
# allocator (hiredis's per-command buffers), the history appends and the
# clock reads.
#
#   bench/cycle_instructions.sh [CYCLES]     (env: LOCKLAB_BIN, BUILD_DIR, ALGORITHM)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
bin=${LOCKLAB_BIN:-$build/locklab}
peer=$build/bench/hiredis_cycle
cycles=${1:-20000}
for x in "$bin" "$peer"; do [ -x "$x" ] || { echo "build first: scripts/build.sh ($x)" >&2; exit 2; }; done
command -v valgrind >/dev/null || { echo "needs valgrind (apt-get install valgrind)" >&2; exit 2; }

. bench/lib.sh
start_redis

cat > "$work/one.json" <<JSON
{"name": "one", "clients": 1, "duration_s": 3600, "requests": $cycles,
 "lock": {"algorithm": "${ALGORITHM:-redis}", "ttl_ms": 10000, "wait_ms": 1000},
 "workload": {"type": "flash_sale", "items": 1, "stock": 1000000000, "critical_ms": 0}}
JSON

count() { # instructions collected inside function $1 of command "${@:2}"
  local fn=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$work/cg.$fn" --toggle-collect="$fn" "$@" \
    >/dev/null 2>"$work/cg.$fn.log"
  awk '/Collected :/ { print $NF }' "$work/cg.$fn.log"
}
ours=$(count flash_step "$bin" run "$work/one.json" --redis "127.0.0.1:$port" --quiet --out "$work/run")
peers=$(count lock_cycle "$peer" "$port" "$cycles")
awk -v a="$ours" -v b="$peers" -v n="$cycles" 'BEGIN {
  printf "instructions per cycle: locklab %.0f (whole business step), hiredis redisCommandArgv %.0f\n", a / n, b / n
  printf "ratio locklab / peer: %.3f\n", a / b }'
# function -> inclusive count, once per name (a name can sit in more files)
if command -v callgrind_annotate >/dev/null; then
  callgrind_annotate --inclusive=yes --threshold=100 "$work/cg.flash_step" 2>/dev/null |
    awk -v n="$cycles" '
      $2 ~ /^\(/ { f = $NF ~ /^\[/ ? $(NF - 1) : $NF; sub(/.*:/, "", f); v = $1; gsub(/,/, "", v)
                   if (!(f in inc)) inc[f] = v }
      END {
        printf "of locklab'"'"'s, per cycle: tally_turn %.0f, malloc/calloc/realloc/free %.0f, history_append %.0f, clock_gettime %.0f\n",
          inc["tally_turn"] / n, (inc["malloc"] + inc["calloc"] + inc["realloc"] + inc["free"]) / n,
          inc["history_append"] / n, inc["clock_gettime@@GLIBC_2.17"] / n }'
fi
