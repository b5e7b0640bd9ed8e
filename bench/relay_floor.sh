#!/usr/bin/env bash
# The floor under bench/proxy_cost.sh: how close to the direct rate any
# relay in user space can come on this machine. The same Redis lock cycle,
# same clients, same redis-server, same run, rounds alternating: straight to
# the server; through locklab's proxy with no toxic (--proxy); and through
# bench/relay_floor (a bare epoll relay, its own process) in each of its
# modes: copy (recv and send, as the proxy does), drain (edge-triggered,
# recv until EAGAIN), splice (socket -> pipe -> socket) and, where BPF may
# be loaded (root), sockmap (the kernel forwards, no wake of the relay;
# its CPU column is n/a: the kernel does that forwarding in its own worker
# threads, which no process here is charged for). For each, the
# rate over the direct rate, and the CPU per cycle of everything the cycle
# runs on (locklab, the server, the relay) direct over that path's, read in
# /proc from 1 s in to 1 s before the run's end, and the hop's own CPU per
# cycle (the proxy's thread, or the relay process): what each way of
# forwarding costs, which others' load moves least. When the bare relay's
# ratio is as far from 0.9 as the proxy's, the gap is the relay hop's
# (two loopback TCP crossings a message), not the proxy's code.
#
#   bench/relay_floor.sh [ROUNDS]  (env: LOCKLAB_BIN, CLIENTS, SECONDS_PER_RUN)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${LOCKLAB_BIN:-build/locklab}
relay=${RELAY_BIN:-$(dirname "$bin")/bench/relay_floor}
rounds=${1:-3}
clients=${CLIENTS:-50}
secs=${SECONDS_PER_RUN:-5}
if [ ! -x "$bin" ] || [ ! -x "$relay" ]; then echo "build first: scripts/build.sh" >&2; exit 2; fi
[ "$secs" -ge 3 ] || { echo "SECONDS_PER_RUN must be 3 or more" >&2; exit 2; }
hz=$(getconf CLK_TCK)

. bench/lib.sh
start_redis
relay_pid=""
trap '[ -n "$relay_pid" ] && kill "$relay_pid" 2>/dev/null; cleanup' EXIT

# utime + stime ticks of the processes named (a gone one counts 0)
ticks() { for p in "$@"; do cat "/proc/$p/stat" 2>/dev/null || true; done | awk '{ s += $14 + $15 } END { print s + 0 }'; }

# Start relay_floor in mode $1 on a port of the kernel's choice; sets
# relay_pid and relay_port, or says why not (return 1).
start_relay() {
  relay_port=""
  # gone first: the last relay's line would otherwise be read before the
  # new one's shell empties the file
  rm -f "$work/relay.out" "$work/relay.err"
  "$relay" "$1" 0 "$port" >"$work/relay.out" 2>"$work/relay.err" &
  relay_pid=$!
  for _ in $(seq 100); do
    relay_port=$(awk '/^listening/ { print $2 }' "$work/relay.out" 2>/dev/null)
    [ -n "$relay_port" ] && return 0
    kill -0 "$relay_pid" 2>/dev/null || break
    sleep 0.05
  done
  kill "$relay_pid" 2>/dev/null || true
  wait "$relay_pid" 2>/dev/null || true
  relay_pid=""
  return 1
}

# The hop's own CPU ticks: the proxy's thread in locklab process $1, or the
# relay process $2 (direct: 0).
hop_ticks() {
  if [ -n "$2" ]; then ticks "$2"; else thread_ticks "$1" locklab-proxy; fi
}

# rate (acquires/s), CPU us per cycle, and the hop's own CPU us per cycle of
# one run: run NAME PATH, PATH one of direct, proxy, copy, drain, splice,
# sockmap
run() {
  local name=$1 path=$2 target=$port extra=()
  relay_pid=""
  if [ "$path" = proxy ]; then
    extra=(--proxy)
  elif [ "$path" != direct ]; then
    start_relay "$path" || { echo "bench: relay_floor $path did not listen: $(head -1 "$work/relay.err")" >&2; exit 3; }
    target=$relay_port
  fi
  "$bin" run bench/uncontended.json --redis "127.0.0.1:$target" --clients "$clients" --duration "$secs" \
    --quiet --out "$work/$name" ${extra[@]+"${extra[@]}"} >/dev/null &
  local pid=$! a0 a1 h0 h1
  sleep 1
  a0=$(ticks "$pid" "$server" $relay_pid) h0=$(hop_ticks "$pid" "$relay_pid")
  sleep $((secs - 2))
  a1=$(ticks "$pid" "$server" $relay_pid) h1=$(hop_ticks "$pid" "$relay_pid")
  wait "$pid" || { local rc=$?; echo "bench: locklab run $name exited $rc: $(head -1 "$work/$name"/report.md 2>/dev/null)" >&2; exit 3; }
  if [ -n "$relay_pid" ]; then
    kill "$relay_pid"
    wait "$relay_pid" 2>/dev/null || true
    relay_pid=""
  fi
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); a=r["operations"]["acquire"]
rate = a["count"] / r["elapsed_s"]; hz, s = int(sys.argv[3]), int(sys.argv[4])
us = lambda ticks: int(ticks) / hz / s * 1e6 / rate
print("%.1f %.1f %.1f" % (rate, us(sys.argv[2]), us(sys.argv[5])))' \
    "$work/$name/report.json" $((a1 - a0)) "$hz" $((secs - 2)) $((h1 - h0))
}

paths=(proxy copy drain splice)
# sockmap needs CAP_BPF and CAP_NET_ADMIN: measured where it can load
if start_relay sockmap; then
  paths+=(sockmap)
  kill "$relay_pid"
  wait "$relay_pid" 2>/dev/null || true
  relay_pid=""
else
  echo "sockmap not measured: $(head -1 "$work/relay.err")"
fi
echo "redis-server on 127.0.0.1:$port; $clients clients; $secs s per run; each path: rate / direct (CPU per cycle direct / path) the hop's own us per cycle"
printf '%-6s %11s %9s' round direct_rps direct_us
for p in "${paths[@]}"; do printf ' %21s' "$p"; done
echo
declare -A rates cpus hops
for r in $(seq "$rounds"); do
  read -r d_rps d_us _ < <(run "d$r" direct)
  printf '%-6s %11.1f %9.1f' "$r" "$d_rps" "$d_us"
  for p in "${paths[@]}"; do
    read -r rps us hop < <(run "$p$r" "$p")
    ratio=$(awk -v a="$rps" -v b="$d_rps" 'BEGIN { printf "%.3f", a / b }')
    cpu=$(awk -v d="$d_us" -v u="$us" -v p="$p" 'BEGIN { if (p == "sockmap" || u <= 0) print "n/a"; else printf "%.3f", d / u }')
    [ "$p" = sockmap ] && hop=n/a
    printf ' %21s' "$ratio ($cpu) $hop"
    rates[$p]+="$ratio " cpus[$p]+="$cpu " hops[$p]+="$hop "
  done
  echo
done
for p in "${paths[@]}"; do
  # shellcheck disable=SC2086 # the lists are space-separated numbers
  cpu=$(printf '%s\n' ${cpus[$p]} | { grep -v n/a || true; } | median)
  hop=$(printf '%s\n' ${hops[$p]} | { grep -v n/a || true; } | median)
  echo "median over $rounds rounds, $p: rate / direct $(printf '%s\n' ${rates[$p]} | median), CPU per cycle direct / $p ${cpu:-n/a}, the hop's own CPU ${hop:-n/a} us a cycle"
done
