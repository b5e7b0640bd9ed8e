#!/usr/bin/env bash
# The proxy's own cost: locklab's Redis lock cycle through its TCP proxy
# with no toxic (--proxy) against the same cycle straight to the server,
# same redis-server, same run, rounds alternating so drift on this shared
# machine hits both. Two figures, as Toxiproxy's claim ("< 100 us added")
# has them: the rate of uncontended cycles with many clients (the proxy's
# thread competes for the CPU like any proxy would), and the acquire p50
# with one client (one round trip each way through the proxy: the added
# microseconds).
#
#   bench/proxy_cost.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
rounds=${1:-5}
clients=${CLIENTS:-50}
secs=${SECONDS_PER_RUN:-5}
[ -x "$bin" ] || { echo "build first: scripts/build.sh" >&2; exit 2; }

. bench/lib.sh
start_redis

# rate (acquires/s) and acquire p50 (us) of one run: run NAME CLIENTS [--proxy]
run() {
  local name=$1 n=$2; shift 2
  "$bin" run bench/uncontended.json --redis "127.0.0.1:$port" --clients "$n" --duration "$secs" \
    --quiet --out "$work/$name" "$@" >/dev/null
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); a=r["operations"]["acquire"]
print("%.1f %.1f %s" % (a["count"] / r["elapsed_s"], a["p50_ms"] * 1000, r["endpoints"][0]["proxied"]))' \
    "$work/$name/report.json"
}

echo "redis-server on 127.0.0.1:$port; rate with $clients clients, p50 with 1 client; $secs s per run"
printf '%-6s %12s %12s %8s %12s %12s %10s\n' round direct_rps proxy_rps ratio direct_p50 proxy_p50 added_us
ratios=() added=()
for r in $(seq "$rounds"); do
  read -r d_rps _ d_px < <(run "d$r" "$clients")
  read -r p_rps _ p_px < <(run "p$r" "$clients" --proxy)
  read -r _ d_p50 _ < <(run "d1-$r" 1)
  read -r _ p_p50 _ < <(run "p1-$r" 1 --proxy)
  [ "$d_px" = False ] && [ "$p_px" = True ] || { echo "proxied flags wrong: $d_px $p_px" >&2; exit 3; }
  ratio=$(awk -v a="$p_rps" -v b="$d_rps" 'BEGIN { printf "%.3f", a / b }')
  add=$(awk -v a="$p_p50" -v b="$d_p50" 'BEGIN { printf "%.1f", a - b }')
  printf '%-6s %12.1f %12.1f %8s %12.1f %12.1f %10s\n' "$r" "$d_rps" "$p_rps" "$ratio" "$d_p50" "$p_p50" "$add"
  ratios+=("$ratio") added+=("$add")
done
m_ratio=$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
m_added=$(printf '%s\n' "${added[@]}" | sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "median over $rounds rounds: rate through the proxy / direct $m_ratio (target >= 0.9); acquire p50 added ${m_added} us (Toxiproxy claims < 100 us)"
