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
