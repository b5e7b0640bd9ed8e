#!/usr/bin/env bash
# Redlock's uncontended lock cycle on 5 independent Redis masters against
# the "5 x single Redis" limit, in the same run on the same servers.
#
# A Redlock cycle asks every node what a single-instance cycle asks one
# node (SET NX PX, then the compare-and-delete script), so on a machine
# where the client's CPU is the bottleneck a cycle costs five single
# cycles, and the limit is a fifth of locklab's own single-Redis rate
# (bench/uncontended.json, --algorithm redis, on the first of the five).
# A ratio above 1 means the fan-out (all nodes asked at once) wins back
# more than it costs; below 1 is Redlock's own overhead.
#
# The rate ratio holds only while both runs get the same CPU; on a machine
# others share they seldom do. So each run's CPU is read too (utime +
# stime of locklab and the five servers, in /proc, from 1 s in to 1 s
# before the end) and divided by its rate: microseconds of CPU per cycle,
# and cpu_ratio = 5 x single's / Redlock's, the same comparison made on
# what a cycle costs rather than on how many fit in what the run was
# given. Where the two differ, the machine was busy.
#
# What keeps both below 1 on two cores: each of the five servers sees a
# fifth of the single server's request rate, so it wakes for fewer
# requests at a time and pays more per request; the client's fan-out pays
# less per node than five single cycles (one wait for all N answers).
#
#   bench/redlock_cycle.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS=16, SECONDS_PER_RUN=5)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
rounds=${1:-3}
clients=${CLIENTS:-16}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }

. bench/cluster_lib.sh
cluster_up 5 0
first=${redis_eps%%,*}
server_pids=$(awk '/^server=redis / { print $3 }' "$cluster_dir/state")
hz=$(getconf CLK_TCK)
[ "$secs" -ge 3 ] || { echo "SECONDS_PER_RUN must be 3 or more: CPU is read over all but the first and last second" >&2; exit 2; }

# utime + stime ticks of the processes named
ticks() { for p in "$@"; do awk '{ print $14 + $15 }' "/proc/$p/stat" 2>/dev/null || echo 0; done | awk '{ s += $1 } END { print s + 0 }'; }

# one run: cycles/s and CPU us per cycle (locklab and the servers): cycle ALGORITHM ENDPOINTS OUT
cycle() {
  "$bin" run bench/uncontended.json --algorithm "$1" --redis "$2" \
    --clients "$clients" --duration "$secs" --quiet --out "$3" >/dev/null &
  local pid=$! t0 t1 rate
  sleep 1
  # shellcheck disable=SC2086
  t0=$(ticks "$pid" $server_pids)
  sleep $((secs - 2))
  # shellcheck disable=SC2086
  t1=$(ticks "$pid" $server_pids)
  # a run that fails would otherwise end the bench silently (its line never read)
  wait "$pid" || { local rc=$?; echo "bench: locklab run $1 exited $rc: $(head -1 "$3"/report.md 2>/dev/null)" >&2; exit 3; }
  rate=$(acquire_rate "$3")
  awk -v r="$rate" -v t=$((t1 - t0)) -v hz="$hz" -v s=$((secs - 2)) 'BEGIN { printf "%s %.1f\n", r, t / hz / s * 1e6 / r }'
}

echo "5 redis masters: $redis_eps; $clients clients, ${secs}s per run"
printf '%-6s %14s %14s %14s %8s %10s %11s %9s\n' round redis/s limit=redis/5 redlock/s ratio redis_us redlock_us cpu_ratio
singles=() redlocks=() cpus=()
for r in $(seq "$rounds"); do
  read -r one one_us < <(cycle redis "$first" "$work/redis-$r")
  read -r five five_us < <(cycle redlock "$redis_eps" "$work/redlock-$r")
  awk -v r="$r" -v o="$one" -v f="$five" -v ou="$one_us" -v fu="$five_us" 'BEGIN {
    printf "%-6s %14.1f %14.1f %14.1f %8.3f %10.1f %11.1f %9.3f\n", r, o, o / 5, f, f / (o / 5), ou, fu, 5 * ou / fu }'
  singles+=("$one") redlocks+=("$five") cpus+=("$(awk -v ou="$one_us" -v fu="$five_us" 'BEGIN { print 5 * ou / fu }')")
done
ms=$(printf '%s\n' "${singles[@]}" | median)
mr=$(printf '%s\n' "${redlocks[@]}" | median)
mc=$(printf '%s\n' "${cpus[@]}" | median)
awk -v s="$ms" -v f="$mr" -v n="$rounds" -v c="$mc" 'BEGIN {
  printf "median over %d rounds: redlock %.1f cycles/s, single redis %.1f, limit (single/5) %.1f, ratio %.3f; CPU per cycle 5 x single / redlock %.3f\n", n, f, s, s / 5, f / (s / 5), c }'
