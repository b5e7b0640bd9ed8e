#!/usr/bin/env bash
# The proxy's own cost: locklab's Redis lock cycle through its TCP proxy
# with no toxic (--proxy) against the same cycle straight to the server,
# same redis-server, same run, rounds alternating so drift on this shared
# machine hits both. Two figures, as Toxiproxy's claim ("< 100 us added")
# has them: the rate of uncontended cycles with many clients (the proxy's
# thread competes for the CPU like any proxy would), and the acquire p50
# with one client (one round trip each way through the proxy: the added
# microseconds). Beside the rate, the proxy thread's share of a core
# (utime + stime of the thread named locklab-proxy, read in /proc over the
# run's middle, from 1 s in to 1 s before its end): what it costs the
# machine, whoever else competes for it. And the CPU per cycle of locklab
# and the server together (the same window), direct over proxied: the rate
# ratio's comparison made on what a cycle costs, which others' load on a
# shared machine moves far less than the rate. What no relay can beat on
# the same machine, the proxy's own code aside: bench/relay_floor.sh.
#
#   bench/proxy_cost.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
rounds=${1:-5}
clients=${CLIENTS:-50}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }
[ "$secs" -ge 3 ] || { echo "SECONDS_PER_RUN must be 3 or more: the proxy's share is read over all but the first and last second" >&2; exit 2; }
hz=$(getconf CLK_TCK)

. bench/lib.sh
start_redis

# utime + stime ticks of locklab process $1 and the server
all_ticks() { cat "/proc/$1/stat" "/proc/$server/stat" 2>/dev/null | awk '{ s += $14 + $15 } END { print s + 0 }'; }

# rate (acquires/s), acquire p50 (us), proxied, the proxy thread's share of
# a core, and CPU us per cycle (locklab and the server) of one run:
# run NAME CLIENTS [--proxy]
run() {
  local name=$1 n=$2; shift 2
  "$bin" run bench/uncontended.json --redis "127.0.0.1:$port" --clients "$n" --duration "$secs" \
    --quiet --out "$work/$name" "$@" >/dev/null &
  local pid=$! t0 t1 a0 a1
  sleep 1
  t0=$(thread_ticks "$pid" locklab-proxy) a0=$(all_ticks "$pid")
  sleep $((secs - 2))
  t1=$(thread_ticks "$pid" locklab-proxy) a1=$(all_ticks "$pid")
  # a run that fails would otherwise end the bench silently (its line never read)
  wait "$pid" || { local rc=$?; echo "bench: locklab run $name exited $rc: $(head -1 "$work/$name"/report.md 2>/dev/null)" >&2; exit 3; }
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); a=r["operations"]["acquire"]
rate = a["count"] / r["elapsed_s"]; hz, s = int(sys.argv[4]), int(sys.argv[5])
print("%.1f %.1f %s %.2f %.1f" % (rate, a["p50_ms"] * 1000, r["endpoints"][0]["proxied"],
      int(sys.argv[2]) / hz / s, int(sys.argv[3]) / hz / s * 1e6 / rate))' \
    "$work/$name/report.json" $((t1 - t0)) $((a1 - a0)) "$hz" $((secs - 2))
}

echo "redis-server on 127.0.0.1:$port; rate with $clients clients, p50 with 1 client; $secs s per run"
printf '%-6s %12s %12s %8s %11s %10s %9s %10s %12s %12s %10s\n' round direct_rps proxy_rps ratio proxy_core direct_us proxy_us cpu_ratio direct_p50 proxy_p50 added_us
ratios=() added=() cores=() cpus=()
for r in $(seq "$rounds"); do
  read -r d_rps _ d_px _ d_us < <(run "d$r" "$clients")
  read -r p_rps _ p_px p_core p_us < <(run "p$r" "$clients" --proxy)
  read -r _ d_p50 _ _ _ < <(run "d1-$r" 1)
  read -r _ p_p50 _ _ _ < <(run "p1-$r" 1 --proxy)
  [ "$d_px" = False ] && [ "$p_px" = True ] || { echo "proxied flags wrong: $d_px $p_px" >&2; exit 3; }
  ratio=$(awk -v a="$p_rps" -v b="$d_rps" 'BEGIN { printf "%.3f", a / b }')
  add=$(awk -v a="$p_p50" -v b="$d_p50" 'BEGIN { printf "%.1f", a - b }')
  cpu=$(awk -v d="$d_us" -v p="$p_us" 'BEGIN { printf "%.3f", d / p }')
  printf '%-6s %12.1f %12.1f %8s %11s %10s %9s %10s %12.1f %12.1f %10s\n' "$r" "$d_rps" "$p_rps" "$ratio" "$p_core" \
    "$d_us" "$p_us" "$cpu" "$d_p50" "$p_p50" "$add"
  ratios+=("$ratio") added+=("$add") cores+=("$p_core") cpus+=("$cpu")
done
m_ratio=$(printf '%s\n' "${ratios[@]}" | median)
m_added=$(printf '%s\n' "${added[@]}" | median)
m_core=$(printf '%s\n' "${cores[@]}" | median)
m_cpu=$(printf '%s\n' "${cpus[@]}" | median)
echo "median over $rounds rounds: rate through the proxy / direct $m_ratio (target >= 0.9), CPU per cycle direct / proxied $m_cpu, the proxy's thread ${m_core} of a core; acquire p50 added ${m_added} us (Toxiproxy claims < 100 us)"
